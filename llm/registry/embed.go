package registry

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// The embedding adapters a [ResolvedEmbedding] names in its Kind.
const (
	// EmbedOpenAI is POST {base}/embeddings: OpenAI, or an OpenAI-compatible
	// server (vLLM, llama.cpp, OpenRouter) at the profile's base URL.
	EmbedOpenAI = "openai"
	// EmbedGoogle is the Gemini API's batchEmbedContents.
	EmbedGoogle = "google"
	// EmbedOllama is Ollama's native POST {host}/api/embed.
	EmbedOllama = "ollama"
)

// ollamaBuiltinURL is the built-in ollama profile's base URL: when the
// profile still has it, OLLAMA_HOST decides where Ollama is.
const ollamaBuiltinURL = "http://127.0.0.1:11434/v1"

// EmbeddingModel is what rein knows about one embedding model.
type EmbeddingModel struct {
	// Name is the model's id as its provider spells it.
	Name string `json:"name" yaml:"name"`
	// Provider is the vendor ("openai", "google") or "ollama".
	Provider string `json:"provider" yaml:"provider"`
	// Dimensions is the size of the vectors it returns by default.
	Dimensions int `json:"dimensions" yaml:"dimensions"`
	// FlexibleDimensions: it can return shorter vectors on request
	// (Matryoshka training: text-embedding-3, gemini-embedding-001).
	FlexibleDimensions bool `json:"flexible_dimensions,omitempty" yaml:"flexible_dimensions,omitempty"`
	// MaxInputTokens is the longest text it embeds whole; a chunker keeps
	// chunks under it.
	MaxInputTokens int `json:"max_input_tokens" yaml:"max_input_tokens"`
	// PricePerMTok is the list price in USD per million input tokens; zero
	// for a local model.
	PricePerMTok float64 `json:"price_per_mtok,omitempty" yaml:"price_per_mtok,omitempty"`
}

// builtinEmbeddingModels returns the embedding models rein knows, as the
// vendors and Ollama's library list them in 2026-11. Each call returns a
// fresh slice.
func builtinEmbeddingModels() []EmbeddingModel {
	return []EmbeddingModel{
		{Name: "text-embedding-3-small", Provider: "openai", Dimensions: 1536, FlexibleDimensions: true, MaxInputTokens: 8191, PricePerMTok: 0.02},
		{Name: "text-embedding-3-large", Provider: "openai", Dimensions: 3072, FlexibleDimensions: true, MaxInputTokens: 8191, PricePerMTok: 0.13},
		{Name: "text-embedding-ada-002", Provider: "openai", Dimensions: 1536, MaxInputTokens: 8191, PricePerMTok: 0.10},
		{Name: "gemini-embedding-001", Provider: "google", Dimensions: 3072, FlexibleDimensions: true, MaxInputTokens: 2048, PricePerMTok: 0.15},
		{Name: "nomic-embed-text", Provider: "ollama", Dimensions: 768, FlexibleDimensions: true, MaxInputTokens: 8192},
		{Name: "mxbai-embed-large", Provider: "ollama", Dimensions: 1024, FlexibleDimensions: true, MaxInputTokens: 512},
		{Name: "embeddinggemma", Provider: "ollama", Dimensions: 768, FlexibleDimensions: true, MaxInputTokens: 2048},
		{Name: "all-minilm", Provider: "ollama", Dimensions: 384, MaxInputTokens: 256},
		{Name: "bge-m3", Provider: "ollama", Dimensions: 1024, MaxInputTokens: 8192},
	}
}

// EmbeddingModels returns the known embedding models, sorted by provider
// then name.
func EmbeddingModels() []EmbeddingModel {
	out := builtinEmbeddingModels()
	slices.SortFunc(out, func(a, b EmbeddingModel) int {
		return cmp.Or(strings.Compare(a.Provider, b.Provider), strings.Compare(a.Name, b.Name))
	})
	return out
}

// LookupEmbedding returns the entry of an embedding model of provider
// ("openai", "google", "ollama"). An Ollama name may carry the tag
// ":latest"; another tag may change the model's size, so it is looked up
// as written.
func LookupEmbedding(provider, model string) (EmbeddingModel, bool) {
	name := model
	if provider == "ollama" {
		name = strings.TrimSuffix(name, ":latest")
	}
	for _, m := range builtinEmbeddingModels() {
		if m.Provider == provider && m.Name == name {
			return m, true
		}
	}
	return EmbeddingModel{}, false
}

// ResolvedEmbedding is an embedding model string resolved: the adapter to
// build, the profile to reach it through and the model's entry.
type ResolvedEmbedding struct {
	// Kind is the adapter: EmbedOpenAI, EmbedGoogle or EmbedOllama.
	Kind string
	// Profile has APIKey and BaseURL resolved from the environment. For
	// EmbedOllama, BaseURL is Ollama's own root (OLLAMA_HOST, or the
	// profile's base URL without "/v1"; empty means the adapter's default).
	Profile Profile
	// Model is the name to send ("text-embedding-3-small").
	Model string
	// Dimensions is the vector size to ask for; 0 takes the model's own
	// (Info.Dimensions when known). See [ResolvedEmbedding.WithDimensions].
	Dimensions int
	// Info is the model's entry; for an unknown model only Name and
	// Provider are set.
	Info EmbeddingModel
	// Warning is one line for the caller to log when the model is unknown;
	// empty otherwise.
	Warning string
}

