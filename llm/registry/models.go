package registry

import "github.com/reinhq/rein/llm"

// Model is what rein knows about one model: its limits, what it accepts and
// what it costs (SPEC PROV-3). User configuration (.rein/models.yaml) adds
// models in the same shape.
type Model struct {
	// Name is the model's family id as the vendor spells it
	// ("claude-sonnet-4-5"); dated ids resolve to it by prefix.
	Name string `json:"name" yaml:"name"`
	// Provider is the vendor ("anthropic", "openai", "google") or, for a model
	// served by an OpenAI-compatible endpoint, the profile's name ("deepseek").
	Provider string `json:"provider" yaml:"provider"`
	// ContextWindow is the most tokens a request (prompt plus reply) may hold.
	ContextWindow int `json:"context_window" yaml:"context_window"`
	// MaxOutput is the most tokens one reply may hold.
	MaxOutput int `json:"max_output" yaml:"max_output"`
	// Vision: the model reads images in user messages.
	Vision bool `json:"vision,omitempty" yaml:"vision,omitempty"`
	// Thinking: the model can reason before it answers (extended thinking,
	// reasoning effort, thinking budget).
	Thinking bool `json:"thinking,omitempty" yaml:"thinking,omitempty"`
	// ToolResultImages: images may travel inside a tool result; otherwise
	// they follow it in a user message.
	ToolResultImages bool `json:"tool_result_images,omitempty" yaml:"tool_result_images,omitempty"`
	// PromptCaching: the vendor caches prompt prefixes and bills reads apart.
	PromptCaching bool `json:"prompt_caching,omitempty" yaml:"prompt_caching,omitempty"`
	// Price is the list price; zero when unknown (or free, for a local model).
	Price Price `json:"price" yaml:"price"`
}

// Price is a model's list price in USD per million tokens.
type Price struct {
	InputPerMTok  float64 `json:"input_per_mtok" yaml:"input_per_mtok"`   // uncached prompt tokens
	OutputPerMTok float64 `json:"output_per_mtok" yaml:"output_per_mtok"` // reply tokens, reasoning included
	// CacheReadPerMTok prices prompt tokens served from the cache.
	CacheReadPerMTok float64 `json:"cache_read_per_mtok,omitempty" yaml:"cache_read_per_mtok,omitempty"`
	// CacheWritePerMTok prices prompt tokens written to the cache (Anthropic's
	// five-minute cache write). Vendors that cache implicitly charge no
	// surcharge: their entries repeat the input price.
	CacheWritePerMTok float64 `json:"cache_write_per_mtok,omitempty" yaml:"cache_write_per_mtok,omitempty"`
}

// Cost returns what u costs in USD: uncached input, output, cache reads and
// cache writes, each at its own price. Reasoning tokens are part of
// OutputTokens and priced with them.
func (p Price) Cost(u llm.Usage) float64 {
	const perMTok = 1e-6
	return (float64(u.InputTokens)*p.InputPerMTok +
		float64(u.OutputTokens)*p.OutputPerMTok +
		float64(u.CacheReadTokens)*p.CacheReadPerMTok +
		float64(u.CacheWriteTokens)*p.CacheWritePerMTok) * perMTok
}

// Conservative limits for a model rein does not know.
const (
	DefaultContextWindow = 128_000
	DefaultMaxOutput     = 8_192
)

// unknownModel is what rein assumes of a model it has no entry for: a modest
// window, no images, no price.
func unknownModel(provider, name string) Model {
	return Model{
		Name:          name,
		Provider:      provider,
		ContextWindow: DefaultContextWindow,
		MaxOutput:     DefaultMaxOutput,
	}
}

