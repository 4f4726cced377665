package registry

import (
	"strings"
	"testing"
)

// TestCOMPAT1Aliases resolves Claude Code's model aliases through the
// built-in table, the user's overrides and Claude Code's variables (SPEC
// COMPAT-1, PROV-3).
func TestCOMPAT1Aliases(t *testing.T) {
	env := map[string]string{}
	getenv := func(k string) string { return env[k] }
	cases := []struct {
		name     string
		aliases  map[string]string
		env      map[string]string
		spec     string
		provider string
		model    string
		window   int
		betas    []string
		plan     string
		long     bool
	}{
		{name: "sonnet", spec: "sonnet", provider: "anthropic", model: "claude-sonnet-5", window: 1_000_000},
		{name: "opus", spec: "opus", provider: "anthropic", model: "claude-opus-5", window: 1_000_000},
		{name: "haiku", spec: "haiku", provider: "anthropic", model: "claude-haiku-4-5", window: 200_000},
		{name: "any case", spec: " Sonnet ", provider: "anthropic", model: "claude-sonnet-5", window: 1_000_000},
		{name: "opusplan is sonnet outside plan mode", spec: "opusplan", provider: "anthropic", model: "claude-sonnet-5",
			window: 1_000_000, plan: "claude-opus-5"},
		{name: "1m on a native 1M model sends no beta", spec: "sonnet[1m]", provider: "anthropic", model: "claude-sonnet-5",
			window: 1_000_000, long: true},
		{name: "1m on Sonnet 4.5 sends the beta", spec: "claude-sonnet-4-5[1m]", provider: "anthropic", model: "claude-sonnet-4-5",
			window: LongContextWindow, betas: []string{BetaContext1M}, long: true},
		{name: "1m suffix in capitals", spec: "anthropic/claude-sonnet-4-5-20250929[1M]", provider: "anthropic",
			model: "claude-sonnet-4-5-20250929", window: LongContextWindow, betas: []string{BetaContext1M}, long: true},
		{name: "user override", aliases: map[string]string{"sonnet": "claude-sonnet-4-5"}, spec: "sonnet",
			provider: "anthropic", model: "claude-sonnet-4-5", window: 200_000},
		{name: "user override reaches opusplan", aliases: map[string]string{"sonnet": "claude-sonnet-4-5", "opus": "claude-opus-4-5"},
			spec: "opusplan[1m]", provider: "anthropic", model: "claude-sonnet-4-5", window: LongContextWindow,
			betas: []string{BetaContext1M}, plan: "claude-opus-4-5", long: true},
		{name: "user alias to another profile", aliases: map[string]string{"fast": "openrouter/anthropic/claude-haiku-4.5"},
			spec: "fast", provider: "openrouter", model: "anthropic/claude-haiku-4.5", window: 200_000},
		{name: "Claude Code's variable wins", aliases: map[string]string{"opus": "claude-opus-4-5"},
			env: map[string]string{"ANTHROPIC_DEFAULT_OPUS_MODEL": "claude-opus-4-1"}, spec: "opus",
			provider: "anthropic", model: "claude-opus-4-1", window: 200_000},
		{name: "a URL in the variable is ignored", env: map[string]string{"ANTHROPIC_DEFAULT_HAIKU_MODEL": "http://evil/x"},
			spec: "haiku", provider: "anthropic", model: "claude-haiku-4-5", window: 200_000},
		{name: "a provider prefix is not an alias", spec: "anthropic/claude-opus-4-5", provider: "anthropic", model: "claude-opus-4-5", window: 200_000},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			clear(env)
			for k, v := range tc.env {
				env[k] = v
			}
			r, err := New(Config{Aliases: tc.aliases, Getenv: getenv})
			if err != nil {
				t.Fatal(err)
			}
			res, err := r.Resolve(tc.spec)
			if err != nil {
				t.Fatalf("Resolve(%q): %v", tc.spec, err)
			}
			if res.Profile.Name != tc.provider || res.Model != tc.model || res.Caps.ContextWindow != tc.window ||
				res.PlanModel != tc.plan || res.LongContext != tc.long || strings.Join(res.Betas, ",") != strings.Join(tc.betas, ",") {
				t.Errorf("Resolve(%q) = %s/%s window %d betas %v plan %q long %v; want %s/%s window %d betas %v plan %q long %v",
					tc.spec, res.Profile.Name, res.Model, res.Caps.ContextWindow, res.Betas, res.PlanModel, res.LongContext,
					tc.provider, tc.model, tc.window, tc.betas, tc.plan, tc.long)
			}
			if res.Warning != "" && tc.model != "anthropic/claude-haiku-4.5" {
				t.Errorf("Resolve(%q) warns: %s", tc.spec, res.Warning)
			}
			p, m, err := r.Parse(tc.spec)
			if err != nil || p != tc.provider || m != tc.model {
				t.Errorf("Parse(%q) = %s, %s, %v", tc.spec, p, m, err)
			}
		})
	}
}

