package registry

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParse(t *testing.T) {
	tests := []struct {
		in             string
		provider, name string
	}{
		{"anthropic/claude-sonnet-4-5", "anthropic", "claude-sonnet-4-5"},
		{"claude-sonnet-4-5", "anthropic", "claude-sonnet-4-5"},
		{"claude-sonnet-4-5-20250929", "anthropic", "claude-sonnet-4-5-20250929"},
		{"  claude-opus-4-1  ", "anthropic", "claude-opus-4-1"},
		{"gpt-5", "openai", "gpt-5"},
		{"gpt-4.1-mini", "openai", "gpt-4.1-mini"},
		{"chatgpt-4o-latest", "openai", "chatgpt-4o-latest"},
		{"o1", "openai", "o1"},
		{"o3", "openai", "o3"},
		{"o3-mini", "openai", "o3-mini"},
		{"o4-mini", "openai", "o4-mini"},
		{"gemini-2.5-pro", "google", "gemini-2.5-pro"},
		{"google/gemini-2.5-flash", "google", "gemini-2.5-flash"},
		{"gemini/gemini-2.5-flash", "google", "gemini-2.5-flash"},
		{"openai/gpt-5-mini", "openai", "gpt-5-mini"},
		{"openrouter/anthropic/claude-sonnet-4.5", "openrouter", "anthropic/claude-sonnet-4.5"},
		{"ollama/qwen3:8b", "ollama", "qwen3:8b"},
		{"ollama/claude-sonnet-4-5", "ollama", "claude-sonnet-4-5"},
		{"vllm/meta-llama/Llama-3.1-8B-Instruct", "vllm", "meta-llama/Llama-3.1-8B-Instruct"},
		{"deepseek/deepseek-reasoner", "deepseek", "deepseek-reasoner"},
		{"llamacpp/default", "llamacpp", "default"},
		{"anthropic", "anthropic", "claude-sonnet-4-5"}, // a profile alone: its default model
		{"deepseek", "deepseek", "deepseek-chat"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			p, n, err := Parse(tt.in)
			if err != nil {
				t.Fatalf("Parse(%q): %v", tt.in, err)
			}
			if p != tt.provider || n != tt.name {
				t.Errorf("Parse(%q) = %q, %q; want %q, %q", tt.in, p, n, tt.provider, tt.name)
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		in   string
		want []string // substrings of the message
		sugg []string // suggestions, when checked
	}{
		{"", []string{"empty model name"}, nil},
		{"   ", []string{"empty model name"}, nil},
		{"clade-sonet-4-5", []string{"cannot tell its provider", "did you mean claude-sonnet-4-5", "provider/model"},
			[]string{"claude-sonnet-4-5", "claude-sonnet-4", "claude-sonnet-5"}},
		{"gpt5-mini", []string{"did you mean gpt-5-mini", "write provider/model"}, nil},
		{"llama3", []string{"cannot tell its provider", "ollama/llama3"}, nil},
		{"o3x", []string{"cannot tell its provider"}, nil},
		{"antropic/claude-sonnet-4-5", []string{`unknown provider "antropic"`, "did you mean anthropic?"}, []string{"anthropic"}},
		{"meta-llama/Llama-3.1-8B", []string{`unknown provider "meta-llama"`, "ollama", "openrouter"}, nil},
		{"anthropic/", []string{`no model name after "anthropic/"`}, nil},
		{"ollama", []string{`profile "ollama" has no default model`, "ollama/<model>"}, nil},
		{"claude sonnet", []string{"spaces or control characters"}, nil},
		{"gpt-5\n", nil, nil}, // trailing newline trimmed: fine; checked below
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			_, _, err := Parse(tt.in)
			if tt.want == nil {
				if err != nil {
					t.Fatalf("Parse(%q): %v", tt.in, err)
				}
				return
			}
			if err == nil {
				t.Fatalf("Parse(%q): no error", tt.in)
			}
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("Parse(%q) error is %T, want *ParseError", tt.in, err)
			}
			msg := strings.ToLower(err.Error())
			for _, w := range tt.want {
				if !strings.Contains(msg, strings.ToLower(w)) {
					t.Errorf("Parse(%q) error %q does not contain %q", tt.in, err, w)
				}
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error spans lines: %q", err)
			}
			if tt.sugg != nil {
				if diff := cmp.Diff(tt.sugg, pe.Suggestions); diff != "" {
					t.Errorf("suggestions (-want +got):\n%s", diff)
				}
			}
		})
	}
}

func TestParseUnknownListsThreeClosest(t *testing.T) {
	_, _, err := Parse("gemini2.5-flash")
	var pe *ParseError
	if !errors.As(err, &pe) {
		t.Fatalf("got %v, want *ParseError", err)
	}
	want := []string{"gemini-2.5-flash", "gemini-2.5-flash-lite", "gemini-2.5-pro"}
	if diff := cmp.Diff(want, pe.Suggestions); diff != "" {
		t.Errorf("suggestions (-want +got):\n%s", diff)
	}
}

