package agent

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"

	"github.com/reinhq/rein/hook"
	"github.com/reinhq/rein/llm"
	"github.com/reinhq/rein/tool"
)

// Hooks observes and intercepts a run (SPEC HOOK-1 … HOOK-3); a
// *hook.Registry is one. Fire's error is non-nil only when ctx ended.
type Hooks interface {
	Has(ev hook.Event) bool
	Fire(ctx context.Context, ev hook.Event, in hook.Input) (hook.Outcome, error)
}

// fire runs the hooks of ev, if any are registered.
func (r *run) fire(ctx context.Context, ev hook.Event, in hook.Input) (hook.Outcome, bool) {
	h := r.cfg.Hooks
	if h == nil || !h.Has(ev) {
		return hook.Outcome{}, false
	}
	in.SessionID, in.RunID, in.CWD = r.in.SessionID, r.in.RunID, absDir(r.in.WorkDir)
	out, err := h.Fire(ctx, ev, in)
	if err != nil {
		return hook.Outcome{}, false
	}
	if out.SystemMessage != "" {
		r.cfg.Logger.Info("hook message", "session_id", r.in.SessionID, "run_id", r.in.RunID, "event", string(ev), "message", out.SystemMessage)
	}
	return out, true
}

// submitPrompt fires user_prompt_submit and session_start (for a new
// session): a hook may block the prompt, rewrite it, or add context to it.
func (r *run) submitPrompt(ctx context.Context, p llm.Message) (llm.Message, string) {
	started := r.in.HookContext // what session_start hooks add (Claude Code's additionalContext or plain stdout)
	if len(r.in.History) == 0 {
		so, _ := r.fire(ctx, hook.SessionStart, hook.Input{Source: "startup"})
		if so.Stop {
			return p, firstNonEmpty(so.StopReason, "a session_start hook stopped the run")
		}
		started = joinContext(started, so.AdditionalContext)
	}
	out, ok := r.fire(ctx, hook.UserPromptSubmit, hook.Input{Prompt: p.TextOf()})
	if !ok && started == "" {
		return p, ""
	}
	if out.Blocked() || out.Stop {
		return p, firstNonEmpty(out.Reason, out.StopReason, "blocked")
	}
	out.AdditionalContext = joinContext(started, out.AdditionalContext)
	if len(out.UpdatedInput) > 0 {
		var text string
		if json.Unmarshal(out.UpdatedInput, &text) == nil && text != "" {
			p = replaceText(p, text)
		}
	}
	if out.AdditionalContext != "" {
		p.Content = append(append([]llm.Block(nil), p.Content...), &llm.Text{Text: hookContext(out.AdditionalContext)})
	}
	return p, ""
}

// modelRequest is the JSON a pre_model_request hook receives as request.
type modelRequest struct {
	Model    string        `json:"model"`
	System   string        `json:"system"`
	Messages []llm.Message `json:"messages"`
	Tools    []string      `json:"tools"`
}

// modelRewrite is what a pre_model_request hook's updatedInput may set;
// what it leaves out stays as it was.
type modelRewrite struct {
	// System replaces the system prompt.
	System *string `json:"system"`
	// AppendSystem is added at the end of the system prompt.
	AppendSystem string `json:"append_system"`
	// Messages replaces the messages.
	Messages []llm.Message `json:"messages"`
	// AppendMessages are added after the messages.
	AppendMessages []llm.Message `json:"append_messages"`
}

// modelHook fires pre_model_request (SPEC HOOK-2): a hook may block the
// call, rewrite the request (updatedInput: {"system", "append_system",
// "messages", "append_messages"}) or add context, which is appended to the
// newest user message. The rewrite applies to this request only; the
// history keeps what it had. A rewrite that cannot be read blocks the call,
// as a guard must fail closed.
//
// Before the hooks see the request, the task focus (LOOP-11) is appended to
// its newest user message (see [Focus.Section]): after the cache-stable
// prefix, and not stored in the history.
func (r *run) modelHook(ctx context.Context, req *llm.Request) string {
	if s := r.focus.Section(); s != "" && len(req.Messages) > 0 && req.Messages[len(req.Messages)-1].Role == llm.RoleUser {
		req.Messages = appendToLastUser(req.Messages, s)
	}
	if r.cfg.Reminder != nil && len(req.Messages) > 0 && req.Messages[len(req.Messages)-1].Role == llm.RoleUser {
		if s := r.cfg.Reminder(); s != "" {
			req.Messages = appendToLastUser(req.Messages, s)
		}
	}
	if r.cfg.Hooks == nil || !r.cfg.Hooks.Has(hook.PreModelRequest) {
		return ""
	}
	body, _ := json.Marshal(modelRequest{req.Model, req.System, req.Messages, r.cfg.Tools.Names()})
	out, _ := r.fire(ctx, hook.PreModelRequest, hook.Input{Model: req.Model, Request: body})
	if out.Blocked() || out.Stop {
		return firstNonEmpty(out.Reason, out.StopReason, "blocked")
	}
	if len(out.UpdatedInput) > 0 && string(out.UpdatedInput) != "null" {
		var rw modelRewrite
		if err := json.Unmarshal(out.UpdatedInput, &rw); err != nil {
			return "the pre_model_request hook's rewrite of the request cannot be read: " + err.Error()
		}
		rw.apply(req)
	}
	if out.AdditionalContext != "" {
		req.Messages = appendToLastUser(req.Messages, hookContext(out.AdditionalContext))
	}
	return ""
}

