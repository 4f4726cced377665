package agent

import (
	"encoding/json"
	"time"

	"github.com/reinhq/rein/llm"
	"github.com/reinhq/rein/tool"
)

// EventType names an event. The names and the JSON of every event are listed
// in docs/events.md; the same JSON reaches library callers, `--output
// stream-json`, the SSE stream and the gateway.
type EventType string

// The event types of a run (SPEC LOOP-1), plus message, the durable record of
// a message appended to the conversation.
const (
	EventRunStart           EventType = "run_start"
	EventTextDelta          EventType = "text_delta"
	EventThinkingDelta      EventType = "thinking_delta"
	EventToolStart          EventType = "tool_start"
	EventToolEnd            EventType = "tool_end"
	EventPermissionRequest  EventType = "permission_request"
	EventPermissionDecision EventType = "permission_decision"
	EventCompaction         EventType = "compaction"
	EventRetry              EventType = "retry"
	EventUsage              EventType = "usage"
	EventError              EventType = "error"
	EventMessage            EventType = "message"
	EventDone               EventType = "done"
	// EventSubagentStart and EventSubagentEnd open and close a sub-agent's
	// run inside its parent's stream (AGENT-4): the sub-agent's own
	// run_start and done, renamed so that a stream has exactly one of each.
	EventSubagentStart EventType = "subagent_start"
	EventSubagentEnd   EventType = "subagent_end"
	// EventQuestion is a question the model put to the user with ask_user
	// where the user answers over the API (rein serve): CallID, Question
	// and Options are set. Durable, so a client that connects later sees a
	// question still waiting; the call's tool_end closes it.
	EventQuestion EventType = "question"
	// EventPlan is in plan.go.
)

// Durable reports whether events of this type change what is stored: they
// are persisted, deltas only forwarded.
func (t EventType) Durable() bool {
	switch t {
	case EventMessage, EventCompaction, EventDone, EventToolStart, EventToolEnd, EventSubagentEnd, EventQuestion:
		return true
	}
	return false
}

// Event is one item of a run's stream. Type says which of the optional fields
// is set; the JSON omits the others.
type Event struct {
	Type      EventType `json:"type"`
	Time      time.Time `json:"time"`
	SessionID string    `json:"session_id,omitempty"`
	RunID     string    `json:"run_id,omitempty"`
	// Turn is the model call the event belongs to, from 1; 0 before the first.
	// A sub-agent's event carries the sub-agent's turn.
	Turn int `json:"turn,omitempty"`
	// Subagent is set on the events of a sub-agent relayed in its parent's
	// stream (AGENT-4).
	Subagent *Subagent `json:"subagent,omitempty"`

	// Text is set on text_delta and thinking_delta.
	Text string `json:"text,omitempty"`

	// CallID, Question and Options are set on question: the ask_user call
	// asking, its question and the answers it suggests.
	CallID   string   `json:"call_id,omitempty"`
	Question string   `json:"question,omitempty"`
	Options  []string `json:"options,omitempty"`

	// RunStart is set on run_start and subagent_start.
	RunStart   *RunStart        `json:"run_start,omitempty"`
	Tool       *ToolEvent       `json:"tool,omitempty"`
	Permission *PermissionEvent `json:"permission,omitempty"`
	Compaction *CompactionEvent `json:"compaction,omitempty"`
	Retry      *RetryEvent      `json:"retry,omitempty"`
	Usage      *UsageEvent      `json:"usage,omitempty"`
	Error      *ErrorEvent      `json:"error,omitempty"`
	Message    *llm.Message     `json:"message,omitempty"`
	// Done is set on done and subagent_end.
	Done *DoneEvent `json:"done,omitempty"`
	// Plan is set on plan (SPEC PERM-7).
	Plan *PlanEvent `json:"plan,omitempty"`
}

