package anthropic_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/reinhq/rein/llm"
	"github.com/reinhq/rein/llm/anthropic"
)

// The adapter speaks the Messages API over net/http itself; these tests pin
// what it sends and how it reads an error reply.

// logged is one request a recorder saw.
type logged struct {
	Method, URL string
	Header      http.Header
	Body        string
}

// recorder is a server that logs every request and answers it with reply.
type recorder struct {
	*httptest.Server
	mu   sync.Mutex
	reqs []logged
}

func newRecorder(t *testing.T, reply http.HandlerFunc) *recorder {
	t.Helper()
	r := &recorder{}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		b, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		r.reqs = append(r.reqs, logged{req.Method, req.URL.String(), req.Header.Clone(), string(b)})
		r.mu.Unlock()
		reply(w, req)
	}))
	t.Cleanup(r.Close)
	return r
}

func (r *recorder) requests() []logged {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]logged(nil), r.reqs...)
}

// okStream answers with a short, complete stream.
func okStream(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodGet {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"data":[{"id":"claude-sonnet-4-5","type":"model"}],"has_more":true}`)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	_, _ = io.WriteString(w, sse(evStart, evEndDelta, evStop))
}

// TestRequestHeaders checks every header the adapter sets: the API version
// and media types the official SDK sent, one credential (x-api-key or a
// bearer token, never both, whatever Config.Headers holds), the extra
// headers, and none of the SDK's X-Stainless telemetry.
func TestRequestHeaders(t *testing.T) {
	token := func(context.Context) (string, error) { return "oauth-tok", nil }
	cases := []struct {
		name string
		cfg  anthropic.Config
		want map[string]string // "" means absent
	}{
		{"api key", anthropic.Config{APIKey: "k1"}, map[string]string{
			"x-api-key": "k1", "Authorization": "", "anthropic-version": "2026-10-21",
			"Accept": "application/json", "User-Agent": "rein (anthropic adapter)"}},
		{"token", anthropic.Config{APIKey: "k1", Token: token}, map[string]string{
			"x-api-key": "", "Authorization": "Bearer oauth-tok", "anthropic-version": "2026-10-21"}},
		{"extra headers", anthropic.Config{APIKey: "k1", Headers: map[string]string{
			"anthropic-beta": "oauth-2025-04-20", "anthropic-version": "2023-06-01", "Authorization": "Bearer stray"}}, map[string]string{
			"x-api-key": "k1", "Authorization": "", "anthropic-beta": "oauth-2025-04-20", "anthropic-version": "2023-06-01"}},
		{"extra headers with a token", anthropic.Config{Token: token, Headers: map[string]string{"x-api-key": "stray", "X-Custom": "v"}}, map[string]string{
			"x-api-key": "", "Authorization": "Bearer oauth-tok", "X-Custom": "v"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := newRecorder(t, okStream)
			c.cfg.BaseURL = s.URL
			p := anthropic.New(c.cfg)
			if _, err := llm.Complete(t.Context(), p, userReq("hi")); err != nil {
				t.Fatal(err)
			}
			if err := p.ValidateAuth(t.Context()); err != nil {
				t.Fatal(err)
			}
			reqs := s.requests()
			if len(reqs) != 2 {
				t.Fatalf("%d requests, want 2", len(reqs))
			}
			for _, r := range reqs {
				for k, want := range c.want {
					if got := r.Header.Get(k); got != want {
						t.Errorf("%s: %s = %q, want %q", r.Method, k, got, want)
					}
				}
				if vs := r.Header.Values("x-api-key"); len(vs) > 1 {
					t.Errorf("%s: x-api-key sent %d times", r.Method, len(vs))
				}
				for k := range r.Header {
					if strings.HasPrefix(k, "X-Stainless") {
						t.Errorf("%s: telemetry header %s sent", r.Method, k)
					}
				}
			}
			if got := reqs[0].Header.Get("Content-Type"); got != "application/json" {
				t.Errorf("POST Content-Type %q", got)
			}
			if got := reqs[1].Header.Get("Content-Type"); got != "" {
				t.Errorf("GET Content-Type %q, want none", got)
			}
		})
	}
}

// TestRequestURLs checks the endpoints under a base URL with and without a
// path and a trailing slash: POST /v1/messages, and GET /v1/models?limit=1
// for ValidateAuth.
func TestRequestURLs(t *testing.T) {
	for _, c := range []struct{ suffix, prefix string }{{"", ""}, {"/", ""}, {"/gateway", "/gateway"}, {"/gateway/", "/gateway"}} {
		t.Run("base"+c.suffix, func(t *testing.T) {
			s := newRecorder(t, okStream)
			p := anthropic.New(anthropic.Config{APIKey: key, BaseURL: s.URL + c.suffix})
			if _, err := llm.Complete(t.Context(), p, userReq("hi")); err != nil {
				t.Fatal(err)
			}
			if err := p.ValidateAuth(t.Context()); err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, r := range s.requests() {
				got = append(got, r.Method+" "+r.URL)
			}
			want := []string{"POST " + c.prefix + "/v1/messages", "GET " + c.prefix + "/v1/models?limit=1"}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("requests (-want +got):\n%s", diff)
			}
		})
	}
}

// TestBodyEdges pins bodies the golden request does not reach, as the
// official SDK wrote them: empty lists that are not nil go out as [], a URL
// image, a tool result left without content, an empty schema and input.
func TestBodyEdges(t *testing.T) {
	cases := []struct {
		name string
		req  *llm.Request
		want string
	}{
		{"no messages", &llm.Request{Model: model},
			`{"max_tokens":8192,"messages":[],"model":"claude-sonnet-4-5","stream":true}`},
		{"every block dropped, empty stop sequences", &llm.Request{Model: model, StopSequences: []string{}, Messages: []llm.Message{
			{Role: llm.RoleUser, Content: []llm.Block{&llm.Text{}, &llm.Thinking{Text: "t", Signature: "s"}}}}},
			`{"max_tokens":8192,"messages":[{"content":[],"role":"user"}],"model":"claude-sonnet-4-5","stop_sequences":[],"stream":true}`},
		{"URL image, empty tool result", &llm.Request{Model: model, Messages: []llm.Message{{Role: llm.RoleUser, Content: []llm.Block{
			&llm.Image{URL: "https://example.com/a.png?x=1&y=2"}, &llm.ToolResult{ToolUseID: "t1", Content: []llm.Block{&llm.Text{}}}}}}},
			`{"max_tokens":8192,"messages":[{"content":[{"source":{"url":"https://example.com/a.png?x=1\u0026y=2","type":"url"},"type":"image"},{"tool_use_id":"t1","cache_control":{"type":"ephemeral"},"type":"tool_result"}],"role":"user"}],"model":"claude-sonnet-4-5","stream":true}`},
		{"empty schema and input, thinking after the breakpoint", &llm.Request{Model: model, Tools: []llm.ToolSpec{{Name: "t"}}, Messages: []llm.Message{llm.UserText("q"),
			{Role: llm.RoleAssistant, Provider: "anthropic", Model: model, Content: []llm.Block{&llm.ToolUse{ID: "c1", Name: "t"}, &llm.Thinking{Text: "after", Signature: "S"}}}}},
			`{"max_tokens":8192,"messages":[{"content":[{"text":"q","cache_control":{"type":"ephemeral"},"type":"text"}],"role":"user"},{"content":[{"id":"c1","input":{},"name":"t","cache_control":{"type":"ephemeral"},"type":"tool_use"},{"signature":"S","thinking":"after","type":"thinking"}],"role":"assistant"}],"model":"claude-sonnet-4-5","tools":[{"input_schema":{"type":"object"},"name":"t","cache_control":{"type":"ephemeral"}}],"stream":true}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := newRecorder(t, okStream)
			if _, err := llm.Complete(t.Context(), anthropic.New(anthropic.Config{APIKey: key, BaseURL: s.URL}), c.req); err != nil {
				t.Fatal(err)
			}
			if got := s.requests()[0].Body; got != c.want {
				t.Errorf("body\n got: %s\nwant: %s", got, c.want)
			}
		})
	}
}

