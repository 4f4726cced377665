package api

import (
	"encoding/json"
	"time"

	"github.com/reinhq/rein/llm"
)

// The JSON of the events a session's stream (GET /sessions/{id}/events)
// carries, one type per event as docs/events.md writes them down (SPEC
// API-2, LOOP-1): the OpenAPI document gets a schema per event type. The
// runner encodes package agent's events; these types only describe that
// JSON (server's tests check every example of docs/events.md against them).

// EventTypes are the event types of a session's stream, each with the Go
// type of its data.
var EventTypes = map[string]any{
	"run_start":           RunStartEvent{},
	"text_delta":          DeltaEvent{},
	"thinking_delta":      DeltaEvent{},
	"message":             MessageEvent{},
	"tool_start":          ToolEvent{},
	"tool_end":            ToolEvent{},
	"permission_request":  PermissionEvent{},
	"permission_decision": PermissionEvent{},
	"plan":                PlanEvent{},
	"question":            QuestionEvent{},
	"compaction":          CompactionEvent{},
	"retry":               RetryEvent{},
	"usage":               UsageEvent{},
	"error":               ErrorEvent{},
	"done":                DoneEvent{},
	"subagent_start":      RunStartEvent{},
	"subagent_end":        DoneEvent{},
}

// EventHeader is what every event has.
type EventHeader struct {
	Type      string    `json:"type" doc:"The event's type, as the SSE frame's event: line names it."`
	Time      time.Time `json:"time"`
	SessionID string    `json:"session_id,omitempty"`
	RunID     string    `json:"run_id,omitempty"`
	Turn      int       `json:"turn,omitempty" doc:"The model call the event belongs to, from 1 (a sub-agent's own)."`
	Subagent  *Subagent `json:"subagent,omitempty" doc:"Set on a sub-agent's events relayed in its parent's stream (AGENT-4)."`
}

// Subagent marks a sub-agent's event.
type Subagent struct {
	Agent        string `json:"agent"`
	ParentCallID string `json:"parent_call_id"`
	Depth        int    `json:"depth"`
}

// RunStartEvent opens a run (run_start) or a sub-agent's (subagent_start).
type RunStartEvent struct {
	EventHeader
	RunStart struct {
		Model     string   `json:"model"`
		Provider  string   `json:"provider,omitempty"`
		Continued bool     `json:"continued,omitempty"`
		MaxTurns  int      `json:"max_turns"`
		Healed    string   `json:"healed,omitempty"`
		Warnings  []string `json:"warnings,omitempty"`
	} `json:"run_start"`
}

// DeltaEvent is a piece of the reply (text_delta, thinking_delta).
type DeltaEvent struct {
	EventHeader
	Text string `json:"text"`
}

// MessageEvent is a message appended to the conversation.
type MessageEvent struct {
	EventHeader
	Message struct {
		Role     string           `json:"role" enum:"user,assistant"`
		Content  []map[string]any `json:"content" doc:"Blocks: text, image, thinking, tool_use, tool_result, opaque (docs/events.md)."`
		Provider string           `json:"provider,omitempty"`
		Model    string           `json:"model,omitempty"`
	} `json:"message"`
}

// ToolEvent is a tool call about to run (tool_start) or its outcome
// (tool_end).
type ToolEvent struct {
	EventHeader
	Tool struct {
		ID         string          `json:"id"`
		Name       string          `json:"name"`
		Origin     string          `json:"origin,omitempty" enum:"builtin,action,skill,mcp,agent"`
		Input      json.RawMessage `json:"input,omitempty"`
		IsError    bool            `json:"is_error,omitempty"`
		Output     string          `json:"output,omitempty"`
		Images     int             `json:"images,omitempty"`
		DurationMS int64           `json:"duration_ms,omitempty"`
		Metadata   map[string]any  `json:"metadata,omitempty"`
		Outcome    string          `json:"outcome,omitempty" doc:"On tool_end: ok, error, denied, blocked, interrupted, invalid or unknown_tool."`
	} `json:"tool"`
}

