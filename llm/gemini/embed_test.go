package gemini_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/reinhq/rein/llm"
	"github.com/reinhq/rein/llm/gemini"
	"github.com/reinhq/rein/llm/llmtest/mockserver"
)

const embedModel = "gemini-embedding-001"

// newEmbedMock serves the mock vendor with its embedding routes.
func newEmbedMock(t testing.TB) *mockserver.Server {
	t.Helper()
	s := mockserver.NewUnstarted()
	s.APIKey = testKey
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !s.ServeEmbedding(w, r) {
			s.Handler().ServeHTTP(w, r)
		}
	}))
	t.Cleanup(ts.Close)
	s.URL = ts.URL
	return s
}

func embedder(s *mockserver.Server, dims int) *gemini.Embedder {
	return gemini.NewEmbedder(gemini.Config{APIKey: testKey, BaseURL: s.URL}, embedModel, dims)
}

// batchRequest is what the adapter sent in one batchEmbedContents call.
type batchRequest struct {
	Requests []struct {
		Model   string `json:"model"`
		Content struct {
			Parts []struct {
				Text string `json:"text"`
			} `json:"parts"`
		} `json:"content"`
		TaskType             string `json:"taskType"`
		OutputDimensionality int    `json:"outputDimensionality"`
	} `json:"requests"`
}

func sentBatches(t *testing.T, s *mockserver.Server) []batchRequest {
	t.Helper()
	var out []batchRequest
	for _, r := range s.Requests() {
		if !strings.HasSuffix(r.Path, "/v1beta/models/"+embedModel+":batchEmbedContents") {
			t.Errorf("path %s", r.Path)
		}
		var b batchRequest
		if err := json.Unmarshal(r.Body, &b); err != nil {
			t.Fatalf("body %s: %v", r.Body, err)
		}
		out = append(out, b)
	}
	return out
}

func TestEmbedBatches(t *testing.T) {
	s := newEmbedMock(t)
	texts := make([]string, 250)
	for i := range texts {
		texts[i] = fmt.Sprintf("document %d about topic %d", i, i%7)
	}
	texts[3] = ""
	got, err := embedder(s, 32).Embed(t.Context(), texts)
	if err != nil {
		t.Fatal(err)
	}
	var sizes []int
	var sent []string
	for _, b := range sentBatches(t, s) {
		sizes = append(sizes, len(b.Requests))
		for _, r := range b.Requests {
			if r.TaskType != "RETRIEVAL_DOCUMENT" || r.OutputDimensionality != 32 || r.Model != "models/"+embedModel {
				t.Fatalf("request %+v", r)
			}
			sent = append(sent, r.Content.Parts[0].Text)
		}
	}
	if diff := cmp.Diff([]int{100, 100, 50}, sizes); diff != "" {
		t.Errorf("batches (-want +got):\n%s", diff)
	}
	want := append([]string(nil), texts...)
	want[3] = " " // Gemini refuses an empty text
	if diff := cmp.Diff(want, sent); diff != "" {
		t.Errorf("texts sent (-want +got):\n%s", diff)
	}
	for i, text := range want {
		if diff := cmp.Diff(mockserver.Embed(text, 32), got[i]); diff != "" {
			t.Fatalf("vector %d:\n%s", i, diff)
		}
	}
}

func TestEmbedQuery(t *testing.T) {
	s := newEmbedMock(t)
	e := embedder(s, 0)
	v, err := llm.EmbedQuery(t.Context(), e, "where is the session store opened?")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(mockserver.Embed("where is the session store opened?", 0), v); diff != "" {
		t.Error(diff)
	}
	b := sentBatches(t, s)
	if len(b) != 1 || b[0].Requests[0].TaskType != "RETRIEVAL_QUERY" || b[0].Requests[0].OutputDimensionality != 0 {
		t.Errorf("sent %+v", b)
	}
}

