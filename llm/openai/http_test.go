package openai_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/reinhq/rein/llm"
	"github.com/reinhq/rein/llm/llmtest/mockserver"
	"github.com/reinhq/rein/llm/openai"
)

// seen is one request as a server received it.
type seen struct {
	method, path string
	header       http.Header
	body         string
}

// recorder answers every request with status, headers and body, and keeps
// what it received.
type recorder struct {
	*httptest.Server
	mu   sync.Mutex
	reqs []seen
}

func newRecorder(t *testing.T, status int, header http.Header, body string) *recorder {
	t.Helper()
	r := &recorder{}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		b, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		r.reqs = append(r.reqs, seen{req.Method, req.URL.RequestURI(), req.Header.Clone(), string(b)})
		r.mu.Unlock()
		for k, v := range header {
			w.Header()[k] = v
		}
		w.WriteHeader(status)
		_, _ = io.WriteString(w, body)
	}))
	t.Cleanup(r.Close)
	return r
}

func (r *recorder) got() []seen {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]seen(nil), r.reqs...)
}

// TestRequestHeaders checks the headers every call sends: JSON in and out,
// rein's User-Agent, the credentials (key, token, or an Authorization of
// Config.Headers) and the extra headers, and none of the SDK's telemetry.
func TestRequestHeaders(t *testing.T) {
	token := func(context.Context) (string, error) { return "tok", nil }
	cases := []struct {
		name string
		cfg  openai.Config
		want map[string]string
	}{
		{"key", openai.Config{APIKey: "k1"},
			map[string]string{"Authorization": "Bearer k1", "Accept": "application/json", "User-Agent": "rein (openai adapter)"}},
		{"token over key", openai.Config{APIKey: "k1", Token: token},
			map[string]string{"Authorization": "Bearer tok"}},
		{"extra headers", openai.Config{APIKey: "k1", Headers: map[string]string{"X-Title": "rein", "openai-project": "p1", "User-Agent": "mine"}},
			map[string]string{"Authorization": "Bearer k1", "X-Title": "rein", "Openai-Project": "p1", "User-Agent": "mine"}},
		{"Authorization of Headers replaces the key's", openai.Config{APIKey: "k1", Headers: map[string]string{"authorization": "Basic abc"}},
			map[string]string{"Authorization": "Basic abc"}},
		{"a token replaces Authorization of Headers", openai.Config{Token: token, Headers: map[string]string{"Authorization": "Basic abc"}},
			map[string]string{"Authorization": "Bearer tok"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := newMock(t)
			s.APIKey = ""
			cfg := c.cfg
			cfg.BaseURL = s.URL + "/v1"
			calls := []func() error{
				func() error {
					s.Enqueue(mockserver.Turn{Text: "ok"})
					_, _, err := run(openai.NewChat(cfg), hi("m"))
					return err
				},
				func() error {
					s.Enqueue(mockserver.Turn{Text: "ok"})
					_, _, err := run(openai.NewResponses(cfg), hi("m"))
					return err
				},
			}
			for i, call := range calls {
				if err := call(); err != nil {
					t.Fatalf("call %d: %v", i, err)
				}
				h := s.Requests()[i].Header
				if h.Get("Content-Type") != "application/json" {
					t.Errorf("call %d: Content-Type %q", i, h.Get("Content-Type"))
				}
				for k, v := range c.want {
					if got := h.Values(k); len(got) != 1 || got[0] != v {
						t.Errorf("call %d: %s = %q, want %q", i, k, got, v)
					}
				}
				for k := range h {
					if strings.HasPrefix(k, "X-Stainless") {
						t.Errorf("call %d: telemetry header %s sent", i, k)
					}
				}
			}
		})
	}
}

