package openai

import (
	"bytes"
	"cmp"
	"encoding/hex"
	"encoding/json"
	"math/rand/v2"
	"strings"
	"unicode/utf8"

	"github.com/reinhq/rein/internal/jsonevents"
	"github.com/reinhq/rein/llm"
)

// The Chat Completions stream, read leniently: the fields OpenAI sends plus
// what compatible servers add (reasoning_content, reasoning,
// prompt_cache_hit_tokens, content as an array of typed parts) or leave out
// (usage, tool call ids and indexes).

type chatChunk struct {
	ID      onceString      `json:"id"`
	Choices []chatChoice    `json:"choices"`
	Usage   *chatUsage      `json:"usage"`
	Error   json.RawMessage `json:"error"`
}

type chatChoice struct {
	Index        int        `json:"index"`
	Delta        chatDelta  `json:"delta"`
	Message      *chatDelta `json:"message"` // a non-streamed reply
	FinishReason string     `json:"finish_reason"`
}

type chatDelta struct {
	Content          chatContent     `json:"content"`
	ReasoningContent string          `json:"reasoning_content"`
	Reasoning        json.RawMessage `json:"reasoning"`
	Refusal          string          `json:"refusal"`
	ToolCalls        []chatToolCall  `json:"tool_calls"`
	// ReasoningDetails is OpenRouter's structured reasoning, which carries
	// the signatures or encrypted reasoning its upstream models need back.
	ReasoningDetails []reasoningDetail `json:"reasoning_details"`
}

// reasoningDetail is one entry of OpenRouter's reasoning_details; a stream
// sends pieces of an entry, identified by index, across chunks.
type reasoningDetail struct {
	Type      string `json:"type"`
	ID        string `json:"id,omitempty"`
	Text      string `json:"text,omitempty"`
	Summary   string `json:"summary,omitempty"`
	Data      string `json:"data,omitempty"`
	Signature string `json:"signature,omitempty"`
	Format    string `json:"format,omitempty"`
	Index     int    `json:"index"`
}

type chatToolCall struct {
	Index    *int   `json:"index"`
	ID       string `json:"id"`
	Function struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	} `json:"function"`
}

type chatUsage struct {
	PromptTokens        int64 `json:"prompt_tokens"`
	CompletionTokens    int64 `json:"completion_tokens"`
	TotalTokens         int64 `json:"total_tokens"`
	PromptTokensDetails *struct {
		CachedTokens int64 `json:"cached_tokens"`
	} `json:"prompt_tokens_details"`
	CompletionTokensDetails *struct {
		ReasoningTokens int64 `json:"reasoning_tokens"`
	} `json:"completion_tokens_details"`
	PromptCacheHitTokens int64 `json:"prompt_cache_hit_tokens"` // DeepSeek
}

// chatContent is a delta's (or a whole message's) content: a string, as
// OpenAI sends it, or an array of typed parts, as Mistral's reasoning
// (Magistral) models do: {"type":"text","text":…} parts and
// {"type":"thinking","thinking":[{"type":"text","text":…}]} parts, in the
// order they were written. Null is no content.
type chatContent struct {
	text  string
	parts []contentPart
}

// contentPart is one part of an array content. Parts of other types
// (reference, image_url, …) carry nothing rein reads; they are counted as
// dropped (llm.RecordDrop).
type contentPart struct {
	Type string `json:"type"`
	Text string `json:"text"`
	// Thinking is a thinking part's content: text parts, or a string.
	Thinking json.RawMessage `json:"thinking"`
}

// UnmarshalJSON reads a string without the decoder's reflection when it has
// no escapes (the per-delta path), and an array of parts otherwise.
func (c *chatContent) UnmarshalJSON(b []byte) error {
	switch b[0] {
	case '"':
		if raw := b[1 : len(b)-1]; bytes.IndexByte(raw, '\\') < 0 && utf8.Valid(raw) {
			c.text = string(raw)
			return nil
		}
		return json.Unmarshal(b, &c.text)
	case '[':
		return json.Unmarshal(b, &c.parts)
	case '{': // a single part
		c.parts = c.parts[:0]
		var p contentPart
		if err := json.Unmarshal(b, &p); err != nil {
			return err
		}
		c.parts = append(c.parts, p)
	}
	return nil
}