// apply rewrites req. It never changes the slices req shares with the
// history.
func (rw modelRewrite) apply(req *llm.Request) {
	if rw.System != nil {
		req.System = *rw.System
	}
	if rw.AppendSystem != "" {
		req.System = strings.TrimRight(req.System, "\n") + "\n\n" + strings.TrimSpace(rw.AppendSystem)
	}
	if rw.Messages != nil {
		req.Messages = rw.Messages
	}
	if len(rw.AppendMessages) > 0 {
		req.Messages = append(append([]llm.Message(nil), req.Messages...), rw.AppendMessages...)
	}
}

// appendToLastUser returns msgs with text added to the newest user message,
// or with a new user message holding it when the last message is not the
// user's. msgs itself is left as it was.
func appendToLastUser(msgs []llm.Message, text string) []llm.Message {
	out := append([]llm.Message(nil), msgs...)
	if n := len(out); n > 0 && out[n-1].Role == llm.RoleUser {
		m := out[n-1]
		m.Content = append(append([]llm.Block(nil), m.Content...), &llm.Text{Text: text})
		out[n-1] = m
		return out
	}
	return append(out, llm.UserText(text))
}

// responseHook fires post_model_response.
func (r *run) responseHook(ctx context.Context, resp *llm.Response) {
	if r.cfg.Hooks == nil || !r.cfg.Hooks.Has(hook.PostModelResponse) {
		return
	}
	body, _ := json.Marshal(struct {
		Message    llm.Message    `json:"message"`
		StopReason llm.StopReason `json:"stop_reason"`
		Usage      llm.Usage      `json:"usage"`
	}{resp.Message, resp.StopReason, resp.Usage})
	r.fire(ctx, hook.PostModelResponse, hook.Input{Model: r.cfg.Model, Response: body})
}

// maxStopForces bounds how often stop hooks may keep one run going: a hook
// should check stop_hook_active, but one that does not must not loop forever.
const maxStopForces = 3

// stopHook fires stop when the model is done; a hook may keep the run going
// by saying why, which becomes the next user message.
//
// As in Claude Code, a block (exit code 2, decision "block") continues with
// its reason, and additionalContext continues with the context as
// feedback; continue: false ends the run whatever else the hook said.
func (r *run) stopHook(ctx context.Context, m llm.Message) string {
	text := m.TextOf()
	out, ok := r.fire(ctx, hook.Stop, hook.Input{StopHookActive: r.stopForced > 0, Message: text, LastAssistantMessage: text})
	if !ok || out.Stop || !(out.ForceContinue || out.Blocked() || out.AdditionalContext != "") {
		return ""
	}
	if r.stopForced >= maxStopForces {
		r.cfg.Logger.Warn("stop hook keeps forcing the run on; stopping anyway", "session_id", r.in.SessionID, "run_id", r.in.RunID)
		return ""
	}
	r.stopForced++
	var parts []string
	if out.ForceContinue || out.Blocked() {
		parts = append(parts, firstNonEmpty(out.Reason, "A stop hook asked you to continue."))
	}
	if out.AdditionalContext != "" {
		parts = append(parts, hookContext(out.AdditionalContext))
	}
	return strings.Join(parts, "\n")
}

// sessionHook fires notification with the end of the run: a front end or a
// script learns that the agent waits for input.
func (r *run) sessionHook(ctx context.Context, end ending) {
	msg := "rein finished: " + string(end.reason)
	if end.err != nil && end.reason != ReasonCompleted {
		msg += ": " + end.err.Error()
	}
	r.fire(ctx, hook.Notification, hook.Input{Message: msg, NotificationType: "idle_prompt"})
}

// toolHook is what pre_tool_use hooks decided about a call.
type toolHook struct {
	input      json.RawMessage // a rewritten input, or nil
	blocked    string
	permission hook.Permission // allow, ask or "" (no say)
	context    string
	stop       string
}

// preToolHook fires pre_tool_use.
func (r *run) preToolHook(ctx context.Context, c Check) toolHook {
	out, ok := r.fire(ctx, hook.PreToolUse, hook.Input{ToolName: c.Call.Name, ToolInput: c.Call.Input, ToolUseID: c.Call.ID})
	if !ok {
		return toolHook{}
	}
	th := toolHook{input: out.UpdatedInput, permission: out.Permission, context: out.AdditionalContext}
	if out.Blocked() {
		th.blocked = firstNonEmpty(out.Reason, "a pre_tool_use hook blocked this call")
	}
	if out.Stop {
		th.blocked = firstNonEmpty(out.StopReason, out.Reason, "a hook stopped the run")
		th.stop = th.blocked
	}
	return th
}