// TestValidateAuthRequest checks that ValidateAuth sends one GET
// {BaseURL}/models, whatever trailing slashes BaseURL has, with the key and
// no body, and that a rejected key is an auth error naming KeyEnv.
func TestValidateAuthRequest(t *testing.T) {
	for _, suffix := range []string{"/v1", "/v1/", "/v1//"} {
		rec := newRecorder(t, 200, http.Header{"Content-Type": {"application/json"}}, `{"object":"list","data":[]}`)
		for _, p := range []llm.AuthValidator{
			openai.NewChat(openai.Config{APIKey: "k1", BaseURL: rec.URL + suffix}),
			openai.NewResponses(openai.Config{APIKey: "k1", BaseURL: rec.URL + suffix}),
		} {
			if err := p.ValidateAuth(context.Background()); err != nil {
				t.Fatalf("%s: %v", suffix, err)
			}
		}
		for _, r := range rec.got() {
			if r.method != http.MethodGet || r.path != "/v1/models" || r.body != "" ||
				r.header.Get("Authorization") != "Bearer k1" || r.header.Get("Content-Type") != "" {
				t.Errorf("%s: sent %s %s %q %v", suffix, r.method, r.path, r.body, r.header)
			}
		}
		if n := len(rec.got()); n != 2 {
			t.Errorf("%s: %d requests, want 2", suffix, n)
		}
	}
	rec := newRecorder(t, 401, http.Header{"Content-Type": {"application/json"}}, `{"error":{"message":"Incorrect API key provided"}}`)
	err := openai.NewChat(openai.Config{APIKey: "bad", BaseURL: rec.URL, KeyEnv: "DEEPSEEK_API_KEY"}).ValidateAuth(context.Background())
	e, ok := llm.AsError(err)
	if !ok || e.Kind != llm.KindAuth || e.Status != 401 || !strings.Contains(e.Message, "Incorrect API key") || !strings.Contains(e.Hint, "DEEPSEEK_API_KEY") {
		t.Errorf("rejected key: %#v", err)
	}
}

// TestErrorReply checks that an error reply's status, headers (Retry-After)
// and body reach the *llm.Error of every call, after one request.
func TestErrorReply(t *testing.T) {
	rec := newRecorder(t, 429, http.Header{"Content-Type": {"application/json"}, "Retry-After": {"7"}},
		`{"error":{"message":"Rate limit reached for gpt-5 <tokens>","type":"tokens","code":"rate_limit_exceeded"}}`)
	cfg := openai.Config{APIKey: "k1", BaseURL: rec.URL, Name: "compat"}
	calls := map[string]func() error{
		"chat":      func() error { _, _, err := run(openai.NewChat(cfg), hi("m")); return err },
		"responses": func() error { _, _, err := run(openai.NewResponses(cfg), hi("m")); return err },
		"embed": func() error {
			_, err := openai.NewEmbedder(cfg, "m", 0).Embed(context.Background(), []string{"a"})
			return err
		},
		"validate": func() error { return openai.NewChat(cfg).ValidateAuth(context.Background()) },
	}
	for name, call := range calls {
		before := len(rec.got())
		err := call()
		e, ok := llm.AsError(err)
		if !ok {
			t.Fatalf("%s: %v is not an *llm.Error", name, err)
		}
		want := llm.Error{Kind: llm.KindRateLimit, Provider: "compat", Status: 429, RetryAfter: 7 * time.Second,
			Message: "Rate limit reached for gpt-5 <tokens>"}
		if diff := cmp.Diff(want, *e); diff != "" {
			t.Errorf("%s: error (-want +got):\n%s", name, diff)
		}
		if n := len(rec.got()) - before; n != 1 {
			t.Errorf("%s: %d requests, want 1", name, n)
		}
	}
}

// TestTransportError checks that a refused connection is a network error
// whose cause is the dial's, not the *url.Error around it.
func TestTransportError(t *testing.T) {
	rec := newRecorder(t, 200, nil, "")
	base := rec.URL
	rec.Close()
	_, _, err := run(openai.NewChat(openai.Config{APIKey: "k1", BaseURL: base}), hi("m"))
	e, ok := llm.AsError(err)
	if !ok || e.Kind != llm.KindNetwork || e.Provider != "openai" {
		t.Fatalf("error = %#v, want a network error from openai", err)
	}
	if _, isURL := errors.AsType[*url.Error](e.Err); isURL {
		t.Errorf("cause %v is still a *url.Error", e.Err)
	}
}
