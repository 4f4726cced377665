package hook

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/reinhq/rein/tool"
)

// Event is a point of a run where hooks fire (SPEC HOOK-1).
type Event string

// The events.
const (
	SessionStart      Event = "session_start"
	SessionEnd        Event = "session_end"
	UserPromptSubmit  Event = "user_prompt_submit"
	PreToolUse        Event = "pre_tool_use"
	PostToolUse       Event = "post_tool_use"
	PostToolError     Event = "post_tool_error"
	PermissionRequest Event = "permission_request"
	PreCompact        Event = "pre_compact"
	PostCompact       Event = "post_compact"
	PreModelRequest   Event = "pre_model_request"
	PostModelResponse Event = "post_model_response"
	SubagentStart     Event = "subagent_start"
	SubagentStop      Event = "subagent_stop"
	Stop              Event = "stop"
	Notification      Event = "notification"
)

// Events lists every event.
var Events = []Event{
	SessionStart, SessionEnd, UserPromptSubmit, PreToolUse, PostToolUse, PostToolError,
	PermissionRequest, PreCompact, PostCompact, PreModelRequest, PostModelResponse,
	SubagentStart, SubagentStop, Stop, Notification,
}

// claudeEvents are Claude Code's names of the events it shares with rein.
var claudeEvents = map[Event]string{
	SessionStart: "SessionStart", SessionEnd: "SessionEnd", UserPromptSubmit: "UserPromptSubmit",
	PreToolUse: "PreToolUse", PostToolUse: "PostToolUse", PostToolError: "PostToolUseFailure",
	PermissionRequest: "PermissionRequest", PreCompact: "PreCompact", PostCompact: "PostCompact",
	PreModelRequest: "PreModelRequest", PostModelResponse: "PostModelResponse",
	SubagentStart: "SubagentStart", SubagentStop: "SubagentStop", Stop: "Stop", Notification: "Notification",
}

// ClaudeName returns Claude Code's name of the event (PreToolUse).
func (e Event) ClaudeName() string {
	if n, ok := claudeEvents[e]; ok {
		return n
	}
	return string(e)
}

// CanBlock reports an interceptor event, whose hooks may block, rewrite the
// input or force a continue (SPEC HOOK-2). post_tool_use is one too: as in
// Claude Code, its block passes the reason to the model as feedback.
func (e Event) CanBlock() bool {
	switch e {
	case PreToolUse, PostToolUse, UserPromptSubmit, PreModelRequest, PermissionRequest, Stop, SubagentStop:
		return true
	}
	return false
}

// ParseEvent reads an event name, rein's (pre_tool_use) or Claude Code's
// (PreToolUse). claude reports the latter.
func ParseEvent(s string) (e Event, claude bool, err error) {
	for _, ev := range Events {
		if s == string(ev) {
			return ev, false, nil
		}
		if s == claudeEvents[ev] || (ev == PostToolError && s == "PostToolError") {
			return ev, true, nil
		}
	}
	names := make([]string, len(Events))
	for i, ev := range Events {
		names[i] = string(ev)
	}
	return "", false, fmt.Errorf("hook: unknown event %q (valid: %s, or Claude Code's names such as PreToolUse)", s, strings.Join(names, ", "))
}

// claudeTools maps a Claude Code tool name to the rein tool an exact
// matcher naming it selects: the first of [tool.ClaudeToolNames] (Edit →
// edit_file, MultiEdit → multi_edit). As in Claude Code, a hook on Edit does
// not run for MultiEdit; `Edit|MultiEdit|Write` runs for all three.
var claudeTools = func() map[string]string {
	m := make(map[string]string, len(tool.ClaudeToolNames))
	for claude, names := range tool.ClaudeToolNames {
		m[claude] = names[0]
	}
	return m
}()

// claudeToolOf maps rein's tool names to Claude Code's, for matchers and for
// the input hooks declared the Claude Code way receive.
var claudeToolOf = tool.ClaudeNameOf