// postToolHook fires post_tool_use or post_tool_error; a hook may add
// feedback or context to what the model sees, or end the run after this
// call (continue: false), which stop says.
func (r *run) postToolHook(ctx context.Context, c Check, res tool.Result, o ToolOutcome) (_ tool.Result, stop string) {
	ev := hook.PostToolUse
	in := hook.Input{ToolName: c.Call.Name, ToolInput: c.Call.Input, ToolUseID: c.Call.ID}
	if o != OutcomeOK {
		ev = hook.PostToolError
		in.Error = res.TextOf()
	}
	if r.cfg.Hooks == nil || !r.cfg.Hooks.Has(ev) {
		return res, ""
	}
	in.ToolResponse, _ = json.Marshal(struct {
		Output  string `json:"output"`
		IsError bool   `json:"is_error"`
	}{res.TextOf(), res.IsError})
	out, ok := r.fire(ctx, ev, in)
	if !ok {
		return res, ""
	}
	if out.Stop {
		stop = "a " + string(ev) + " hook stopped the run"
		if out.StopReason != "" {
			stop += ": " + out.StopReason
		}
	}
	var notes []string
	if out.Blocked() && out.Reason != "" {
		notes = append(notes, "hook feedback: "+out.Reason)
	}
	if out.AdditionalContext != "" {
		notes = append(notes, hookContext(out.AdditionalContext))
	}
	if len(notes) > 0 {
		res.Content = append(append([]llm.Block(nil), res.Content...), &llm.Text{Text: strings.Join(notes, "\n")})
	}
	return res, stop
}

// permHook is what permission_request hooks said about a question.
type permHook struct {
	denied  string          // the hook answered deny, with this reason
	allowed bool            // the hook answered allow
	reason  string          // why it allowed
	input   json.RawMessage // the input an allow rewrote, or nil
	context string          // added to what the model sees about the call
}

// permissionHook fires permission_request before a question is put to the
// user (SPEC HOOK-2): a hook may answer it (a block or behavior deny is a
// deny; permission or behavior allow is an allow, optionally with an
// updated input) and may add context, which reaches the model with the
// call's result whoever answers.
func (r *run) permissionHook(ctx context.Context, c Check, reason string) permHook {
	out, ok := r.fire(ctx, hook.PermissionRequest, hook.Input{ToolName: c.Call.Name, ToolInput: c.Call.Input,
		ToolUseID: c.Call.ID, Message: reason})
	if !ok {
		return permHook{}
	}
	ph := permHook{context: out.AdditionalContext}
	switch {
	case out.Blocked() || out.Stop:
		ph.denied = firstNonEmpty(out.Reason, out.StopReason, "a permission_request hook denied this call")
	case out.Permission == hook.PermissionAllow:
		ph.allowed, ph.reason = true, out.Reason
		if len(out.UpdatedInput) > 0 {
			ph.input = out.UpdatedInput
		}
	}
	return ph
}

// notify fires notification (a permission question waits for an answer).
func (r *run) notify(ctx context.Context, msg string) {
	r.fire(ctx, hook.Notification, hook.Input{Message: msg, NotificationType: "permission_prompt"})
}

// absDir makes a working directory absolute for the hooks, which Claude
// Code's scripts expect; one that cannot be made so is sent as it is.
func absDir(dir string) string {
	if dir == "" || filepath.IsAbs(dir) {
		return dir
	}
	if abs, err := filepath.Abs(dir); err == nil {
		return abs
	}
	return dir
}

func hookContext(s string) string {
	return "<hook-context>\n" + strings.TrimSpace(s) + "\n</hook-context>"
}

func replaceText(m llm.Message, text string) llm.Message {
	out := llm.Message{Role: m.Role, Provider: m.Provider, Model: m.Model, Content: []llm.Block{&llm.Text{Text: text}}}
	for _, b := range m.Content {
		if _, isText := b.(*llm.Text); !isText {
			out.Content = append(out.Content, b)
		}
	}
	return out
}

func firstNonEmpty(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}

// EndSession fires session_end for a session the front end is done with
// (the CLI exits, the server deletes it). reason is "exit", "clear",
// "logout" or "other".
func (a *Agent) EndSession(ctx context.Context, sessionID, workDir, reason string) {
	if a.cfg.Hooks == nil || !a.cfg.Hooks.Has(hook.SessionEnd) {
		return
	}
	_, _ = a.cfg.Hooks.Fire(ctx, hook.SessionEnd, hook.Input{SessionID: sessionID, CWD: workDir, Reason: reason})
}
