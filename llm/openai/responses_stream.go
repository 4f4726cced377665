package openai

import (
	"cmp"
	"encoding/json"
	"strings"

	"github.com/reinhq/rein/internal/jsonevents"
	"github.com/reinhq/rein/llm"
)

// The Responses stream: named events about output items, each at an
// output_index, ending with response.completed or response.incomplete. Only
// the events rein uses are decoded; the others are skipped unread, those
// rein does not know counted (llm.RecordDrop). Output items are kept raw
// until their type is known: only the kinds rein reads are decoded, so an
// item of another kind never fails the stream, whatever its fields hold; it
// is kept whole as an llm.Opaque block (web_search_call,
// code_interpreter_call, an item added after this adapter) and replayed to
// the Responses API as it came.

// respEvent is the union of the events read; their type comes from the SSE
// event name.
type respEvent struct {
	OutputIndex  int             `json:"output_index"`
	SummaryIndex int             `json:"summary_index"`
	Delta        string          `json:"delta"`
	Item         json.RawMessage `json:"item"`
	Response     *respResponse   `json:"response"`
	// Code and Message are an error event's, as OpenAI documents it; Error
	// holds them (and the error's type) as OpenAI sends it too:
	// {"type":"error","error":{"type":…,"code":…,"message":…}}.
	Code    json.RawMessage `json:"code"`
	Message json.RawMessage `json:"message"`
	Error   json.RawMessage `json:"error"`
}

// respError is an error object: an error event's, or a failed response's.
type respError struct {
	Type    string          `json:"type"`
	Code    json.RawMessage `json:"code"`
	Message string          `json:"message"`
}

