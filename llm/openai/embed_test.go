package openai

// Internal tests: the reply decoder is fuzzed directly.

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/reinhq/rein/llm"
	"github.com/reinhq/rein/llm/llmtest/mockserver"
)

const embedKey = "sk-embed"

// newEmbedMock serves the mock vendor with its embedding routes.
func newEmbedMock(t testing.TB) *mockserver.Server {
	t.Helper()
	s := mockserver.NewUnstarted()
	s.APIKey = embedKey
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !s.ServeEmbedding(w, r) {
			s.Handler().ServeHTTP(w, r)
		}
	}))
	t.Cleanup(ts.Close)
	s.URL = ts.URL
	return s
}

func mockEmbedder(s *mockserver.Server, dims int) *Embedder {
	return NewEmbedder(Config{APIKey: embedKey, BaseURL: s.URL + "/v1"}, "text-embedding-3-small", dims)
}

// sentInputs returns the input array of each logged request.
func sentInputs(t *testing.T, s *mockserver.Server) [][]string {
	t.Helper()
	var out [][]string
	for _, r := range s.Requests() {
		var body struct {
			Input          []string `json:"input"`
			EncodingFormat string   `json:"encoding_format"`
		}
		if err := json.Unmarshal(r.Body, &body); err != nil {
			t.Fatalf("request body %s: %v", r.Body, err)
		}
		if body.EncodingFormat != "float" {
			t.Errorf("encoding_format = %q; want float", body.EncodingFormat)
		}
		out = append(out, body.Input)
	}
	return out
}

func TestEmbedBatchesInOrder(t *testing.T) {
	tests := []struct {
		name  string
		texts []string
		sizes []int
	}{
		{"by count", numbered(2100, ""), []int{2048, 52}},
		{"by bytes", numbered(600, strings.Repeat("x", 1000)), []int{519, 81}},
		{"one", []string{"only"}, []int{1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newEmbedMock(t)
			got, err := mockEmbedder(s, 8).Embed(t.Context(), tt.texts)
			if err != nil {
				t.Fatal(err)
			}
			var sizes []int
			var sent []string
			for _, in := range sentInputs(t, s) {
				sizes = append(sizes, len(in))
				sent = append(sent, in...)
			}
			if diff := cmp.Diff(tt.sizes, sizes); diff != "" {
				t.Errorf("request sizes (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.texts, sent); diff != "" {
				t.Errorf("texts sent out of order (-want +got):\n%s", diff)
			}
			for i, text := range tt.texts {
				if diff := cmp.Diff(mockserver.Embed(text, 8), got[i]); diff != "" {
					t.Fatalf("vector %d is not its text's:\n%s", i, diff)
				}
			}
		})
	}
}

func numbered(n int, pad string) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("text %d %s", i, pad)
	}
	return out
}

func TestEmbedDimensionsAndEmpty(t *testing.T) {
	s := newEmbedMock(t)
	got, err := mockEmbedder(s, 64).Embed(t.Context(), []string{"alpha", ""})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([][]float32{mockserver.Embed("alpha", 64), mockserver.Embed(" ", 64)}, got); diff != "" {
		t.Error(diff)
	}
	body := string(s.Requests()[0].Body)
	if !strings.Contains(body, `"dimensions":64`) || !strings.Contains(body, `"model":"text-embedding-3-small"`) ||
		!strings.Contains(body, `"input":["alpha"," "]`) {
		t.Errorf("request body %s", body)
	}
	if got, err := mockEmbedder(s, 0).Embed(t.Context(), nil); got != nil || err != nil || len(s.Requests()) != 1 {
		t.Errorf("no texts: %v, %v after %d requests; want nothing and no request", got, err, len(s.Requests()))
	}
}