// TestErrorReply checks that an error reply's status, headers and body reach
// the llm.Error, from Stream and ValidateAuth alike, and that each call is
// exactly one request: retrying is llm.Retrying's business.
func TestErrorReply(t *testing.T) {
	cases := []struct {
		name   string
		status int
		header map[string]string
		body   string
		want   llm.Error
	}{
		{"rate limit with retry-after", http.StatusTooManyRequests, map[string]string{"Retry-After": "7"},
			`{"type":"error","error":{"type":"rate_limit_error","message":"Number of request tokens has exceeded your per-minute rate limit"}}`,
			llm.Error{Kind: llm.KindRateLimit, Status: 429, RetryAfter: 7 * time.Second, Message: "Number of request tokens has exceeded your per-minute rate limit"}},
		{"retry-after-ms", 529, map[string]string{"retry-after-ms": "1500"},
			`{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`,
			llm.Error{Kind: llm.KindOverloaded, Status: 529, RetryAfter: 1500 * time.Millisecond, Message: "Overloaded"}},
		{"bad key", http.StatusUnauthorized, nil,
			`{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}`,
			llm.Error{Kind: llm.KindAuth, Status: 401, Message: "invalid x-api-key",
				Hint: "the API key was rejected; check ANTHROPIC_API_KEY (or the profile's key) and try again"}},
		{"plain text body", http.StatusBadGateway, nil, "upstream unavailable",
			llm.Error{Kind: llm.KindServer, Status: 502, Message: "upstream unavailable"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
				for k, v := range c.header {
					w.Header().Set(k, v)
				}
				w.WriteHeader(c.status)
				_, _ = io.WriteString(w, c.body)
			})
			p := anthropic.New(anthropic.Config{APIKey: key, BaseURL: s.URL})
			_, serr := drain(p, userReq("hi"))
			verr := p.ValidateAuth(t.Context())
			for what, err := range map[string]error{"Stream": serr, "ValidateAuth": verr} {
				e, ok := llm.AsError(err)
				if !ok {
					t.Fatalf("%s: %v, want an *llm.Error", what, err)
				}
				want := c.want
				want.Provider = "anthropic"
				if diff := cmp.Diff(&want, e); diff != "" {
					t.Errorf("%s: error (-want +got):\n%s", what, diff)
				}
			}
			if n := len(s.requests()); n != 2 {
				t.Errorf("%d requests for one Stream and one ValidateAuth, want 2", n)
			}
		})
	}
}

