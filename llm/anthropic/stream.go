package anthropic

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"

	"github.com/reinhq/rein/internal/jsonevents"
	"github.com/reinhq/rein/llm"
	"github.com/reinhq/rein/llm/vendorhttp"
)

// maxBlocks bounds a content block index: a larger one is malformed data,
// not a reason to allocate.
const maxBlocks = 1 << 12

// stream turns one HTTP reply into deltas and the final response.
type stream struct {
	name   string
	req    *llm.Request
	resp   *http.Response
	id     string
	blocks []*block // by the API's content block index
	stop   llm.StopReason
	usage  llm.Usage
	ev     wireEvent // reused: decoded in place
	events jsonevents.Decoder
	// started is set by the first message_start; yielded once a delta went
	// to the consumer. A second message_start after that is a spliced
	// stream (see handle).
	started, yielded bool
}

// wireEvent is one stream event. Events are decoded into these small structs,
// not into union types with a reflective decoder such as the official SDK's,
// which cost some 25 allocations per event; see BenchmarkStream.
type wireEvent struct {
	Type         string      `json:"type"`
	Index        int64       `json:"index"`
	Message      wireMessage `json:"message"`       // message_start
	ContentBlock wireBlock   `json:"content_block"` // content_block_start
	Delta        wireDelta   `json:"delta"`         // content_block_delta, message_delta
	Usage        wireUsage   `json:"usage"`         // message_delta
}

// wireMessage is a message: the one message_start announces, or a whole
// non-streamed reply.
type wireMessage struct {
	ID         string      `json:"id"`
	Content    []wireBlock `json:"content"`
	StopReason string      `json:"stop_reason"`
	Usage      wireUsage   `json:"usage"`
}

type wireBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	Thinking  string          `json:"thinking"`
	Signature string          `json:"signature"`
	Data      string          `json:"data"` // redacted_thinking
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	raw       json.RawMessage // the whole block, for a type rein does not model
}

type wireDelta struct {
	Type        string `json:"type"`
	Text        string `json:"text"`
	Thinking    string `json:"thinking"`
	Signature   string `json:"signature"`
	PartialJSON string `json:"partial_json"`
	StopReason  string `json:"stop_reason"`
}