// thinkingText is a thinking part's text: its text parts joined.
func (p *contentPart) thinkingText() string {
	raw := bytes.TrimSpace(p.Thinking)
	if len(raw) == 0 {
		return ""
	}
	if raw[0] == '"' {
		var s string
		_ = json.Unmarshal(raw, &s)
		return s
	}
	var parts []struct {
		Text string `json:"text"`
	}
	if raw[0] == '[' && json.Unmarshal(raw, &parts) == nil {
		var b strings.Builder
		for _, q := range parts {
			b.WriteString(q.Text)
		}
		return b.String()
	}
	return ""
}

// onceString is a field kept from the first chunk that has it: decoding it
// again on every chunk would allocate a string per delta.
type onceString struct{ s *string }

func (o onceString) UnmarshalJSON(b []byte) error {
	if o.s == nil || *o.s != "" || len(b) < 2 || b[0] != '"' {
		return nil
	}
	return json.Unmarshal(b, o.s)
}

// chatState assembles one streamed reply and yields its deltas.
type chatState struct {
	c     *client
	req   *llm.Request
	yield func(llm.Delta, error) bool

	dec                  *jsonevents.Decoder
	buf                  chatChunk // reused by every event
	id                   string
	thinking, text       strings.Builder
	hasThinking, hasText bool
	calls                []*chatCall
	order                []int // block order: orderThinking, orderText or a call's position
	details              []reasoningDetail
	finish               string
	refusal              bool
	usage                llm.Usage
}

const (
	orderThinking = -1
	orderText     = -2
)

type chatCall struct {
	index     int
	id, name  string
	synthetic bool // id made up: the server sent none yet
	args      strings.Builder
	started   bool
}

func newChatState(c *client, req *llm.Request, yield func(llm.Delta, error) bool) *chatState {
	return &chatState{c: c, req: req, yield: yield, dec: &jsonevents.Decoder{}}
}

// event handles one SSE event; it reports true at `data: [DONE]`.
func (s *chatState) event(_ string, data []byte) (bool, error) {
	data = bytes.TrimSpace(data)
	if bytes.Equal(data, []byte("[DONE]")) {
		return true, nil
	}
	// Reuse the chunk, zeroed: the decoder would keep stale fields in
	// reused slice elements.
	choices := s.buf.Choices[:cap(s.buf.Choices)]
	clear(choices)
	s.buf = chatChunk{ID: onceString{&s.id}, Choices: choices[:0]}
	if err := s.dec.Decode(data, &s.buf); err != nil {
		return false, s.c.malformed(err)
	}
	return false, s.chunk(&s.buf, false)
}

// whole handles a non-streamed reply from a server that ignored "stream".
func (s *chatState) whole(body []byte) error {
	ch := chatChunk{ID: onceString{&s.id}}
	if err := json.Unmarshal(body, &ch); err != nil {
		return s.c.malformed(err)
	}
	if err := s.chunk(&ch, true); err != nil {
		return err
	}
	if !s.startPending() {
		return errStopped
	}
	return nil
}

func (s *chatState) chunk(ch *chatChunk, whole bool) error {
	if len(ch.Error) > 0 && string(ch.Error) != "null" {
		return s.chunkError(ch.Error)
	}
	if u := ch.Usage; u != nil {
		cached := u.PromptCacheHitTokens
		if u.PromptTokensDetails != nil && u.PromptTokensDetails.CachedTokens > 0 {
			cached = u.PromptTokensDetails.CachedTokens
		}
		var reasoning int64
		if u.CompletionTokensDetails != nil {
			reasoning = u.CompletionTokensDetails.ReasoningTokens
		}
		s.usage = usage(u.PromptTokens, cached, u.CompletionTokens, reasoning, u.TotalTokens)
	}
	for i := range ch.Choices {
		c := &ch.Choices[i]
		if c.Index != 0 {
			continue // rein asks for one choice
		}
		d := &c.Delta
		if whole && c.Message != nil {
			d = c.Message
			for j := range d.ToolCalls {
				d.ToolCalls[j].Index = &j
			}
		}
		if !s.delta(d) {
			return errStopped
		}
		if c.FinishReason != "" {
			s.finish = c.FinishReason
		}
	}
	return nil
}

