package ollama

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/reinhq/rein/llm"
	"github.com/reinhq/rein/llm/llmtest/mockserver"
)

// newMock serves the mock vendor with its embedding routes.
func newMock(t testing.TB) *mockserver.Server {
	t.Helper()
	s := mockserver.NewUnstarted()
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !s.ServeEmbedding(w, r) {
			s.Handler().ServeHTTP(w, r)
		}
	}))
	t.Cleanup(ts.Close)
	s.URL = ts.URL
	return s
}

func TestParseHost(t *testing.T) {
	tests := []struct{ in, want, err string }{
		{"", "http://127.0.0.1:11434", ""},
		{"127.0.0.1:11434", "http://127.0.0.1:11434", ""},
		{"gpu-box", "http://gpu-box:11434", ""},
		{":11500", "http://127.0.0.1:11500", ""},
		{"0.0.0.0", "http://127.0.0.1:11434", ""},
		{"0.0.0.0:8080", "http://127.0.0.1:8080", ""},
		{"[::]:11434", "http://127.0.0.1:11434", ""},
		{"[::1]:9", "http://[::1]:9", ""},
		{"http://gpu-box", "http://gpu-box:80", ""},
		{"https://ollama.example.com", "https://ollama.example.com:443", ""},
		{"http://127.0.0.1:11434/v1", "http://127.0.0.1:11434", ""},
		{"http://127.0.0.1:11434/", "http://127.0.0.1:11434", ""},
		{"http://proxy:80/ollama", "http://proxy:80/ollama", ""},
		{"ftp://x", "", `scheme "ftp"`},
		{"host:99999", "", "bad port"},
		{"host:abc", "", "bad port"},
	}
	for _, tt := range tests {
		got, err := ParseHost(tt.in)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("ParseHost(%q) = %q, %v; want an error with %q", tt.in, got, err, tt.err)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("ParseHost(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
}

func TestEmbed(t *testing.T) {
	s := newMock(t)
	texts := make([]string, 600)
	for i := range texts {
		texts[i] = fmt.Sprintf("chunk %d of the handbook", i)
	}
	texts[5] = ""
	e := NewEmbedder(Config{BaseURL: s.URL + "/v1", Headers: map[string]string{"X-Proxy": "p"}}, "nomic-embed-text", 16)
	got, err := e.Embed(t.Context(), texts)
	if err != nil {
		t.Fatal(err)
	}
	var sizes []int
	var sent []string
	for _, r := range s.Requests() {
		if r.Path != "/api/embed" || r.Vendor != mockserver.Ollama || r.Header.Get("X-Proxy") != "p" {
			t.Fatalf("request %s %s %v", r.Vendor, r.Path, r.Header)
		}
		var in embedRequest
		if err := json.Unmarshal(r.Body, &in); err != nil {
			t.Fatal(err)
		}
		if in.Model != "nomic-embed-text" || in.Dimensions != 16 {
			t.Errorf("body %s", r.Body)
		}
		sizes = append(sizes, len(in.Input))
		sent = append(sent, in.Input...)
	}
	if diff := cmp.Diff([]int{256, 256, 88}, sizes); diff != "" {
		t.Errorf("batches (-want +got):\n%s", diff)
	}
	want := append([]string(nil), texts...)
	want[5] = " "
	if diff := cmp.Diff(want, sent); diff != "" {
		t.Errorf("texts sent (-want +got):\n%s", diff)
	}
	for i, text := range want {
		if diff := cmp.Diff(mockserver.Embed(text, 16), got[i]); diff != "" {
			t.Fatalf("vector %d:\n%s", i, diff)
		}
	}
}

func TestEmbedErrors(t *testing.T) {
	tests := []struct {
		name     string
		fault    *mockserver.EmbedFault
		model    string
		dims     int
		kind     llm.ErrorKind
		want     string
		retry    time.Duration
		requests int
	}{
		{"429", &mockserver.EmbedFault{Fault: mockserver.Fault{Status: 429, RetryAfter: "4"}}, "m", 0, llm.KindRateLimit, "", 4 * time.Second, 1},
		{"500 message kept", &mockserver.EmbedFault{Fault: mockserver.Fault{Status: 500, Message: "llama runner process has terminated"}}, "m", 0,
			llm.KindServer, "llama runner process has terminated", 0, 1},
		{"404 unknown model", &mockserver.EmbedFault{Fault: mockserver.Fault{Status: 404, Message: `model "nope" not found, try pulling it first`}}, "nope", 0,
			llm.KindNotFound, "ollama pull nope", 0, 1},
		{"400 surfaced", nil, "m", 9000, llm.KindBadRequest, "dimensions must be between 1 and 8192", 0, 1},
		{"no model", nil, "", 0, llm.KindBadRequest, "no embedding model named", 0, 0},
		{"wrong count", &mockserver.EmbedFault{WrongCount: true}, "m", 0, llm.KindMalformed, "2 vectors for 3 texts", 0, 1},
		{"mixed dimensions", &mockserver.EmbedFault{MixedDimensions: true}, "m", 0, llm.KindMalformed, "vector 2 has 255 dimensions", 0, 1},
		{"not JSON", &mockserver.EmbedFault{Fault: mockserver.Fault{Malformed: true}}, "m", 0, llm.KindMalformed, "embed reply", 0, 1},
		{"reset", &mockserver.EmbedFault{Fault: mockserver.Fault{ResetBeforeFirstByte: true}}, "m", 0, llm.KindNetwork, "", 0, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newMock(t)
			if tt.fault != nil {
				s.EnqueueEmbedFaults(*tt.fault)
			}
			_, err := NewEmbedder(Config{BaseURL: s.URL}, tt.model, tt.dims).Embed(t.Context(), []string{"a", "b", "c"})
			le, ok := llm.AsError(err)
			if !ok || le.Kind != tt.kind || !strings.Contains(err.Error(), tt.want) || le.RetryAfter != tt.retry {
				t.Fatalf("err = %v (%#v); want kind %v with %q, retry-after %v", err, le, tt.kind, tt.want, tt.retry)
			}
			if le.Provider != "ollama" {
				t.Errorf("provider = %q", le.Provider)
			}
			if n := len(s.Requests()); n != tt.requests {
				t.Errorf("%d requests; want %d", n, tt.requests)
			}
		})
	}
}

func TestEmbedNotRunning(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now
	_, err = NewEmbedder(Config{BaseURL: addr}, "m", 0).Embed(t.Context(), []string{"a"})
	if llm.KindOf(err) != llm.KindNetwork || !strings.Contains(err.Error(), "ollama serve") || !strings.Contains(err.Error(), addr) {
		t.Fatalf("err = %v; want a network error telling to start ollama at %s", err, addr)
	}
	_, err = NewEmbedder(Config{BaseURL: "ftp://x"}, "m", 0).Embed(t.Context(), []string{"a"})
	if llm.KindOf(err) != llm.KindBadRequest || !strings.Contains(err.Error(), "OLLAMA_HOST") {
		t.Fatalf("bad base URL: err = %v", err)
	}
}

func TestEmbedRetried(t *testing.T) {
	s := newMock(t)
	s.EnqueueEmbedFaults(mockserver.EmbedFault{Fault: mockserver.Fault{Status: 503, RetryAfterMS: "5"}})
	e := llm.RetryingEmbedder(NewEmbedder(Config{BaseURL: s.URL}, "m", 0), llm.RetryPolicy{})
	got, err := e.Embed(t.Context(), []string{"a"})
	if err != nil || len(got) != 1 || len(s.Requests()) != 2 {
		t.Fatalf("%v, %v after %d requests", got, err, len(s.Requests()))
	}
}

func TestEmbedReplies(t *testing.T) {
	tests := []struct {
		name, body string
		want       [][]float32
		err        string
	}{
		{"plain", `{"model":"m","embeddings":[[1,2],[3,4]],"total_duration":5}`, [][]float32{{1, 2}, {3, 4}}, ""},
		{"bom", "\uFEFF" + `{"embeddings":[[1],[2]]}`, [][]float32{{1}, {2}}, ""},
		{"legacy endpoint shape", `{"embedding":[1,2]}`, nil, `no "embeddings"`},
		{"error in a 200", `{"error":"out of memory"}`, nil, "out of memory"},
		{"not numbers", `{"embeddings":[["x"]]}`, nil, "embed reply"},
		{"wrong count", `{"embeddings":[[1]]}`, nil, "1 vectors for 2 texts"},
		{"null vector", `{"embeddings":[null,[1]]}`, nil, "vector 0 is empty"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				_, _ = io.Copy(io.Discard, r.Body)
				_, _ = io.WriteString(w, tt.body)
			}))
			defer ts.Close()
			got, err := NewEmbedder(Config{BaseURL: ts.URL}, "m", 0).Embed(t.Context(), []string{"a", "b"})
			if tt.err != "" {
				if llm.KindOf(err) != llm.KindMalformed || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err = %v; want malformed with %q", err, tt.err)
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

func FuzzDecodeResponse(f *testing.F) {
	for _, s := range []string{
		`{"model":"m","embeddings":[[0.1,-0.2],[3e-5,1]],"total_duration":1,"load_duration":0,"prompt_eval_count":2}`,
		"\uFEFF{\"embeddings\":[]}",
		`{"error":"x"}`,
		`{"embeddings":null}`,
		`{"embeddings":[[1e39]]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		vecs, err := decodeResponse(body)
		if err != nil {
			return
		}
		_ = llm.CheckEmbeddings("ollama", len(vecs), 0, vecs)
	})
}

func FuzzParseHost(f *testing.F) {
	for _, s := range []string{"", "127.0.0.1:11434", "http://h/v1", "[::]:1", ":0", "https://x:443/a/b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, host string) {
		u, err := ParseHost(host)
		if err != nil {
			return
		}
		if !strings.HasPrefix(u, "http://") && !strings.HasPrefix(u, "https://") || strings.HasSuffix(u, "/") {
			t.Fatalf("ParseHost(%q) = %q", host, u)
		}
	})
}
