package hook

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

// COMPAT-1: what a hook declared the Claude Code way receives for each
// event rein fires, against the field lists of Claude Code's hooks
// reference (claude-code-compat.md §3.3): the common fields on every
// event, the event's own, and the tool shapes of §3.5.
func TestClaudeInputPerEvent_COMPAT1(t *testing.T) {
	const cwd = "/work/proj"
	common := Input{SessionID: "s1", TranscriptPath: "/data/s1.jsonl", CWD: cwd, PermissionMode: "accept-edits", RunID: "r1"}
	with := func(f func(*Input)) Input { in := common; f(&in); return in }
	cases := []struct {
		ev   Event
		in   Input
		want map[string]any // the event's own fields, beside the common ones
	}{
		{SessionStart, with(func(in *Input) { in.Source = "startup" }), map[string]any{"source": "startup"}},
		{SessionEnd, with(func(in *Input) { in.Reason = "exit" }), map[string]any{"reason": "exit"}},
		{UserPromptSubmit, with(func(in *Input) { in.Prompt = "fix it" }), map[string]any{"prompt": "fix it"}},
		{PreToolUse, with(func(in *Input) {
			in.ToolName, in.ToolUseID = "bash", "t1"
			in.ToolInput = json.RawMessage(`{"command":"npm test","timeout":120,"description":"tests","unsandboxed":true}`)
		}), map[string]any{"tool_name": "Bash", "tool_use_id": "t1",
			"tool_input": map[string]any{"command": "npm test", "timeout": 120000.0, "description": "tests", "dangerouslyDisableSandbox": true}}},
		{PreToolUse, with(func(in *Input) {
			in.ToolName, in.ToolUseID = "edit_file", "t2"
			in.ToolInput = json.RawMessage(`{"path":"src/a.go","old_string":"a","new_string":"b","replace_all":true}`)
		}), map[string]any{"tool_name": "Edit", "tool_use_id": "t2",
			"tool_input": map[string]any{"file_path": "/work/proj/src/a.go", "old_string": "a", "new_string": "b", "replace_all": true}}},
		{PermissionRequest, with(func(in *Input) {
			in.ToolName, in.ToolUseID = "write_file", "t3"
			in.ToolInput = json.RawMessage(`{"path":"/abs/b.txt","content":"x"}`)
		}), map[string]any{"tool_name": "Write", "tool_use_id": "t3",
			"tool_input": map[string]any{"file_path": "/abs/b.txt", "content": "x"}}},
		{PostToolUse, with(func(in *Input) {
			in.ToolName, in.ToolUseID = "bash", "t4"
			in.ToolInput = json.RawMessage(`{"command":"ls"}`)
			in.ToolResponse = json.RawMessage(`{"output":"a\nb\n","is_error":false}`)
		}), map[string]any{"tool_name": "Bash", "tool_use_id": "t4", "tool_input": map[string]any{"command": "ls"},
			"tool_response": map[string]any{"stdout": "a\nb\n", "stderr": "", "interrupted": false, "isImage": false}}},
		{PostToolUse, with(func(in *Input) {
			in.ToolName, in.ToolUseID = "edit_file", "t5"
			in.ToolInput = json.RawMessage(`{"path":"a.go","old_string":"x","new_string":"y"}`)
			in.ToolResponse = json.RawMessage(`{"output":"edited a.go","is_error":false}`)
		}), map[string]any{"tool_name": "Edit", "tool_use_id": "t5",
			"tool_input": map[string]any{"file_path": "/work/proj/a.go", "old_string": "x", "new_string": "y"},
			"tool_response": map[string]any{"filePath": "/work/proj/a.go", "oldString": "x", "newString": "y",
				"replaceAll": false, "userModified": false}}},
		{PostToolUse, with(func(in *Input) {
			in.ToolName, in.ToolUseID = "glob", "t6"
			in.ToolInput = json.RawMessage(`{"pattern":"**/*.go"}`)
			in.ToolResponse = json.RawMessage(`{"output":"a.go\nsub/b.go\n… 3 more not shown; narrow the pattern or path\n","is_error":false}`)
		}), map[string]any{"tool_name": "Glob", "tool_use_id": "t6", "tool_input": map[string]any{"pattern": "**/*.go"},
			"tool_response": map[string]any{"filenames": []any{"/work/proj/a.go", "/work/proj/sub/b.go"}, "numFiles": 2.0, "truncated": true}}},
		{PostToolUse, with(func(in *Input) {
			in.ToolName, in.ToolUseID = "mcp__gh__issue", "t7"
			in.ToolInput = json.RawMessage(`{"n":1}`)
			in.ToolResponse = json.RawMessage(`{"output":"open","is_error":false}`)
		}), map[string]any{"tool_name": "mcp__gh__issue", "tool_use_id": "t7", "tool_input": map[string]any{"n": 1.0},
			"tool_response": map[string]any{"output": "open", "is_error": false}}},
		{PostToolError, with(func(in *Input) {
			in.ToolName, in.ToolUseID, in.Error = "bash", "t8", "exit status 1"
			in.ToolInput = json.RawMessage(`{"command":"false"}`)
			in.ToolResponse = json.RawMessage(`{"output":"exit status 1","is_error":true}`)
		}), map[string]any{"tool_name": "Bash", "tool_use_id": "t8", "tool_input": map[string]any{"command": "false"}, "error": "exit status 1"}},
		{Notification, with(func(in *Input) { in.Message, in.NotificationType = "rein needs your permission", "permission_prompt" }),
			map[string]any{"message": "rein needs your permission", "notification_type": "permission_prompt"}},
		{SubagentStart, with(func(in *Input) { in.AgentID, in.AgentType = "c9", "explore" }), map[string]any{"agent_id": "c9", "agent_type": "explore"}},
		{SubagentStop, with(func(in *Input) { in.AgentID, in.AgentType = "c9", "explore" }),
			map[string]any{"agent_id": "c9", "agent_type": "explore", "stop_hook_active": false}},
		{Stop, with(func(in *Input) { in.StopHookActive, in.LastAssistantMessage, in.Message = true, "done", "done" }),
			map[string]any{"stop_hook_active": true, "last_assistant_message": "done", "message": "done"}},
		{PreCompact, with(func(in *Input) { in.Trigger = TriggerAuto }), map[string]any{"trigger": "auto", "custom_instructions": ""}},
		{PostCompact, with(func(in *Input) { in.Trigger = TriggerManual }), map[string]any{"trigger": "manual"}},
	}
	for _, c := range cases {
		c.in.Event = c.ev
		data, err := encodeInput(c.in, true)
		if err != nil {
			t.Fatal(err)
		}
		var got map[string]any
		if err := json.Unmarshal(data, &got); err != nil {
			t.Fatal(err)
		}
		want := map[string]any{"session_id": "s1", "transcript_path": "/data/s1.jsonl", "cwd": cwd,
			"permission_mode": "acceptEdits", "hook_event_name": c.ev.ClaudeName(), "run_id": "r1"}
		for k, v := range c.want {
			want[k] = v
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s %s: -want +got:\n%s", c.ev, c.in.ToolName, diff)
		}
	}
}