func TestParseConfiguredProfile(t *testing.T) {
	r, err := New(Config{Profiles: []Profile{
		{Name: "work", Provider: KindAnthropic, APIKeyEnv: "WORK_KEY", DefaultModel: "claude-opus-4-5"},
		{Name: "kimi", Provider: KindOpenAICompatible, BaseURL: "https://api.moonshot.ai/v1"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ in, p, n string }{
		{"work/claude-haiku-4-5", "work", "claude-haiku-4-5"},
		{"work", "work", "claude-opus-4-5"},
		{"kimi/kimi-k2-0905-preview", "kimi", "kimi-k2-0905-preview"},
	} {
		p, n, err := r.Parse(tt.in)
		if err != nil || p != tt.p || n != tt.n {
			t.Errorf("Parse(%q) = %q, %q, %v; want %q, %q", tt.in, p, n, err, tt.p, tt.n)
		}
	}
	// The package-level Parse knows only the built-ins.
	if _, _, err := Parse("work/claude-haiku-4-5"); err == nil {
		t.Error("Parse(work/…) without configuration: no error")
	}
}

func TestLookup(t *testing.T) {
	tests := []struct {
		provider, model string
		want            string // the entry's name; "" for not found
	}{
		{"anthropic", "claude-sonnet-4-5", "claude-sonnet-4-5"},
		{"anthropic", "claude-sonnet-4-5-20250929", "claude-sonnet-4-5"},
		{"anthropic", "claude-sonnet-4-20250514", "claude-sonnet-4"},
		{"anthropic", "claude-opus-4-1-20250805", "claude-opus-4-1"},
		{"anthropic", "claude-3-5-haiku-latest", "claude-3-5-haiku"},
		{"anthropic", "claude-haiku-4-5@20251001", "claude-haiku-4-5"},
		{"anthropic", "claude-sonnet-4-6", ""}, // a new family, not a snapshot of claude-sonnet-4
		{"anthropic", "claude-sonnet-4-5-thinking", ""},
		{"openai", "gpt-4o-mini-2024-07-18", "gpt-4o-mini"},
		{"openai", "gpt-4o-2024-08-06", "gpt-4o"},
		{"openai", "gpt-5-mini-2025-08-07", "gpt-5-mini"},
		{"openai", "gpt-4.1-2025-04-14", "gpt-4.1"},
		{"openai", "o3-2025-04-16", "o3"},
		{"openai", "gpt-5-pro", ""}, // not gpt-5's price
		{"openai", "gpt-5.1", ""},
		{"google", "gemini-2.5-flash-lite", "gemini-2.5-flash-lite"},
		{"google", "gemini-2.5-flash-001", "gemini-2.5-flash"},
		{"google", "gemini-3-pro-preview", "gemini-3-pro-preview"},
		{"openrouter", "anthropic/claude-sonnet-4.5", "claude-sonnet-4-5"},
		{"openrouter", "openai/gpt-5-mini", "gpt-5-mini"},
		{"openrouter", "google/gemini-2.5-pro", "gemini-2.5-pro"},
		{"openrouter", "meta-llama/llama-3.3-70b-instruct", ""},
		{"ollama", "claude-sonnet-4-5", ""}, // ollama does not serve Claude
		{"nosuch", "claude-sonnet-4-5", ""},
	}
	for _, tt := range tests {
		t.Run(tt.provider+"/"+tt.model, func(t *testing.T) {
			m, ok := Lookup(tt.provider, tt.model)
			if ok != (tt.want != "") || m.Name != tt.want {
				t.Errorf("Lookup(%q, %q) = %q, %v; want %q", tt.provider, tt.model, m.Name, ok, tt.want)
			}
		})
	}
}

func TestResolve(t *testing.T) {
	env := map[string]string{"ANTHROPIC_API_KEY": "sk-ant", "OPENAI_BASE_URL": "http://proxy:9000/v1", "OPENAI_API_KEY": "sk-oai"}
	r, err := New(Config{
		Getenv: func(k string) string { return env[k] },
		Models: []Model{{Name: "qwen3:8b", Provider: "ollama", ContextWindow: 40_960, MaxOutput: 8_192}},
	})
	if err != nil {
		t.Fatal(err)
	}
	sonnet, _ := r.Lookup("anthropic", "claude-sonnet-4-5")
	tests := []struct {
		in   string
		want Resolved
	}{
		{"claude-sonnet-4-5-20250929", Resolved{
			Profile: Profile{Name: "anthropic", Provider: KindAnthropic, BaseURLEnv: "ANTHROPIC_BASE_URL",
				APIKeyEnv: "ANTHROPIC_API_KEY", APIKey: "sk-ant", DefaultModel: "claude-sonnet-4-5"},
			Model: "claude-sonnet-4-5-20250929", Caps: sonnet}},
		{"openai/gpt-9-turbo", Resolved{
			Profile: Profile{Name: "openai", Provider: KindOpenAIResponses, BaseURL: "http://proxy:9000/v1",
				BaseURLEnv: "OPENAI_BASE_URL", APIKeyEnv: "OPENAI_API_KEY", APIKey: "sk-oai", DefaultModel: "gpt-5"},
			Model: "gpt-9-turbo",
			Caps:  Model{Name: "gpt-9-turbo", Provider: "openai", ContextWindow: 128_000, MaxOutput: 8_192},
			Warning: "unknown model gpt-9-turbo for provider openai: using conservative defaults (128k context); " +
				"add it to .rein/models.yaml"}},
		{"ollama/qwen3:8b", Resolved{
			Profile: Profile{Name: "ollama", Provider: KindOpenAICompatible, BaseURL: "http://127.0.0.1:11434/v1"},
			Model:   "qwen3:8b",
			Caps:    Model{Name: "qwen3:8b", Provider: "ollama", ContextWindow: 40_960, MaxOutput: 8_192}}},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := r.Resolve(tt.in)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Resolve(%q) (-want +got):\n%s", tt.in, diff)
			}
		})
	}
	if _, err := r.Resolve("nonsense-model"); err == nil {
		t.Error("Resolve(nonsense-model): no error")
	}
}