// chunkError classifies {"error": {...}} sent inside a stream (vLLM,
// OpenRouter) or as a whole reply with status 200.
func (s *chatState) chunkError(raw json.RawMessage) error {
	var e struct {
		Message string          `json:"message"`
		Type    string          `json:"type"`
		Code    json.RawMessage `json:"code"`
	}
	if raw[0] == '"' {
		_ = json.Unmarshal(raw, &e.Message)
	} else if err := json.Unmarshal(raw, &e); err != nil {
		return s.c.malformed(err)
	}
	return s.c.streamError(codeString(e.Code), e.Type, e.Message, raw)
}

func (s *chatState) delta(d *chatDelta) bool {
	for _, rd := range d.ReasoningDetails {
		s.addDetail(rd)
	}
	if !s.addThinking(reasoningText(d)) || !s.addText(d.Content.text) {
		return false
	}
	for i := range d.Content.parts {
		p := &d.Content.parts[i]
		switch p.Type {
		case "text":
			if !s.addText(p.Text) {
				return false
			}
		case "thinking":
			if !s.addThinking(p.thinkingText()) {
				return false
			}
		default:
			// reference, image_url, audio … parts: nothing rein keeps.
			llm.RecordDrop(s.c.name, llm.DropBlock, p.Type)
		}
	}
	if !s.addText(d.Refusal) {
		return false
	}
	if d.Refusal != "" {
		s.refusal = true
	}
	for i := range d.ToolCalls {
		if !s.toolCall(&d.ToolCalls[i]) {
			return false
		}
	}
	return true
}

// addThinking appends a piece of visible reasoning and yields it.
func (s *chatState) addThinking(r string) bool {
	if r == "" {
		return true
	}
	if !s.hasThinking {
		s.hasThinking = true
		s.order = append(s.order, orderThinking)
	}
	s.thinking.WriteString(r)
	return s.yield(llm.Delta{Kind: llm.DeltaThinking, Text: r}, nil)
}

// addText appends a piece of reply text and yields it.
func (s *chatState) addText(t string) bool {
	if t == "" {
		return true
	}
	if !s.hasText {
		s.hasText = true
		s.order = append(s.order, orderText)
	}
	s.text.WriteString(t)
	return s.yield(llm.Delta{Kind: llm.DeltaText, Text: t}, nil)
}

// reasoningText is a delta's visible reasoning: reasoning_content (DeepSeek,
// vLLM, llama.cpp) or reasoning when it is a string (Ollama, OpenRouter).
func reasoningText(d *chatDelta) string {
	if d.ReasoningContent != "" {
		return d.ReasoningContent
	}
	if len(d.Reasoning) > 0 && d.Reasoning[0] == '"' {
		var s string
		if json.Unmarshal(d.Reasoning, &s) == nil {
			return s
		}
	}
	var b strings.Builder // only structured reasoning: its text pieces
	for _, rd := range d.ReasoningDetails {
		b.WriteString(rd.Text)
		b.WriteString(rd.Summary)
	}
	return b.String()
}

// addDetail merges a piece of reasoning_details into the entry of its index.
func (s *chatState) addDetail(rd reasoningDetail) {
	if n := len(s.details); n > 0 && s.details[n-1].Index == rd.Index && s.details[n-1].Type == rd.Type {
		d := &s.details[n-1]
		d.Text += rd.Text
		d.Summary += rd.Summary
		d.Data += rd.Data
		d.Signature += rd.Signature
		d.ID = cmp.Or(d.ID, rd.ID)
		d.Format = cmp.Or(d.Format, rd.Format)
		return
	}
	s.details = append(s.details, rd)
	if len(s.details) == 1 && !s.hasThinking {
		s.hasThinking = true
		s.order = append(s.order, orderThinking)
	}
}

// toolCall applies one tool-call fragment. Fragments are matched to calls by
// index; without an index, by id, else to the latest call. A fragment whose
// id differs from its index's call starts a new call (servers that put every
// call at index 0).
func (s *chatState) toolCall(tc *chatToolCall) bool {
	call := s.findCall(tc)
	if call == nil {
		call = &chatCall{index: len(s.calls), id: tc.ID}
		if tc.Index != nil {
			call.index = *tc.Index
		}
		if call.id == "" {
			call.id, call.synthetic = syntheticID(), true
		}
		s.calls = append(s.calls, call)
		s.order = append(s.order, len(s.calls)-1)
	} else if call.synthetic && tc.ID != "" && !call.started {
		call.id, call.synthetic = tc.ID, false
	}
	if call.name == "" {
		call.name = tc.Function.Name
	}
	args := argumentsText(tc.Function.Arguments)
	call.args.WriteString(args)
	if !call.started {
		if call.name == "" {
			return true // wait for the name before announcing the call
		}
		return s.start(call)
	}
	return args == "" || s.yield(llm.Delta{Kind: llm.DeltaToolInput, ToolUseID: call.id, Text: args}, nil)
}

