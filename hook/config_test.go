package hook

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

const reinYAML = `
hooks:
  stop:
    - command: ./check.sh
  pre_tool_use:
    - {matcher: "bash", command: "./guard.sh", timeout: 10, priority: 0, on_failure: block}
    - {matcher: "*", url: "http://127.0.0.1:9/hook", headers: {X-Key: abc}, timeout: 1m30s, priority: -5, name: audit}
`

const claudeJSON = `{
	"model": "opus",
	"permissions": {"allow": ["Bash(ls:*)"]},
	"hooks": {
		"PreToolUse": [
			{"matcher": "Bash", "hooks": [{"type": "command", "command": "\"$CLAUDE_PROJECT_DIR\"/.claude/hooks/block-rm.sh", "timeout": 30}]},
			{"matcher": "Edit|Write", "hooks": [{"type": "command", "command": "fmt.sh"}, {"type": "command", "command": "lint.sh"}]}
		],
		"UserPromptSubmit": [{"hooks": [{"type": "command", "command": "date"}]}]
	}
}`

// HOOK-3: hooks declared in YAML, rein's way and Claude Code's.
func TestParse_HOOK3(t *testing.T) {
	got, err := Parse([]byte(reinYAML))
	if err != nil {
		t.Fatal(err)
	}
	want := []Spec{
		{Event: PreToolUse, Matcher: "bash", Command: "./guard.sh", Timeout: 10 * time.Second, OnFailure: FailBlock},
		{Event: PreToolUse, Matcher: "*", URL: "http://127.0.0.1:9/hook", Headers: map[string]string{"X-Key": "abc"},
			Timeout: 90 * time.Second, Priority: -5, Name: "audit"},
		{Event: Stop, Command: "./check.sh"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("rein format -want +got:\n%s", diff)
	}
	got, err = Parse([]byte(claudeJSON))
	if err != nil {
		t.Fatal(err)
	}
	want = []Spec{
		{Event: UserPromptSubmit, Command: "date", Claude: true},
		{Event: PreToolUse, Matcher: "Bash", Command: `"$CLAUDE_PROJECT_DIR"/.claude/hooks/block-rm.sh`, Timeout: 30 * time.Second, Claude: true},
		{Event: PreToolUse, Matcher: "Edit|Write", Command: "fmt.sh", Claude: true},
		{Event: PreToolUse, Matcher: "Edit|Write", Command: "lint.sh", Claude: true},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Claude Code format -want +got:\n%s", diff)
	}
	for _, empty := range []string{"", "model: x", "hooks:", "hooks: {}", "{}"} {
		if specs, err := Parse([]byte(empty)); err != nil || len(specs) != 0 {
			t.Errorf("Parse(%q) = %v, %v", empty, specs, err)
		}
	}
}

func TestParseErrors_HOOK3(t *testing.T) {
	cases := map[string]string{
		"hooks: {pre_tool: [{command: x}]}":                               `unknown event "pre_tool"`,
		"hooks: {pre_tool_use: [{comand: x}]}":                            `hooks.pre_tool_use[0]: unknown field "comand"`,
		"hooks: {pre_tool_use: [{matcher: x}]}":                           "give a command or a url",
		"hooks: {pre_tool_use: [{command: x, url: 'http://a'}]}":          "not both",
		"hooks: {pre_tool_use: [{url: 'ftp://a'}]}":                       "http or https",
		"hooks: {pre_tool_use: [{command: x, timeout: -1}]}":              "timeout",
		"hooks: {pre_tool_use: [{command: x, timeout: soon}]}":            "timeout",
		"hooks: {pre_tool_use: [{command: x, timeout: 100000}]}":          "timeout",
		"hooks: {pre_tool_use: [{command: x, priority: 1.5}]}":            "whole number",
		"hooks: {pre_tool_use: [{command: x, on_failure: explode}]}":      "on_failure",
		"hooks: {pre_tool_use: [{command: [x]}]}":                         "want a string",
		"hooks: {pre_tool_use: [{command: x, type: prompt}]}":             `type "prompt"`,
		"hooks: {pre_tool_use: {command: x}}":                             "want a list",
		"hooks: [1]":                                                      "want a mapping",
		"hooks: {pre_tool_use: [7]}":                                      "want a mapping",
		`{"hooks":{"Stop":[{"hooks":[{"type":"prompt","prompt":"x"}]}]}}`: "not supported by rein",
		`{"hooks":{"Stop":[{"hooks":"x"}]}}`:                              "want a list",
		"hooks: {pre_tool_use: [{command: x}]":                            "hook:",
	}
	for in, want := range cases {
		_, err := Parse([]byte(in))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Parse(%s) error %v, want it to mention %q", in, err, want)
		}
	}
}

