package gemini

import (
	"encoding/json"
	"math/rand/v2"
	"strconv"
	"strings"

	"github.com/reinhq/rein/llm"
)

// accumulator builds the reply from the stream's chunks and yields the
// deltas they carry.
type accumulator struct {
	name, model string
	blocks      []llm.Block
	open        llm.Block       // the *llm.Text or *llm.Thinking still growing
	buf         strings.Builder // open's text so far
	calls       int
	responseID  string    // the first responseId sent; the chunks' decoder fills it in
	finish      string    // the finish reason, e.g. "STOP"
	blocked     bool      // the prompt was blocked: no candidate at all
	finished    bool      // a finish reason or a blocked prompt arrived
	usage       wireUsage // the last counts sent: each chunk's are cumulative
}

func newAccumulator(name, model string) *accumulator {
	return &accumulator{name: name, model: model}
}

// add takes one chunk and reports whether the consumer wants more. Only the
// first candidate counts: rein asks for one.
func (a *accumulator) add(ch *wireChunk, yield func(llm.Delta, error) bool) bool {
	if ch.PromptFeedback.BlockReason != "" {
		a.blocked, a.finished = true, true
	}
	if len(ch.Candidates) == 0 {
		return true
	}
	cand := &ch.Candidates[0]
	for i := range cand.Content.Parts {
		if !a.part(&cand.Content.Parts[i], yield) {
			return false
		}
	}
	if f := cand.FinishReason; f != "" && f != "FINISH_REASON_UNSPECIFIED" {
		a.finish, a.finished = f, true
	}
	return true
}

func (a *accumulator) part(p *wirePart, yield func(llm.Delta, error) bool) bool {
	switch {
	case p.FunctionCall != nil:
		return a.call(p, yield)
	case p.Thought:
		a.write(true, p.Text)
		if sig := encodeSignature(p.ThoughtSignature); sig != "" {
			a.open.(*llm.Thinking).Signature = sig
			a.close() // what follows is another thought
		}
		return p.Text == "" || yield(llm.Delta{Kind: llm.DeltaThinking, Text: p.Text}, nil)
	case p.Text != "" || p.ThoughtSignature != nil:
		if p.Text != "" {
			a.write(false, p.Text)
		}
		if sig := encodeSignature(p.ThoughtSignature); sig != "" {
			a.signText(sig)
		}
		return p.Text == "" || yield(llm.Delta{Kind: llm.DeltaText, Text: p.Text}, nil)
	}
	// Inline data, code execution …: not part of rein's model. An empty
	// part, or one of fields no flag names, is not counted.
	if typ := p.dropped(); typ != "" {
		llm.RecordDrop(a.name, llm.DropBlock, typ)
	}
	return true
}

func (a *accumulator) call(p *wirePart, yield func(llm.Delta, error) bool) bool {
	a.close()
	fc := p.FunctionCall
	a.calls++
	id := fc.ID
	if id == "" {
		id = a.callID()
	}
	input, err := callInput(fc.Args)
	if err != nil {
		yield(llm.Delta{}, llm.Malformed(a.name, err))
		return false
	}
	a.blocks = append(a.blocks, &llm.ToolUse{ID: id, Name: fc.Name, Input: input, Signature: encodeSignature(p.ThoughtSignature)})
	if !yield(llm.Delta{Kind: llm.DeltaToolStart, ToolUseID: id, ToolName: fc.Name}, nil) {
		return false
	}
	// The Gemini Developer API sends a call's arguments whole: one piece.
	return yield(llm.Delta{Kind: llm.DeltaToolInput, ToolUseID: id, Text: string(input)}, nil)
}

// callInput turns a call's args, a JSON object, into the tool input: read
// into a map and written back, as the SDK did, so its keys are sorted; "{}"
// when there are none.
func callInput(raw json.RawMessage) (json.RawMessage, error) {
	var args map[string]any
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &args); err != nil {
			return nil, err
		}
	}
	if len(args) == 0 {
		return json.RawMessage("{}"), nil
	}
	return json.Marshal(args)
}

// signText keeps the signature of a signed text part in a text-less Thinking
// block before the text, where toContent puts it back; with no text open it
// goes last.
func (a *accumulator) signText(sig string) {
	th := &llm.Thinking{Signature: sig}
	if _, ok := a.open.(*llm.Text); ok {
		n := len(a.blocks)
		a.blocks = append(a.blocks[:n-1], th, a.blocks[n-1])
	} else {
		a.blocks = append(a.blocks, th)
	}
	a.close()
}

// callID makes up an id for a call the model sent without one: unique, and
// the same for every reader of this reply.
func (a *accumulator) callID() string {
	if a.responseID == "" {
		a.responseID = "r" + strconv.FormatUint(rand.Uint64(), 36)
	}
	return "call_" + a.responseID + "_" + strconv.Itoa(a.calls)
}

// write appends text to the open block of its kind, opening one if needed.
func (a *accumulator) write(thought bool, s string) {
	switch a.open.(type) {
	case *llm.Thinking:
		if thought {
			a.buf.WriteString(s)
			return
		}
	case *llm.Text:
		if !thought {
			a.buf.WriteString(s)
			return
		}
	}
	a.close()
	if thought {
		a.open = &llm.Thinking{}
	} else {
		a.open = &llm.Text{}
	}
	a.blocks = append(a.blocks, a.open)
	a.buf.WriteString(s)
}

// close ends the open block.
func (a *accumulator) close() {
	switch b := a.open.(type) {
	case *llm.Thinking:
		b.Text = a.buf.String()
	case *llm.Text:
		b.Text = a.buf.String()
	}
	a.open = nil
	a.buf.Reset()
}

func (a *accumulator) response() *llm.Response {
	a.close()
	return &llm.Response{
		ID: a.responseID,
		Message: llm.Message{
			Role:     llm.RoleAssistant,
			Content:  a.blocks,
			Provider: a.name,
			Model:    a.model, // the requested model, never the echoed version (PROV-5)
		},
		StopReason: stopReason(a.finish, a.blocked, a.calls > 0),
		Usage:      a.usage.usage(),
	}
}

// stopReason maps Gemini's finishReason; a blocked prompt is a refusal.
func stopReason(f string, blocked, calls bool) llm.StopReason {
	if blocked {
		return llm.StopRefusal
	}
	switch f {
	case "STOP":
		if calls {
			return llm.StopToolUse
		}
		return llm.StopEndTurn
	case "MAX_TOKENS":
		return llm.StopMaxTokens
	case "SAFETY", "RECITATION", "PROHIBITED_CONTENT", "BLOCKLIST", "SPII",
		"IMAGE_SAFETY", "IMAGE_PROHIBITED_CONTENT", "IMAGE_RECITATION":
		return llm.StopRefusal
	}
	return llm.StopUnknownOther
}

// usage maps Gemini's counts: promptTokenCount includes the cached tokens and
// candidatesTokenCount excludes the thoughts.
func (m *wireUsage) usage() llm.Usage {
	cached := int64(m.CachedContentTokenCount)
	return llm.Usage{
		InputTokens:     max(int64(m.PromptTokenCount)-cached, 0),
		CacheReadTokens: cached,
		OutputTokens:    int64(m.CandidatesTokenCount) + int64(m.ThoughtsTokenCount),
		ReasoningTokens: int64(m.ThoughtsTokenCount),
	}
}
