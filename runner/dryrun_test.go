package runner_test

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/reinhq/rein/llm"
	"github.com/reinhq/rein/llm/llmtest"
	"github.com/reinhq/rein/llm/registry"
	"github.com/reinhq/rein/runner"
	"github.com/reinhq/rein/session"
	"github.com/reinhq/rein/workspace"
)

// CLI-5: Conversation.DryRun's request is, field for field, the first
// request Submit sends for the same prompt — system prompt, tools in
// order, the user message, max tokens and thinking — except the cache key,
// which is the id of the session a real run creates. The dry run calls
// no model, creates no session, writes no session directory and leaves
// the conversation unbound.
func TestDryRunIsFirstRequest_CLI5(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	home, work, sessions := filepath.Join(dir, "home"), filepath.Join(dir, "project"), filepath.Join(dir, "sessions")
	for _, d := range []string{home, work, filepath.Join(work, ".rein", "agents")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(filepath.Join(work, "AGENTS.md"), []byte("Use tabs.\n"), 0o600)
	env := map[string]string{"HOME": home, "REIN_SANDBOX": "off", "REIN_MODEL": "scripted/demo",
		"REIN_MAX_TOKENS": "2048", "REIN_THINKING_BUDGET": "1024"}
	getenv := func(k string) string { return env[k] }
	model := llmtest.NewScripted(llmtest.Reply{Text: "hi"})
	loaded, err := workspace.Load(workspace.Options{WorkDir: work, Getenv: getenv})
	if err != nil {
		t.Fatal(err)
	}
	store := session.NewMemStore()
	setup, err := runner.NewSetup(runner.Config{Loaded: loaded, Store: store, SessionsDir: sessions, Getenv: getenv,
		Resolve: func(_ *registry.Registry, spec string) (*runner.Model, error) {
			return &runner.Model{Provider: model, ProviderName: "scripted", Name: "demo", Label: spec,
				Caps: registry.Model{Name: "demo", ContextWindow: 100_000, MaxOutput: 4_000}}, nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	defer setup.Close()
	if setup, err = setup.WithModel(setup.ModelSpec(nil)); err != nil {
		t.Fatal(err)
	}
	conv := setup.NewConversation()
	defer conv.Close()

	dr, err := conv.DryRun(ctx, "say hi")
	if err != nil {
		t.Fatal(err)
	}
	if n := len(model.Requests()); n != 0 {
		t.Fatalf("the dry run called the model %d time(s)", n)
	}
	if list, _, _ := store.List(ctx, session.ListOptions{}); len(list) != 0 || conv.Session() != nil {
		t.Fatalf("the dry run created a session: %d stored, bound %v", len(list), conv.Session())
	}
	if _, err := os.Stat(sessions); !os.IsNotExist(err) {
		t.Fatalf("the dry run wrote the sessions directory: %v", err)
	}
	if len(dr.Tools) != len(dr.Request.Tools) || len(dr.Tools) == 0 {
		t.Fatalf("%d tools listed for %d sent", len(dr.Tools), len(dr.Request.Tools))
	}

	for _, err := range conv.Submit(ctx, "", "say hi", nil) {
		if err != nil {
			t.Fatal(err)
		}
	}
	sent := model.Requests()
	if len(sent) != 1 {
		t.Fatalf("%d requests", len(sent))
	}
	real := *sent[0]
	if real.CacheKey != conv.SessionID() || dr.Request.CacheKey != "" {
		t.Errorf("cache keys: real %q, dry %q", real.CacheKey, dr.Request.CacheKey)
	}
	real.CacheKey = ""
	if !reflect.DeepEqual(&real, dr.Request) {
		t.Errorf("the dry run's request differs from the first one sent\n--- sent\n%+v\n--- dry run\n%+v", real, *dr.Request)
	}
	if dr.Request.MaxTokens != 2048 || dr.Request.Thinking == nil || dr.Request.Thinking.BudgetTokens != 1024 {
		t.Errorf("max tokens %d, thinking %+v", dr.Request.MaxTokens, dr.Request.Thinking)
	}
	if m := dr.Request.Messages; len(m) != 1 || m[0].Role != llm.RoleUser || m[0].TextOf() != "say hi" {
		t.Errorf("messages %+v", m)
	}
}

// CLI-5: a prompt the loop refuses before calling the model (nothing to
// continue) is the dry run's error, not a captured request.
func TestDryRunNoPrompt_CLI5(t *testing.T) {
	dir := t.TempDir()
	env := map[string]string{"HOME": dir, "REIN_SANDBOX": "off", "REIN_MODEL": "scripted/demo"}
	getenv := func(k string) string { return env[k] }
	loaded, err := workspace.Load(workspace.Options{WorkDir: dir, Getenv: getenv})
	if err != nil {
		t.Fatal(err)
	}
	model := llmtest.NewScripted()
	setup, err := runner.NewSetup(runner.Config{Loaded: loaded, Store: session.NewMemStore(), SessionsDir: filepath.Join(dir, "s"), Getenv: getenv,
		Resolve: func(_ *registry.Registry, spec string) (*runner.Model, error) {
			return &runner.Model{Provider: model, Name: "demo", Label: spec, Caps: registry.Model{ContextWindow: 100_000}}, nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	defer setup.Close()
	if _, err := setup.NewConversation().DryRun(context.Background(), "x"); err != runner.ErrNoModel {
		t.Errorf("without a model: %v", err)
	}
	setup, _ = setup.WithModel("scripted/demo")
	_, err = setup.NewConversation().DryRun(context.Background(), "")
	if err == nil || len(model.Requests()) != 0 {
		t.Fatalf("an empty prompt: %v, %d requests", err, len(model.Requests()))
	}
}
