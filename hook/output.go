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
			return Outcome{AdditionalContext: string(text)}, nil
		}
		return Outcome{}, nil
	}
	return out.outcome(ev)
}

// outcome maps Claude Code's fields onto an Outcome.
func (out output) outcome(ev Event) (Outcome, error) {
	o := Outcome{SuppressOutput: out.SuppressOutput, SystemMessage: out.SystemMessage}
	if out.Continue != nil && !*out.Continue {
		o.Stop, o.StopReason = true, out.StopReason
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
	o.AdditionalContext = s.AdditionalContext
	switch strings.ToLower(s.PermissionDecision) {
	case "":
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
		return Outcome{}, fmt.Errorf("hook output: permissionDecision %q (want allow, deny or ask)", s.PermissionDecision)
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
	reason = strings.TrimSpace(reason)
	if ev == Stop || ev == SubagentStop {
		o.ForceContinue = true
		o.Reason = reason
		return o
	}
	o.Decision, o.Reason, o.Permission = DecisionBlock, reason, ""
	return o
}

// claudeInput renders the input as Claude Code would send it: PascalCase
// event, Claude Code's tool names, file_path beside path.
func claudeInput(in Input) Input {
	in.Event = Event(in.Event.ClaudeName())
	if n, ok := claudeToolOf[in.ToolName]; ok {
		in.ToolName = n
	}
	in.ToolInput = aliasPath(in.ToolInput)
	return in
}

// aliasPath adds file_path to a tool input that has only path.
func aliasPath(raw json.RawMessage) json.RawMessage {
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil {
		return raw
	}
	p, hasPath := m["path"]
	if _, has := m["file_path"]; !hasPath || has {
		return raw
	}
	m["file_path"] = p
	out, err := json.Marshal(m)
	if err != nil {
		return raw
	}
	return out
}

// unaliasPath undoes aliasPath on an updated input: when the original input
// had path and not file_path, an updated file_path goes back to path.
func unaliasPath(orig, updated json.RawMessage) json.RawMessage {
	var o, u map[string]json.RawMessage
	if json.Unmarshal(orig, &o) != nil || json.Unmarshal(updated, &u) != nil {
		return updated
	}
	_, origPath := o["path"]
	_, origFile := o["file_path"]
	fp, hasFile := u["file_path"]
	if !origPath || origFile || !hasFile {
		return updated
	}
	u["path"] = fp
	delete(u, "file_path")
	out, err := json.Marshal(u)
	if err != nil {
		return updated
	}
	return out
}