// RunStart opens a run.
type RunStart struct {
	Model    string `json:"model"`
	Provider string `json:"provider,omitempty"`
	// Continued is set when the run continues a pending conversation without
	// a new user message (SPEC LOOP-9).
	Continued bool `json:"continued,omitempty"`
	MaxTurns  int  `json:"max_turns"`
	// Healed says what healing fixed when the session was loaded (SESS-2).
	Healed string `json:"healed,omitempty"`
	// Warnings say what configuration the run ignored, such as what an
	// untrusted workspace brings (PERM-5); from [Config.Warnings].
	Warnings []string `json:"warnings,omitempty"`
}

// ToolEvent describes a tool call on tool_start and its outcome on tool_end.
type ToolEvent struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	// Origin says where the tool comes from: builtin, action, skill, mcp
	// or agent (SPEC TOOL-2); empty for a call to no known tool.
	Origin tool.Origin     `json:"origin,omitempty"`
	Input  json.RawMessage `json:"input,omitempty"`
	// Set on tool_end:
	IsError bool `json:"is_error,omitempty"`
	// Output is the result's text (images are counted, not included).
	Output     string         `json:"output,omitempty"`
	Images     int            `json:"images,omitempty"`
	DurationMS int64          `json:"duration_ms,omitempty"`
	Metadata   map[string]any `json:"metadata,omitempty"`
	// Outcome says how the call ended.
	Outcome ToolOutcome `json:"outcome,omitempty"`
}

// ToolOutcome says how a tool call ended: the outcome of a tool_end event
// and of an [Audit] (SPEC LOOP-7, PERM-4). Sessions store it as the
// outcome of their tool_end entries.
type ToolOutcome string

// The tool call outcomes.
const (
	OutcomeOK          ToolOutcome = "ok"           // the tool ran and succeeded
	OutcomeError       ToolOutcome = "error"        // the tool ran and failed, crashed or timed out
	OutcomeDenied      ToolOutcome = "denied"       // the policy, the user or a hook's permission say refused it
	OutcomeBlocked     ToolOutcome = "blocked"      // a pre_tool_use hook blocked it
	OutcomeInterrupted ToolOutcome = "interrupted"  // the run was cancelled before or while it ran
	OutcomeInvalid     ToolOutcome = "invalid"      // its input (or a hook's rewrite of it) failed the tool's schema
	OutcomeUnknownTool ToolOutcome = "unknown_tool" // no tool of that name is loaded
)

// PermissionEvent is a question to whoever drives the run, and its answer.
type PermissionEvent struct {
	CallID string          `json:"call_id"`
	Tool   string          `json:"tool"`
	Input  json.RawMessage `json:"input,omitempty"`
	Reason string          `json:"reason,omitempty"`
	// Suggested is set on permission_request: the rules an "always"
	// answer would keep (permission.Suggest), as rules are written
	// (`bash(git status:*)`); empty when it would keep none.
	Suggested []string `json:"suggested,omitempty"`
	// Decision is set on permission_decision: [Allow] or [Deny].
	Decision Decision `json:"decision,omitempty"`
	// By says who decided.
	By Decider `json:"by,omitempty"`
	// Always is set when the answer was persisted as a rule.
	Always bool `json:"always,omitempty"`
}

// CompactionEvent reports a compaction of the history (SPEC CTX-5).
type CompactionEvent struct {
	TokensBefore int               `json:"tokens_before"`
	TokensAfter  int               `json:"tokens_after"`
	Layers       []string          `json:"layers"`
	Trigger      CompactionTrigger `json:"trigger"`
	// Cause says why the cached prefix broke: the first layer that
	// rewrote the history and from which message ("snip: 5 tool outputs,
	// 0 inputs from message 23").
	Cause string `json:"cause,omitempty"`
	// Usage and ModelCalls count the summary calls the compaction made; the
	// run's totals include them (SESS-4).
	Usage      llm.Usage `json:"usage,omitzero"`
	ModelCalls int       `json:"model_calls,omitempty"`
	// History is the conversation after compaction, for the session store
	// in the same process (SPEC SESS-1). It is not part of the event's JSON:
	// streams and SSE clients get the report, not the whole history again.
	History []llm.Message `json:"-"`
}

// CompactionTrigger says what set off a compaction (SPEC CTX-5). Sessions
// store it as the trigger of their compaction entries.
type CompactionTrigger string