func (s *chatState) findCall(tc *chatToolCall) *chatCall {
	if len(s.calls) == 0 {
		return nil
	}
	if tc.Index == nil {
		if tc.ID == "" {
			return s.calls[len(s.calls)-1]
		}
		for _, c := range s.calls {
			if c.id == tc.ID {
				return c
			}
		}
		return nil
	}
	for i := len(s.calls) - 1; i >= 0; i-- {
		c := s.calls[i]
		if c.index != *tc.Index {
			continue
		}
		if tc.ID != "" && !c.synthetic && c.id != tc.ID {
			return nil
		}
		return c
	}
	return nil
}

// start announces a call and yields the arguments gathered before its name.
func (s *chatState) start(c *chatCall) bool {
	c.started = true
	if !s.yield(llm.Delta{Kind: llm.DeltaToolStart, ToolUseID: c.id, ToolName: c.name}, nil) {
		return false
	}
	return c.args.Len() == 0 || s.yield(llm.Delta{Kind: llm.DeltaToolInput, ToolUseID: c.id, Text: c.args.String()}, nil)
}

// startPending announces calls whose name never came, so every ToolUse of the
// final message was announced.
func (s *chatState) startPending() bool {
	for _, c := range s.calls {
		if !c.started && !s.start(c) {
			return false
		}
	}
	return true
}

// argumentsText reads arguments sent as a JSON string (OpenAI) or, by some
// servers, as an object.
func argumentsText(raw json.RawMessage) string {
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	if raw[0] == '"' {
		var s string
		if json.Unmarshal(raw, &s) == nil {
			return s
		}
	}
	return string(raw)
}

func syntheticID() string {
	var b [8]byte
	for i := range b {
		b[i] = byte(rand.Uint32())
	}
	return "call_" + hex.EncodeToString(b[:])
}

func (s *chatState) response() *llm.Response {
	blocks := make([]llm.Block, 0, len(s.order))
	for _, o := range s.order {
		switch o {
		case orderThinking:
			th := &llm.Thinking{Text: s.thinking.String()}
			if len(s.details) > 0 {
				// The whole reasoning_details array is the opaque proof
				// replayed to the same model.
				sig, _ := json.Marshal(s.details)
				th.Signature = string(sig)
			}
			blocks = append(blocks, th)
		case orderText:
			blocks = append(blocks, &llm.Text{Text: s.text.String()})
		default:
			c := s.calls[o]
			blocks = append(blocks, &llm.ToolUse{ID: c.id, Name: c.name, Input: toolInput(c.args.String())})
		}
	}
	r := &llm.Response{
		ID: s.id,
		Message: llm.Message{Role: llm.RoleAssistant, Content: blocks,
			Provider: s.c.name, Model: s.req.Model},
		StopReason: chatStop(s.finish, len(s.calls) > 0, s.refusal),
		Usage:      s.usage,
	}
	if r.Usage == (llm.Usage{}) {
		// No usage chunk came (a server that ignores stream_options, a
		// proxy that drops it): an estimate, never a reply that cost nothing.
		r.Usage = jsonevents.EstimateUsage(s.req, &r.Message)
	}
	return r
}

// chatStop maps a finish_reason. Some servers say "stop" after tool calls.
func chatStop(finish string, calls, refusal bool) llm.StopReason {
	switch finish {
	case "tool_calls", "function_call":
		return llm.StopToolUse
	case "length", "max_tokens":
		return llm.StopMaxTokens
	case "content_filter":
		return llm.StopRefusal
	case "stop", "eos", "end_turn", "stop_sequence", "":
		switch {
		case calls:
			return llm.StopToolUse
		case refusal:
			return llm.StopRefusal
		}
		return llm.StopEndTurn
	}
	if calls {
		return llm.StopToolUse
	}
	return llm.StopUnknownOther
}
