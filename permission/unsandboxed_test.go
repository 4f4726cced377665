package permission

import (
	"encoding/json"
	"testing"
)

// TOOL-7: a command asking to run outside the sandbox always needs the
// user: in every mode, bypass included, whatever the allow rules; it is
// denied in read-only mode, and deny rules still win.
func TestUnsandboxedAlwaysAsks_TOOL7(t *testing.T) {
	ws := t.TempDir()
	req := func(cmd string, unsandboxed any) Request {
		b, _ := json.Marshal(map[string]any{"command": cmd, "unsandboxed": unsandboxed})
		return Request{Tool: "bash", Input: b, Meta: metaExec, WorkDir: ws}
	}
	for _, mode := range []Mode{ModeStrict, ModeDefault, ModeAcceptEdits, ModeBypass} {
		o := decide(t, Settings{Mode: mode, Rules: mustRules(t, SourceUser, "allow bash", "allow bash(go build:*)")}, req("go build ./...", true))
		if o.Decision != DecisionAsk {
			t.Errorf("%s: %s (%s), want ask", mode, o.Decision, o.Reason)
		}
	}
	if o := decide(t, Settings{Mode: ModeReadOnly}, req("ls", true)); o.Decision != DecisionDeny {
		t.Errorf("read-only: %s", o.Decision)
	}
	if o := decide(t, Settings{Mode: ModeBypass, Rules: mustRules(t, SourceUser, "deny bash(curl:*)")}, req("curl x", true)); o.Decision != DecisionDeny {
		t.Errorf("a deny rule lost to the unsandboxed ask: %s", o.Decision)
	}
	// Attack rows: spellings that must not slip past, or trigger falsely.
	if o := decide(t, Settings{Mode: ModeBypass}, req("ls", false)); o.Decision != DecisionAllow {
		t.Errorf("unsandboxed: false in bypass: %s", o.Decision)
	}
	for _, v := range []any{"true", 1, "yes", map[string]any{}} {
		if o := decide(t, Settings{Mode: ModeBypass}, req("ls", v)); o.Decision != DecisionAsk {
			t.Errorf("unsandboxed: %v: %s, want ask", v, o.Decision)
		}
	}
	upper := Request{Tool: "bash", Input: json.RawMessage(`{"command":"ls","UNSANDBOXED":true}`), Meta: metaExec, WorkDir: ws}
	if o := decide(t, Settings{Mode: ModeBypass}, upper); o.Decision != DecisionAsk {
		t.Errorf("the key in capitals (encoding/json matches it): %s", o.Decision)
	}
	dup := Request{Tool: "bash", Input: json.RawMessage(`{"command":"ls","unsandboxed":false,"unsandboxed":true}`), Meta: metaExec, WorkDir: ws}
	if o := decide(t, Settings{Mode: ModeBypass}, dup); o.Decision != DecisionAsk {
		t.Errorf("a repeated key (last wins, as the tool reads it): %s", o.Decision)
	}
}