// COMPAT-1: a hook in rein's format keeps rein's names and shapes: the
// tool input as the model wrote it, tool_response {output, is_error}, the
// event's snake_case name; it gains the common fields only.
func TestReinInputUnchanged_COMPAT1(t *testing.T) {
	in := Input{SessionID: "s1", CWD: "/w", Event: PostToolUse, PermissionMode: "accept-edits", ToolName: "read_file",
		ToolInput: json.RawMessage(`{"path":"a.go"}`), ToolResponse: json.RawMessage(`{"output":"x","is_error":false}`)}
	data, err := encodeInput(in, false)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"cwd":"/w","hook_event_name":"post_tool_use","permission_mode":"accept-edits","session_id":"s1","tool_input":{"path":"a.go"},"tool_name":"read_file","tool_response":{"output":"x","is_error":false},"transcript_path":""}`
	if string(data) != want {
		t.Errorf("sent %s\nwant %s", data, want)
	}
}

// COMPAT-1: an updatedInput in Claude Code's fields comes back in rein's:
// file_path → path, timeout ms → s, dangerouslyDisableSandbox →
// unsandboxed, -i → case_insensitive; fields rein does not know stay (the
// tool's schema judges them).
func TestReinToolInput_COMPAT1(t *testing.T) {
	cases := []struct{ tool, in, want string }{
		{"read_file", `{"file_path":"/w/a.go","offset":2}`, `{"offset":2,"path":"/w/a.go"}`},
		{"bash", `{"command":"ls","timeout":30000,"dangerouslyDisableSandbox":false}`, `{"command":"ls","timeout":30,"unsandboxed":false}`},
		{"grep", `{"pattern":"x","-i":true,"-C":2}`, `{"case_insensitive":true,"context":2,"pattern":"x"}`},
		{"task", `{"subagent_type":"explore","prompt":"p"}`, `{"agent":"explore","prompt":"p"}`},
		{"web_fetch", `{"url":"https://x","prompt":"p"}`, `{"url":"https://x","prompt":"p"}`},
		{"bash", `not json`, `not json`},
	}
	for _, c := range cases {
		if got := string(reinToolInput(c.tool, json.RawMessage(c.in))); got != c.want {
			t.Errorf("%s %s → %s, want %s", c.tool, c.in, got, c.want)
		}
	}
}

// HOOK-3, COMPAT-1: exit codes as Claude Code reads them — exit 2 blocks
// even when the JSON says allow, with the JSON's reason if it gives one;
// any other code is a non-blocking error unless stdout is valid JSON
// output, which then decides; permissionDecision defer is no say.
func TestCommandExitCodes_COMPAT1(t *testing.T) {
	cases := []struct {
		name, cmd string
		want      Outcome
		wantErr   string
	}{
		{"exit 2 beats allow", `echo '{"hookSpecificOutput":{"permissionDecision":"allow"}}'; echo nope >&2; exit 2`,
			Outcome{Decision: DecisionBlock, Reason: "nope"}, ""},
		{"exit 2 with a JSON reason", `echo '{"decision":"block","reason":"from json"}'; echo stderr >&2; exit 2`,
			Outcome{Decision: DecisionBlock, Reason: "from json"}, ""},
		{"exit 1 with JSON decides", `echo '{"hookSpecificOutput":{"permissionDecision":"deny","permissionDecisionReason":"json says no"}}'; exit 1`,
			Outcome{Decision: DecisionBlock, Reason: "json says no"}, ""},
		{"exit 1 without JSON fails", `echo oops >&2; exit 1`, Outcome{}, "code 1: oops"},
		{"exit 1 with bad JSON fails", `echo '{"decision":"perhaps"}'; exit 1`, Outcome{}, "code 1"},
		{"defer is no say", `echo '{"hookSpecificOutput":{"permissionDecision":"defer"}}'`, Outcome{}, ""},
		{"continue false", `echo '{"continue":false,"stopReason":"enough","systemMessage":"bye"}'`,
			Outcome{Stop: true, StopReason: "enough", SystemMessage: "bye"}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := &Command{Command: c.cmd, Claude: true}
			got, err := h.Run(context.Background(), Input{CWD: t.TempDir(), Event: PreToolUse, ToolName: "bash", ToolInput: json.RawMessage(`{"command":"ls"}`)})
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("error %v, want %q", err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(c.want, got); diff != "" {
				t.Errorf("-want +got:\n%s", diff)
			}
		})
	}
}

// COMPAT-1: a text a hook passes on is capped at 10,000 characters, as in
// Claude Code.
func TestOutputCapped_COMPAT1(t *testing.T) {
	long := strings.Repeat("é", MaxText+50)
	o, err := parseOutput(UserPromptSubmit, []byte(long))
	if err != nil {
		t.Fatal(err)
	}
	if n := utf8.RuneCountInString(o.AdditionalContext); n > MaxText+60 || !strings.Contains(o.AdditionalContext, "cut at 10000") {
		t.Errorf("context of %d characters, not cut", n)
	}
}

// HOOK-3: a script in Claude Code's published style (sh only) reads the
// absolute file_path of an Edit and denies edits outside src/ with JSON
// output, and rewrites the others' path.
func TestClaudeStyleScript_COMPAT1(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(dir, "protect.sh")
	body := `#!/bin/sh
