package hook_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/reinhq/rein/agent"
	"github.com/reinhq/rein/hook"
	"github.com/reinhq/rein/llm"
	"github.com/reinhq/rein/llm/llmtest"
	"github.com/reinhq/rein/tool"
)

// pathIn is the input of the example's file tools.
type pathIn struct {
	Path string `json:"path"`
}

// ExampleRegistry registers Go hooks (hook.Func) and hands the registry to
// an agent (SPEC HOOK-1, HOOK-2): a pre_tool_use guard blocks deleting
// anything under secrets/, with a reason the model reads, and a
// post_tool_use hook sees every call that ran. The registry is the same one
// rein fills from .rein/hooks.yaml, where command and HTTP hooks are
// declared.
func ExampleRegistry() {
	reg := hook.NewRegistry(hook.Options{})
	err := reg.Register(
		hook.Registration{
			Name:    "protect-secrets",
			Event:   hook.PreToolUse,
			Matcher: "delete_file",
			Hook: hook.Func(func(ctx context.Context, in hook.Input) (hook.Outcome, error) {
				var p pathIn
				if err := json.Unmarshal(in.ToolInput, &p); err != nil {
					return hook.Outcome{}, fmt.Errorf("read the input of %s: %w", in.ToolName, err)
				}
				if strings.HasPrefix(p.Path, "secrets/") {
					return hook.Outcome{Decision: hook.DecisionBlock, Reason: "files under secrets/ may not be deleted"}, nil
				}
				return hook.Outcome{}, nil
			}),
		},
		hook.Registration{
			Name:  "log",
			Event: hook.PostToolUse, // no matcher: every tool
			Hook: hook.Func(func(ctx context.Context, in hook.Input) (hook.Outcome, error) {
				fmt.Println("hook: post_tool_use", in.ToolName, string(in.ToolInput))
				return hook.Outcome{}, nil
			}),
		},
	)
	if err != nil {
		fmt.Println("error:", err)
		return
	}

	deleteFile := tool.New("delete_file", "Deletes a file.", tool.Meta{Destructive: true, Category: tool.CategoryEdit},
		func(ctx context.Context, call tool.Call, in pathIn) (tool.Result, error) {
			return tool.Text("deleted " + in.Path), nil
		})
	tools, err := tool.NewSet(tool.OriginBuiltin, deleteFile)
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	model := llmtest.NewScripted(
		llmtest.Reply{ToolCalls: []llm.ToolUse{llmtest.Call("c1", "delete_file", `{"path":"secrets/key.pem"}`)}},
		llmtest.Reply{ToolCalls: []llm.ToolUse{llmtest.Call("c2", "delete_file", `{"path":"build/out.o"}`)}},
		llmtest.Reply{Text: "I deleted build/out.o; secrets/key.pem is protected."},
	)
	a := agent.New(agent.Config{Provider: model, Model: "test-model", Tools: tools, Hooks: reg})
	prompt := llm.UserText("Clean up.")
	for ev, err := range a.Run(context.Background(), agent.Input{Prompt: &prompt}) {
		if err != nil {
			fmt.Println("error:", err)
			return
		}
		switch ev.Type {
		case agent.EventToolEnd:
			fmt.Printf("tool_end %s %s: %s\n", ev.Tool.Name, ev.Tool.Outcome, ev.Tool.Output)
		case agent.EventDone:
			fmt.Println("answer:", ev.Done.Text)
		}
	}
	// Output:
	// tool_end delete_file blocked: blocked by a hook: files under secrets/ may not be deleted
	// hook: post_tool_use delete_file {"path":"build/out.o"}
	// tool_end delete_file ok: deleted build/out.o
	// answer: I deleted build/out.o; secrets/key.pem is protected.
}
