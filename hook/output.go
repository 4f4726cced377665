package hook

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// output is Claude Code's hook output format.
type output struct {
	Continue       *bool           `json:"continue"`
	StopReason     string          `json:"stopReason"`
	SuppressOutput bool            `json:"suppressOutput"`
	SystemMessage  string          `json:"systemMessage"`
	Decision       string          `json:"decision"`
	Reason         string          `json:"reason"`
	Specific       *specificOutput `json:"hookSpecificOutput"`
}

type specificOutput struct {
	HookEventName            string          `json:"hookEventName"`
	PermissionDecision       string          `json:"permissionDecision"`
	PermissionDecisionReason string          `json:"permissionDecisionReason"`
	UpdatedInput             json.RawMessage `json:"updatedInput"`
	AdditionalContext        string          `json:"additionalContext"`
	// Decision is PermissionRequest's answer.
	Decision *struct {
		Behavior     string          `json:"behavior"`
		UpdatedInput json.RawMessage `json:"updatedInput"`
		Message      string          `json:"message"`
	} `json:"decision"`
}

// parseOutput reads what a hook printed (or an HTTP hook answered) on
// success. JSON in Claude Code's format is decoded; other text becomes
// context for user_prompt_submit and session_start, as in Claude Code, and
// is ignored elsewhere.
func parseOutput(ev Event, data []byte) (Outcome, error) {
	text := bytes.TrimSpace(data)
	if len(text) == 0 {
		return Outcome{}, nil
	}
	var out output
	if text[0] != '{' || json.Unmarshal(text, &out) != nil {
		if ev == UserPromptSubmit || ev == SessionStart {
			return Outcome{AdditionalContext: capText(string(text))}, nil
		}
		return Outcome{}, nil
	}
	return out.outcome(ev)
}

// outcome maps Claude Code's fields onto an Outcome.
func (out output) outcome(ev Event) (Outcome, error) {
	o := Outcome{SuppressOutput: out.SuppressOutput, SystemMessage: capText(out.SystemMessage)}
	if out.Continue != nil && !*out.Continue {
		o.Stop, o.StopReason = true, capText(out.StopReason)
	}
	switch strings.ToLower(out.Decision) {
	case "", "continue", "undefined":
	case "block":
		o = block(ev, o, out.Reason)
	case "approve", "allow":
		o.Permission = PermissionAllow
		o.Reason = out.Reason
	default:
		return Outcome{}, fmt.Errorf("hook output: decision %q (want block or approve)", out.Decision)
	}
	s := out.Specific
	if s == nil {
		return o, nil
	}
	o.UpdatedInput = s.UpdatedInput
	o.AdditionalContext = capText(s.AdditionalContext)
	switch strings.ToLower(s.PermissionDecision) {
	case "", "defer": // defer only means something to Claude Code's -p mode: no say here
	case "deny":
		o = block(ev, o, s.PermissionDecisionReason)
	case "allow", "ask":
		if !o.Blocked() {
			o.Permission = Permission(strings.ToLower(s.PermissionDecision))
			if s.PermissionDecisionReason != "" {
				o.Reason = s.PermissionDecisionReason
			}
		}
	default:
		return Outcome{}, fmt.Errorf("hook output: permissionDecision %q (want allow, deny, ask or defer)", s.PermissionDecision)
	}
	if d := s.Decision; d != nil {
		switch strings.ToLower(d.Behavior) {
		case "allow":
			if !o.Blocked() {
				o.Permission = PermissionAllow
			}
			if len(d.UpdatedInput) > 0 {
				o.UpdatedInput = d.UpdatedInput
			}
		case "deny":
			o = block(ev, o, d.Message)
		default:
			return Outcome{}, fmt.Errorf("hook output: decision.behavior %q (want allow or deny)", d.Behavior)
		}
	}
	return o, nil
}

// block records a block. On stop events a block means "do not stop yet",
// as in Claude Code: the run goes on with the reason as an instruction.
func block(ev Event, o Outcome, reason string) Outcome {
	reason = capText(strings.TrimSpace(reason))
	if ev == Stop || ev == SubagentStop {
		o.ForceContinue = true
		o.Reason = reason
		return o
	}
	o.Decision, o.Reason, o.Permission = DecisionBlock, reason, ""
	return o
}

// MaxText bounds each text a hook passes on (a reason, additionalContext,
// systemMessage, plain stdout), as Claude Code caps them at 10,000
// characters: a hook's output must not flood the model's context.
const MaxText = 10000

// capText cuts s to [MaxText] characters, saying so.
func capText(s string) string {
	if len(s) <= MaxText { // bytes ≥ characters
		return s
	}
	r := []rune(s)
	if len(r) <= MaxText {
		return s
	}
	return string(r[:MaxText]) + "\n[hook output cut at 10000 characters]"
}

// validJSON reports whether a hook's stdout is Claude Code's JSON output
// for the event: an object that decodes and whose fields make sense. Such
// output decides even when the hook exited with a code other than 0 and 2.
func validJSON(ev Event, data []byte) (Outcome, bool) {
	text := bytes.TrimSpace(data)
	if len(text) == 0 || text[0] != '{' {
		return Outcome{}, false
	}
	var out output
	if json.Unmarshal(text, &out) != nil {
		return Outcome{}, false
	}
	o, err := out.outcome(ev)
	return o, err == nil
}
