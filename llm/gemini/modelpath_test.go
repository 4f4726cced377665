package gemini_test

import (
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/reinhq/rein/llm"
	"github.com/reinhq/rein/llm/gemini"
)

// A model name is a path segment of the URL: one that would change the
// path or the query (a hostile profile or settings file) is refused before
// any request.
func TestModelNameRefused(t *testing.T) {
	var calls atomic.Int32
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { calls.Add(1) }))
	defer s.Close()
	p := gemini.New(gemini.Config{APIKey: testKey, BaseURL: s.URL})
	for _, m := range []string{"", "gemini?alt=json", "x&key=k", "../../files", "gemini#frag", "gemini%2f..%2fx"} {
		_, err := llm.Complete(t.Context(), p, &llm.Request{Model: m, MaxTokens: 5,
			Messages: []llm.Message{{Role: llm.RoleUser, Content: []llm.Block{&llm.Text{Text: "hi"}}}}})
		if e, ok := llm.AsError(err); !ok || e.Kind != llm.KindBadRequest {
			t.Errorf("model %q: %v; want a bad request", m, err)
		}
	}
	if n := calls.Load(); n != 0 {
		t.Errorf("%d requests were sent", n)
	}
}
