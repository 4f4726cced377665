package hook

import (
	"context"
	"testing"
)

// BenchmarkFireFunc measures the registry's own cost per event with three
// Go hooks.
func BenchmarkFireFunc(b *testing.B) {
	reg := NewRegistry(Options{})
	for range 3 {
		_ = reg.Register(Registration{Event: PreToolUse, Matcher: "bash|edit_file", Hook: Func(func(context.Context, Input) (Outcome, error) {
			return Outcome{AdditionalContext: "x"}, nil
		})})
	}
	in := toolInput("bash", "ls")
	for b.Loop() {
		_, _ = reg.Fire(context.Background(), PreToolUse, in)
	}
}

// BenchmarkCommandHook measures one command hook run (fork, bash, JSON).
func BenchmarkCommandHook(b *testing.B) {
	h := &Command{Command: "cat >/dev/null"}
	in := toolInput("bash", "ls")
	in.CWD = b.TempDir()
	for b.Loop() {
		if _, err := h.Run(context.Background(), in); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkEncodeInput measures rendering a post_tool_use input for a
// command hook in rein's dialect and in Claude Code's (the tool_input and
// tool_response rewritten), against the fork of BenchmarkCommandHook.
func BenchmarkEncodeInput(b *testing.B) {
	in := Input{SessionID: "s1", CWD: "/work/proj", TranscriptPath: "/data/s1.jsonl", Event: PostToolUse, ToolName: "edit_file",
		ToolInput:    []byte(`{"path":"src/main.go","old_string":"fmt.Println(a)","new_string":"fmt.Println(b)"}`),
		ToolResponse: []byte(`{"output":"edited src/main.go: 1 replacement","is_error":false}`)}
	for _, claude := range []bool{false, true} {
		b.Run(map[bool]string{false: "rein", true: "claude"}[claude], func(b *testing.B) {
			for b.Loop() {
				if _, err := encodeInput(in, claude); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
