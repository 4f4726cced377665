package registry

import (
	"math"
	"testing"

	"github.com/reinhq/rein/llm"
)

func TestCost(t *testing.T) {
	sonnet := Price{InputPerMTok: 3, OutputPerMTok: 15, CacheReadPerMTok: 0.30, CacheWritePerMTok: 3.75}
	tests := []struct {
		name  string
		price Price
		usage llm.Usage
		want  float64
	}{
		{"zero usage", sonnet, llm.Usage{}, 0},
		{"zero price", Price{}, llm.Usage{InputTokens: 1e6, OutputTokens: 1e6}, 0},
		{"input only", sonnet, llm.Usage{InputTokens: 1_000_000}, 3},
		{"output only", sonnet, llm.Usage{OutputTokens: 2_000_000}, 30},
		{"cache read", sonnet, llm.Usage{CacheReadTokens: 1_000_000}, 0.30},
		{"cache write", sonnet, llm.Usage{CacheWriteTokens: 1_000_000}, 3.75},
		{"all four", sonnet, llm.Usage{InputTokens: 1_200, OutputTokens: 800, CacheReadTokens: 50_000, CacheWriteTokens: 10_000},
			(1_200*3 + 800*15 + 50_000*0.30 + 10_000*3.75) / 1e6},
		{"reasoning is part of output", sonnet, llm.Usage{OutputTokens: 1_000, ReasoningTokens: 600}, 1_000 * 15 / 1e6},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.price.Cost(tt.usage); math.Abs(got-tt.want) > 1e-12 {
				t.Errorf("Cost(%+v) = %.10f, want %.10f", tt.usage, got, tt.want)
			}
		})
	}
}

func TestCostOfBuiltinModels(t *testing.T) {
	u := llm.Usage{InputTokens: 100_000, OutputTokens: 10_000, CacheReadTokens: 900_000}
	for _, tt := range []struct {
		provider, model string
		want            float64
	}{
		{"anthropic", "claude-opus-4-5-20251101", 0.5 + 0.25 + 0.45},
		{"openai", "gpt-5", 0.125 + 0.1 + 0.1125},
		{"google", "gemini-2.5-flash", 0.03 + 0.025 + 0.027},
	} {
		m, ok := Lookup(tt.provider, tt.model)
		if !ok {
			t.Fatalf("no entry for %s/%s", tt.provider, tt.model)
		}
		if got := m.Price.Cost(u); math.Abs(got-tt.want) > 1e-9 {
			t.Errorf("%s: cost = %.6f, want %.6f", tt.model, got, tt.want)
		}
	}
}

// TestBuiltinTable checks the table for slips: every model is attributed to
// its own provider, limits are sane, cache reads are cheaper than input.
func TestBuiltinTable(t *testing.T) {
	want := map[string]int{"anthropic": 8, "openai": 9, "google": 4}
	got := map[string]int{}
	seen := map[string]bool{}
	for _, m := range builtinModels() {
		got[m.Provider]++
		if seen[m.Name] {
			t.Errorf("%s listed twice", m.Name)
		}
		seen[m.Name] = true
		if p, n, err := Parse(m.Name); err != nil || p != m.Provider || n != m.Name {
			t.Errorf("Parse(%q) = %q, %q, %v; want provider %q", m.Name, p, n, err, m.Provider)
		}
		if m.ContextWindow < 100_000 || m.MaxOutput < 8_000 || m.MaxOutput > m.ContextWindow {
			t.Errorf("%s: window %d, max output %d", m.Name, m.ContextWindow, m.MaxOutput)
		}
		pr := m.Price
		if pr.InputPerMTok <= 0 || pr.OutputPerMTok <= pr.InputPerMTok {
			t.Errorf("%s: input %v, output %v", m.Name, pr.InputPerMTok, pr.OutputPerMTok)
		}
		if !m.PromptCaching || pr.CacheReadPerMTok <= 0 || pr.CacheReadPerMTok >= pr.InputPerMTok ||
			pr.CacheWritePerMTok < pr.InputPerMTok {
			t.Errorf("%s: caching %v, cache read %v, cache write %v, input %v",
				m.Name, m.PromptCaching, pr.CacheReadPerMTok, pr.CacheWritePerMTok, pr.InputPerMTok)
		}
		if m.ToolResultImages && !m.Vision {
			t.Errorf("%s: images in tool results without vision", m.Name)
		}
	}
	for p, n := range want {
		if got[p] != n {
			t.Errorf("%s: %d models, want %d", p, got[p], n)
		}
	}
}