func TestEmbedErrors(t *testing.T) {
	tests := []struct {
		name     string
		fault    *mockserver.EmbedFault
		cfg      func(s *mockserver.Server) *gemini.Embedder
		kind     llm.ErrorKind
		want     string
		retry    time.Duration
		requests int
	}{
		{"429 with RetryInfo", &mockserver.EmbedFault{Fault: mockserver.Fault{Status: 429, RetryDelay: "7s", Message: "slow down"}}, nil,
			llm.KindRateLimit, "slow down", 7 * time.Second, 1},
		{"429 with retry-after", &mockserver.EmbedFault{Fault: mockserver.Fault{Status: 429, RetryAfter: "3"}}, nil,
			llm.KindRateLimit, "", 3 * time.Second, 1},
		{"503", &mockserver.EmbedFault{Fault: mockserver.Fault{Status: 503}}, nil, llm.KindOverloaded, "", 0, 1},
		{"401", nil, func(s *mockserver.Server) *gemini.Embedder {
			return gemini.NewEmbedder(gemini.Config{APIKey: "wrong", BaseURL: s.URL}, embedModel, 0)
		}, llm.KindAuth, "GEMINI_API_KEY", 0, 1},
		{"no key", nil, func(s *mockserver.Server) *gemini.Embedder {
			return gemini.NewEmbedder(gemini.Config{BaseURL: s.URL}, embedModel, 0)
		}, llm.KindAuth, "set GEMINI_API_KEY", 0, 0},
		{"no model", nil, func(s *mockserver.Server) *gemini.Embedder {
			return gemini.NewEmbedder(gemini.Config{APIKey: testKey, BaseURL: s.URL}, "", 0)
		}, llm.KindBadRequest, "no embedding model named", 0, 0},
		{"400 surfaced", nil, func(s *mockserver.Server) *gemini.Embedder { return embedder(s, 9000) },
			llm.KindBadRequest, "output_dimensionality: must be between 1 and 8192", 0, 1},
		{"wrong count", &mockserver.EmbedFault{WrongCount: true}, nil, llm.KindMalformed, "2 vectors for 3 texts", 0, 1},
		{"mixed dimensions", &mockserver.EmbedFault{MixedDimensions: true}, nil, llm.KindMalformed, "vector 2 has 255 dimensions", 0, 1},
		{"not JSON", &mockserver.EmbedFault{Fault: mockserver.Fault{Malformed: true}}, nil, llm.KindMalformed, "", 0, 1},
		{"reset", &mockserver.EmbedFault{Fault: mockserver.Fault{ResetBeforeFirstByte: true}}, nil, llm.KindNetwork, "", 0, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newEmbedMock(t)
			if tt.fault != nil {
				s.EnqueueEmbedFaults(*tt.fault)
			}
			e := embedder(s, 0)
			if tt.cfg != nil {
				e = tt.cfg(s)
			}
			_, err := e.Embed(t.Context(), []string{"a", "b", "c"})
			le, ok := llm.AsError(err)
			if !ok || le.Kind != tt.kind || !strings.Contains(err.Error(), tt.want) || le.RetryAfter != tt.retry {
				t.Fatalf("err = %v (%#v); want kind %v with %q, retry-after %v", err, le, tt.kind, tt.want, tt.retry)
			}
			if le.Provider != "google" {
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
	s.EnqueueEmbedFaults(mockserver.EmbedFault{Fault: mockserver.Fault{Status: 429, RetryAfterMS: "5"}})
	e := llm.RetryingEmbedder(embedder(s, 8), llm.RetryPolicy{})
	got, err := e.Embed(t.Context(), []string{"a", "b"})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || len(s.Requests()) != 2 {
		t.Fatalf("%d vectors after %d requests", len(got), len(s.Requests()))
	}
	v, err := llm.EmbedQuery(t.Context(), e, "q")
	if err != nil || len(v) != 8 {
		t.Fatalf("query through the retrying embedder: %v, %v", v, err)
	}
	if last := s.Requests()[2]; !strings.Contains(string(last.Body), "RETRIEVAL_QUERY") {
		t.Errorf("the retrying embedder lost the query task type: %s", last.Body)
	}
}