// Input is the JSON a hook receives, with Claude Code's field names (SPEC
// COMPAT-1). Fields that do not concern an event are left empty. A hook
// declared in Claude Code's format receives it as Claude Code sends it
// (claude.go): its event and tool names, its tool_input fields with
// absolute paths, its tool_response objects.
type Input struct {
	SessionID string `json:"session_id"`
	// TranscriptPath is a file the hook may read holding the session's
	// entries so far, one JSON object a line (session.Entry), absolute;
	// always sent, empty when the caller has none.
	TranscriptPath string `json:"transcript_path,omitempty"`
	// CWD is the absolute working directory of the run.
	CWD string `json:"cwd"`
	// Event is set by [Registry.Fire].
	Event Event `json:"hook_event_name"`
	// PermissionMode is the run's permission mode: rein's name for hooks
	// in rein's format, Claude Code's (default, plan, acceptEdits,
	// dontAsk, bypassPermissions) for the others.
	PermissionMode string `json:"permission_mode,omitempty"`
	RunID          string `json:"run_id,omitempty"`

	// Tool events (pre_tool_use, post_tool_use, post_tool_error,
	// permission_request).
	ToolName     string          `json:"tool_name,omitempty"`
	ToolInput    json.RawMessage `json:"tool_input,omitempty"`
	ToolUseID    string          `json:"tool_use_id,omitempty"`
	ToolResponse json.RawMessage `json:"tool_response,omitempty"`
	Error        string          `json:"error,omitempty"`

	// Prompt is the user's message (user_prompt_submit).
	Prompt string `json:"prompt,omitempty"`
	// Message is a notification's text (also the assistant's last text on
	// stop and the permission question on permission_request, in rein's
	// format).
	Message string `json:"message,omitempty"`
	// NotificationType says what a notification is about:
	// permission_prompt (a question waits) or idle_prompt (the run ended
	// and waits for input).
	NotificationType string `json:"notification_type,omitempty"`
	// StopHookActive is set when the run goes on because a stop hook forced
	// it, so a stop hook can avoid looping. Always sent on stop and
	// subagent_stop.
	StopHookActive bool `json:"stop_hook_active,omitempty"`
	// LastAssistantMessage is the text of the model's final message (stop,
	// subagent_stop).
	LastAssistantMessage string `json:"last_assistant_message,omitempty"`
	// Source is how a session starts: startup, resume, clear or compact.
	Source string `json:"source,omitempty"`
	// Reason is why a session ends.
	Reason string `json:"reason,omitempty"`
	// Trigger is manual or auto (pre_compact, post_compact).
	Trigger            Trigger `json:"trigger,omitempty"`
	CustomInstructions string  `json:"custom_instructions,omitempty"`
	// AgentID and AgentType name a sub-agent (subagent_start, subagent_stop).
	AgentID   string `json:"agent_id,omitempty"`
	AgentType string `json:"agent_type,omitempty"`
	// Model, Request and Response describe a model call (pre_model_request,
	// post_model_response); their shape is the run loop's.
	Model    string          `json:"model,omitempty"`
	Request  json.RawMessage `json:"request,omitempty"`
	Response json.RawMessage `json:"response,omitempty"`
}

// Trigger says what set off a compaction, as the pre_compact and
// post_compact hooks hear it (their matchers match it).
type Trigger string

// The compaction triggers.
const (
	TriggerAuto   Trigger = "auto"   // the harness compacted on its own: the context budget or an overflow
	TriggerManual Trigger = "manual" // someone asked for it (/compact, the API)
)

// subject is what a matcher is matched against for the event; has reports
// whether the event has one at all (without, matchers are ignored).
func (in Input) subject() (s string, has bool) {
	switch in.Event {
	case PreToolUse, PostToolUse, PostToolError, PermissionRequest:
		return in.ToolName, true
	case SessionStart:
		return in.Source, true
	case PreCompact, PostCompact:
		return string(in.Trigger), true
	case SubagentStart, SubagentStop:
		return in.AgentType, true
	}
	return "", false
}

// Decision is a hook's verdict.
type Decision string

// The decisions. The zero value means continue.
const (
	DecisionContinue Decision = "continue"
	DecisionBlock    Decision = "block"
)

// Permission is a tool hook's say on the permission check of a call
// (pre_tool_use, permission_request).
type Permission string

// The says. The zero value is no say.
const (
	PermissionAllow Permission = "allow" // skip the mode's default question (deny and ask rules, and a sandbox exit, still win)
	PermissionAsk   Permission = "ask"   // prompt even if the rules allow
)

// Outcome is what a hook, or all the hooks of an event, decided.
type Outcome struct {
	// Decision is continue ("" too) or block. A block on an interceptor
	// event stops what was about to happen; Reason goes to the model.
	Decision Decision
	Reason   string
	// UpdatedInput replaces the tool input (pre_tool_use, and
	// permission_request with an allow), the prompt (a JSON string,
	// user_prompt_submit) or parts of the request (pre_model_request: an
	// object whose "system" replaces the system prompt, "append_system" is
	// added to it, "messages" replaces the messages and "append_messages"
	// is added after them; what it leaves out stays; the rewrite applies to
	// that one request, not to the stored history).
	UpdatedInput json.RawMessage
	// AdditionalContext is added to what the model sees next: the prompt
	// (user_prompt_submit), the newest user message of the request
	// (pre_model_request) or the call's result (pre_tool_use,
	// post_tool_use, permission_request).
	AdditionalContext string
	// ForceContinue keeps the run going when it was about to stop (stop,
	// subagent_stop); Reason tells the model why.
	ForceContinue bool
	// Permission is a tool hook's say on the permission check:
	// [PermissionAllow], [PermissionAsk] or "" (no say). A deny is a block.
	// As in Claude Code, an allow lifts neither a deny rule nor an ask
	// rule; rein's agent also keeps asking about a command leaving the
	// sandbox and a plan.
	Permission Permission
	// Stop ends the run at once (Claude Code's "continue": false);
	// StopReason is for the user, not the model.
	Stop       bool
	StopReason string
	// SuppressOutput hides the hook's output from the transcript.
	SuppressOutput bool
	// SystemMessage is a note for the user.
	SystemMessage string
}

// Blocked reports a block.
func (o Outcome) Blocked() bool { return o.Decision == DecisionBlock }

// Hook is code run at an event. Run must return once ctx is done. An error
// means the hook failed (crashed, timed out, answered nonsense); the
// registry logs it and goes on unless the hook is declared to fail closed.
type Hook interface {
	Run(ctx context.Context, in Input) (Outcome, error)
}

// Func adapts a function to [Hook], for library use.
type Func func(ctx context.Context, in Input) (Outcome, error)

// Run calls f.
func (f Func) Run(ctx context.Context, in Input) (Outcome, error) { return f(ctx, in) }