// ResolveEmbedding resolves an embedding model string: "provider/model"
// ("openai/text-embedding-3-small", "gemini/gemini-embedding-001",
// "ollama/nomic-embed-text", "<profile>/<model>" for a configured profile)
// or the bare name of a known embedding model. The profile's kind picks
// the adapter: OpenAI kinds and OpenAI-compatible profiles embed through
// /embeddings, google through Gemini, the ollama profile through Ollama's
// native API (at OLLAMA_HOST when set and the profile keeps its built-in
// address). Anthropic has no embeddings API and is refused, as is a
// profile that needs a key and has none. An unknown model on a known
// provider is not an error: Warning says its size is learnt from the
// first reply.
func (r *Registry) ResolveEmbedding(spec string) (ResolvedEmbedding, error) {
	provider, name, err := r.parseEmbedding(spec)
	if err != nil {
		return ResolvedEmbedding{}, err
	}
	p := r.profiles[provider]
	res := ResolvedEmbedding{Profile: Auth(p, r.getenv), Model: name}
	switch {
	case p.Provider == KindAnthropic:
		return ResolvedEmbedding{}, fmt.Errorf("embedding model %q: %s has no embeddings API; use openai/text-embedding-3-small, gemini/gemini-embedding-001 or ollama/nomic-embed-text",
			spec, provider)
	case p.Provider == KindGoogle:
		res.Kind = EmbedGoogle
	case p.Name == "ollama" && p.Provider == KindOpenAICompatible:
		res.Kind = EmbedOllama
		res.Profile.BaseURL = r.ollamaBase(res.Profile.BaseURL)
	default:
		res.Kind = EmbedOpenAI
	}
	if err := res.Profile.CheckAuth(); err != nil {
		return ResolvedEmbedding{}, fmt.Errorf("embedding model %q: %w", spec, err)
	}
	vendor := p.vendor()
	if res.Kind == EmbedOllama {
		vendor = "ollama"
	}
	if info, ok := LookupEmbedding(vendor, name); ok {
		res.Info = info
		return res, nil
	}
	res.Info = EmbeddingModel{Name: name, Provider: vendor}
	res.Warning = fmt.Sprintf("unknown embedding model %s for provider %s: its vector size is taken from the first reply", name, provider)
	return res, nil
}

// parseEmbedding splits an embedding model string into a profile and a
// model name.
func (r *Registry) parseEmbedding(spec string) (provider, name string, err error) {
	s := strings.TrimSpace(spec)
	if s != "" && !strings.Contains(s, "/") {
		for _, m := range builtinEmbeddingModels() {
			if m.Name == strings.TrimSuffix(s, ":latest") {
				return m.Provider, s, nil
			}
		}
		if _, ok := r.profiles[s]; ok || s == "gemini" {
			return "", "", &ParseError{Input: spec, Reason: fmt.Sprintf("name the embedding model too: %s/<model>", s),
				Suggestions: closest(s, embeddingNames(), 3)}
		}
		if attribute(s) == "" {
			return "", "", &ParseError{Input: spec, Reason: "unknown embedding model: cannot tell its provider from the name",
				Suggestions: closest(s, embeddingNames(), 3), Unattributed: true}
		}
	}
	provider, name, err = r.Parse(s)
	if err != nil {
		return "", "", err
	}
	return provider, name, nil
}

func embeddingNames() []string {
	var names []string
	for _, m := range builtinEmbeddingModels() {
		names = append(names, m.Name)
	}
	return names
}

// ollamaBase returns Ollama's native root for the ollama profile's
// base URL: OLLAMA_HOST when the profile keeps its built-in address, else
// the profile's address without the OpenAI-compatible "/v1".
func (r *Registry) ollamaBase(base string) string {
	if base == ollamaBuiltinURL && r.getenv != nil {
		if h := strings.TrimSpace(r.getenv("OLLAMA_HOST")); h != "" {
			return h
		}
	}
	return strings.TrimSuffix(strings.TrimRight(base, "/"), "/v1")
}

// WithDimensions returns e asking for vectors of n dimensions (0: the
// model's own). A known model refuses a size it cannot return: above its
// own, or other than its own when its size is fixed.
func (e ResolvedEmbedding) WithDimensions(n int) (ResolvedEmbedding, error) {
	m := e.Info
	switch {
	case n < 0:
		return e, fmt.Errorf("embedding model %s: dimensions %d: want a positive number, or 0 for the model's own", e.Model, n)
	case n == 0 || m.Dimensions == 0 || n == m.Dimensions:
	case !m.FlexibleDimensions:
		return e, fmt.Errorf("embedding model %s returns %d dimensions only; drop the dimensions setting or set it to %d",
			e.Model, m.Dimensions, m.Dimensions)
	case n > m.Dimensions:
		return e, fmt.Errorf("embedding model %s returns at most %d dimensions, not %d", e.Model, m.Dimensions, n)
	}
	e.Dimensions = n
	return e, nil
}