type respItem struct {
	ID      string `json:"id"`
	Type    string `json:"type"`
	Summary []struct {
		Text string `json:"text"`
	} `json:"summary"`
	EncryptedContent string `json:"encrypted_content"`
	Content          []struct {
		Type    string `json:"type"`
		Text    string `json:"text"`
		Refusal string `json:"refusal"`
	} `json:"content"`
	CallID    string `json:"call_id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

type respResponse struct {
	ID                string     `json:"id"`
	Status            string     `json:"status"`
	Error             *respError `json:"error"`
	IncompleteDetails *struct {
		Reason string `json:"reason"`
	} `json:"incomplete_details"`
	Output []json.RawMessage `json:"output"` // items, decoded by decodeItem
	Usage  *struct {
		TotalTokens        int64 `json:"total_tokens"`
		InputTokens        int64 `json:"input_tokens"`
		InputTokensDetails *struct {
			CachedTokens int64 `json:"cached_tokens"`
		} `json:"input_tokens_details"`
		OutputTokens        int64 `json:"output_tokens"`
		OutputTokensDetails *struct {
			ReasoningTokens int64 `json:"reasoning_tokens"`
		} `json:"output_tokens_details"`
	} `json:"usage"`
}

// maxItems bounds an output_index: a larger one is malformed data, not a
// reason to allocate.
const maxItems = 1 << 12

// respState assembles one streamed response and yields its deltas.
type respState struct {
	c     *client
	req   *llm.Request
	yield func(llm.Delta, error) bool

	dec     *jsonevents.Decoder
	ev      respEvent // reused by every event
	id      string
	items   []*respOut // by output_index
	status  string
	reason  string
	refusal bool
	usage   llm.Usage
	counted bool // the response reported its usage
	// created is set by the first response.created; yielded once a delta
	// went to the consumer. A second response.created after that is a
	// spliced stream.
	created, yielded bool
}

// respOut is one output item being assembled.
type respOut struct {
	kind         string // reasoning, message, function_call, or another item type (ignored)
	id           string
	text         strings.Builder // summary, or message text
	summaryIndex int
	signature    string
	callID, name string
	args         strings.Builder
	started      bool
	done         bool   // its output_item.done came (a call's arguments are whole)
	raw          []byte // an item of a kind rein does not model: its JSON, the latest sent
	oversize     bool   // raw was over llm.MaxOpaqueBytes
}

func newRespState(c *client, req *llm.Request, yield func(llm.Delta, error) bool) *respState {
	s := &respState{c: c, req: req, dec: &jsonevents.Decoder{}}
	s.yield = func(d llm.Delta, err error) bool {
		s.yielded = true
		return yield(d, err)
	}
	return s
}

// respEvents are the event types read; every other one is skipped.
var respEvents = map[string]bool{
	"response.created": true, "response.in_progress": true,
	"response.output_item.added": true, "response.output_item.done": true,
	"response.reasoning_summary_text.delta": true, "response.reasoning_text.delta": true,
	"response.output_text.delta": true, "response.refusal.delta": true,
	"response.function_call_arguments.delta": true,
	"response.completed":                     true, "response.incomplete": true, "response.failed": true, "error": true,
}

// event handles one SSE event; it reports true at the response's final event.
func (s *respState) event(typ string, data []byte) (bool, error) {
	if typ == "" { // a server that names events only inside the data
		var peek struct {
			Type string `json:"type"`
		}
		if err := json.Unmarshal(data, &peek); err != nil {
			return false, s.c.malformed(err)
		}
		typ = peek.Type
	}
	if !respEvents[typ] {
		if !json.Valid(data) {
			return false, s.c.malformed(errInvalidJSON)
		}
		if !redundant(typ) {
			llm.RecordDrop(s.c.name, llm.DropEvent, typ)
		}
		return false, nil
	}
	s.ev = respEvent{}
	if err := s.dec.Decode(data, &s.ev); err != nil {
		return false, s.c.malformed(err)
	}
	return s.handle(typ, &s.ev, data)
}

var errInvalidJSON = jsonError("event data is not valid JSON")

type jsonError string

func (e jsonError) Error() string { return string(e) }

func (s *respState) handle(typ string, ev *respEvent, data []byte) (bool, error) {
	if ev.OutputIndex < 0 || ev.OutputIndex >= maxItems {
		return false, s.c.malformed(jsonError("output_index out of range"))
	}
	ok := true
	switch typ {
	case "response.created", "response.in_progress":
		if typ == "response.created" && s.created {
			if s.yielded {
				// A proxy that retried upstream and spliced the new stream
				// onto the old: what was streamed is not the response that
				// follows. Malformed data is retried (PROV-7).
				return false, s.c.malformed(jsonError("a second response.created after content was streamed: the stream was spliced (a proxy retrying mid-stream)"))
			}
			s.items, s.id, s.refusal = s.items[:0], "", false // nothing streamed: the new one replaces it
		}
		s.created = s.created || typ == "response.created"
		if ev.Response != nil && s.id == "" {
			s.id = ev.Response.ID
		}
	case "response.output_item.added":
		item, kind, err := s.decodeItem(ev.Item)
		if err == nil {
			err = s.claim(ev.OutputIndex, kind)
		}
		switch {
		case err != nil:
			return false, err
		case item != nil:
			ok = s.added(ev.OutputIndex, item)
		default:
			s.other(ev.OutputIndex, kind, ev.Item) // another kind: kept opaque
		}
	case "response.reasoning_summary_text.delta", "response.reasoning_text.delta":
		if err := s.claim(ev.OutputIndex, "reasoning"); err != nil {
			return false, err
		}
		it := s.at(ev.OutputIndex, "reasoning")
		d := ev.Delta
		if typ == "response.reasoning_summary_text.delta" && ev.SummaryIndex != it.summaryIndex && it.text.Len() > 0 {
			d = "\n\n" + d // a new summary part
		}
		it.summaryIndex = ev.SummaryIndex
		ok = s.thinking(it, d)
	case "response.output_text.delta", "response.refusal.delta":
		if err := s.claim(ev.OutputIndex, "message"); err != nil {
			return false, err
		}
		s.refusal = s.refusal || typ == "response.refusal.delta"
		ok = s.text(s.at(ev.OutputIndex, "message"), ev.Delta)
	case "response.function_call_arguments.delta":
		if err := s.claim(ev.OutputIndex, "function_call"); err != nil {
			return false, err
		}
		it := s.at(ev.OutputIndex, "function_call")
		it.args.WriteString(ev.Delta)
		if it.started && ev.Delta != "" {
			ok = s.yield(llm.Delta{Kind: llm.DeltaToolInput, ToolUseID: it.callID, Text: ev.Delta}, nil)
		}
	case "response.output_item.done":
		item, kind, err := s.decodeItem(ev.Item)
		if err == nil {
			err = s.claim(ev.OutputIndex, kind)
		}
		switch {
		case err != nil:
			return false, err
		case item != nil:
			ok = s.done(ev.OutputIndex, item)
		default:
			s.other(ev.OutputIndex, kind, ev.Item)
		}
	case "response.completed", "response.incomplete":
		if ev.Response == nil {
			return false, s.c.malformed(jsonError(typ + " without a response"))
		}
		return true, s.finish(ev.Response)
	case "response.failed":
		if ev.Response != nil && ev.Response.Error != nil {
			e := ev.Response.Error
			return false, s.c.streamError(codeString(e.Code), e.Type, e.Message, nil)
		}
		return false, s.c.streamError("", "", "response failed", nil)
	case "error":
		return false, s.errorEvent(ev, data)
	}
	if !ok {
		return false, errStopped
	}
	return false, nil
}

// errorEvent classifies an error event, its details at the top level (as
// OpenAI documents it) or nested in "error" (as OpenAI sends it, e.g. a
// used-up quota), with the vendor's message kept.
func (s *respState) errorEvent(ev *respEvent, data []byte) *llm.Error {
	code, msg := codeString(ev.Code), jsonText(ev.Message)
	var typ string
	if raw := ev.Error; len(raw) > 0 {
		var e respError
		switch {
		case raw[0] == '{' && json.Unmarshal(raw, &e) == nil:
			code, typ, msg = cmp.Or(codeString(e.Code), code), e.Type, cmp.Or(e.Message, msg)
		case raw[0] == '"':
			msg = cmp.Or(jsonText(raw), msg)
		}
	}
	return s.c.streamError(code, typ, msg, data)
}

// jsonText is raw as text: a JSON string's value, else raw itself.
func jsonText(raw json.RawMessage) string {
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	var s string
	if raw[0] == '"' && json.Unmarshal(raw, &s) == nil {
		return s
	}
	return string(raw)
}

// respKinds are the output items rein reads; every other kind is skipped.
var respKinds = map[string]bool{"message": true, "reasoning": true, "function_call": true}

// decodeItem decodes an output item of a kind rein reads; item is nil for
// any other kind (its kind returned, "" when it names none), and for no item
// at all. Only a read kind that does not decode is an error.
func (s *respState) decodeItem(raw json.RawMessage) (item *respItem, kind string, err error) {
	if len(raw) == 0 || raw[0] != '{' {
		return nil, "", nil
	}
	var peek struct {
		Type json.RawMessage `json:"type"`
	}
	if json.Unmarshal(raw, &peek) != nil {
		return nil, "", nil
	}
	kind = jsonText(peek.Type)
	if !respKinds[kind] {
		return nil, kind, nil
	}
	item = &respItem{}
	if err := json.Unmarshal(raw, item); err != nil {
		return nil, kind, s.c.malformed(err)
	}
	return item, kind, nil
}

func codeString(raw json.RawMessage) string {
	c := strings.Trim(string(raw), `"`)
	if c == "null" {
		return ""
	}
	return c
}