func TestLoad_HOOK3(t *testing.T) {
	dir := t.TempDir()
	if specs, err := Load(filepath.Join(dir, "none.yaml")); err != nil || specs != nil {
		t.Errorf("missing file: %v, %v", specs, err)
	}
	p := filepath.Join(dir, "hooks.yaml")
	_ = os.WriteFile(p, []byte("hooks: {nope: []}"), 0o644)
	if _, err := Load(p); err == nil || !strings.Contains(err.Error(), p) {
		t.Errorf("error %v does not name the file", err)
	}
}

// FuzzParse: the loader never panics, and what it accepts registers.
func FuzzParse(f *testing.F) {
	for _, s := range []string{reinYAML, claudeJSON, "hooks: {stop: [{command: x, timeout: 5}]}", "{", "hooks: [", `{"hooks":{"PreToolUse":[{"hooks":[{}]}]}}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		specs, err := Parse(data)
		if err != nil {
			return
		}
		for _, s := range specs {
			if (s.Command == "") == (s.URL == "") || s.Timeout < 0 || s.Timeout > maxTimeout {
				t.Fatalf("accepted a bad spec %+v", s)
			}
		}
		if err := NewRegistry(Options{}).Register(Registrations(specs, "/tmp", nil, nil)...); err != nil {
			// Matchers are regular expressions checked at registration.
			if !strings.Contains(err.Error(), "matcher") {
				t.Fatalf("parsed specs do not register: %v", err)
			}
		}
	})
}

// blockRM is a hook script written for Claude Code: it parses the JSON on
// stdin without jq (python3, or grep when python3 is missing) and blocks
// rm -rf with exit code 2.
const blockRM = `#!/usr/bin/env bash
input=$(cat)
if command -v python3 >/dev/null 2>&1; then
  read -r event tool cmd < <(printf '%s' "$input" | python3 -c '
import json, sys
d = json.load(sys.stdin)
print(d.get("hook_event_name", ""), d.get("tool_name", ""), d.get("tool_input", {}).get("command", ""))
')
else
  event=$(printf '%s' "$input" | grep -o '"hook_event_name":"[^"]*"' | cut -d'"' -f4)
  tool=$(printf '%s' "$input" | grep -o '"tool_name":"[^"]*"' | cut -d'"' -f4)
  cmd=$(printf '%s' "$input" | grep -o '"command":"[^"]*"' | cut -d'"' -f4)
fi
if [ "$event" != "PreToolUse" ] || [ "$tool" != "Bash" ]; then
  echo "unexpected input: $event $tool" >&2
  exit 1
fi
if printf '%s' "$cmd" | grep -Eq '(^|[;&|[:space:]])rm[[:space:]]+-[a-zA-Z]*(rf|fr)'; then
  echo "Blocked by block-rm.sh: rm -rf is not allowed; remove files one by one" >&2
  exit 2
fi
exit 0
`

// HOOK-3: an unchanged Claude Code project (.claude/settings.json and its
// script) blocks rm -rf in rein.
func TestClaudeCodeScript_HOOK3(t *testing.T) {
	project := t.TempDir()
	script := filepath.Join(project, ".claude", "hooks", "block-rm.sh")
	if err := os.MkdirAll(filepath.Dir(script), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(script, []byte(blockRM), 0o755); err != nil {
		t.Fatal(err)
	}
	settings := filepath.Join(project, ".claude", "settings.json")
	if err := os.WriteFile(settings, []byte(claudeJSON), 0o644); err != nil {
		t.Fatal(err)
	}
	specs, err := Load(settings)
	if err != nil {
		t.Fatal(err)
	}
	audit := &memAudit{}
	reg := NewRegistry(Options{Auditor: audit})
	var bashSpecs []Spec
	for _, s := range specs {
		if s.Matcher == "Bash" {
			bashSpecs = append(bashSpecs, s)
		}
	}
	if err := reg.Register(Registrations(bashSpecs, project, nil, nil)...); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		tool, cmd string
		blocked   bool
	}{
		{"bash", "rm -rf /", true},
		{"bash", "cd build && rm -fr *", true},
		{"bash", "ls -la", false},
		{"bash", "rm file.txt", false},
		{"read_file", "rm -rf /", false}, // matcher Bash: the hook does not run
	}
	for _, c := range cases {
		in := toolInput(c.tool, c.cmd)
		in.CWD = project
		o, err := reg.Fire(context.Background(), PreToolUse, in)
		if err != nil {
			t.Fatal(err)
		}
		if o.Blocked() != c.blocked {
			t.Errorf("%s %q: blocked %v, want %v (%+v)", c.tool, c.cmd, o.Blocked(), c.blocked, o)
		}
		if c.blocked && !strings.Contains(o.Reason, "rm -rf is not allowed") {
			t.Errorf("reason %q does not carry the script's stderr", o.Reason)
		}
	}
	for _, r := range audit.recs {
		if r.Outcome == "error" {
			t.Errorf("the script failed: %+v", r)
		}
	}
	if len(audit.recs) != 4 {
		t.Errorf("%d hook runs audited, want 4", len(audit.recs))
	}
}