func TestResolveUnknownModelWarnsOnOneLine(t *testing.T) {
	res, err := builtin().Resolve("ollama/llama3.2")
	if err != nil {
		t.Fatal(err)
	}
	if res.Caps.ContextWindow != 128_000 || res.Caps.MaxOutput != 8_192 || res.Caps.Vision ||
		res.Caps.ToolResultImages || res.Caps.Price != (Price{}) {
		t.Errorf("defaults = %+v, want 128k window, 8k output, no images, zero price", res.Caps)
	}
	want := "unknown model llama3.2 for provider ollama: using conservative defaults (128k context); add it to .rein/models.yaml"
	if res.Warning != want {
		t.Errorf("Warning = %q\nwant      %q", res.Warning, want)
	}
}

func TestNewOverridesAndValidates(t *testing.T) {
	r, err := New(Config{
		Profiles: []Profile{{Name: "vllm", BaseURL: "http://gpu-box:8000/v1"}},
		Models: []Model{{Name: "gpt-5", Provider: "openai", ContextWindow: 272_000, MaxOutput: 128_000,
			Price: Price{InputPerMTok: 1, OutputPerMTok: 8}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	p, _ := r.Profile("vllm")
	if p.BaseURL != "http://gpu-box:8000/v1" || p.Provider != KindOpenAICompatible {
		t.Errorf("vllm profile = %+v, want the configured base URL over the built-in kind", p)
	}
	if m, _ := r.Lookup("openai", "gpt-5"); m.ContextWindow != 272_000 {
		t.Errorf("configured gpt-5 not used: %+v", m)
	}
	if len(r.Profiles()) != 8 {
		t.Errorf("Profiles() = %d, want the 8 built-ins", len(r.Profiles()))
	}

	bad := []Config{
		{Profiles: []Profile{{Provider: KindOpenAI}}},
		{Profiles: []Profile{{Name: "x", Provider: "bedrock"}}},
		{Profiles: []Profile{{Name: "a/b", Provider: KindOpenAI}}},
		{Profiles: []Profile{{Name: "local", Provider: KindOpenAICompatible}}}, // no base URL
		{Models: []Model{{Name: "m"}}},
	}
	for i, cfg := range bad {
		if _, err := New(cfg); err == nil {
			t.Errorf("bad config %d: no error", i)
		}
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"claude-sonnet-4-5", "openrouter/anthropic/claude-sonnet-4.5", "o3", "o3x", "gpt-", "anthropic/",
		"/", "//", "gemini/", "ollama", "a/b/c", "\x00", "claude-\xff", " gpt-5 ", "gemini",
	} {
		f.Add(s)
	}
	r := builtin()
	f.Fuzz(func(t *testing.T, s string) {
		p, n, err := r.Parse(s)
		if err != nil {
			if p != "" || n != "" {
				t.Fatalf("Parse(%q) = %q, %q with error %v", s, p, n, err)
			}
			if err.Error() == "" {
				t.Fatal("empty error message")
			}
			return
		}
		if p == "" || n == "" {
			t.Fatalf("Parse(%q) = %q, %q: empty part without error", s, p, n)
		}
		if _, ok := r.Profile(p); !ok {
			t.Fatalf("Parse(%q) provider %q is not a profile", s, p)
		}
		trimmed := strings.TrimSpace(s)
		if strings.Contains(trimmed, "/") && !strings.HasSuffix(trimmed, "/"+n) {
			t.Fatalf("Parse(%q) = %q, %q: model is not the part after the first '/'", s, p, n)
		}
		if _, err := r.Resolve(s); err != nil {
			t.Fatalf("Parse(%q) succeeded but Resolve failed: %v", s, err)
		}
		p2, n2, err := r.Parse(p + "/" + n)
		if err != nil || p2 != p || n2 != n {
			t.Fatalf("Parse(%q) = %q, %q, %v: not stable", p+"/"+n, p2, n2, err)
		}
	})
}
