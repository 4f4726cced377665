package cli

import (
	"context"

	"github.com/reinhq/rein/llm"
	"github.com/reinhq/rein/llm/gemini"
	"github.com/reinhq/rein/llm/ollama"
	"github.com/reinhq/rein/llm/openai"
	"github.com/reinhq/rein/llm/registry"
)

// resolveEmbedder turns kb.embedding_model into an embedder (SPEC KB-1):
// the registry resolves the string through the profiles, and the adapter
// is picked here, as newAdapter picks a chat model's. Retries follow
// rein's policy, one request at a time.
func (a *App) resolveEmbedder(reg *registry.Registry, spec string) (llm.Embedder, error) {
	res, err := reg.ResolveEmbedding(spec)
	if err != nil {
		return nil, err
	}
	var token func(context.Context) (string, error)
	if res.Profile.OAuth != nil {
		ts, err := res.Profile.TokenSource(a.getenv, nil)
		if err != nil {
			return nil, err
		}
		token = ts.Token
	}
	return newEmbedder(res, token), nil
}

// newEmbedder builds the embedding adapter a resolved model names.
func newEmbedder(res registry.ResolvedEmbedding, token func(context.Context) (string, error)) llm.Embedder {
	p := res.Profile
	var e llm.Embedder
	switch res.Kind {
	case registry.EmbedGoogle:
		e = gemini.NewEmbedder(gemini.Config{APIKey: p.APIKey, Token: token, BaseURL: p.BaseURL, Name: "google"}, res.Model, res.Dimensions)
	case registry.EmbedOllama:
		e = ollama.NewEmbedder(ollama.Config{BaseURL: p.BaseURL}, res.Model, res.Dimensions)
	default:
		key, name := p.APIKey, p.Name
		if key == "" && p.APIKeyEnv == "" && token == nil {
			key = keylessPlaceholder
		}
		if p.Provider == registry.KindOpenAI || p.Provider == registry.KindOpenAIResponses {
			name = "openai"
		}
		e = openai.NewEmbedder(openai.Config{APIKey: key, Token: token, BaseURL: p.BaseURL, Name: name}, res.Model, res.Dimensions)
	}
	return llm.RetryingEmbedder(e, llm.RetryPolicy{})
}