// whole handles a non-streamed reply.
func (s *respState) whole(body []byte) error {
	var r respResponse
	if err := json.Unmarshal(body, &r); err != nil {
		return s.c.malformed(err)
	}
	if r.Status == "failed" && r.Error != nil {
		return s.c.streamError(codeString(r.Error.Code), r.Error.Type, r.Error.Message, nil)
	}
	s.id = r.ID
	return s.finish(&r)
}

// at returns the item at output index i, made with kind if not seen yet.
func (s *respState) at(i int, kind string) *respOut {
	if i < 0 {
		i = 0
	}
	for len(s.items) <= i {
		s.items = append(s.items, nil)
	}
	if s.items[i] == nil {
		s.items[i] = &respOut{kind: kind}
	}
	return s.items[i]
}

func (s *respState) added(i int, item *respItem) bool {
	it := s.at(i, item.Type)
	it.kind, it.id = item.Type, item.ID
	if item.Type != "function_call" {
		return true
	}
	it.callID, it.name = callID(item), item.Name
	it.args.WriteString(item.Arguments)
	return s.start(it)
}

func callID(item *respItem) string {
	switch {
	case item.CallID != "":
		return item.CallID
	case item.ID != "":
		return item.ID
	}
	return syntheticID()
}

// start announces a function call, with any arguments already gathered.
func (s *respState) start(it *respOut) bool {
	if it.started {
		return true
	}
	it.started = true
	if !s.yield(llm.Delta{Kind: llm.DeltaToolStart, ToolUseID: it.callID, ToolName: it.name}, nil) {
		return false
	}
	return it.args.Len() == 0 || s.yield(llm.Delta{Kind: llm.DeltaToolInput, ToolUseID: it.callID, Text: it.args.String()}, nil)
}

func (s *respState) thinking(it *respOut, d string) bool {
	if d == "" {
		return true
	}
	it.text.WriteString(d)
	return s.yield(llm.Delta{Kind: llm.DeltaThinking, Text: d}, nil)
}

func (s *respState) text(it *respOut, d string) bool {
	if d == "" {
		return true
	}
	it.text.WriteString(d)
	return s.yield(llm.Delta{Kind: llm.DeltaText, Text: d}, nil)
}

