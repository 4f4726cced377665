package hook

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func toolInput(tool, cmd string) Input {
	in, _ := json.Marshal(map[string]string{"command": cmd})
	return Input{SessionID: "s1", RunID: "r1", Event: PreToolUse, ToolName: tool, ToolInput: in}
}

// HOOK-3: a command hook's exit codes and outputs.
func TestCommand_HOOK3(t *testing.T) {
	dir := t.TempDir()
	cases := []struct {
		name    string
		cmd     string
		event   Event
		want    Outcome
		wantErr string
	}{
		{"exit 0 no output continues", "exit 0", PreToolUse, Outcome{}, ""},
		{"exit 2 blocks with stderr", "echo 'rm is not allowed here' >&2; exit 2", PreToolUse,
			Outcome{Decision: DecisionBlock, Reason: "rm is not allowed here"}, ""},
		{"exit 2 on stop forces a continue", "echo 'tests still fail' >&2; exit 2", Stop,
			Outcome{ForceContinue: true, Reason: "tests still fail"}, ""},
		{"exit 1 is a non-blocking error", "echo oops >&2; exit 1", PreToolUse, Outcome{}, "hook exited with code 1: oops"},
		{"plain stdout is context for a prompt", "echo 'today is Monday'", UserPromptSubmit,
			Outcome{AdditionalContext: "today is Monday"}, ""},
		{"plain stdout elsewhere is ignored", "echo hello", PreToolUse, Outcome{}, ""},
		{"json deny", `echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"no network"}}'`,
			PreToolUse, Outcome{Decision: DecisionBlock, Reason: "no network"}, ""},
		{"json rewrite input", `echo '{"hookSpecificOutput":{"permissionDecision":"allow","updatedInput":{"command":"ls -la"}}}'`,
			PreToolUse, Outcome{Permission: "allow", UpdatedInput: json.RawMessage(`{"command":"ls -la"}`)}, ""},
		{"json context and message", `echo '{"systemMessage":"note","suppressOutput":true,"hookSpecificOutput":{"additionalContext":"use pnpm"}}'`,
			UserPromptSubmit, Outcome{SystemMessage: "note", SuppressOutput: true, AdditionalContext: "use pnpm"}, ""},
		{"json decision block", `echo '{"decision":"block","reason":"not now"}'`, UserPromptSubmit,
			Outcome{Decision: DecisionBlock, Reason: "not now"}, ""},
		{"json stop block forces continue", `echo '{"decision":"block","reason":"run the tests"}'`, Stop,
			Outcome{ForceContinue: true, Reason: "run the tests"}, ""},
		{"json continue false stops", `echo '{"continue":false,"stopReason":"budget spent"}'`, PostToolUse,
			Outcome{Stop: true, StopReason: "budget spent"}, ""},
		{"json permission request", `echo '{"hookSpecificOutput":{"decision":{"behavior":"deny","message":"not on main"}}}'`,
			PermissionRequest, Outcome{Decision: DecisionBlock, Reason: "not on main"}, ""},
		{"json with a bad decision", `echo '{"decision":"perhaps"}'`, PreToolUse, Outcome{}, `decision "perhaps"`},
		{"env", `test "$CLAUDE_PROJECT_DIR" = "$REIN_PROJECT_DIR" && test "$PWD" = "` + dir + `" && echo "$REIN_PROJECT_DIR" >&2 && exit 2`, PreToolUse,
			Outcome{Decision: DecisionBlock, Reason: "/project"}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in := toolInput("bash", "rm -rf /")
			in.Event, in.CWD = c.event, dir
			h := &Command{Command: c.cmd, ProjectDir: "/project"}
			got, err := h.Run(context.Background(), in)
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Errorf("error %v, want %q", err, c.wantErr)
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

// HOOK-3: the hook reads the input on stdin.
func TestCommandReadsInput_HOOK3(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "in.json")
	h := &Command{Command: "cat > " + out}
	in := toolInput("bash", "git status")
	in.CWD = dir
	if _, err := h.Run(context.Background(), in); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(data, &got); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"session_id": "s1", "run_id": "r1", "cwd": dir, "hook_event_name": "pre_tool_use",
		"tool_name": "bash", "tool_input": map[string]any{"command": "git status"}, "transcript_path": ""}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("-want +got:\n%s", diff)
	}
}

// HOOK-3, COMPAT-1: a Claude Code hook sees Claude Code's names and an
// absolute file_path, and its rewritten file_path goes back to rein's path.
func TestCommandClaudeDialect_HOOK3(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "in.json")
	h := &Command{Claude: true, Command: "cat > " + out +
		`; echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","updatedInput":{"file_path":"b.go","path":"a.go"}}}'`}
	in := Input{CWD: dir, Event: PreToolUse, ToolName: "read_file", ToolInput: json.RawMessage(`{"path":"a.go"}`)}
	o, err := h.Run(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	if string(o.UpdatedInput) != `{"path":"b.go"}` {
		t.Errorf("updated input %s, want path b.go", o.UpdatedInput)
	}
	data, _ := os.ReadFile(out)
	var got struct {
		Event     string            `json:"hook_event_name"`
		Tool      string            `json:"tool_name"`
		ToolInput map[string]string `json:"tool_input"`
	}
	_ = json.Unmarshal(data, &got)
	want := map[string]string{"file_path": filepath.Join(dir, "a.go")}
	if got.Event != "PreToolUse" || got.Tool != "Read" || !cmp.Equal(got.ToolInput, want) {
		t.Errorf("sent %s", data)
	}
}

// HOOK-3: a hanging hook is killed with its whole process group.
func TestCommandTimeoutKillsGroup_HOOK3(t *testing.T) {
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "pid")
	// The timeout leaves a loaded machine's shell time to start the
	// grandchild and write its pid; the test is about what happens after.
	h := &Command{Command: "sleep 60 & echo $! > " + pidFile + "; wait", Timeout: 2 * time.Second}
	_, err := h.Run(context.Background(), Input{CWD: dir, Event: PreToolUse})
	if !errors.Is(err, ErrTimeout) {
		t.Fatalf("error %v, want ErrTimeout", err)
	}
	data, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(data)))
	// The KILL is sent; the kernel may take a moment to reap the process.
	for deadline := time.Now().Add(2 * time.Second); alive(pid); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("grandchild %d still running 2s after the timeout", pid)
		}
	}
}

// alive reports a running (not zombie) process.
func alive(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	f := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
	return len(f) > 0 && f[0] != "Z" && f[0] != "X"
}

func TestCommandCancelled_HOOK3(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	h := &Command{Command: "sleep 5"}
	if _, err := h.Run(ctx, Input{CWD: t.TempDir()}); !errors.Is(err, context.Canceled) {
		t.Errorf("error %v, want context.Canceled", err)
	}
}
