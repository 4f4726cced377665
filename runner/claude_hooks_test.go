package runner_test

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reinhq/rein/agent"
	"github.com/reinhq/rein/llm"
	"github.com/reinhq/rein/llm/llmtest"
	"github.com/reinhq/rein/llm/registry"
	"github.com/reinhq/rein/permission"
	"github.com/reinhq/rein/runner"
	"github.com/reinhq/rein/session"
	"github.com/reinhq/rein/workspace"
)

// The hook scripts of TestClaudeHooksEndToEnd_COMPAT1, in the style of
// Claude Code's documentation but needing only sh, grep and cat (jq is
// not on every machine). Each first appends what it read on stdin to
// hook-inputs.jsonl.
const (
	ccLog = `#!/bin/sh
input=$(cat)
printf '%s\n' "$input" >> "$CLAUDE_PROJECT_DIR/hook-inputs.jsonl"
`
	// guard.sh: exit 2 blocks rm -rf with stderr as the reason; touch x is
	// allowed (no question) and rewritten to touch y.
	ccGuard = ccLog + `if printf '%s' "$input" | grep -q 'rm -rf'; then
  echo "Blocked: rm -rf is not allowed here" >&2
  exit 2
fi
if printf '%s' "$input" | grep -q '"command":"touch x"'; then
  echo '{"systemMessage":"guard rewrote touch","hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow","permissionDecisionReason":"touch is fine","updatedInput":{"command":"touch y"}}}'
fi
exit 0
`
	// stop.sh: the first stop is blocked with a reason; the second, with
	// stop_hook_active true, is let through.
	ccStop = ccLog + `if printf '%s' "$input" | grep -q '"stop_hook_active":true'; then
  exit 0
fi
echo '{"decision":"block","reason":"run the tests before you stop"}'
`
	// prompt.sh: plain stdout on UserPromptSubmit is context for the model.
	ccPrompt = ccLog + `echo "house rule: indent with tabs"
`
	ccSettings = `{"hooks": {
  "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "\"$CLAUDE_PROJECT_DIR\"/.claude/hooks/guard.sh"}]}],
  "PostToolUse": [{"matcher": "Read|Bash", "hooks": [{"type": "command", "command": "\"$CLAUDE_PROJECT_DIR\"/.claude/hooks/log.sh"}]}],
  "UserPromptSubmit": [{"hooks": [{"type": "command", "command": "\"$CLAUDE_PROJECT_DIR\"/.claude/hooks/prompt.sh"}]}],
  "SessionStart": [{"hooks": [{"type": "command", "command": "\"$CLAUDE_PROJECT_DIR\"/.claude/hooks/log.sh"}]}],
  "Stop": [{"hooks": [{"type": "command", "command": "\"$CLAUDE_PROJECT_DIR\"/.claude/hooks/stop.sh"}]}]
}}`
)

