package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reinhq/rein/cli/tui"
	"github.com/reinhq/rein/llm"
	"github.com/reinhq/rein/llm/llmtest"
	"github.com/reinhq/rein/permission"
)

// HOOK-3, WS-1, PERM-5: hooks come from .rein/hooks.yaml and Claude Code's
// .claude/settings.json once the workspace is trusted, and every hook run
// is audited in the session's directory.
func TestHooks(t *testing.T) {
	te := newTestEnv(t)
	te.write(".rein/hooks.yaml", "hooks:\n  user_prompt_submit:\n    - {command: \"echo context-from-hook\"}\n")
	te.write(".claude/settings.json", `{"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "echo no shell today >&2; exit 2"}]}]}}`)
	te.mustRun(ExitOK, "trust")
	s := te.script("m",
		llmtest.Reply{ToolCalls: []llm.ToolUse{llmtest.Call("c1", "bash", `{"command":"echo hi"}`)}},
		llmtest.Reply{Text: "blocked, fine"})
	out, _ := te.mustRun(ExitOK, "run", "--model", "scripted/m", "--permission-mode", "bypass", "-o", "stream-json", "go")
	if !strings.Contains(s.Requests()[0].Messages[0].TextOf(), "context-from-hook") {
		t.Errorf("the prompt hook's context is missing: %+v", s.Requests()[0].Messages[0])
	}
	if !strings.Contains(out, `"outcome":"blocked"`) || !strings.Contains(out, "no shell today") {
		t.Errorf("the Claude Code hook did not block bash:\n%s", out)
	}
	logs, _ := filepath.Glob(filepath.Join(te.home, ".local", "share", "rein", "sessions", "*", "hooks.jsonl"))
	if len(logs) != 1 {
		t.Fatalf("hook audit logs: %v", logs)
	}
	if b, _ := os.ReadFile(logs[0]); strings.Count(string(b), "\n") < 2 {
		t.Errorf("hook audit log:\n%s", b)
	}
	// A hooks file that does not parse cannot be trusted; until it is, it
	// is ignored with a warning.
	te.write(".rein/hooks.yaml", "hooks: [\n")
	_, errs := te.mustRun(ExitError, "trust")
	if !strings.Contains(errs, "hooks.yaml") {
		t.Errorf("trusting a bad hooks file: %s", errs)
	}
	te.script("m", llmtest.Reply{Text: "ok"})
	_, errs = te.mustRun(ExitOK, "run", "--model", "scripted/m", "x")
	if !strings.Contains(errs, "file that does not parse") {
		t.Errorf("bad hooks file, untrusted: %s", errs)
	}
}

// PERM-3: on a terminal, rein run asks; "always" keeps a rule in
// .rein/settings.local.yaml that the next run obeys without asking.
func TestTerminalApproval(t *testing.T) {
	te := newTestEnv(t)
	te.tty = true
	te.stdin = "a\n"
	bash := func(id string) llmtest.Reply {
		return llmtest.Reply{ToolCalls: []llm.ToolUse{llmtest.Call(id, "bash", `{"command":"echo approved-run"}`)}}
	}
	te.script("m", bash("c1"), llmtest.Reply{Text: "done"}, bash("c2"), llmtest.Reply{Text: "done again"})
	_, errs := te.mustRun(ExitOK, "run", "--model", "scripted/m", "one")
	if !strings.Contains(errs, "bash wants to run: echo approved-run") || !strings.Contains(errs, "[a]lways allow bash(echo:*)") {
		t.Errorf("question:\n%s", errs)
	}
	b, err := os.ReadFile(filepath.Join(te.ws, ".rein", "settings.local.yaml"))
	if err != nil || !strings.Contains(string(b), "bash(echo:*)") {
		t.Fatalf("always rule not kept: %v %s", err, b)
	}
	te.stdin = ""
	te.tty = false
	out, _ := te.mustRun(ExitOK, "run", "--model", "scripted/m", "-o", "stream-json", "two")
	if !strings.Contains(out, "approved-run") {
		t.Errorf("the kept rule did not allow the command:\n%s", out)
	}
}

