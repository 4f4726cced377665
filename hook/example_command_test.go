//go:build unix

package hook_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"

	"github.com/reinhq/rein/hook"
)

// ExampleCommand registers shell-command hooks, the kind .rein/hooks.yaml
// and Claude Code's settings.json declare (SPEC HOOK-3), and fires them the
// way the run loop does. A command gets the input as JSON on stdin; exit
// code 2 blocks with stderr as the reason the model reads, and what a
// user_prompt_submit hook prints on success is added to the prompt.
func ExampleCommand() {
	dir, err := os.MkdirTemp("", "rein-hook-")
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	defer os.RemoveAll(dir)

	reg := hook.NewRegistry(hook.Options{})
	err = reg.Register(
		hook.Registration{Event: hook.PreToolUse, Matcher: "bash", Hook: &hook.Command{
			Command: `if grep -q 'rm -rf'; then echo 'rm -rf is not allowed: delete files one by one' >&2; exit 2; fi`,
		}},
		hook.Registration{Event: hook.UserPromptSubmit, Hook: &hook.Command{
			Command: `echo "The user's timezone is Europe/Oslo."`,
		}},
	)
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	ctx := context.Background()
	for _, command := range []string{`{"command":"rm -rf build"}`, `{"command":"ls build"}`} {
		out, err := reg.Fire(ctx, hook.PreToolUse, hook.Input{CWD: dir, ToolName: "bash", ToolInput: json.RawMessage(command)})
		if err != nil {
			fmt.Println("error:", err)
			return
		}
		if out.Blocked() {
			fmt.Printf("%s: blocked: %s\n", command, out.Reason)
		} else {
			fmt.Printf("%s: allowed\n", command)
		}
	}
	out, err := reg.Fire(ctx, hook.UserPromptSubmit, hook.Input{CWD: dir, Prompt: "When is the meeting?"})
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	fmt.Printf("context added to the prompt: %q\n", out.AdditionalContext)
	// Output:
	// {"command":"rm -rf build"}: blocked: rm -rf is not allowed: delete files one by one
	// {"command":"ls build"}: allowed
	// context added to the prompt: "The user's timezone is Europe/Oslo."
}