// wireUsage holds the token counts; the pointers tell an absent count (keep
// the one message_start gave) from a zero.
type wireUsage struct {
	InputTokens              *int64 `json:"input_tokens"`
	CacheCreationInputTokens *int64 `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     *int64 `json:"cache_read_input_tokens"`
	OutputTokens             *int64 `json:"output_tokens"`
	OutputTokensDetails      *struct {
		ThinkingTokens int64 `json:"thinking_tokens"`
	} `json:"output_tokens_details"`
}

// apply overwrites the counts u holds: each is a whole-message total.
func (u *wireUsage) apply(to *llm.Usage) {
	set := func(dst *int64, src *int64) {
		if src != nil {
			*dst = *src
		}
	}
	set(&to.InputTokens, u.InputTokens)
	set(&to.CacheWriteTokens, u.CacheCreationInputTokens)
	set(&to.CacheReadTokens, u.CacheReadInputTokens)
	set(&to.OutputTokens, u.OutputTokens)
	if u.OutputTokensDetails != nil {
		to.ReasoningTokens = u.OutputTokensDetails.ThinkingTokens
	}
}

// block accumulates one content block.
type block struct {
	kind string // text, thinking, redacted_thinking, tool_use, or another: opaque
	// raw is an opaque block's JSON as its start gave it, input its
	// streamed input; oversize marks one past llm.MaxOpaqueBytes, or one
	// that is not an object with a type.
	raw       []byte
	oversize  bool
	text      strings.Builder
	signature string
	id, name  string
	input     []byte
	// whole is set while input is what the start of the block gave whole,
	// not yet streamed: it is yielded as one delta when the block stops,
	// unless input_json_delta events replace it first.
	whole bool
}

func newStream(name string, req *llm.Request, resp *http.Response) *stream {
	return &stream{name: name, req: req, resp: resp}
}

// run reads the reply to its end and yields its deltas; the last value
// yielded is a DeltaDone or an error.
func (s *stream) run(ctx context.Context, yield0 func(llm.Delta, error) bool) {
	yield := func(d llm.Delta, err error) bool {
		s.yielded = true
		return yield0(d, err)
	}
	if mt, _, _ := mime.ParseMediaType(s.resp.Header.Get("Content-Type")); mt == "application/json" {
		s.runJSON(ctx, yield)
		return
	}
	// The shared reader skips a byte-order mark and keep-alive events
	// with empty data (SPEC PROV-2).
	dec := jsonevents.NewReader(s.resp.Body)
	for dec.Next() {
		typ, data := dec.Type(), dec.Data()
		if typ == "ping" {
			continue
		}
		if typ == "error" {
			yield(llm.Delta{}, s.eventError(data))
			return
		}
		done, err := s.handle(data, yield)
		if err != nil {
			yield(llm.Delta{}, err)
			return
		}
		if done {
			return
		}
	}
	if err := dec.Err(); err != nil || ctx.Err() != nil {
		if err == nil {
			err = ctx.Err()
		}
		yield(llm.Delta{}, llm.FromTransport(ctx, s.name, err))
		return
	}
	yield(llm.Delta{}, llm.StreamCut(s.name, "message_stop"))
}

// handle processes one event. done reports that the stream is over: the
// final response was yielded, or the consumer stopped.
func (s *stream) handle(data []byte, yield func(llm.Delta, error) bool) (done bool, err error) {
	s.ev = wireEvent{}
	if err := s.events.Decode(data, &s.ev); err != nil {
		return true, llm.Malformed(s.name, err)
	}
	ev := &s.ev
	ok := true
	switch ev.Type {
	case "message_start":
		if s.started {
			if s.yielded {
				// A proxy that retried upstream and spliced the new stream
				// onto the old: what was streamed is not the message that
				// follows. Malformed data is retried (PROV-7), and the retry
				// layer passes on only what goes beyond the text shown.
				return true, llm.Malformed(s.name, fmt.Errorf("a second message_start after content was streamed: the stream was spliced (a proxy retrying mid-stream)"))
			}
			// Nothing streamed yet: the second start replaces the first.
			s.blocks, s.stop, s.usage = s.blocks[:0], "", llm.Usage{}
		}
		s.started = true
		s.id = ev.Message.ID
		ev.Message.Usage.apply(&s.usage)
		if r := stopReason(ev.Message.StopReason); r != "" {
			s.stop = r
		}
		// Content may come whole in message_start, with no content block
		// events after it: programmatic tool calling starts the reply to a
		// tool result with the code execution's next tool call already
		// made (and stop_reason tool_use).
		var raws []json.RawMessage
		for i := range ev.Message.Content {
			cb := &ev.Message.Content[i]
			if !known(cb.Type) && raws == nil {
				raws = s.rawBlocks(data, true)
			}
			if !known(cb.Type) && i < len(raws) {
				cb.raw = raws[i]
			}
			if ok = s.start(int64(i), cb, yield) && s.stopBlock(int64(i), yield); !ok {
				break
			}
		}
	case "content_block_start":
		if ev.Index < 0 || ev.Index >= maxBlocks {
			return true, llm.Malformed(s.name, fmt.Errorf("content block index %d", ev.Index))
		}
		if !known(ev.ContentBlock.Type) {
			if raws := s.rawBlocks(data, false); len(raws) == 1 {
				ev.ContentBlock.raw = raws[0]
			}
		}
		ok = s.start(ev.Index, &ev.ContentBlock, yield)
	case "content_block_delta":
		d, err := s.delta(ev.Index, &ev.Delta)
		if err != nil {
			return true, err
		}
		ok = d.Kind == 0 || yield(d, nil)
	case "content_block_stop":
		ok = s.stopBlock(ev.Index, yield)
	case "message_delta":
		if r := stopReason(ev.Delta.StopReason); r != "" {
			s.stop = r
		}
		ev.Usage.apply(&s.usage)
	case "error": // an error event whose SSE event name was lost
		return true, s.eventError(data)
	case "message_stop":
		for i := range s.blocks { // blocks whose stop never came
			if !s.stopBlock(int64(i), yield) {
				return true, nil
			}
		}
		resp, err := s.response()
		if err != nil {
			return true, err
		}
		yield(llm.Delta{Kind: llm.DeltaDone, Response: resp}, nil)
		return true, nil
	case "ping":
	default:
		// An event type added after this adapter: counted, so a vendor
		// change shows (rein_llm_dropped_stream_items_total).
		llm.RecordDrop(s.name, llm.DropEvent, ev.Type)
	}
	return !ok, nil
}

// start begins the block at index, replacing any block there, and yields
// what its start carries: the text or thinking it begins with, a tool
// call's announcement.
func (s *stream) start(index int64, cb *wireBlock, yield func(llm.Delta, error) bool) bool {
	for int64(len(s.blocks)) <= index {
		s.blocks = append(s.blocks, nil)
	}
	b := &block{kind: cb.Type}
	s.blocks[index] = b
	switch cb.Type {
	case "text":
		b.text.WriteString(cb.Text)
		return cb.Text == "" || yield(llm.Delta{Kind: llm.DeltaText, Text: cb.Text}, nil)
	case "thinking":
		b.text.WriteString(cb.Thinking)
		b.signature = cb.Signature
		return cb.Thinking == "" || yield(llm.Delta{Kind: llm.DeltaThinking, Text: cb.Thinking}, nil)
	case "redacted_thinking":
		b.signature = cb.Data
	case "tool_use":
		b.id, b.name = cb.ID, cb.Name
		// The start event usually carries "input": {} and the arguments
		// follow as deltas; an input given whole here is kept, and streamed
		// when the block stops if no delta replaced it.
		if in := bytes.TrimSpace(cb.Input); len(in) > 0 && string(in) != "{}" && string(in) != "null" {
			b.input, b.whole = append(b.input, in...), true
		}
		return yield(llm.Delta{Kind: llm.DeltaToolStart, ToolUseID: cb.ID, ToolName: cb.Name}, nil)
	default:
		// A server tool's call or result, or a block added after this
		// adapter: kept whole as an opaque block, never streamed.
		if len(cb.raw) > llm.MaxOpaqueBytes || len(cb.raw) == 0 {
			b.oversize = true
		} else {
			b.raw = append([]byte(nil), cb.raw...)
		}
	}
	return true
}

// stopBlock ends the block at index: a tool call whose input came whole in
// its start yields that input as one delta.
func (s *stream) stopBlock(index int64, yield func(llm.Delta, error) bool) bool {
	if index < 0 || index >= int64(len(s.blocks)) || s.blocks[index] == nil {
		return true
	}
	b := s.blocks[index]
	if !b.whole {
		return true
	}
	b.whole = false
	return yield(llm.Delta{Kind: llm.DeltaToolInput, ToolUseID: b.id, Text: string(b.input)}, nil)
}

func (s *stream) delta(index int64, d *wireDelta) (llm.Delta, error) {
	if index < 0 || index >= int64(len(s.blocks)) || s.blocks[index] == nil {
		return llm.Delta{}, llm.Malformed(s.name, fmt.Errorf("content_block_delta for block %d, which never started", index))
	}
	b := s.blocks[index]
	switch d.Type {
	case "text_delta", "thinking_delta":
		// Text goes only to a text block and thinking to a thinking block:
		// anything else would stream as one kind and end up as another, or
		// nowhere, in the final message.
		want := "thinking"
		if d.Type == "text_delta" {
			want = "text"
		}
		switch {
		case b.kind == want:
		case !known(b.kind):
			llm.RecordDrop(s.name, llm.DropDelta, d.Type)
			return llm.Delta{}, nil
		default:
			return llm.Delta{}, llm.Malformed(s.name, fmt.Errorf("%s for block %d, a %s block", d.Type, index, b.kind))
		}
		if d.Type == "thinking_delta" {
			b.text.WriteString(d.Thinking)
			return llm.Delta{Kind: llm.DeltaThinking, Text: d.Thinking}, nil
		}
		b.text.WriteString(d.Text)
		return llm.Delta{Kind: llm.DeltaText, Text: d.Text}, nil
	case "signature_delta":
		b.signature += d.Signature
	case "input_json_delta":
		switch {
		case d.PartialJSON == "":
		case b.kind == "tool_use":
			if b.whole { // the deltas carry the input: the start's is replaced
				b.input, b.whole = b.input[:0], false
			}
			b.input = append(b.input, d.PartialJSON...)
			return llm.Delta{Kind: llm.DeltaToolInput, ToolUseID: b.id, Text: d.PartialJSON}, nil
		case !known(b.kind):
			// A server tool (web search, code execution …) streams its
			// input too: it goes into the opaque block, not to the loop,
			// which runs client tools only.
			if len(b.input)+len(d.PartialJSON) > llm.MaxOpaqueBytes {
				b.oversize, b.input = true, nil
			} else if !b.oversize {
				b.input = append(b.input, d.PartialJSON...)
			}
		}
	default:
		// citations_delta and any delta type added after this adapter.
		llm.RecordDrop(s.name, llm.DropDelta, d.Type)
	}
	return llm.Delta{}, nil
}

// response assembles the final reply, its blocks in the API's order.
func (s *stream) response() (*llm.Response, error) {
	msg := llm.Message{Role: llm.RoleAssistant, Provider: s.name, Model: s.req.Model}
	msg.Content = make([]llm.Block, 0, len(s.blocks))
	for _, b := range s.blocks {
		if b == nil {
			continue
		}
		switch b.kind {
		case "text":
			if b.text.Len() > 0 {
				msg.Content = append(msg.Content, &llm.Text{Text: b.text.String()})
			}
		case "thinking":
			msg.Content = append(msg.Content, &llm.Thinking{Text: b.text.String(), Signature: b.signature})
		case "redacted_thinking":
			msg.Content = append(msg.Content, &llm.Thinking{Redacted: true, Signature: b.signature})
		case "tool_use":
			if !json.Valid(bytes.TrimSpace(b.input)) && len(bytes.TrimSpace(b.input)) > 0 && s.stop != llm.StopMaxTokens {
				return nil, llm.Malformed(s.name, fmt.Errorf("tool call %s (%s): input is not valid JSON: %.200s", b.id, b.name, b.input))
			}
			// A call cut at max_tokens keeps what it had; the loop answers it
			// "not run" (LOOP-5) instead of the call being retried.
			input := llm.ToolInput(string(b.input))
			msg.Content = append(msg.Content, &llm.ToolUse{ID: b.id, Name: b.name, Input: input})
		default:
			msg.Content = append(msg.Content, s.opaque(b))
		}
	}
	msg.Content = jsonevents.KeepOpaque(s.name, msg.Content)
	stop := s.stop
	if stop == "" {
		stop = llm.StopEndTurn
	}
	u := s.usage
	if u == (llm.Usage{}) { // a proxy that dropped the counts: estimated
		u = jsonevents.EstimateUsage(s.req, &msg)
	}
	return &llm.Response{ID: s.id, Message: msg, StopReason: stop, Usage: u}, nil
}

// stopReason maps the API's stop_reason onto rein's.
func stopReason(r string) llm.StopReason {
	switch r {
	case "end_turn":
		return llm.StopEndTurn
	case "tool_use":
		return llm.StopToolUse
	case "max_tokens", "model_context_window_exceeded":
		return llm.StopMaxTokens
	case "stop_sequence":
		return llm.StopSequence
	case "refusal":
		return llm.StopRefusal
	case "pause_turn":
		return llm.StopPauseTurn
	case "":
		return ""
	}
	return llm.StopUnknownOther
}

// errorStatus is the HTTP status the API uses for each error type; an error
// event inside a 200 stream is classified as if it had that status.
var errorStatus = map[string]int{
	"invalid_request_error": http.StatusBadRequest,
	"authentication_error":  http.StatusUnauthorized,
	"billing_error":         http.StatusPaymentRequired,
	"permission_error":      http.StatusForbidden,
	"not_found_error":       http.StatusNotFound,
	"request_too_large":     http.StatusRequestEntityTooLarge,
	"rate_limit_error":      http.StatusTooManyRequests,
	"api_error":             http.StatusInternalServerError,
	"timeout_error":         http.StatusGatewayTimeout,
	"overloaded_error":      529,
}

// eventError classifies an "error" event of the stream.
func (s *stream) eventError(data []byte) *llm.Error {
	var body struct {
		Error struct {
			Type string `json:"type"`
		} `json:"error"`
	}
	status := http.StatusInternalServerError
	if json.Unmarshal(data, &body) == nil {
		if st, ok := errorStatus[body.Error.Type]; ok {
			status = st
		}
	}
	return vendorhttp.FromHTTP(s.name, status, s.resp.Header, data).WithAuthHint(envVar)
}

// runJSON handles a plain JSON reply, which a proxy may send even though a
// stream was asked for: the whole message arrives at once, and each block is
// yielded as one delta.
func (s *stream) runJSON(ctx context.Context, yield func(llm.Delta, error) bool) {
	body, err := io.ReadAll(s.resp.Body)
	if err != nil {
		yield(llm.Delta{}, llm.FromTransport(ctx, s.name, err))
		return
	}
	var m wireMessage
	if err := json.Unmarshal(jsonevents.TrimBOM(body), &m); err != nil {
		yield(llm.Delta{}, llm.Malformed(s.name, err))
		return
	}
	s.id, s.stop = m.ID, stopReason(m.StopReason)
	m.Usage.apply(&s.usage)
	var raws []json.RawMessage
	for i := range m.Content {
		cb := &m.Content[i]
		if !known(cb.Type) && raws == nil {
			var whole struct {
				Content []json.RawMessage `json:"content"`
			}
			_ = json.Unmarshal(jsonevents.TrimBOM(body), &whole)
			raws = whole.Content
		}
		if !known(cb.Type) && i < len(raws) {
			cb.raw = raws[i]
		}
		// A tool call's whole input is yielded as one delta when its block
		// stops.
		if !s.start(int64(i), cb, yield) || !s.stopBlock(int64(i), yield) {
			return
		}
	}
	resp, err := s.response()
	if err != nil {
		yield(llm.Delta{}, err)
		return
	}
	yield(llm.Delta{Kind: llm.DeltaDone, Response: resp}, nil)
}