// CLI-1: --cwd works in another directory; its workspace is found from
// there.
func TestCwd(t *testing.T) {
	te := newTestEnv(t)
	other := filepath.Join(te.home, "proj")
	if err := os.MkdirAll(filepath.Join(other, ".rein", "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(other, "AGENTS.md"), []byte("Project rules.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s := te.script("m", llmtest.Reply{Text: "ok"})
	te.mustRun(ExitOK, "run", "--model", "scripted/m", "--cwd", filepath.Join(other, ".rein", "sub"), "hi")
	if sys := s.Requests()[0].System; !strings.Contains(sys, "Working directory: "+other) || !strings.Contains(sys, "Project rules.") {
		t.Errorf("system prompt:\n%s", sys)
	}
	_, errs := te.mustRun(ExitUsage, "run", "--cwd", filepath.Join(te.home, "nope"), "hi")
	if !strings.Contains(errs, "not a directory") {
		t.Errorf("stderr: %s", errs)
	}
}

// PERM-1: the permission mode comes through the layers to the policy.
func TestPermissionModeLayers(t *testing.T) {
	te := newTestEnv(t)
	te.write(".rein/settings.yaml", "permissions:\n  mode: read-only\n")
	te.script("m", llmtest.Reply{Text: "a"})
	drive(t, te, func(ctx context.Context, b tui.Backend, _ tui.Options) {
		if m := b.Info().PermissionMode; m != string(permission.ModeReadOnly) {
			t.Errorf("mode %s", m)
		}
	}, "--model", "scripted/m")
	te.env["REIN_PERMISSION_MODE"] = "accept-edits"
	drive(t, te, func(ctx context.Context, b tui.Backend, _ tui.Options) {
		if m := b.Info().PermissionMode; m != string(permission.ModeAcceptEdits) {
			t.Errorf("mode %s", m)
		}
	}, "--model", "scripted/m")
}

// PERM-1, WS-3: a workspace's settings may not loosen the permission mode or
// the sandbox; config show, doctor and runs say what was ignored, and a
// flag still sets it.
func TestWorkspaceCannotLoosen(t *testing.T) {
	te := newTestEnv(t)
	te.write(".rein/settings.yaml", "permissions:\n  mode: bypass\n")
	const warn = "workspace .rein/settings.yaml asks for permissions.mode bypass; ignored: a workspace may only tighten it — pass --permission-mode bypass to allow"
	out, _ := te.mustRun(ExitOK, "config", "show")
	if !strings.Contains(out, "permissions.mode         default") || !strings.Contains(out, warn) {
		t.Errorf("config show:\n%s", out)
	}
	_, out, _ = te.run("doctor")
	if !strings.Contains(out, warn) {
		t.Errorf("doctor:\n%s", out)
	}
	te.script("m", llmtest.Reply{Text: "a"}, llmtest.Reply{Text: "b"})
	drive(t, te, func(ctx context.Context, b tui.Backend, _ tui.Options) {
		if m := b.Info().PermissionMode; m != string(permission.ModeDefault) {
			t.Errorf("mode %s, want default", m)
		}
	}, "--model", "scripted/m")
	drive(t, te, func(ctx context.Context, b tui.Backend, _ tui.Options) {
		if m := b.Info().PermissionMode; m != string(permission.ModeBypass) {
			t.Errorf("mode %s with the flag, want bypass", m)
		}
	}, "--model", "scripted/m", "--permission-mode", "bypass")
	out, _ = te.mustRun(ExitOK, "config", "show", "--permission-mode", "bypass")
	if !strings.Contains(out, "permissions.mode         bypass") || strings.Contains(out, "Warning") {
		t.Errorf("config show --permission-mode bypass:\n%s", out)
	}
	// Tightening is taken as written.
	te.write(".rein/settings.yaml", "permissions:\n  mode: strict\nsandbox: auto\n")
	out, _ = te.mustRun(ExitOK, "config", "show")
	if !strings.Contains(out, "permissions.mode         strict") || !strings.Contains(out, "sandbox                  auto") || strings.Contains(out, "Warning") {
		t.Errorf("config show, tightened:\n%s", out)
	}
}