// TestCOMPAT1AliasErrors: what an alias cannot be, each refused with what
// to write instead.
func TestCOMPAT1AliasErrors(t *testing.T) {
	for _, tc := range []struct {
		spec string
		want string
	}{
		{"inherit", "only as an agent's model"},
		{"[1m]", "no model before [1m]"},
		{"gpt-5[1m]", "not an Anthropic one"},
		{"sonet", "did you mean"},
	} {
		if _, err := builtin().Resolve(tc.spec); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Resolve(%q) = %v, want an error saying %q", tc.spec, err, tc.want)
		}
	}
}

// TestCOMPAT1AliasAttacks: an alias maps to a model id, never to an
// endpoint or a key, and a workspace cannot move the user's aliases.
func TestCOMPAT1AliasAttacks(t *testing.T) {
	refused := []struct {
		name    string
		aliases map[string]string
		want    string
	}{
		{"endpoint", map[string]string{"sonnet": "https://evil.example/v1/messages"}, "never an endpoint"},
		{"scheme-relative endpoint", map[string]string{"sonnet": "//evil.example/v1"}, "never an endpoint"},
		{"header smuggling", map[string]string{"sonnet": "claude-sonnet-5\r\nx-api-key: k"}, "control characters"},
		{"inherit redefined", map[string]string{"inherit": "claude-opus-5"}, "rein's own"},
		{"opusplan redefined", map[string]string{"opusplan": "gpt-5"}, "rein's own"},
		{"bad name", map[string]string{"Son net": "claude-sonnet-5"}, "a name is"},
		{"empty target", map[string]string{"x": " "}, "has no model"},
		{"suffix in target", map[string]string{"big": "claude-sonnet-4-5[1m]"}, "where the alias is used"},
	}
	for _, tc := range refused {
		if _, err := New(Config{Aliases: tc.aliases}); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: New = %v, want an error saying %q", tc.name, err, tc.want)
		}
	}

	// A workspace's aliases: new names only; a redefinition or an endpoint
	// is ignored with a warning, the rest still loads.
	r, err := New(Config{
		Aliases: map[string]string{"fast": "claude-haiku-4-5"},
		WorkspaceAliases: map[string]string{
			"sonnet": "openrouter/anthropic/claude-sonnet-4.5", // another provider, with the user's key
			"fast":   "deepseek/deepseek-chat",
			"evil":   "http://127.0.0.1:9/v1",
			"review": "claude-opus-4-5",
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	for spec, want := range map[string]string{"sonnet": "anthropic/claude-sonnet-5", "fast": "anthropic/claude-haiku-4-5",
		"review": "anthropic/claude-opus-4-5"} {
		res, err := r.Resolve(spec)
		if err != nil || res.Profile.Name+"/"+res.Model != want {
			t.Errorf("Resolve(%q) = %s/%s, %v; want %s", spec, res.Profile.Name, res.Model, err, want)
		}
	}
	if _, err := r.Resolve("evil"); err == nil {
		t.Error("a workspace alias to a URL resolved")
	}
	w := strings.Join(r.Warnings(), "\n")
	for _, want := range []string{"workspace alias sonnet", "workspace alias fast", "never an endpoint"} {
		if !strings.Contains(w, want) {
			t.Errorf("warnings lack %q:\n%s", want, w)
		}
	}
	if got := r.Aliases()["sonnet"]; got != "claude-sonnet-5" {
		t.Errorf("Aliases()[sonnet] = %q", got)
	}
}

// FuzzAliasExpand: no model string makes alias expansion panic, and what
// it yields holds no suffix and no URL.
func FuzzAliasExpand(f *testing.F) {
	for _, s := range []string{"sonnet", "opus[1m]", "opusplan[1M]", "[1m]", "inherit", "claude-x[1m][1m]", "a/b[1m]", "ß[1m]"} {
		f.Add(s)
	}
	r := builtin()
	f.Fuzz(func(t *testing.T, s string) {
		res, err := r.Resolve(s)
		if err != nil {
			return
		}
		if strings.Contains(res.Model, "://") || res.Model == "" {
			t.Fatalf("Resolve(%q) = model %q", s, res.Model)
		}
		if res.LongContext && res.Caps.ContextWindow < LongContextWindow {
			t.Fatalf("Resolve(%q): [1m] with window %d", s, res.Caps.ContextWindow)
		}
	})
}