// builtinModels returns the capability and price table, as published by the
// vendors in 2026-11 (prices in USD per million tokens; Google's are the tier
// for prompts up to 200k tokens, OpenAI's and Google's cache writes carry no
// surcharge). Each call returns a fresh slice.
//
// Claude Opus 5 and Sonnet 5 are here because the sonnet and opus aliases
// name them (alias.go; platform.claude.com's model pages: 1M context, 128K
// output, $5/$25 and $2/$10). Other newer models the vendors list (GPT-5.x,
// Gemini 3.1) are not here yet; users add them in .rein/models.yaml, and an
// unknown model still runs on conservative defaults.
func builtinModels() []Model {
	return []Model{
		// Anthropic: cache writes (five-minute) at 1.25× input, reads at 0.1×.
		{Name: "claude-opus-5", Provider: "anthropic", ContextWindow: 1_000_000, MaxOutput: 128_000,
			Vision: true, Thinking: true, ToolResultImages: true, PromptCaching: true,
			Price: Price{InputPerMTok: 5, OutputPerMTok: 25, CacheReadPerMTok: 0.5, CacheWritePerMTok: 6.25}},
		{Name: "claude-sonnet-5", Provider: "anthropic", ContextWindow: 1_000_000, MaxOutput: 128_000,
			Vision: true, Thinking: true, ToolResultImages: true, PromptCaching: true,
			Price: Price{InputPerMTok: 2, OutputPerMTok: 10, CacheReadPerMTok: 0.2, CacheWritePerMTok: 2.5}},
		{Name: "claude-opus-4-5", Provider: "anthropic", ContextWindow: 200_000, MaxOutput: 64_000,
			Vision: true, Thinking: true, ToolResultImages: true, PromptCaching: true,
			Price: Price{InputPerMTok: 5, OutputPerMTok: 25, CacheReadPerMTok: 0.5, CacheWritePerMTok: 6.25}},
		{Name: "claude-opus-4-1", Provider: "anthropic", ContextWindow: 200_000, MaxOutput: 32_000,
			Vision: true, Thinking: true, ToolResultImages: true, PromptCaching: true,
			Price: Price{InputPerMTok: 15, OutputPerMTok: 75, CacheReadPerMTok: 1.5, CacheWritePerMTok: 18.75}},
		{Name: "claude-sonnet-4-5", Provider: "anthropic", ContextWindow: 200_000, MaxOutput: 64_000,
			Vision: true, Thinking: true, ToolResultImages: true, PromptCaching: true,
			Price: Price{InputPerMTok: 3, OutputPerMTok: 15, CacheReadPerMTok: 0.3, CacheWritePerMTok: 3.75}},
		{Name: "claude-sonnet-4", Provider: "anthropic", ContextWindow: 200_000, MaxOutput: 64_000,
			Vision: true, Thinking: true, ToolResultImages: true, PromptCaching: true,
			Price: Price{InputPerMTok: 3, OutputPerMTok: 15, CacheReadPerMTok: 0.3, CacheWritePerMTok: 3.75}},
		{Name: "claude-haiku-4-5", Provider: "anthropic", ContextWindow: 200_000, MaxOutput: 64_000,
			Vision: true, Thinking: true, ToolResultImages: true, PromptCaching: true,
			Price: Price{InputPerMTok: 1, OutputPerMTok: 5, CacheReadPerMTok: 0.1, CacheWritePerMTok: 1.25}},
		{Name: "claude-3-5-haiku", Provider: "anthropic", ContextWindow: 200_000, MaxOutput: 8_192,
			Vision: true, Thinking: false, ToolResultImages: true, PromptCaching: true,
			Price: Price{InputPerMTok: 0.8, OutputPerMTok: 4, CacheReadPerMTok: 0.08, CacheWritePerMTok: 1}},
		// OpenAI: caching is automatic; tool results carry text only.
		{Name: "gpt-5", Provider: "openai", ContextWindow: 400_000, MaxOutput: 128_000,
			Vision: true, Thinking: true, ToolResultImages: false, PromptCaching: true,
			Price: Price{InputPerMTok: 1.25, OutputPerMTok: 10, CacheReadPerMTok: 0.125, CacheWritePerMTok: 1.25}},
		{Name: "gpt-5-mini", Provider: "openai", ContextWindow: 400_000, MaxOutput: 128_000,
			Vision: true, Thinking: true, ToolResultImages: false, PromptCaching: true,
			Price: Price{InputPerMTok: 0.25, OutputPerMTok: 2, CacheReadPerMTok: 0.025, CacheWritePerMTok: 0.25}},
		{Name: "gpt-5-nano", Provider: "openai", ContextWindow: 400_000, MaxOutput: 128_000,
			Vision: true, Thinking: true, ToolResultImages: false, PromptCaching: true,
			Price: Price{InputPerMTok: 0.05, OutputPerMTok: 0.4, CacheReadPerMTok: 0.005, CacheWritePerMTok: 0.05}},
		{Name: "gpt-4.1", Provider: "openai", ContextWindow: 1_047_576, MaxOutput: 32_768,
			Vision: true, Thinking: false, ToolResultImages: false, PromptCaching: true,
			Price: Price{InputPerMTok: 2, OutputPerMTok: 8, CacheReadPerMTok: 0.5, CacheWritePerMTok: 2}},
		{Name: "gpt-4.1-mini", Provider: "openai", ContextWindow: 1_047_576, MaxOutput: 32_768,
			Vision: true, Thinking: false, ToolResultImages: false, PromptCaching: true,
			Price: Price{InputPerMTok: 0.4, OutputPerMTok: 1.6, CacheReadPerMTok: 0.1, CacheWritePerMTok: 0.4}},
		{Name: "gpt-4o", Provider: "openai", ContextWindow: 128_000, MaxOutput: 16_384,
			Vision: true, Thinking: false, ToolResultImages: false, PromptCaching: true,
			Price: Price{InputPerMTok: 2.5, OutputPerMTok: 10, CacheReadPerMTok: 1.25, CacheWritePerMTok: 2.5}},
		{Name: "gpt-4o-mini", Provider: "openai", ContextWindow: 128_000, MaxOutput: 16_384,
			Vision: true, Thinking: false, ToolResultImages: false, PromptCaching: true,
			Price: Price{InputPerMTok: 0.15, OutputPerMTok: 0.6, CacheReadPerMTok: 0.075, CacheWritePerMTok: 0.15}},
		{Name: "o3", Provider: "openai", ContextWindow: 200_000, MaxOutput: 100_000,
			Vision: true, Thinking: true, ToolResultImages: false, PromptCaching: true,
			Price: Price{InputPerMTok: 2, OutputPerMTok: 8, CacheReadPerMTok: 0.5, CacheWritePerMTok: 2}},
		{Name: "o4-mini", Provider: "openai", ContextWindow: 200_000, MaxOutput: 100_000,
			Vision: true, Thinking: true, ToolResultImages: false, PromptCaching: true,
			Price: Price{InputPerMTok: 1.1, OutputPerMTok: 4.4, CacheReadPerMTok: 0.275, CacheWritePerMTok: 1.1}},
		// Google: implicit caching; prices for prompts up to 200k tokens. Only
		// Gemini 3 takes images in function responses.
		{Name: "gemini-2.5-pro", Provider: "google", ContextWindow: 1_048_576, MaxOutput: 65_536,
			Vision: true, Thinking: true, ToolResultImages: false, PromptCaching: true,
			Price: Price{InputPerMTok: 1.25, OutputPerMTok: 10, CacheReadPerMTok: 0.125, CacheWritePerMTok: 1.25}},
		{Name: "gemini-2.5-flash", Provider: "google", ContextWindow: 1_048_576, MaxOutput: 65_536,
			Vision: true, Thinking: true, ToolResultImages: false, PromptCaching: true,
			Price: Price{InputPerMTok: 0.3, OutputPerMTok: 2.5, CacheReadPerMTok: 0.03, CacheWritePerMTok: 0.3}},
		{Name: "gemini-2.5-flash-lite", Provider: "google", ContextWindow: 1_048_576, MaxOutput: 65_536,
			Vision: true, Thinking: true, ToolResultImages: false, PromptCaching: true,
			Price: Price{InputPerMTok: 0.1, OutputPerMTok: 0.4, CacheReadPerMTok: 0.01, CacheWritePerMTok: 0.1}},
		{Name: "gemini-3-pro-preview", Provider: "google", ContextWindow: 1_048_576, MaxOutput: 65_536,
			Vision: true, Thinking: true, ToolResultImages: true, PromptCaching: true,
			Price: Price{InputPerMTok: 2, OutputPerMTok: 12, CacheReadPerMTok: 0.2, CacheWritePerMTok: 2}},
	}
}
