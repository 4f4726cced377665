package cli

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/reinhq/rein/agent"
	"github.com/reinhq/rein/llm"
)

// The messages of Claude Code's --output-format json and stream-json
// (docs/cli.md "Claude Code's headless flags"; SPEC COMPAT-1): field names
// and types as Claude Code's SDK types them (SDKResultMessage,
// SDKSystemMessage, SDKAssistantMessage, SDKUserMessage,
// SDKPartialAssistantMessage).

// ccUsage is an Anthropic Messages API usage object.
type ccUsage struct {
	InputTokens              int64 `json:"input_tokens"`
	CacheCreationInputTokens int64 `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int64 `json:"cache_read_input_tokens"`
	OutputTokens             int64 `json:"output_tokens"`
}

func ccUsageOf(u llm.Usage) ccUsage {
	return ccUsage{InputTokens: u.InputTokens, CacheCreationInputTokens: u.CacheWriteTokens,
		CacheReadInputTokens: u.CacheReadTokens, OutputTokens: u.OutputTokens}
}

// ccModelUsage is one model's entry of the result's modelUsage.
type ccModelUsage struct {
	InputTokens              int64   `json:"inputTokens"`
	OutputTokens             int64   `json:"outputTokens"`
	CacheReadInputTokens     int64   `json:"cacheReadInputTokens"`
	CacheCreationInputTokens int64   `json:"cacheCreationInputTokens"`
	WebSearchRequests        int     `json:"webSearchRequests"`
	CostUSD                  float64 `json:"costUSD"`
	ContextWindow            int     `json:"contextWindow"`
	MaxOutputTokens          int     `json:"maxOutputTokens"`
}

// ccDenial is one entry of the result's permission_denials.
type ccDenial struct {
	ToolName  string          `json:"tool_name"`
	ToolUseID string          `json:"tool_use_id"`
	ToolInput json.RawMessage `json:"tool_input"`
}

// The result subtypes.
const (
	ccSuccess        = "success"
	ccErrMaxTurns    = "error_max_turns"
	ccErrExecution   = "error_during_execution"
	ccErrMaxBudget   = "error_max_budget_usd"
	ccResultType     = "result"
	ccSystemType     = "system"
	ccAssistantType  = "assistant"
	ccUserType       = "user"
	ccStreamType     = "stream_event"
	ccInitSubtype    = "init"
	ccRetrySubtype   = "api_retry"
	ccCompactSubtype = "compact_boundary"
)

// ccMaxRetries is api_retry's max_retries: rein's retry policy makes at
// most 10 attempts of a model call, the first included (llm.RetryPolicy's
// default, which no caller changes).
const ccMaxRetries = 9

// ccResult is the last line of stream-json and the one object of json.
// Result is set on success only; Errors on the error subtypes only.
type ccResult struct {
	Type              string                  `json:"type"`
	Subtype           string                  `json:"subtype"`
	UUID              string                  `json:"uuid"`
	SessionID         string                  `json:"session_id"`
	DurationMS        int64                   `json:"duration_ms"`
	DurationAPIMS     int64                   `json:"duration_api_ms"`
	IsError           bool                    `json:"is_error"`
	NumTurns          int                     `json:"num_turns"`
	Result            *string                 `json:"result,omitempty"`
	StopReason        *string                 `json:"stop_reason"`
	TotalCostUSD      float64                 `json:"total_cost_usd"`
	Usage             ccUsage                 `json:"usage"`
	ModelUsage        map[string]ccModelUsage `json:"modelUsage"`
	PermissionDenials []ccDenial              `json:"permission_denials"`
	Errors            []string                `json:"errors,omitempty"`
}

// ccMCPServer is a server of system/init.
type ccMCPServer struct {
	Name   string `json:"name"`
	Status string `json:"status"`
}

// ccPlugin is a plugin of system/init (rein loads none).
type ccPlugin struct {
	Name string `json:"name"`
	Path string `json:"path"`
}

// ccInit is the system/init line.
type ccInit struct {
	Type           string        `json:"type"`
	Subtype        string        `json:"subtype"`
	UUID           string        `json:"uuid"`
	SessionID      string        `json:"session_id"`
	APIKeySource   string        `json:"apiKeySource"`
	Cwd            string        `json:"cwd"`
	Tools          []string      `json:"tools"`
	MCPServers     []ccMCPServer `json:"mcp_servers"`
	Model          string        `json:"model"`
	PermissionMode string        `json:"permissionMode"`
	SlashCommands  []string      `json:"slash_commands"`
	OutputStyle    string        `json:"output_style"`
	Agents         []string      `json:"agents"`
	Skills         []string      `json:"skills"`
	Plugins        []ccPlugin    `json:"plugins"`
}

// ccSystem is another system line: api_retry or compact_boundary.
type ccSystem struct {
	Type      string `json:"type"`
	Subtype   string `json:"subtype"`
	UUID      string `json:"uuid"`
	SessionID string `json:"session_id"`
	// api_retry:
	Attempt      int     `json:"attempt,omitempty"`
	MaxRetries   int     `json:"max_retries,omitempty"`
	RetryDelayMS int64   `json:"retry_delay_ms,omitempty"`
	ErrorStatus  *int    `json:"error_status,omitempty"`
	Error        string  `json:"error,omitempty"`
	Compact      *ccMeta `json:"compact_metadata,omitempty"`
}

// ccMeta is compact_boundary's compact_metadata.
type ccMeta struct {
	Trigger   string `json:"trigger"`
	PreTokens int    `json:"pre_tokens"`
}

// ccAPIMessage is an assistant message as the Messages API returns it.
type ccAPIMessage struct {
	ID           string    `json:"id"`
	Type         string    `json:"type"`
	Role         string    `json:"role"`
	Model        string    `json:"model"`
	Content      []ccBlock `json:"content"`
	StopReason   *string   `json:"stop_reason"`
	StopSequence *string   `json:"stop_sequence"`
	Usage        ccUsage   `json:"usage"`
}

// ccBlock is a content block: text, thinking, redacted_thinking,
// tool_use, tool_result or image; only its kind's fields are set.
type ccBlock struct {
	Type      string          `json:"type"`
	Text      *string         `json:"text,omitempty"`
	Thinking  *string         `json:"thinking,omitempty"`
	Signature *string         `json:"signature,omitempty"`
	Data      string          `json:"data,omitempty"`
	ID        string          `json:"id,omitempty"`
	Name      string          `json:"name,omitempty"`
	Input     json.RawMessage `json:"input,omitempty"`
	ToolUseID string          `json:"tool_use_id,omitempty"`
	Content   any             `json:"content,omitempty"`
	IsError   *bool           `json:"is_error,omitempty"`
	Source    *ccImageSource  `json:"source,omitempty"`
}

// ccImageSource is an image block's base64 source.
type ccImageSource struct {
	Type      string `json:"type"`
	MediaType string `json:"media_type"`
	Data      []byte `json:"data"`
}

// ccAssistant is an assistant line.
type ccAssistant struct {
	Type            string       `json:"type"`
	UUID            string       `json:"uuid"`
	SessionID       string       `json:"session_id"`
	Message         ccAPIMessage `json:"message"`
	ParentToolUseID *string      `json:"parent_tool_use_id"`
}

// ccUserMessage is the message of a user line.
type ccUserMessage struct {
	Role    string    `json:"role"`
	Content []ccBlock `json:"content"`
}

// ccUser is a user line: the results of tool calls.
type ccUser struct {
	Type            string        `json:"type"`
	UUID            string        `json:"uuid"`
	SessionID       string        `json:"session_id"`
	Message         ccUserMessage `json:"message"`
	ParentToolUseID *string       `json:"parent_tool_use_id"`
}

// ccStreamEvent is a stream_event line: one raw Messages API stream event.
type ccStreamEvent struct {
	Type            string  `json:"type"`
	UUID            string  `json:"uuid"`
	SessionID       string  `json:"session_id"`
	Event           any     `json:"event"`
	ParentToolUseID *string `json:"parent_tool_use_id"`
}

// ccInitInfo is what system/init reports of the engine, asked for when the
// first run starts (its session and tools exist then).
type ccInitInfo struct {
	cwd, model, permissionMode, apiKeySource string
	tools, agents, skills                    []string
	mcp                                      []ccMCPServer
	contextWindow, maxOutput                 int
}

// ccSink writes a run's events as Claude Code's json (the result object
// alone) or stream-json (every line).
type ccSink struct {
	w       io.Writer
	stream  bool
	partial bool
	info    func() ccInitInfo
	inited  bool
	model   ccInitInfo // filled at the first run_start

	// Per run:
	callStart  time.Time
	apiMS      int64
	denials    []ccDenial
	denied     map[string]bool
	inputs     map[string]json.RawMessage
	stopReason *string
	subModels  map[string]string // a sub-agent's call id → its model
	modelUsage map[string]ccModelUsage
	lastCost   map[string]float64 // a run's cumulative cost so far, by call id ("" for the main run)
	msgID      string             // the main agent's current message id
	started    bool               // message_start sent for msgID
	block      int                // the open content block's index, -1 for none
	blockKind  string             // its kind: text or thinking
	blocks     int                // blocks started in this message
	session    string             // the session of the event being written
	turnUsage  ccUsage            // the main agent's current model call
}

// newCCSink returns the writer of Claude Code's format ("json" or
// "stream-json"); info describes the engine for system/init.
func newCCSink(w io.Writer, format string, partial bool, info func() ccInitInfo) *ccSink {
	s := &ccSink{w: w, stream: format == "stream-json", partial: partial, info: info}
	s.reset()
	return s
}

// reset starts the bookkeeping of a new run.
func (s *ccSink) reset() {
	s.apiMS, s.denials, s.stopReason = 0, []ccDenial{}, nil
	s.denied, s.inputs = map[string]bool{}, map[string]json.RawMessage{}
	s.subModels, s.modelUsage, s.lastCost = map[string]string{}, map[string]ccModelUsage{}, map[string]float64{}
	s.msgID, s.started, s.block, s.blocks = "", false, -1, 0
}

func (s *ccSink) event(ev agent.Event) error {
	parent := parentOf(ev)
	if ev.SessionID != "" {
		s.session = ev.SessionID
	}
	switch ev.Type {
	case agent.EventRunStart, agent.EventSubagentStart:
		if ev.Subagent != nil || ev.Type == agent.EventSubagentStart {
			if ev.RunStart != nil && ev.Subagent != nil {
				s.subModels[ev.Subagent.ParentCallID] = ev.RunStart.Model
			}
			return nil
		}
		s.reset()
		s.callStart = ev.Time
		if !s.inited {
			s.inited = true
			s.model = s.info()
			if ev.RunStart != nil && ev.RunStart.Model != "" {
				s.model.model = ev.RunStart.Model
			}
			i := s.model
			return s.line(ccInit{Type: ccSystemType, Subtype: ccInitSubtype, UUID: newUUID(), SessionID: ev.SessionID,
				APIKeySource: i.apiKeySource, Cwd: i.cwd, Tools: orEmpty(i.tools), MCPServers: orEmptyMCP(i.mcp), Model: i.model,
				PermissionMode: i.permissionMode, SlashCommands: []string{}, OutputStyle: "default", Agents: orEmpty(i.agents),
				Skills: orEmpty(i.skills), Plugins: []ccPlugin{}})
		}
	case agent.EventTextDelta, agent.EventThinkingDelta:
		if parent == nil && s.partial {
			return s.delta(ev)
		}
	case agent.EventUsage:
		if u := ev.Usage; u != nil {
			s.addUsage(ev, u)
			if parent == nil {
				s.turnUsage = ccUsageOf(u.Turn)
			}
		}
	case agent.EventMessage:
		return s.message(ev, parent)
	case agent.EventToolStart:
		if t := ev.Tool; t != nil {
			s.inputs[t.ID] = t.Input
		}
	case agent.EventToolEnd:
		if t := ev.Tool; t != nil && (t.Outcome == agent.OutcomeDenied || t.Outcome == agent.OutcomeBlocked) {
			s.deny(t.Name, t.ID, nil)
		}
	case agent.EventPermissionDecision:
		if p := ev.Permission; p != nil && p.Decision == agent.Deny {
			s.deny(p.Tool, p.CallID, nil)
		}
	case agent.EventRetry:
		if r := ev.Retry; r != nil && s.stream && parent == nil {
			var status *int
			if r.Status != 0 {
				status = &r.Status
			}
			return s.line(ccSystem{Type: ccSystemType, Subtype: ccRetrySubtype, UUID: newUUID(), SessionID: ev.SessionID,
				Attempt: r.Attempt, MaxRetries: ccMaxRetries, RetryDelayMS: r.DelayMS, ErrorStatus: status, Error: r.Message})
		}
	case agent.EventCompaction:
		if c := ev.Compaction; c != nil && s.stream && parent == nil {
			trigger := "auto"
			if c.Trigger == agent.TriggerManual {
				trigger = "manual"
			}
			return s.line(ccSystem{Type: ccSystemType, Subtype: ccCompactSubtype, UUID: newUUID(), SessionID: ev.SessionID,
				Compact: &ccMeta{Trigger: trigger, PreTokens: c.TokensBefore}})
		}
	case agent.EventDone:
		if ev.Done != nil && ev.Subagent == nil {
			return s.write(s.result(ev))
		}
	}
	return nil
}

// parentOf is the parent_tool_use_id of an event: the call that started
// the sub-agent it comes from, nil for the main agent's.
func parentOf(ev agent.Event) *string {
	if ev.Subagent == nil {
		return nil
	}
	id := ev.Subagent.ParentCallID
	return &id
}

// deny records a permission denial once per call.
func (s *ccSink) deny(name, id string, input json.RawMessage) {
	if s.denied[id] {
		return
	}
	s.denied[id] = true
	if len(input) == 0 {
		input = s.inputs[id]
	}
	if len(input) == 0 {
		input = json.RawMessage(`{}`)
	}
	s.denials = append(s.denials, ccDenial{ToolName: name, ToolUseID: id, ToolInput: input})
}

// addUsage adds one model call to modelUsage, by the model that made it;
// the cost of the call is the growth of its run's cumulative cost.
func (s *ccSink) addUsage(ev agent.Event, u *agent.UsageEvent) {
	model, key := s.model.model, ""
	if ev.Subagent != nil {
		key = ev.Subagent.ParentCallID
		if m := s.subModels[key]; m != "" {
			model = m
		}
	}
	mu := s.modelUsage[model]
	mu.InputTokens += u.Turn.InputTokens
	mu.OutputTokens += u.Turn.OutputTokens
	mu.CacheReadInputTokens += u.Turn.CacheReadTokens
	mu.CacheCreationInputTokens += u.Turn.CacheWriteTokens
	if u.CostUSD > s.lastCost[key] {
		mu.CostUSD += u.CostUSD - s.lastCost[key]
		s.lastCost[key] = u.CostUSD
	}
	if model == s.model.model {
		mu.ContextWindow, mu.MaxOutputTokens = s.model.contextWindow, s.model.maxOutput
	}
	s.modelUsage[model] = mu
}

// message writes an assistant or user line for a message of the
// conversation. The prompt itself is not echoed, as in Claude Code; a
// sub-agent's lines carry only its tool calls and results.
func (s *ccSink) message(ev agent.Event, parent *string) error {
	m := ev.Message
	if m == nil {
		return nil
	}
	if m.Role == llm.RoleAssistant {
		stop := "end_turn"
		for _, tu := range m.ToolUses() {
			stop = "tool_use"
			s.inputs[tu.ID] = tu.Input // for permission_denials
		}
		if parent == nil {
			s.stopReason = &stop
			if !ev.Time.IsZero() && !s.callStart.IsZero() {
				s.apiMS += ev.Time.Sub(s.callStart).Milliseconds()
			}
		}
		content := ccContent(m.Content, parent != nil)
		if parent != nil && len(content) == 0 {
			return nil
		}
		id := s.msgID
		if parent != nil || id == "" {
			id = newMsgID()
		}
		msg := ccAPIMessage{ID: id, Type: "message", Role: "assistant", Model: m.Model, Content: content,
			StopReason: &stop}
		if parent == nil {
			msg.Usage, s.turnUsage = s.turnUsage, ccUsage{}
		}
		if parent == nil && s.partial {
			if err := s.endPartial(msg, m); err != nil {
				return err
			}
		}
		if parent == nil {
			s.msgID, s.started, s.block, s.blocks = "", false, -1, 0
		}
		if !s.stream {
			return nil
		}
		return s.line(ccAssistant{Type: ccAssistantType, UUID: newUUID(), SessionID: ev.SessionID, Message: msg, ParentToolUseID: parent})
	}
	var results []ccBlock
	for _, b := range m.Content {
		if r, ok := b.(*llm.ToolResult); ok {
			results = append(results, ccToolResult(r))
		}
	}
	if len(results) == 0 {
		return nil // the prompt
	}
	if parent == nil {
		s.callStart = ev.Time // the next model call starts now
	}
	if !s.stream {
		return nil
	}
	return s.line(ccUser{Type: ccUserType, UUID: newUUID(), SessionID: ev.SessionID,
		Message: ccUserMessage{Role: "user", Content: results}, ParentToolUseID: parent})
}

// ccContent converts an assistant message's blocks; toolsOnly keeps the
// tool calls alone (a sub-agent's, as Claude Code forwards them).
func ccContent(blocks []llm.Block, toolsOnly bool) []ccBlock {
	out := []ccBlock{}
	for _, b := range blocks {
		switch b := b.(type) {
		case *llm.ToolUse:
			in := b.Input
			if len(in) == 0 {
				in = json.RawMessage(`{}`)
			}
			out = append(out, ccBlock{Type: "tool_use", ID: b.ID, Name: b.Name, Input: in})
		case *llm.Text:
			if !toolsOnly {
				out = append(out, ccBlock{Type: "text", Text: &b.Text})
			}
		case *llm.Thinking:
			switch {
			case toolsOnly:
			case b.Redacted:
				out = append(out, ccBlock{Type: "redacted_thinking", Data: b.Signature})
			default:
				out = append(out, ccBlock{Type: "thinking", Thinking: &b.Text, Signature: &b.Signature})
			}
		}
	}
	return out
}

// ccToolResult converts a tool result: its content is a string when it is
// text alone, else a list of text and image blocks.
func ccToolResult(r *llm.ToolResult) ccBlock {
	isErr := r.IsError
	out := ccBlock{Type: "tool_result", ToolUseID: r.ToolUseID, IsError: &isErr}
	var text strings.Builder
	var blocks []ccBlock
	images := false
	for _, c := range r.Content {
		switch c := c.(type) {
		case *llm.Text:
			text.WriteString(c.Text)
			blocks = append(blocks, ccBlock{Type: "text", Text: &c.Text})
		case *llm.Image:
			images = true
			blocks = append(blocks, ccBlock{Type: "image", Source: &ccImageSource{Type: "base64", MediaType: c.MediaType, Data: c.Data}})
		}
	}
	if images {
		out.Content = blocks
	} else {
		out.Content = text.String()
	}
	return out
}

// delta writes a text or thinking delta as stream events, opening the
// message and the block first when needed.
func (s *ccSink) delta(ev agent.Event) error {
	if err := s.startPartial(); err != nil {
		return err
	}
	kind, dtype, field := "text", "text_delta", "text"
	if ev.Type == agent.EventThinkingDelta {
		kind, dtype, field = "thinking", "thinking_delta", "thinking"
	}
	if s.blockKind != kind || s.block < 0 {
		if err := s.stopBlock(); err != nil {
			return err
		}
		s.block, s.blockKind = s.blocks, kind
		s.blocks++
		start := map[string]any{"type": kind, field: ""}
		if kind == "thinking" {
			start["signature"] = ""
		}
		if err := s.streamEvent(map[string]any{"type": "content_block_start", "index": s.block, "content_block": start}); err != nil {
			return err
		}
	}
	return s.streamEvent(map[string]any{"type": "content_block_delta", "index": s.block,
		"delta": map[string]any{"type": dtype, field: ev.Text}})
}

// startPartial sends message_start for the main agent's message, once.
func (s *ccSink) startPartial() error {
	if s.started {
		return nil
	}
	if s.msgID == "" {
		s.msgID = newMsgID()
	}
	s.started = true
	return s.streamEvent(map[string]any{"type": "message_start", "message": ccAPIMessage{ID: s.msgID, Type: "message",
		Role: "assistant", Model: s.model.model, Content: []ccBlock{}, Usage: ccUsage{}}})
}

// stopBlock closes the open content block, if any.
func (s *ccSink) stopBlock() error {
	if s.block < 0 {
		return nil
	}
	i := s.block
	s.block, s.blockKind = -1, ""
	return s.streamEvent(map[string]any{"type": "content_block_stop", "index": i})
}

// endPartial finishes the message's stream events: its tool calls as
// tool_use blocks with their input in one input_json_delta, then
// message_delta and message_stop.
func (s *ccSink) endPartial(msg ccAPIMessage, m *llm.Message) error {
	if err := s.startPartial(); err != nil {
		return err
	}
	if err := s.stopBlock(); err != nil {
		return err
	}
	for _, tu := range m.ToolUses() {
		i := s.blocks
		s.blocks++
		in := string(tu.Input)
		if in == "" {
			in = "{}"
		}
		for _, e := range []map[string]any{
			{"type": "content_block_start", "index": i, "content_block": map[string]any{"type": "tool_use", "id": tu.ID, "name": tu.Name, "input": map[string]any{}}},
			{"type": "content_block_delta", "index": i, "delta": map[string]any{"type": "input_json_delta", "partial_json": in}},
			{"type": "content_block_stop", "index": i},
		} {
			if err := s.streamEvent(e); err != nil {
				return err
			}
		}
	}
	if err := s.streamEvent(map[string]any{"type": "message_delta",
		"delta": map[string]any{"stop_reason": *msg.StopReason, "stop_sequence": nil},
		"usage": map[string]any{"output_tokens": msg.Usage.OutputTokens}}); err != nil {
		return err
	}
	return s.streamEvent(map[string]any{"type": "message_stop"})
}

// streamEvent writes one stream_event line.
func (s *ccSink) streamEvent(e any) error {
	return s.line(ccStreamEvent{Type: ccStreamType, UUID: newUUID(), SessionID: s.session, Event: e})
}

// result builds the result object of a finished run.
func (s *ccSink) result(ev agent.Event) ccResult {
	d := ev.Done
	r := ccResult{Type: ccResultType, Subtype: ccSubtype(d.Reason), UUID: newUUID(), SessionID: ev.SessionID,
		DurationMS: d.DurationMS, DurationAPIMS: s.apiMS, NumTurns: d.Turns, StopReason: s.stopReason,
		TotalCostUSD: d.CostUSD, Usage: ccUsageOf(d.Usage), ModelUsage: s.modelUsage, PermissionDenials: s.denials}
	switch d.Reason {
	case agent.ReasonMaxTokens, agent.ReasonRefusal:
		stop := string(d.Reason)
		r.StopReason = &stop
	}
	if r.Subtype == ccSuccess {
		text := d.Text
		if d.Reason == agent.ReasonPlanReady {
			text = d.Plan
		}
		r.Result = &text
		return r
	}
	r.IsError = true
	msg := d.Error
	if msg == "" {
		msg = endMessage(d, "")
	}
	r.Errors = []string{fmt.Sprintf("%s: %s", d.Reason, msg)}
	return r
}

// ccSubtype maps a termination reason to the result's subtype. A plan
// that waits for approval is a successful result (its text is the plan).
func ccSubtype(r agent.Reason) string {
	switch r {
	case agent.ReasonCompleted, agent.ReasonPlanReady:
		return ccSuccess
	case agent.ReasonMaxTurns:
		return ccErrMaxTurns
	case agent.ReasonBudget:
		return ccErrMaxBudget
	}
	return ccErrExecution
}

// line writes v as one line, when streaming.
func (s *ccSink) line(v any) error {
	if !s.stream {
		return nil
	}
	return s.write(v)
}

// write writes v as one line of JSON.
func (s *ccSink) write(v any) error {
	b, err := jsonLine(v)
	if err != nil {
		return err
	}
	_, err = s.w.Write(b)
	return err
}

// newUUID returns a random (version 4) UUID.
func newUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand)
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b[:])
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

// newMsgID returns a message id in the Messages API's form.
func newMsgID() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return "msg_" + hex.EncodeToString(b[:])
}

func orEmpty(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func orEmptyMCP(s []ccMCPServer) []ccMCPServer {
	if s == nil {
		return []ccMCPServer{}
	}
	return s
}