func TestEmbedErrors(t *testing.T) {
	tests := []struct {
		name     string
		fault    *mockserver.EmbedFault
		embedder func(s *mockserver.Server) *Embedder
		kind     llm.ErrorKind
		want     string // in the error's text
		retry    time.Duration
		requests int
	}{
		{"429 with retry-after", &mockserver.EmbedFault{Fault: mockserver.Fault{Status: 429, RetryAfter: "2"}}, nil,
			llm.KindRateLimit, "Rate limit exceeded", 2 * time.Second, 1},
		{"500", &mockserver.EmbedFault{Fault: mockserver.Fault{Status: 500, Message: "upstream broke"}}, nil,
			llm.KindServer, "upstream broke", 0, 1},
		{"401 wrong key", nil, func(s *mockserver.Server) *Embedder {
			return NewEmbedder(Config{APIKey: "sk-wrong", BaseURL: s.URL + "/v1"}, "m", 0)
		}, llm.KindAuth, "check OPENAI_API_KEY", 0, 1},
		{"no key", nil, func(s *mockserver.Server) *Embedder {
			return NewEmbedder(Config{BaseURL: s.URL + "/v1"}, "m", 0)
		}, llm.KindAuth, "set OPENAI_API_KEY", 0, 0},
		{"no model", nil, func(s *mockserver.Server) *Embedder {
			return NewEmbedder(Config{APIKey: embedKey, BaseURL: s.URL + "/v1"}, "", 0)
		}, llm.KindBadRequest, "no embedding model named", 0, 0},
		{"400 surfaced", nil, func(s *mockserver.Server) *Embedder { return mockEmbedder(s, 9000) },
			llm.KindBadRequest, "Invalid value for 'dimensions' = 9000", 0, 1},
		{"wrong count", &mockserver.EmbedFault{WrongCount: true}, nil, llm.KindMalformed, "2 vectors for 3 texts", 0, 1},
		{"mixed dimensions", &mockserver.EmbedFault{MixedDimensions: true}, nil, llm.KindMalformed, "vector 2 has 255 dimensions, vector 0 has 256", 0, 1},
		{"not JSON", &mockserver.EmbedFault{Fault: mockserver.Fault{Malformed: true}}, nil, llm.KindMalformed, "embeddings reply", 0, 1},
		{"reset", &mockserver.EmbedFault{Fault: mockserver.Fault{ResetBeforeFirstByte: true}}, nil, llm.KindNetwork, "", 0, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newEmbedMock(t)
			if tt.fault != nil {
				s.EnqueueEmbedFaults(*tt.fault)
			}
			e := mockEmbedder(s, 0)
			if tt.embedder != nil {
				e = tt.embedder(s)
			}
			_, err := e.Embed(t.Context(), []string{"a", "b", "c"})
			le, ok := llm.AsError(err)
			if !ok || le.Kind != tt.kind || !strings.Contains(err.Error(), tt.want) || le.RetryAfter != tt.retry {
				t.Fatalf("err = %v (%#v); want kind %v with %q, retry-after %v", err, le, tt.kind, tt.want, tt.retry)
			}
			if le.Provider != "openai" {
				t.Errorf("provider = %q", le.Provider)
			}
			if n := len(s.Requests()); n != tt.requests {
				t.Errorf("%d requests; want %d", n, tt.requests)
			}
		})
	}
}

func TestEmbedRetried(t *testing.T) {
	s := newEmbedMock(t)
	s.EnqueueEmbedFaults(
		mockserver.EmbedFault{Fault: mockserver.Fault{Status: 429, RetryAfterMS: "5"}},
		mockserver.EmbedFault{Fault: mockserver.Fault{Status: 503}},
	)
	e := llm.RetryingEmbedder(mockEmbedder(s, 8), llm.RetryPolicy{Initial: time.Millisecond})
	texts := numbered(2100, "")
	got, err := e.Embed(t.Context(), texts)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(texts) {
		t.Fatalf("%d vectors", len(got))
	}
	var sizes []int
	for _, in := range sentInputs(t, s) {
		sizes = append(sizes, len(in))
	}
	// The first request failed twice; the second was sent once.
	if diff := cmp.Diff([]int{2048, 2048, 2048, 52}, sizes); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}
	// An auth failure is not retried.
	bad := llm.RetryingEmbedder(NewEmbedder(Config{APIKey: "sk-wrong", BaseURL: s.URL + "/v1"}, "m", 0), llm.RetryPolicy{})
	before := len(s.Requests())
	if _, err := bad.Embed(t.Context(), []string{"a"}); llm.KindOf(err) != llm.KindAuth {
		t.Fatalf("err = %v", err)
	}
	if n := len(s.Requests()) - before; n != 1 {
		t.Errorf("auth failure sent %d requests; want 1", n)
	}
}

// rawReply answers every request with body.
func rawReply(t *testing.T, body string) string {
	t.Helper()
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, body)
	}))
	t.Cleanup(ts.Close)
	return ts.URL
}

