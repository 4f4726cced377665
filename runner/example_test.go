package runner_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/reinhq/rein/agent"
	"github.com/reinhq/rein/llm"
	"github.com/reinhq/rein/llm/llmtest"
	"github.com/reinhq/rein/llm/registry"
	"github.com/reinhq/rein/runner"
	"github.com/reinhq/rein/session"
	"github.com/reinhq/rein/workspace"
)

// A front end's whole use of the runner: load a workspace's
// configuration, build its Setup with a model, start a Conversation, and
// run two prompts in it; then resume the stored session in a new
// conversation, as `rein --continue` does. The model here is scripted
// (llm/llmtest); a real front resolves "provider/model" with llm/registry.
func Example() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "rein-example")
	defer os.RemoveAll(dir)
	home, work := filepath.Join(dir, "home"), filepath.Join(dir, "project")
	os.MkdirAll(home, 0o700)
	os.MkdirAll(work, 0o700)
	os.WriteFile(filepath.Join(work, "notes.txt"), []byte("ship on Friday\n"), 0o600)
	env := map[string]string{"HOME": home, "REIN_SANDBOX": "off", "REIN_MODEL": "scripted/demo"}
	getenv := func(k string) string { return env[k] }

	model := llmtest.NewScripted(
		llmtest.Reply{ToolCalls: []llm.ToolUse{llmtest.Call("c1", "read_file", `{"path":"notes.txt"}`)}},
		llmtest.Reply{Text: "The notes say: ship on Friday."},
		llmtest.Reply{Text: "Friday."},
	)
	loaded, err := workspace.Load(workspace.Options{WorkDir: work, Getenv: getenv})
	if err != nil {
		fmt.Println(err)
		return
	}
	store := session.NewMemStore()
	setup, err := runner.NewSetup(runner.Config{Loaded: loaded, Store: store, SessionsDir: filepath.Join(dir, "sessions"), Getenv: getenv,
		Resolve: func(_ *registry.Registry, spec string) (*runner.Model, error) {
			return &runner.Model{Provider: model, ProviderName: "scripted", Name: "demo", Label: spec,
				Caps: registry.Model{Name: "demo", ContextWindow: 100_000, MaxOutput: 4_000}}, nil
		}})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer setup.Close()
	if setup, err = setup.WithModel(setup.ModelSpec(nil)); err != nil {
		fmt.Println(err)
		return
	}

	conv := setup.NewConversation()
	for _, prompt := range []string{"What do my notes say?", "Which day, in one word?"} {
		for ev, err := range conv.Submit(ctx, "", prompt, nil) {
			switch {
			case err != nil:
				fmt.Println("error:", err)
			case ev.Type == agent.EventToolEnd:
				fmt.Printf("tool %s ran\n", ev.Tool.Name)
			case ev.Type == agent.EventDone:
				fmt.Printf("done (%s): %s\n", ev.Done.Reason, ev.Done.Text)
			}
		}
	}
	id := conv.SessionID()
	conv.Close()

	again := setup.NewConversation()
	defer again.Close()
	if _, err := again.Resume(ctx, id); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("resumed: %d messages\n", len(again.History()))
	// Output:
	// tool read_file ran
	// done (completed): The notes say: ship on Friday.
	// done (completed): Friday.
	// resumed: 6 messages
}