// done completes an item from its final form: the reasoning's id and
// encrypted content, and whatever the deltas did not carry.
func (s *respState) done(i int, item *respItem) bool {
	it := s.at(i, item.Type)
	it.kind, it.done = item.Type, true
	if item.ID != "" {
		it.id = item.ID
	}
	switch item.Type {
	case "reasoning":
		it.signature = item.EncryptedContent
		if it.text.Len() == 0 {
			parts := make([]string, 0, len(item.Summary))
			for _, p := range item.Summary {
				parts = append(parts, p.Text)
			}
			return s.thinking(it, strings.Join(parts, "\n\n"))
		}
	case "message":
		if it.text.Len() == 0 {
			var b strings.Builder
			for _, c := range item.Content {
				b.WriteString(c.Text)
				b.WriteString(c.Refusal)
				s.refusal = s.refusal || c.Type == "refusal"
			}
			return s.text(it, b.String())
		}
	case "function_call":
		if it.callID == "" {
			it.callID = callID(item)
		}
		if it.name == "" {
			it.name = item.Name
		}
		if !s.start(it) {
			return false
		}
		if it.args.Len() == 0 && item.Arguments != "" {
			it.args.WriteString(item.Arguments)
			return s.yield(llm.Delta{Kind: llm.DeltaToolInput, ToolUseID: it.callID, Text: item.Arguments}, nil)
		}
	}
	return true
}

// finish records the final response; a server that streamed no items gets
// them from the response's output.
func (s *respState) finish(r *respResponse) error {
	if s.id == "" {
		s.id = r.ID
	}
	s.status = r.Status
	if r.IncompleteDetails != nil {
		s.reason = r.IncompleteDetails.Reason
	}
	if s.status == "" && s.reason != "" {
		s.status = "incomplete" // a server that sent the reason without the status
	}
	if u := r.Usage; u != nil {
		var cached, reasoning int64
		if u.InputTokensDetails != nil {
			cached = u.InputTokensDetails.CachedTokens
		}
		if u.OutputTokensDetails != nil {
			reasoning = u.OutputTokensDetails.ReasoningTokens
		}
		s.usage = usage(u.InputTokens, cached, u.OutputTokens, reasoning, u.TotalTokens)
		s.counted = s.usage != (llm.Usage{})
	}
	if len(s.items) == 0 {
		for i, raw := range r.Output {
			item, kind, err := s.decodeItem(raw)
			switch {
			case err != nil:
				return err
			case item != nil:
				if !s.done(i, item) {
					return errStopped
				}
			default:
				s.other(i, kind, raw)
			}
		}
	}
	return nil
}

func (s *respState) response() *llm.Response {
	blocks := make([]llm.Block, 0, len(s.items))
	calls, whole := false, true
	for _, it := range s.items {
		if it == nil {
			continue
		}
		switch it.kind {
		case "reasoning":
			blocks = append(blocks, &llm.Thinking{ID: it.id, Text: it.text.String(), Signature: it.signature})
		case "message":
			if it.text.Len() > 0 {
				blocks = append(blocks, &llm.Text{Text: it.text.String()})
			}
		case "function_call":
			calls = true
			whole = whole && it.done
			blocks = append(blocks, &llm.ToolUse{ID: it.callID, Name: it.name, Input: toolInput(it.args.String())})
		default:
			blocks = append(blocks, s.opaque(it))
		}
	}
	blocks = jsonevents.KeepOpaque(s.c.name, blocks)
	r := &llm.Response{
		ID:         s.id,
		Message:    llm.Message{Role: llm.RoleAssistant, Content: blocks, Provider: s.c.name, Model: s.req.Model},
		StopReason: respStop(s.status, s.reason, calls, whole, s.refusal),
		Usage:      s.usage,
	}
	if !s.counted { // a server that reported no usage: estimated
		r.Usage = jsonevents.EstimateUsage(s.req, &r.Message)
	}
	return r
}

// respStop maps a response's status onto a stop reason. An incomplete reply
// (status incomplete) stopped at max_output_tokens is StopMaxTokens, calls
// or not: the loop still sees its calls and answers each "not run" (LOOP-5),
// since one may be cut. One stopped by the content filter is a refusal. One
// stopped for a reason rein does not know is StopToolUse when its calls are
// all whole (each had its output_item.done), StopMaxTokens when one may be
// cut, and StopUnknownOther without calls.
func respStop(status, reason string, calls, whole, refusal bool) llm.StopReason {
	switch {
	case status == "incomplete" && reason == "max_output_tokens":
		return llm.StopMaxTokens
	case status == "incomplete" && reason == "content_filter":
		return llm.StopRefusal
	case status == "incomplete" && calls && whole:
		return llm.StopToolUse
	case status == "incomplete" && calls:
		return llm.StopMaxTokens
	case status == "incomplete":
		return llm.StopUnknownOther
	case calls:
		return llm.StopToolUse
	case refusal:
		return llm.StopRefusal
	case status == "completed" || status == "":
		return llm.StopEndTurn
	}
	return llm.StopUnknownOther
}