// OpenAI-compatible servers: items out of order, base64 whatever was asked,
// no index, a byte-order mark.
func TestEmbedCompatibleReplies(t *testing.T) {
	tests := []struct {
		name, body string
		want       [][]float32
		err        string
	}{
		{"out of order", `{"data":[{"index":1,"embedding":[3,4]},{"index":0,"embedding":[1,2]}]}`, [][]float32{{1, 2}, {3, 4}}, ""},
		{"no index", `{"data":[{"embedding":[1,2]},{"embedding":[3,4]}]}`, [][]float32{{1, 2}, {3, 4}}, ""},
		{"base64", `{"data":[{"index":0,"embedding":"AACAPwAAAEA="},{"index":1,"embedding":"AABAQAAAgEA="}]}`, [][]float32{{1, 2}, {3, 4}}, ""},
		{"bom", "\uFEFF" + `{"data":[{"embedding":[1]},{"embedding":[2]}]}`, [][]float32{{1}, {2}}, ""},
		{"duplicate index", `{"data":[{"index":0,"embedding":[1]},{"index":0,"embedding":[2]}]}`, nil, "item 1 has index 0"},
		{"index out of range", `{"data":[{"index":0,"embedding":[1]},{"index":7,"embedding":[2]}]}`, nil, "item 1 has index 7"},
		{"bad base64", `{"data":[{"embedding":"!!"},{"embedding":[2]}]}`, nil, "base64 embedding"},
		{"odd base64", `{"data":[{"embedding":"AAA="},{"embedding":[2]}]}`, nil, "not float32s"},
		{"not numbers", `{"data":[{"embedding":["a"]},{"embedding":[2]}]}`, nil, "not a float32"},
		{"object", `{"data":[{"embedding":{"x":1}},{"embedding":[2]}]}`, nil, "not an array of numbers"},
		{"out of range", `{"data":[{"embedding":[1e39]},{"embedding":[2]}]}`, nil, "not a float32"},
		{"empty vector", `{"data":[{"embedding":[]},{"embedding":[]}]}`, nil, "vector 0 is empty"},
		{"no data", `{"object":"list"}`, nil, "0 vectors for 2 texts"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := NewEmbedder(Config{APIKey: "k", BaseURL: rawReply(t, tt.body), Name: "vllm"}, "m", 0)
			got, err := e.Embed(t.Context(), []string{"a", "b"})
			if tt.err != "" {
				if llm.KindOf(err) != llm.KindMalformed || !strings.Contains(err.Error(), tt.err) || !strings.HasPrefix(err.Error(), "vllm: ") {
					t.Fatalf("err = %v; want malformed from vllm with %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Error(diff)
			}
		})
	}
}

func FuzzDecodeEmbeddings(f *testing.F) {
	for _, s := range []string{
		`{"object":"list","data":[{"object":"embedding","index":0,"embedding":[0.1,-0.2]}],"model":"m","usage":{"prompt_tokens":1,"total_tokens":1}}`,
		`{"data":[{"index":1,"embedding":"AACAPw=="},{"index":0,"embedding":[1]}]}`,
		"\uFEFF{\"data\":[]}",
		`{"data":[{"index":-1,"embedding":[1]}]}`,
		`{"data":[{"embedding":"AAA="}]}`,
	} {
		f.Add([]byte(s), uint8(1))
		f.Add([]byte(s), uint8(2))
	}
	f.Fuzz(func(t *testing.T, body []byte, n uint8) {
		vecs, err := decodeEmbeddings(body, int(n))
		if err != nil {
			return
		}
		if len(vecs) != int(n) {
			t.Fatalf("%d vectors for %d", len(vecs), n)
		}
		for i, v := range vecs {
			if v == nil && n > 0 {
				t.Fatalf("vector %d missing", i)
			}
		}
	})
}

// BenchmarkEmbedThroughput embeds 4,096 chunk-sized texts through the
// adapter and the mock (two requests of 2,048); texts/s is the figure.
func BenchmarkEmbedThroughput(b *testing.B) {
	s := newEmbedMock(b)
	e := mockEmbedder(s, 256)
	texts := make([]string, 4096)
	for i := range texts {
		texts[i] = fmt.Sprintf("func handler%d(w http.ResponseWriter, r *http.Request) { serve the request number %d }", i, i)
	}
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		s.Reset()
		if _, err := e.Embed(b.Context(), texts); err != nil {
			b.Fatal(err)
		}
		n += len(texts)
	}
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "texts/s")
}
