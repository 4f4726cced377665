package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reinhq/rein/llm/llmtest"
)

// COMPAT-1: rein doctor lists what Claude Code's settings hold that rein
// does not apply — an unmappable rule, an unsupported key — each with its
// file, in text and JSON.
func TestDoctorClaudeUnmapped_COMPAT1(t *testing.T) {
	te := newTestEnv(t)
	te.write(".claude/settings.json", `{"permissions": {"deny": ["Read(./README.md)", "Bash(git * main)", "Agent(Explore)"],
		"additionalDirectories": ["../docs"]}, "statusLine": {"type": "command", "command": "x"}}`)
	_, out, _ := te.run("doctor")
	for _, want := range []string{
		"Claude Code project settings .claude/settings.json: deny rule Agent(Explore) not applied",
		"additionalDirectories (../docs) not applied",
		"keys rein does not use: statusLine",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("doctor lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "Read(./README.md) not applied") || strings.Contains(out, "Bash(git * main) not applied") {
		t.Errorf("doctor reports a rule that maps:\n%s", out)
	}
	_, out, _ = te.run("doctor", "--json")
	var r report
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	if !hasCheck(r, "claude code settings", statusWarning) {
		t.Errorf("doctor --json has no claude code settings warning: %s", out)
	}
}

// COMPAT-1, MCP-1: rein doctor says which servers of the project's
// .mcp.json Claude Code's settings leave out (disabledMcpjsonServers,
// enabledMcpjsonServers) and why, as an mcp check, not a configuration
// warning.
func TestDoctorMCPSkipped_COMPAT1(t *testing.T) {
	te := newTestEnv(t)
	te.write(".mcp.json", `{"mcpServers": {"kept": {"command": "/nonexistent/kept-mcp"}, "off": {"command": "off-mcp"}, "other": {"command": "other-mcp"}}}`)
	te.write(".claude/settings.local.json", `{"enabledMcpjsonServers": ["kept", "off"], "disabledMcpjsonServers": ["off"]}`)
	te.mustRun(ExitOK, "trust")
	_, out, _ := te.run("doctor")
	for _, want := range []string{
		"off: skipped (.mcp.json): disabledMcpjsonServers in .claude/settings.local.json lists it",
		"other: skipped (.mcp.json): enabledMcpjsonServers in .claude/settings.local.json does not list it",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("doctor lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "kept: skipped") {
		t.Errorf("doctor skips the enabled server:\n%s", out)
	}
	out, _ = te.mustRun(ExitOK, "mcp", "list")
	if !strings.Contains(out, "skipped: disabledMcpjsonServers in .claude/settings.local.json lists it") || !strings.Contains(out, "other-mcp") {
		t.Errorf("mcp list does not show the skipped servers:\n%s", out)
	}
}

// MCP-1, COMPAT-1: rein mcp add --transport sse writes type: sse, which
// rein mcp list shows as the sse transport; sse without --url, or an
// unknown transport, is a usage error.
func TestMCPAddSSE_COMPAT1(t *testing.T) {
	te := newTestEnv(t)
	user := te.userFile("mcp.yaml", "servers: {}\n")
	te.mustRun(ExitOK, "mcp", "add", "legacy", "--transport", "sse", "--url", "http://127.0.0.1:9/sse")
	b, _ := os.ReadFile(user)
	if !strings.Contains(string(b), "type: sse") || !strings.Contains(string(b), "http://127.0.0.1:9/sse") {
		t.Errorf("mcp.yaml:\n%s", b)
	}
	out, _ := te.mustRun(ExitOK, "mcp", "list", "--json")
	var views []mcpView
	if err := json.Unmarshal([]byte(out), &views); err != nil {
		t.Fatal(err)
	}
	if len(views) != 1 || views[0].Transport != "sse" {
		t.Errorf("list: %+v", views)
	}
	for _, args := range [][]string{{"mcp", "add", "x", "--transport", "sse", "--", "cmd"}, {"mcp", "add", "x", "-t", "ws", "--url", "https://x"},
		{"mcp", "add", "x", "-t", "stdio", "--url", "https://x"}} {
		if code, _, errs := te.run(args...); code != ExitUsage || !strings.Contains(errs, "--transport") {
			t.Errorf("rein %s: exit %d: %s", strings.Join(args, " "), code, errs)
		}
	}
}

// COMPAT-1: through rein run and the CLI's session store, a Claude Code
// Stop hook's transcript_path is the session's own log, absolute and
// readable: the script counts its lines and tells the model, whose
// prompt and answer are in it by then.
func TestHookTranscriptIsSessionLog_COMPAT1(t *testing.T) {
	te := newTestEnv(t)
	te.write(".claude/hooks/stop.sh", `#!/bin/sh
input=$(cat)
case "$input" in *'"stop_hook_active":true'*) exit 0 ;; esac
path=$(printf '%s' "$input" | grep -o '"transcript_path":"[^"]*"' | cut -d'"' -f4)
echo "$path" > "$CLAUDE_PROJECT_DIR/transcript-path.txt"
grep -c '"first answer"' "$path" > "$CLAUDE_PROJECT_DIR/answer-lines.txt"
printf '{"decision":"block","reason":"the transcript has %s lines"}' "$(wc -l < "$path" | tr -d ' ')"
`)
	if err := os.Chmod(filepath.Join(te.ws, ".claude/hooks/stop.sh"), 0o755); err != nil {
		t.Fatal(err)
	}
	te.write(".claude/settings.json", `{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "\"$CLAUDE_PROJECT_DIR\"/.claude/hooks/stop.sh"}]}]}}`)
	te.mustRun(ExitOK, "trust")
	s := te.script("m", llmtest.Reply{Text: "first answer"}, llmtest.Reply{Text: "second answer"})
	te.mustRun(ExitOK, "run", "--model", "scripted/m", "hi")
	path, err := os.ReadFile(filepath.Join(te.ws, "transcript-path.txt"))
	if err != nil {
		t.Fatalf("the stop hook did not run: %v", err)
	}
	p := strings.TrimSpace(string(path))
	if !filepath.IsAbs(p) || filepath.Base(filepath.Dir(p)) != "sessions" || !strings.HasSuffix(p, ".jsonl") {
		t.Errorf("transcript_path %q: want the session's log in the sessions directory", p)
	}
	if n, _ := os.ReadFile(filepath.Join(te.ws, "answer-lines.txt")); strings.TrimSpace(string(n)) != "1" {
		t.Errorf("the transcript holds the model's answer %q times, want once", n)
	}
	reqs := s.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d model calls, want 2", len(reqs))
	}
	if last := reqs[1].Messages[len(reqs[1].Messages)-1].TextOf(); !strings.Contains(last, "the transcript has") || strings.Contains(last, "has 0 lines") {
		t.Errorf("the hook's reason: %q", last)
	}
}
