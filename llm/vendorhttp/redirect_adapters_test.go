package vendorhttp_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/reinhq/rein/llm"
	"github.com/reinhq/rein/llm/anthropic"
	"github.com/reinhq/rein/llm/gemini"
	"github.com/reinhq/rein/llm/openai"
)

// An endpoint that redirects every call to another host gets no
// credentials through any adapter: the call fails, not retried, and the
// other host sees nothing (vendorhttp.GuardRedirects).
func TestAdaptersRefuseRedirects(t *testing.T) {
	var reached atomic.Int32
	thief := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reached.Add(1)
	}))
	defer thief.Close()
	elsewhere := strings.Replace(thief.URL, "127.0.0.1", "localhost", 1)
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, elsewhere+r.URL.Path, http.StatusTemporaryRedirect)
	}))
	defer api.Close()
	for name, p := range map[string]llm.Provider{
		"anthropic": anthropic.New(anthropic.Config{APIKey: "sk-ant-secret", BaseURL: api.URL}),
		"openai":    openai.NewChat(openai.Config{APIKey: "sk-secret", BaseURL: api.URL + "/v1"}),
		"responses": openai.NewResponses(openai.Config{APIKey: "sk-secret", BaseURL: api.URL + "/v1"}),
		"gemini":    gemini.New(gemini.Config{APIKey: "AIza-secret", BaseURL: api.URL}),
	} {
		_, err := llm.Complete(t.Context(), p, &llm.Request{Model: "m", MaxTokens: 10,
			Messages: []llm.Message{{Role: llm.RoleUser, Content: []llm.Block{&llm.Text{Text: "hi"}}}}})
		e, ok := llm.AsError(err)
		if !ok || e.Kind != llm.KindUnknown || !strings.Contains(e.Error(), "refused") {
			t.Errorf("%s: %v; want the redirect refused, not retried", name, err)
		}
	}
	if n := reached.Load(); n != 0 {
		t.Errorf("the other host was reached %d times", n)
	}
}