// The compaction triggers.
const (
	TriggerBudget   CompactionTrigger = "budget"   // the request outgrew the context budget before a model call
	TriggerOverflow CompactionTrigger = "overflow" // the model refused the request as too long
	TriggerManual   CompactionTrigger = "manual"   // someone asked for it (/compact, the API)
)

// RetryEvent reports a failed model call that will be tried again (SPEC PROV-7).
type RetryEvent struct {
	Attempt int    `json:"attempt"`
	DelayMS int64  `json:"delay_ms"`
	Kind    string `json:"kind"`
	Status  int    `json:"status,omitempty"`
	Message string `json:"message"`
}

// UsageEvent reports the tokens of one model call and the run so far.
type UsageEvent struct {
	Turn    llm.Usage `json:"turn"`
	Run     llm.Usage `json:"run"`
	CostUSD float64   `json:"cost_usd,omitempty"`
}

// ErrorEvent reports a failure. Fatal errors are followed by done.
type ErrorEvent struct {
	Kind    string `json:"kind"`
	Message string `json:"message"`
	Fatal   bool   `json:"fatal,omitempty"`
}

// DoneEvent ends every run.
type DoneEvent struct {
	Reason Reason `json:"reason"`
	// Text is the final assistant text.
	Text    string    `json:"text,omitempty"`
	Turns   int       `json:"turns"`
	Usage   llm.Usage `json:"usage"`
	CostUSD float64   `json:"cost_usd,omitempty"`
	Stats   Stats     `json:"stats"`
	// Error describes the failure when Reason is error, context_overflow,
	// refusal or timeout.
	Error      string `json:"error,omitempty"`
	DurationMS int64  `json:"duration_ms"`
	// Focus is the task state after the run (LOOP-11); the session keeps it.
	Focus *Focus `json:"focus,omitempty"`
	// Plan is the plan the run stopped at, with reason plan_ready (PERM-7).
	Plan string `json:"plan,omitempty"`
}

// Reason is why a run ended (SPEC LOOP-3).
type Reason string

// The termination reasons.
const (
	ReasonCompleted        Reason = "completed"
	ReasonMaxTurns         Reason = "max_turns"
	ReasonCancelled        Reason = "cancelled"
	ReasonError            Reason = "error"
	ReasonContextOverflow  Reason = "context_overflow"
	ReasonPermissionDenied Reason = "permission_denied"
	ReasonTimeout          Reason = "timeout"
	ReasonMaxTokens        Reason = "max_tokens"
	ReasonRefusal          Reason = "refusal"
	// ReasonBudget: the run used up its token or cost budget
	// ([Config.TokenBudget], [Config.CostBudget]).
	ReasonBudget Reason = "budget"
	// ReasonPlanReady is in plan.go.
)

// Stats counts what a run did (SPEC LOOP-7); persisted with the run record.
type Stats struct {
	ModelCalls int `json:"model_calls"`
	ToolCalls  int `json:"tool_calls"`
	ToolErrors int `json:"tool_errors"`
	// ErrorsByTool counts failed calls per tool, then per outcome
	// ("error", "denied", "invalid", …).
	ErrorsByTool map[string]map[string]int `json:"errors_by_tool,omitempty"`
	Retries      int                       `json:"retries,omitempty"`
	Compactions  int                       `json:"compactions,omitempty"`
	// Subagents counts the sub-agent runs this run started (their own
	// calls are counted in their runs; their usage and cost are in this
	// run's totals).
	Subagents int `json:"subagents,omitempty"`
}

func (s *Stats) countTool(name string, outcome ToolOutcome) {
	s.ToolCalls++
	if outcome == OutcomeOK {
		return
	}
	s.ToolErrors++
	if s.ErrorsByTool == nil {
		s.ErrorsByTool = map[string]map[string]int{}
	}
	if s.ErrorsByTool[name] == nil {
		s.ErrorsByTool[name] = map[string]int{}
	}
	s.ErrorsByTool[name][string(outcome)]++
}
