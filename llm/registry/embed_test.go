package registry

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/reinhq/rein/kb"
	"github.com/reinhq/rein/llm"
	"github.com/reinhq/rein/llm/gemini"
	"github.com/reinhq/rein/llm/llmtest/mockserver"
	"github.com/reinhq/rein/llm/ollama"
	"github.com/reinhq/rein/llm/openai"
)

// Every llm.Embedder is a kb.Embedder: the knowledge base takes the
// adapters as they are.
var _ kb.Embedder = llm.Embedder(nil)

func TestResolveEmbedding(t *testing.T) {
	env := map[string]string{"OPENAI_API_KEY": "sk", "GEMINI_API_KEY": "g", "OPENROUTER_API_KEY": "or"}
	r, err := New(Config{
		Getenv:   func(k string) string { return env[k] },
		Profiles: []Profile{{Name: "lab", Provider: KindOpenAICompatible, BaseURL: "http://lab:8000/v1"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		spec               string
		kind, model, base  string
		key                string
		dims               int
		warn               bool
		profile, infoOwner string
	}{
		{"openai/text-embedding-3-small", EmbedOpenAI, "text-embedding-3-small", "", "sk", 1536, false, "openai", "openai"},
		{"text-embedding-3-large", EmbedOpenAI, "text-embedding-3-large", "", "sk", 3072, false, "openai", "openai"},
		{"gemini/gemini-embedding-001", EmbedGoogle, "gemini-embedding-001", "", "g", 3072, false, "google", "google"},
		{"google/gemini-embedding-001", EmbedGoogle, "gemini-embedding-001", "", "g", 3072, false, "google", "google"},
		{"gemini-embedding-001", EmbedGoogle, "gemini-embedding-001", "", "g", 3072, false, "google", "google"},
		{"ollama/nomic-embed-text", EmbedOllama, "nomic-embed-text", "http://127.0.0.1:11434", "", 768, false, "ollama", "ollama"},
		{"ollama/nomic-embed-text:latest", EmbedOllama, "nomic-embed-text:latest", "http://127.0.0.1:11434", "", 768, false, "ollama", "ollama"},
		{"mxbai-embed-large", EmbedOllama, "mxbai-embed-large", "http://127.0.0.1:11434", "", 1024, false, "ollama", "ollama"},
		{"ollama/qwen3-embedding:4b", EmbedOllama, "qwen3-embedding:4b", "http://127.0.0.1:11434", "", 0, true, "ollama", "ollama"},
		{"lab/bge-large", EmbedOpenAI, "bge-large", "http://lab:8000/v1", "", 0, true, "lab", "lab"},
		{"openrouter/openai/text-embedding-3-small", EmbedOpenAI, "openai/text-embedding-3-small", "https://openrouter.ai/api/v1", "or", 0, true, "openrouter", "openrouter"},
	}
	for _, tt := range tests {
		t.Run(tt.spec, func(t *testing.T) {
			got, err := r.ResolveEmbedding(tt.spec)
			if err != nil {
				t.Fatal(err)
			}
			if got.Kind != tt.kind || got.Model != tt.model || got.Profile.BaseURL != tt.base || got.Profile.APIKey != tt.key ||
				got.Info.Dimensions != tt.dims || (got.Warning != "") != tt.warn || got.Profile.Name != tt.profile ||
				got.Info.Provider != tt.infoOwner || got.Dimensions != 0 {
				t.Errorf("got %+v", got)
			}
		})
	}
}

func TestResolveEmbeddingErrors(t *testing.T) {
	r, err := New(Config{Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct{ spec, want string }{
		{"", "empty model name"},
		{"anthropic/claude-sonnet-4-5", "anthropic has no embeddings API; use openai/text-embedding-3-small"},
		{"openai/text-embedding-3-small", "set OPENAI_API_KEY or add a profile with `rein provider add`"},
		{"gemini-embedding-001", "set GEMINI_API_KEY or GOOGLE_API_KEY"},
		{"cohere/embed-v4", `unknown provider "cohere"`},
		{"nomic-embed", "unknown embedding model: cannot tell its provider from the name; did you mean nomic-embed-text"},
		{"ollama", "name the embedding model too: ollama/<model>"},
		{"ollama/", `no model name after "ollama/"`},
	}
	for _, tt := range tests {
		_, err := r.ResolveEmbedding(tt.spec)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("ResolveEmbedding(%q) = %v; want an error with %q", tt.spec, err, tt.want)
		}
	}
}

func TestResolveEmbeddingOllamaHost(t *testing.T) {
	env := map[string]string{"OLLAMA_HOST": "gpu-box:11434"}
	r, _ := New(Config{Getenv: func(k string) string { return env[k] }})
	got, err := r.ResolveEmbedding("ollama/nomic-embed-text")
	if err != nil || got.Profile.BaseURL != "gpu-box:11434" {
		t.Fatalf("OLLAMA_HOST not used: %+v, %v", got, err)
	}
	// A configured address wins over OLLAMA_HOST.
	r, _ = New(Config{Getenv: func(k string) string { return env[k] },
		Profiles: []Profile{{Name: "ollama", BaseURL: "http://tower:11434/v1/"}}})
	got, err = r.ResolveEmbedding("ollama/nomic-embed-text")
	if err != nil || got.Profile.BaseURL != "http://tower:11434" {
		t.Fatalf("configured address: %+v, %v", got, err)
	}
}

func TestWithDimensions(t *testing.T) {
	r, _ := New(Config{Getenv: func(string) string { return "k" }})
	tests := []struct {
		spec string
		n    int
		want int
		err  string
	}{
		{"openai/text-embedding-3-small", 512, 512, ""},
		{"openai/text-embedding-3-small", 0, 0, ""},
		{"openai/text-embedding-3-small", 1536, 1536, ""},
		{"openai/text-embedding-3-small", 4096, 0, "at most 1536 dimensions, not 4096"},
		{"openai/text-embedding-ada-002", 512, 0, "returns 1536 dimensions only"},
		{"gemini/gemini-embedding-001", 768, 768, ""},
		{"ollama/some-new-model", 300, 300, ""},
		{"openai/text-embedding-3-small", -1, 0, "want a positive number"},
	}
	for _, tt := range tests {
		res, err := r.ResolveEmbedding(tt.spec)
		if err != nil {
			t.Fatal(err)
		}
		got, err := res.WithDimensions(tt.n)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("%s with %d: %v; want an error with %q", tt.spec, tt.n, err, tt.err)
			}
			continue
		}
		if err != nil || got.Dimensions != tt.want {
			t.Errorf("%s with %d: %d, %v; want %d", tt.spec, tt.n, got.Dimensions, err, tt.want)
		}
	}
}

func TestEmbeddingTable(t *testing.T) {
	seen := map[string]bool{}
	for _, m := range EmbeddingModels() {
		if seen[m.Name] {
			t.Errorf("%s listed twice: a bare name must tell its provider", m.Name)
		}
		seen[m.Name] = true
		if m.Dimensions <= 0 || m.MaxInputTokens <= 0 || m.Provider == "" {
			t.Errorf("incomplete entry %+v", m)
		}
		if got, ok := LookupEmbedding(m.Provider, m.Name); !ok || got != m {
			t.Errorf("LookupEmbedding(%s, %s) = %+v, %v", m.Provider, m.Name, got, ok)
		}
	}
	if _, ok := LookupEmbedding("ollama", "bge-m3:567m"); ok {
		t.Error("a tag other than :latest must not resolve to the untagged entry")
	}
}

// newEmbedder is how a front end builds the adapter a ResolvedEmbedding
// names (the registry itself imports no adapter: workspace and runner
// import the registry and may not reach one). keyless stands in for the
// key of an OpenAI-compatible server that needs none, as cli/model.go does.
func newEmbedder(res ResolvedEmbedding, token func(context.Context) (string, error)) llm.Embedder {
	p := res.Profile
	var e llm.Embedder
	switch res.Kind {
	case EmbedGoogle:
		e = gemini.NewEmbedder(gemini.Config{APIKey: p.APIKey, Token: token, BaseURL: p.BaseURL, Name: "google"}, res.Model, res.Dimensions)
	case EmbedOllama:
		e = ollama.NewEmbedder(ollama.Config{BaseURL: p.BaseURL}, res.Model, res.Dimensions)
	default:
		key, name := p.APIKey, p.Name
		if key == "" && p.APIKeyEnv == "" && token == nil {
			key = "no-key"
		}
		if p.Provider == KindOpenAI || p.Provider == KindOpenAIResponses {
			name = "openai"
		}
		e = openai.NewEmbedder(openai.Config{APIKey: key, Token: token, BaseURL: p.BaseURL, Name: name}, res.Model, res.Dimensions)
	}
	return llm.RetryingEmbedder(e, llm.RetryPolicy{})
}

// Every kind resolves to an adapter that embeds through the mock vendor.
func TestResolvedEmbeddersAgainstMock(t *testing.T) {
	s := mockserver.NewUnstarted()
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !s.ServeEmbedding(w, r) {
			s.Handler().ServeHTTP(w, r)
		}
	}))
	defer ts.Close()
	env := map[string]string{
		"OPENAI_API_KEY": "k", "OPENAI_BASE_URL": ts.URL + "/v1",
		"GEMINI_API_KEY": "k", "GOOGLE_GEMINI_BASE_URL": ts.URL,
		"OLLAMA_HOST": ts.URL,
	}
	r, err := New(Config{Getenv: func(k string) string { return env[k] },
		Profiles: []Profile{{Name: "vllm", BaseURL: ts.URL + "/v1"}}})
	if err != nil {
		t.Fatal(err)
	}
	for _, spec := range []string{"openai/text-embedding-3-small", "gemini/gemini-embedding-001", "ollama/nomic-embed-text", "vllm/bge-large"} {
		res, err := r.ResolveEmbedding(spec)
		if err != nil {
			t.Fatal(err)
		}
		if res, err = res.WithDimensions(0); err != nil {
			t.Fatal(err)
		}
		got, err := newEmbedder(res, nil).Embed(t.Context(), []string{"open the store", "close it"})
		if err != nil {
			t.Fatalf("%s: %v", spec, err)
		}
		want := [][]float32{mockserver.Embed("open the store", 0), mockserver.Embed("close it", 0)}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", spec, diff)
		}
	}
	var vendors []mockserver.Vendor
	for _, req := range s.Requests() {
		vendors = append(vendors, req.Vendor)
	}
	want := []mockserver.Vendor{mockserver.OpenAIEmbeddings, mockserver.GeminiEmbeddings, mockserver.Ollama, mockserver.OpenAIEmbeddings}
	if diff := cmp.Diff(want, vendors); diff != "" {
		t.Errorf("vendors reached (-want +got):\n%s", diff)
	}
}
