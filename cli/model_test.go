package cli

import (
	"context"
	"strings"
	"testing"

	"github.com/reinhq/rein/llm"
	"github.com/reinhq/rein/llm/llmtest/mockserver"
	"github.com/reinhq/rein/llm/registry"
)

// PROV-2: a keyless OpenAI-compatible profile (Ollama, vLLM, llama.cpp)
// reaches its server; a profile that names a key variable left unset still
// fails before any request, saying which variable to set.
func TestKeylessCompatibleProfile(t *testing.T) {
	s := mockserver.New()
	defer s.Close()
	s.Enqueue(mockserver.Turn{Text: "local hello"})
	p, _ := newAdapter(registry.Profile{Name: "ollama", Provider: registry.KindOpenAICompatible, BaseURL: s.URL + "/v1"}, nil)
	resp, err := llm.Complete(context.Background(), p, &llm.Request{Model: "llama3.2", Messages: []llm.Message{llm.UserText("hi")}})
	if err != nil || resp.Message.TextOf() != "local hello" {
		t.Fatalf("keyless profile: %v, %+v", err, resp)
	}
	p, _ = newAdapter(registry.Profile{Name: "openrouter", Provider: registry.KindOpenAICompatible, BaseURL: s.URL + "/v1", APIKeyEnv: "OPENROUTER_API_KEY"}, nil)
	_, err = llm.Complete(context.Background(), p, &llm.Request{Model: "m", Messages: []llm.Message{llm.UserText("hi")}})
	if llm.KindOf(err) != llm.KindAuth || len(s.Requests()) != 1 || !strings.Contains(err.Error(), "OPENROUTER_API_KEY") {
		t.Errorf("profile with an unset key variable: %v after %d requests; want an auth error naming OPENROUTER_API_KEY", err, len(s.Requests()))
	}
}

// PROV-4: an OAuth profile's token source reaches every adapter: the
// request carries the bearer token, not a key.
func TestOAuthProfileToken_PROV4(t *testing.T) {
	s := mockserver.New()
	defer s.Close()
	token := func(context.Context) (string, error) { return "tok-oauth-1", nil }
	for _, p := range []registry.Profile{
		{Name: "anthropic", Provider: registry.KindAnthropic, BaseURL: s.URL},
		{Name: "openai", Provider: registry.KindOpenAI, BaseURL: s.URL + "/v1"},
		{Name: "corp", Provider: registry.KindOpenAICompatible, BaseURL: s.URL + "/v1"},
	} {
		s.Reset()
		s.Enqueue(mockserver.Turn{Text: "hello"})
		a, _ := newAdapter(p, token)
		if _, err := llm.Complete(context.Background(), a, &llm.Request{Model: "m", MaxTokens: 10, Messages: []llm.Message{llm.UserText("hi")}}); err != nil {
			t.Errorf("%s: %v", p.Name, err)
			continue
		}
		reqs := s.Requests()
		if len(reqs) != 1 || reqs[0].Header.Get("Authorization") != "Bearer tok-oauth-1" {
			t.Errorf("%s: requests %d, Authorization %q; want the OAuth bearer token", p.Name, len(reqs), reqs[0].Header.Get("Authorization"))
		}
	}
}