input=$(cat)
path=$(printf '%s' "$input" | grep -o '"file_path":"[^"]*"' | cut -d'"' -f4)
case "$path" in
  "$CLAUDE_PROJECT_DIR"/src/*) printf '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow","updatedInput":{"file_path":"%s.new","old_string":"a","new_string":"b"}}}' "$path" ;;
  *) printf '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"%s is outside src"}}' "$path" ;;
esac
`
	if err := os.WriteFile(script, []byte(body), 0o700); err != nil {
		t.Fatal(err)
	}
	h := &Command{Command: script, Claude: true, ProjectDir: dir}
	run := func(p string) Outcome {
		o, err := h.Run(context.Background(), Input{CWD: dir, Event: PreToolUse, ToolName: "edit_file",
			ToolInput: json.RawMessage(`{"path":"` + p + `","old_string":"a","new_string":"b"}`)})
		if err != nil {
			t.Fatal(err)
		}
		return o
	}
	if o := run("docs/x.md"); !o.Blocked() || o.Reason != filepath.Join(dir, "docs/x.md")+" is outside src" {
		t.Errorf("docs/x.md: %+v", o)
	}
	o := run("src/a.go")
	var upd map[string]any
	_ = json.Unmarshal(o.UpdatedInput, &upd)
	if o.Permission != PermissionAllow || upd["path"] != filepath.Join(dir, "src/a.go.new") || upd["file_path"] != nil {
		t.Errorf("src/a.go: %+v (%s)", o, o.UpdatedInput)
	}
}

// FuzzParseOutput feeds the output parser arbitrary hook output for every
// event: it never panics, and what it returns is consistent — a stop
// event never blocks (a block there continues the run), no text exceeds
// the cap, a block carries no permission.
func FuzzParseOutput(f *testing.F) {
	for _, s := range []string{
		`{"continue":false,"stopReason":"x"}`,
		`{"decision":"block","reason":"r"}`,
		`{"decision":"approve"}`,
		`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow","updatedInput":{"command":"ls"},"additionalContext":"c"}}`,
		`{"hookSpecificOutput":{"permissionDecision":"deny","permissionDecisionReason":"no"}}`,
		`{"hookSpecificOutput":{"decision":{"behavior":"allow","updatedInput":{"a":1}}}}`,
		`{"hookSpecificOutput":{"permissionDecision":"defer"}}`,
		`{"systemMessage":"s","suppressOutput":true}`,
		`plain text`, `{`, `{"decision":null}`, `{"continue":"no"}`,
	} {
		f.Add(uint8(0), []byte(s))
	}
	f.Fuzz(func(t *testing.T, evIdx uint8, data []byte) {
		ev := Events[int(evIdx)%len(Events)]
		o, err := parseOutput(ev, data)
		v, ok := validJSON(ev, data)
		if err != nil {
			if ok {
				t.Fatalf("parseOutput failed (%v) on what validJSON accepts", err)
			}
			return
		}
		if ok && !cmp.Equal(o, v) {
			t.Fatalf("parseOutput %+v != validJSON %+v", o, v)
		}
		if (ev == Stop || ev == SubagentStop) && o.Blocked() {
			t.Fatalf("a %s hook's output blocks: %+v", ev, o)
		}
		if o.Blocked() && o.Permission != "" {
			t.Fatalf("a block with permission %q", o.Permission)
		}
		for _, s := range []string{o.Reason, o.AdditionalContext, o.SystemMessage, o.StopReason} {
			if utf8.RuneCountInString(s) > MaxText+60 {
				t.Fatalf("a text of %d characters passed the cap", utf8.RuneCountInString(s))
			}
		}
	})
}

// FuzzClaudeToolInput: mapping any input to Claude Code's fields and back
// never panics, and for a JSON object keeps every key rein's tool had
// (renamed back) and leaves paths absolute.
func FuzzClaudeToolInput(f *testing.F) {
	f.Add("bash", `{"command":"ls","timeout":5,"unsandboxed":true,"dir":"sub"}`)
	f.Add("read_file", `{"path":"a.go","limit":3}`)
	f.Add("grep", `{"pattern":"x","case_insensitive":true,"context":1,"path":"."}`)
	f.Add("list_dir", `{}`)
	f.Add("edit_file", `[1,2]`)
	f.Fuzz(func(t *testing.T, tool, raw string) {
		out := claudeToolInput(tool, json.RawMessage(raw), "/w")
		back := reinToolInput(tool, out)
		var orig, got map[string]any
		if json.Unmarshal([]byte(raw), &orig) != nil || orig == nil {
			return
		}
		if err := json.Unmarshal(back, &got); err != nil {
			t.Fatalf("round trip of %s gave %s: %v", raw, back, err)
		}
		for k := range orig {
			if _, ok := got[k]; !ok && !isClaudeName(tool, k) {
				t.Fatalf("%s: key %q lost: %s → %s → %s", tool, k, raw, out, back)
			}
		}
	})
}

// isClaudeName reports a key of the input that is a Claude Code field
// name of the tool (given by the model on purpose; it maps to rein's).
func isClaudeName(tool, k string) bool {
	for _, f := range claudeFields[tool] {
		if f.claude == k && f.rein != k {
			return true
		}
	}
	return false
}

// COMPAT-1: a Claude Code hook declaring what rein does not honour (if,
// async, once, the exec form, another shell) is refused with the field
// named, never run with another meaning; statusMessage, shell bash and
// async false are fine.
func TestClaudeUnsupportedFields_COMPAT1(t *testing.T) {
	for field, ok := range map[string]bool{
		`"if": "Bash(git *)"`: false, `"async": true`: false, `"once": true`: false, `"args": ["x"]`: false,
		`"shell": "powershell"`: false, `"asyncRewake": true`: false,
		`"statusMessage": "checking"`: true, `"shell": "bash"`: true, `"async": false`: true,
	} {
		doc := `{"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "x", ` + field + `}]}]}}`
		_, err := Parse([]byte(doc))
		if ok != (err == nil) {
			t.Errorf("%s: error %v", field, err)
		}
		if err != nil && !strings.Contains(err.Error(), strings.Split(field, `"`)[1]) {
			t.Errorf("%s: error %v does not name the field", field, err)
		}
	}
}