// TestTransportErrors: a connection that fails before any response is a
// network error, never a stream cut (nothing was streamed); a cancelled
// call is cancelled.
func TestTransportErrors(t *testing.T) {
	hangUp := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		conn, _, err := w.(http.Hijacker).Hijack()
		if err == nil {
			_ = conn.Close()
		}
	}))
	defer hangUp.Close()
	refused := httptest.NewServer(http.NotFoundHandler())
	refused.Close()
	for name, base := range map[string]string{"hang-up": hangUp.URL, "refused": refused.URL} {
		t.Run(name, func(t *testing.T) {
			p := anthropic.New(anthropic.Config{APIKey: key, BaseURL: base})
			if _, err := drain(p, userReq("hi")); llm.KindOf(err) != llm.KindNetwork {
				t.Errorf("Stream: %v, want a network error", err)
			}
			if err := p.ValidateAuth(t.Context()); llm.KindOf(err) != llm.KindNetwork {
				t.Errorf("ValidateAuth: %v, want a network error", err)
			}
		})
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	p := anthropic.New(anthropic.Config{APIKey: key, BaseURL: newRecorder(t, okStream).URL})
	if _, err := llm.Complete(ctx, p, userReq("hi")); llm.KindOf(err) != llm.KindCancelled {
		t.Errorf("cancelled Stream: %v, want cancelled", err)
	}
	if err := p.ValidateAuth(ctx); llm.KindOf(err) != llm.KindCancelled {
		t.Errorf("cancelled ValidateAuth: %v, want cancelled", err)
	}
}

// TestValidateAuthReply: a 2xx model list must be JSON; anything else means
// the base URL does not lead to the API.
func TestValidateAuthReply(t *testing.T) {
	for _, c := range []struct {
		name, contentType, body string
		ok                      bool
	}{
		{"model list", "application/json", `{"data":[],"has_more":false}`, true},
		{"html page", "text/html", "<html>login</html>", false},
		{"broken JSON", "application/json", `{"data":`, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", c.contentType)
				_, _ = io.WriteString(w, c.body)
			})
			err := anthropic.New(anthropic.Config{APIKey: key, BaseURL: s.URL}).ValidateAuth(t.Context())
			if (err == nil) != c.ok {
				t.Errorf("ValidateAuth: %v", err)
			}
		})
	}
}

// TestBodyIsJSON: what the adapter sends decodes, and asks for a stream.
func TestBodyIsJSON(t *testing.T) {
	var body struct {
		Stream bool `json:"stream"`
	}
	if err := json.Unmarshal(sentBody(t, goldenRequest()), &body); err != nil || !body.Stream {
		t.Errorf("body: %v, stream %v", err, body.Stream)
	}
}