// TestClaudeHooksEndToEnd_COMPAT1 runs an unchanged Claude Code project's
// hooks (.claude/settings.json and sh scripts) through a whole run (rein
// issue 25, SPEC COMPAT-1, HOOK-1 … HOOK-3): every event's input carries
// Claude Code's fields (session_id, an absolute transcript_path the
// script can read, an absolute cwd, permission_mode, hook_event_name and
// the event's own), tool events use Claude Code's tool names and shapes,
// and the outputs act as in Claude Code — exit 2 blocks with stderr to the
// model, permissionDecision allow skips the question and updatedInput
// rewrites the call, plain stdout on UserPromptSubmit reaches the model,
// a Stop block continues the run once with stop_hook_active set the next
// time, and systemMessage reaches the user.
func TestClaudeHooksEndToEnd_COMPAT1(t *testing.T) {
	dir := t.TempDir()
	home, work := filepath.Join(dir, "home"), filepath.Join(dir, "project")
	for _, d := range []string{home, filepath.Join(work, ".git"), filepath.Join(work, ".claude", "hooks")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	files := map[string]string{"README.md": "hello\n", ".claude/settings.json": ccSettings, ".claude/hooks/log.sh": ccLog,
		".claude/hooks/guard.sh": ccGuard, ".claude/hooks/stop.sh": ccStop, ".claude/hooks/prompt.sh": ccPrompt}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(work, name), []byte(content), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	env := map[string]string{"HOME": home, "REIN_SANDBOX": "off", "REIN_MODEL": "scripted/demo", "PATH": os.Getenv("PATH")}
	getenv := func(k string) string { return env[k] }
	load := func() *workspace.Loaded {
		l, err := workspace.Load(workspace.Options{WorkDir: work, Getenv: getenv, ClaudeManagedDir: filepath.Join(dir, "managed")})
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	if err := load().TrustNow(time.Now()); err != nil {
		t.Fatal(err)
	}
	model := llmtest.NewScripted(
		llmtest.Reply{ToolCalls: []llm.ToolUse{llmtest.Call("c1", "bash", `{"command":"rm -rf build"}`)}},
		llmtest.Reply{ToolCalls: []llm.ToolUse{llmtest.Call("c2", "bash", `{"command":"touch x","timeout":5}`)}},
		llmtest.Reply{ToolCalls: []llm.ToolUse{llmtest.Call("c3", "read_file", `{"path":"README.md"}`)}},
		llmtest.Reply{Text: "all done"},
		llmtest.Reply{Text: "tests pass; done"},
	)
	var notes []string
	var mu sync.Mutex
	setup := scriptedSetup(t, model, runner.Config{Loaded: load(), Store: session.NewMemStore(), SessionsDir: filepath.Join(dir, "sessions"), Getenv: getenv,
		Notice: func(msg string) { mu.Lock(); notes = append(notes, msg); mu.Unlock() }})
	var asked []string
	approver := permission.ApproverFunc(func(_ context.Context, p permission.Prompt) (permission.Verdict, error) {
		asked = append(asked, p.Request.Tool+" "+string(p.Request.Input))
		return permission.Verdict{Answer: permission.AnswerDeny, Message: "not now"}, nil
	})
	conv := setup.NewConversation()
	defer conv.Close()
	results := map[string]*agent.ToolEvent{}
	var done *agent.DoneEvent
	for ev, err := range conv.Submit(context.Background(), "", "go", approver) {
		if err != nil {
			t.Fatal(err)
		}
		switch ev.Type {
		case agent.EventToolEnd:
			results[ev.Tool.ID] = ev.Tool
		case agent.EventDone:
			done = ev.Done
		}
	}

	// Outputs.
	if r := results["c1"]; r == nil || r.Outcome != agent.OutcomeBlocked || !strings.Contains(r.Output, "rm -rf is not allowed here") {
		t.Errorf("rm -rf: %+v, want blocked with the script's stderr", r)
	}
	if r := results["c2"]; r == nil || r.Outcome != agent.OutcomeOK {
		t.Errorf("touch: %+v, want run", r)
	}
	if _, err := os.Stat(filepath.Join(work, "y")); err != nil {
		t.Errorf("the rewritten command did not run: %v", err)
	}
	if _, err := os.Stat(filepath.Join(work, "x")); err == nil {
		t.Errorf("the original command ran")
	}
	if len(asked) != 0 {
		t.Errorf("asked %q: the hook's allow should have answered", asked)
	}
	reqs := model.Requests()
	if len(reqs) != 5 || done == nil || done.Reason != agent.ReasonCompleted {
		t.Fatalf("%d model calls, done %+v; want 5 and completed (the stop hook continues once)", len(reqs), done)
	}
	first := reqs[0].Messages[len(reqs[0].Messages)-1].TextOf()
	if !strings.Contains(first, "house rule: indent with tabs") {
		t.Errorf("the prompt %q lacks the UserPromptSubmit hook's stdout", first)
	}
	if last := reqs[4].Messages[len(reqs[4].Messages)-1].TextOf(); !strings.Contains(last, "run the tests before you stop") {
		t.Errorf("the stop hook's reason is not the next message: %q", last)
	}
	mu.Lock()
	if !slices.ContainsFunc(notes, func(n string) bool { return strings.Contains(n, "guard rewrote touch") }) {
		t.Errorf("notices %q lack the hook's systemMessage", notes)
	}
	mu.Unlock()

	// Inputs, against the reference's field lists (claude-code-compat.md §3.3, §3.5).
	inputs := readInputs(t, filepath.Join(work, "hook-inputs.jsonl"))
	byEvent := map[string][]map[string]any{}
	for _, in := range inputs {
		ev, _ := in["hook_event_name"].(string)
		byEvent[ev] = append(byEvent[ev], in)
	}
	want := map[string]int{"SessionStart": 1, "UserPromptSubmit": 1, "PreToolUse": 2, "PostToolUse": 2, "Stop": 2}
	for ev, n := range want {
		if len(byEvent[ev]) != n {
			t.Errorf("%s fired %d times, want %d", ev, len(byEvent[ev]), n)
		}
	}
	fields := map[string][]string{
		"SessionStart":     {"source"},
		"UserPromptSubmit": {"prompt"},
		"PreToolUse":       {"tool_name", "tool_input", "tool_use_id"},
		"PostToolUse":      {"tool_name", "tool_input", "tool_response", "tool_use_id"},
		"Stop":             {"stop_hook_active", "last_assistant_message"},
	}
	for _, in := range inputs {
		ev := in["hook_event_name"].(string)
		for _, k := range append([]string{"session_id", "transcript_path", "cwd", "permission_mode", "hook_event_name"}, fields[ev]...) {
			if _, ok := in[k]; !ok {
				t.Errorf("%s input lacks %s: %v", ev, k, in)
			}
		}
		if in["cwd"] != work || in["permission_mode"] != "default" || in["session_id"] != conv.SessionID() {
			t.Errorf("%s: cwd %v, permission_mode %v, session_id %v", ev, in["cwd"], in["permission_mode"], in["session_id"])
		}
		tp, _ := in["transcript_path"].(string)
		if !filepath.IsAbs(tp) {
			t.Errorf("%s: transcript_path %q is not absolute", ev, tp)
		} else if data, err := os.ReadFile(tp); err != nil {
			t.Errorf("%s: transcript %s: %v", ev, tp, err)
		} else if ev != "SessionStart" && ev != "UserPromptSubmit" && !strings.Contains(string(data), `"go"`) {
			t.Errorf("%s: the transcript lacks the prompt:\n%s", ev, data)
		}
	}
	if pre := byEvent["PreToolUse"]; len(pre) == 2 {
		ti, _ := pre[1]["tool_input"].(map[string]any)
		if pre[1]["tool_name"] != "Bash" || ti["command"] != "touch x" || ti["timeout"] != 5000.0 {
			t.Errorf("PreToolUse Bash input %v: want Claude Code's name and timeout in ms", pre[1])
		}
	}
	if post := byEvent["PostToolUse"]; len(post) == 2 {
		bash, read := post[0], post[1]
		if r, _ := bash["tool_response"].(map[string]any); r == nil || r["interrupted"] != false || r["stdout"] == nil {
			t.Errorf("Bash tool_response %v: want {stdout, stderr, interrupted, isImage}", bash["tool_response"])
		}
		ti, _ := read["tool_input"].(map[string]any)
		r, _ := read["tool_response"].(map[string]any)
		file, _ := r["file"].(map[string]any)
		abs := filepath.Join(work, "README.md")
		if read["tool_name"] != "Read" || ti["file_path"] != abs || file["filePath"] != abs || !strings.Contains(file["content"].(string), "hello") {
			t.Errorf("Read: %v", read)
		}
	}
	if stop := byEvent["Stop"]; len(stop) == 2 {
		if stop[0]["stop_hook_active"] != false || stop[1]["stop_hook_active"] != true || stop[0]["last_assistant_message"] != "all done" {
			t.Errorf("Stop inputs %v", stop)
		}
	}
}

func readInputs(t *testing.T, path string) []map[string]any {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []map[string]any
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if strings.TrimSpace(sc.Text()) == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("a hook read %q: %v", sc.Text(), err)
		}
		out = append(out, m)
	}
	return out
}

// scriptedSetup is the setup of cfg whose model is the scripted one, closed
// when the test ends.
func scriptedSetup(t *testing.T, model llm.Provider, cfg runner.Config) *runner.Setup {
	t.Helper()
	cfg.Resolve = func(_ *registry.Registry, spec string) (*runner.Model, error) {
		return &runner.Model{Provider: model, ProviderName: "scripted", Name: "demo", Label: spec,
			Caps: registry.Model{Name: "demo", ContextWindow: 100_000, MaxOutput: 4_000}}, nil
	}
	setup, err := runner.NewSetup(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { setup.Close() })
	if setup, err = setup.WithModel(setup.ModelSpec(nil)); err != nil {
		t.Fatal(err)
	}
	return setup
}