// PermissionEvent is a permission question (answer it at
// /runs/{id}/permissions/{call_id}) or its answer.
type PermissionEvent struct {
	EventHeader
	Permission struct {
		CallID string          `json:"call_id"`
		Tool   string          `json:"tool"`
		Input  json.RawMessage `json:"input,omitempty"`
		Reason string          `json:"reason,omitempty"`
		// Suggested (on a request): the rules an "always" answer keeps.
		Suggested []string `json:"suggested,omitempty"`
		Decision  string   `json:"decision,omitempty" enum:"allow,deny"`
		By        string   `json:"by,omitempty" enum:"user,hook,timeout,policy"`
		Always    bool     `json:"always,omitempty"`
	} `json:"permission"`
}

// PlanEvent is a plan presented in plan mode and what became of it.
type PlanEvent struct {
	EventHeader
	Plan struct {
		CallID   string `json:"call_id"`
		Status   string `json:"status" enum:"proposed,approved,rejected,ready"`
		Plan     string `json:"plan"`
		Mode     string `json:"mode,omitempty"`
		Feedback string `json:"feedback,omitempty"`
	} `json:"plan"`
}

// QuestionEvent is a question the model asks the user (ask_user): answer
// it at POST /runs/{run_id}/questions/{call_id}.
type QuestionEvent struct {
	EventHeader
	CallID   string   `json:"call_id" doc:"The ask_user call; its tool_end follows the answer."`
	Question string   `json:"question"`
	Options  []string `json:"options,omitempty" doc:"Suggested answers; the user may answer anything."`
}

// CompactionEvent reports a compaction of the history.
type CompactionEvent struct {
	EventHeader
	Compaction struct {
		TokensBefore int       `json:"tokens_before"`
		TokensAfter  int       `json:"tokens_after"`
		Layers       []string  `json:"layers"`
		Trigger      string    `json:"trigger" enum:"budget,overflow,manual"`
		Cause        string    `json:"cause,omitempty"`
		Usage        llm.Usage `json:"usage,omitzero"`
		ModelCalls   int       `json:"model_calls,omitempty"`
	} `json:"compaction"`
}

// RetryEvent reports a model call that will be tried again.
type RetryEvent struct {
	EventHeader
	Retry struct {
		Attempt int    `json:"attempt"`
		DelayMS int64  `json:"delay_ms"`
		Kind    string `json:"kind"`
		Status  int    `json:"status,omitempty"`
		Message string `json:"message"`
	} `json:"retry"`
}

// UsageEvent reports the tokens of a model call and of the run so far.
type UsageEvent struct {
	EventHeader
	Usage struct {
		Turn    llm.Usage `json:"turn"`
		Run     llm.Usage `json:"run"`
		CostUSD float64   `json:"cost_usd,omitempty"`
	} `json:"usage"`
}

// ErrorEvent reports a failure; a fatal one is followed by done.
type ErrorEvent struct {
	EventHeader
	Error struct {
		Kind    string `json:"kind"`
		Message string `json:"message"`
		Fatal   bool   `json:"fatal,omitempty"`
	} `json:"error"`
}

// DoneEvent ends a run (done) or a sub-agent's (subagent_end).
type DoneEvent struct {
	EventHeader
	Done struct {
		Reason     string         `json:"reason" doc:"completed, max_turns, cancelled, error, context_overflow, permission_denied, timeout, max_tokens, refusal, budget or plan_ready (LOOP-3)."`
		Text       string         `json:"text,omitempty"`
		Turns      int            `json:"turns"`
		Usage      llm.Usage      `json:"usage"`
		CostUSD    float64        `json:"cost_usd,omitempty"`
		Stats      map[string]any `json:"stats" doc:"model_calls, tool_calls, tool_errors, errors_by_tool, retries, compactions, subagents (LOOP-7)."`
		Error      string         `json:"error,omitempty"`
		DurationMS int64          `json:"duration_ms"`
		Focus      map[string]any `json:"focus,omitempty" doc:"The task state the session keeps (LOOP-11)."`
		Plan       string         `json:"plan,omitempty"`
	} `json:"done"`
}
