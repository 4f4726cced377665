package llm

import (
	"context"
	"errors"
	"iter"
)

// Provider is a model vendor behind one interface (SPEC PROV-1).
//
// Stream sends req and yields the reply as it arrives: zero or more text,
// thinking and tool deltas, then exactly one [DeltaDone] whose Response holds
// the complete message, its stop reason and usage. A non-nil error is terminal
// and is the last value yielded; it is an [*Error] for every vendor failure.
// Tool calls must be taken from the final Response only: a stream that fails
// after announcing a call never completed it (SPEC LOOP-5).
//
// Stopping the iteration, or cancelling ctx, releases the connection.
type Provider interface {
	Stream(ctx context.Context, req *Request) iter.Seq2[Delta, error]
}

// DeltaKind says what a [Delta] carries.
type DeltaKind uint8

// The kinds of delta a stream yields.
const (
	// DeltaText carries a piece of reply text in Text.
	DeltaText DeltaKind = iota + 1
	// DeltaThinking carries a piece of visible reasoning in Text.
	DeltaThinking
	// DeltaToolStart announces a tool call: ToolUseID and ToolName are set.
	DeltaToolStart
	// DeltaToolInput carries a piece of a tool call's JSON input in Text.
	DeltaToolInput
	// DeltaRetry reports that the call failed and will be tried again; Retry is
	// set. Only [Retrying] yields it.
	DeltaRetry
	// DeltaDone ends a successful stream; Response is set.
	DeltaDone
)

// String returns the kind's name.
func (k DeltaKind) String() string {
	switch k {
	case DeltaText:
		return "text"
	case DeltaThinking:
		return "thinking"
	case DeltaToolStart:
		return "tool_start"
	case DeltaToolInput:
		return "tool_input"
	case DeltaRetry:
		return "retry"
	case DeltaDone:
		return "done"
	}
	return "unknown"
}

// Delta is one item of a streamed reply. It is a value, not an interface, so a
// stream allocates nothing per delta beyond the text it carries.
type Delta struct {
	Kind DeltaKind
	// Text is the text, thinking or partial JSON of this delta.
	Text string
	// ToolUseID identifies the tool call of DeltaToolStart and DeltaToolInput.
	ToolUseID string
	// ToolName is set on DeltaToolStart.
	ToolName string
	// Retry is set on DeltaRetry.
	Retry *RetryInfo
	// Response is set on DeltaDone.
	Response *Response
}

// Response is a complete model reply.
type Response struct {
	// ID is the vendor's identifier of the reply, when it has one.
	ID         string
	Message    Message
	StopReason StopReason
	Usage      Usage
}

// StopReason says why the model stopped.
type StopReason string

// The stop reasons every adapter maps its vendor's reasons onto.
const (
	StopEndTurn      StopReason = "end_turn"      // the model finished
	StopToolUse      StopReason = "tool_use"      // the model wants tools run
	StopMaxTokens    StopReason = "max_tokens"    // the reply hit MaxTokens
	StopSequence     StopReason = "stop_sequence" // a stop sequence was written
	StopRefusal      StopReason = "refusal"       // the vendor refused or filtered the reply
	StopPauseTurn    StopReason = "pause_turn"    // the vendor paused a long turn; ask again to go on
	StopUnknownOther StopReason = "other"         // a reason rein does not know; see the adapter's log
)

// Usage counts the tokens of one model call. InputTokens excludes cached
// tokens: the prompt's size is InputTokens + CacheReadTokens + CacheWriteTokens.
type Usage struct {
	InputTokens      int64 `json:"input_tokens"`
	OutputTokens     int64 `json:"output_tokens"`
	CacheReadTokens  int64 `json:"cache_read_tokens,omitempty"`
	CacheWriteTokens int64 `json:"cache_write_tokens,omitempty"`
	// ReasoningTokens is the part of OutputTokens spent on reasoning, where the
	// vendor reports it.
	ReasoningTokens int64 `json:"reasoning_tokens,omitempty"`
	// Estimated is set when the counts are rein's estimate rather than the
	// vendor's: the vendor reported no usage for the reply (an
	// OpenAI-compatible server that ignores stream_options, a proxy that
	// drops the usage chunk), or, in a sum, for one of its replies.
	Estimated bool `json:"estimated,omitempty"`
}

// Add adds o to u; the sum is estimated if either part is.
func (u *Usage) Add(o Usage) {
	u.InputTokens += o.InputTokens
	u.OutputTokens += o.OutputTokens
	u.CacheReadTokens += o.CacheReadTokens
	u.CacheWriteTokens += o.CacheWriteTokens
	u.ReasoningTokens += o.ReasoningTokens
	u.Estimated = u.Estimated || o.Estimated
}

// PromptTokens is the size of the prompt: uncached input plus cache reads and
// writes.
func (u Usage) PromptTokens() int64 {
	return u.InputTokens + u.CacheReadTokens + u.CacheWriteTokens
}

// ErrNoResponse is returned by [Complete] when a stream ended without a
// DeltaDone and without an error: a broken adapter.
var ErrNoResponse = errors.New("llm: stream ended without a response")

// Complete sends req and returns the complete reply: the non-streaming entry
// point, built on the same stream.
func Complete(ctx context.Context, p Provider, req *Request) (*Response, error) {
	for d, err := range p.Stream(ctx, req) {
		if err != nil {
			return nil, err
		}
		if d.Kind == DeltaDone {
			return d.Response, nil
		}
	}
	return nil, ErrNoResponse
}

// ProviderFunc adapts a function to the [Provider] interface.
type ProviderFunc func(ctx context.Context, req *Request) iter.Seq2[Delta, error]

// Stream calls f.
func (f ProviderFunc) Stream(ctx context.Context, req *Request) iter.Seq2[Delta, error] {
	return f(ctx, req)
}

// AuthValidator is implemented by providers that can check their credentials
// with a cheap call (SPEC PROV-4), as `rein doctor --online` does.
type AuthValidator interface {
	ValidateAuth(ctx context.Context) error
}
