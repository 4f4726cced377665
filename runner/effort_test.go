package runner_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reinhq/rein/llm"
	"github.com/reinhq/rein/llm/llmtest"
	"github.com/reinhq/rein/llm/registry"
	"github.com/reinhq/rein/runner"
	"github.com/reinhq/rein/session"
	"github.com/reinhq/rein/workspace"
)

// Only models the registry knows to reason, from a maker whose API takes
// an effort (or whose adapter turns it into a budget), take one (FRONT-1).
func TestTakesEffort_FRONT1(t *testing.T) {
	for _, tc := range []struct {
		name string
		m    *runner.Model
		want bool
	}{
		{"anthropic, reasons", &runner.Model{Caps: registry.Model{Provider: "anthropic", Thinking: true}}, true},
		{"openai, reasons", &runner.Model{Caps: registry.Model{Provider: "openai", Thinking: true}}, true},
		{"anthropic, does not reason", &runner.Model{Caps: registry.Model{Provider: "anthropic"}}, false},
		{"google, reasons (budgets, not efforts)", &runner.Model{Caps: registry.Model{Provider: "google", Thinking: true}}, false},
		{"unknown to the registry", &runner.Model{ProviderName: "openai"}, false},
		{"no model", nil, false},
	} {
		if got := tc.m.TakesEffort(); got != tc.want {
			t.Errorf("%s: TakesEffort = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// UseEffort sets the reasoning effort the next request asks for, in place
// of thinking_budget; "" gives the budget back; an effort not offered, or
// one for a model that takes none, is refused saying what to do.
func TestUseEffort_FRONT1(t *testing.T) {
	for _, reasons := range []bool{true, false} {
		conv := effortConversation(t, reasons)
		thinking := func() *llm.ThinkingConfig {
			t.Helper()
			dr, err := conv.DryRun(context.Background(), "hi")
			if err != nil {
				t.Fatal(err)
			}
			return dr.Request.Thinking
		}
		if th := thinking(); th == nil || th.BudgetTokens != 2048 || th.Effort != "" {
			t.Errorf("reasons %v: thinking before an effort = %+v, want the budget", reasons, th)
		}
		err := conv.UseEffort("high")
		if !reasons {
			if err == nil || !strings.Contains(err.Error(), "takes no reasoning effort") {
				t.Errorf("an effort for a model that takes none: %v", err)
			}
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if th := thinking(); th == nil || th.Effort != "high" || th.BudgetTokens != 0 || conv.Effort() != "high" {
			t.Errorf("thinking with effort high = %+v", th)
		}
		if err := conv.UseEffort("extreme"); err == nil || !strings.Contains(err.Error(), "low, medium, high") {
			t.Errorf("effort extreme: %v", err)
		}
		if err := conv.UseEffort(""); err != nil {
			t.Fatal(err)
		}
		if th := thinking(); th == nil || th.BudgetTokens != 2048 || th.Effort != "" {
			t.Errorf("thinking after the effort was cleared = %+v", th)
		}
	}
}

// effortConversation is a conversation over a scripted Anthropic model
// that reasons or not, with thinking_budget 2048.
func effortConversation(t *testing.T, reasons bool) *runner.Conversation {
	t.Helper()
	dir := t.TempDir()
	home, work := filepath.Join(dir, "home"), filepath.Join(dir, "project")
	for _, d := range []string{home, filepath.Join(work, ".git")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	env := map[string]string{"HOME": home, "REIN_SANDBOX": "off", "REIN_MODEL": "scripted/demo", "REIN_THINKING_BUDGET": "2048"}
	getenv := func(k string) string { return env[k] }
	loaded, err := workspace.Load(workspace.Options{WorkDir: work, Getenv: getenv})
	if err != nil {
		t.Fatal(err)
	}
	model := llmtest.NewScripted()
	setup, err := runner.NewSetup(runner.Config{Loaded: loaded, Store: session.NewMemStore(), SessionsDir: filepath.Join(dir, "sessions"), Getenv: getenv,
		Resolve: func(_ *registry.Registry, spec string) (*runner.Model, error) {
			return &runner.Model{Provider: model, ProviderName: "anthropic", Name: "demo", Label: spec,
				Caps: registry.Model{Name: "demo", Provider: "anthropic", Thinking: reasons, ContextWindow: 100_000, MaxOutput: 4_000}}, nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { setup.Close() })
	if setup, err = setup.WithModel(setup.ModelSpec(nil)); err != nil {
		t.Fatal(err)
	}
	conv := setup.NewConversation()
	t.Cleanup(func() { conv.Close() })
	return conv
}
