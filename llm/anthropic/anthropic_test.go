package anthropic_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/reinhq/rein/llm"
	"github.com/reinhq/rein/llm/anthropic"
	"github.com/reinhq/rein/llm/llmtest/mockserver"
)

func newMock(t testing.TB) *mockserver.Server {
	t.Helper()
	s := mockserver.New()
	s.APIKey = key
	t.Cleanup(s.Close)
	return s
}

func newProvider(s *mockserver.Server) *anthropic.Provider {
	return anthropic.New(anthropic.Config{APIKey: key, BaseURL: s.URL})
}

func userReq(text string) *llm.Request {
	return &llm.Request{Model: model, Messages: []llm.Message{llm.UserText(text)}}
}

// drain collects a stream's deltas (DeltaDone included) and its error.
func drain(p llm.Provider, req *llm.Request) ([]llm.Delta, error) {
	var ds []llm.Delta
	for d, err := range p.Stream(context.Background(), req) {
		if err != nil {
			return ds, err
		}
		ds = append(ds, d)
	}
	return ds, nil
}

// TestAuthHeaders checks PROV-4: an API key goes in x-api-key, a token in
// Authorization: Bearer, and the token wins when both are set.
func TestAuthHeaders(t *testing.T) {
	token := func(context.Context) (string, error) { return "oauth-tok", nil }
	cases := []struct {
		name                string
		cfg                 anthropic.Config
		wantKey, wantBearer string
	}{
		{"api key", anthropic.Config{APIKey: "k1"}, "k1", ""},
		{"token", anthropic.Config{Token: token}, "", "Bearer oauth-tok"},
		{"token wins over key", anthropic.Config{APIKey: "k1", Token: token}, "", "Bearer oauth-tok"},
		{"extra headers", anthropic.Config{APIKey: "k1", Headers: map[string]string{"anthropic-beta": "oauth-2025-04-20"}}, "k1", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := mockserver.New()
			defer s.Close()
			s.Enqueue(mockserver.Turn{Text: "ok"})
			c.cfg.BaseURL = s.URL
			if _, err := llm.Complete(context.Background(), anthropic.New(c.cfg), userReq("hi")); err != nil {
				t.Fatal(err)
			}
			h := s.Requests()[0].Header
			got := []string{h.Get("x-api-key"), h.Get("Authorization")}
			if diff := cmp.Diff([]string{c.wantKey, c.wantBearer}, got); diff != "" {
				t.Errorf("x-api-key, Authorization (-want +got):\n%s", diff)
			}
			if h.Get("anthropic-version") == "" {
				t.Error("no anthropic-version header")
			}
			for k, v := range c.cfg.Headers {
				if h.Get(k) != v {
					t.Errorf("header %s = %q, want %q", k, h.Get(k), v)
				}
			}
		})
	}
}

// TestAuthFailuresBeforeRequest checks that missing or unobtainable
// credentials fail with an auth error and send nothing.
func TestAuthFailuresBeforeRequest(t *testing.T) {
	cases := []struct {
		name string
		cfg  anthropic.Config
		want string
	}{
		{"no key", anthropic.Config{}, "ANTHROPIC_API_KEY"},
		{"empty token", anthropic.Config{Token: func(context.Context) (string, error) { return "", nil }}, "ANTHROPIC_API_KEY"},
		{"token error", anthropic.Config{APIKey: "k", Token: func(context.Context) (string, error) {
			return "", errors.New("refresh token expired")
		}}, "log in again"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := newMock(t)
			c.cfg.BaseURL = s.URL
			p := anthropic.New(c.cfg)
			_, err := drain(p, userReq("hi"))
			e, ok := llm.AsError(err)
			if !ok || e.Kind != llm.KindAuth || !strings.Contains(e.Hint, c.want) {
				t.Errorf("error %v; want an auth error whose hint mentions %q", err, c.want)
			}
			if err := p.ValidateAuth(context.Background()); llm.KindOf(err) != llm.KindAuth {
				t.Errorf("ValidateAuth: %v, want an auth error", err)
			}
			if n := len(s.Requests()); n != 0 {
				t.Errorf("%d requests sent", n)
			}
		})
	}
}

// TestEnvironmentIgnored checks that no ANTHROPIC_* variable is read: keys
// and base URLs come from Config only.
func TestEnvironmentIgnored(t *testing.T) {
	t.Setenv("ANTHROPIC_API_KEY", "env-key")
	t.Setenv("ANTHROPIC_AUTH_TOKEN", "env-token")
	t.Setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:1")
	s := newMock(t)
	if _, err := drain(anthropic.New(anthropic.Config{BaseURL: s.URL}), userReq("hi")); llm.KindOf(err) != llm.KindAuth {
		t.Errorf("no configured key: %v, want an auth error", err)
	}
	s.Enqueue(mockserver.Turn{Text: "ok"})
	if _, err := drain(newProvider(s), userReq("hi")); err != nil {
		t.Fatal(err)
	}
	if h := s.Requests()[0].Header; h.Get("Authorization") != "" || h.Get("x-api-key") != key {
		t.Errorf("credentials sent: x-api-key %q, Authorization %q", h.Get("x-api-key"), h.Get("Authorization"))
	}
}

func TestMaxTokensAndThinking(t *testing.T) {
	cases := []struct {
		name       string
		maxTokens  int
		thinking   *llm.ThinkingConfig
		wantMax    int
		wantBudget int // 0: thinking off
	}{
		{"default", 0, nil, 8192, 0},
		{"explicit", 1000, nil, 1000, 0},
		{"budget under default max", 0, &llm.ThinkingConfig{BudgetTokens: 2048}, 8192, 2048},
		{"budget raised to the minimum", 0, &llm.ThinkingConfig{BudgetTokens: 100}, 8192, 1024},
		{"max tokens not above budget", 2048, &llm.ThinkingConfig{BudgetTokens: 2048}, 4096, 2048},
		{"budget above default max", 0, &llm.ThinkingConfig{BudgetTokens: 10000}, 18192, 10000},
		{"effort high", 0, &llm.ThinkingConfig{Effort: "high"}, 24576, 16384},
		{"effort low", 0, &llm.ThinkingConfig{Effort: "low"}, 8192, 1024},
		{"no budget no effort", 0, &llm.ThinkingConfig{}, 8192, 4096},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := newMock(t)
			s.Enqueue(mockserver.Turn{Text: "ok"})
			req := userReq("hi")
			req.MaxTokens, req.Thinking = c.maxTokens, c.thinking
			if _, err := llm.Complete(context.Background(), newProvider(s), req); err != nil {
				t.Fatal(err)
			}
			dec := s.Requests()[0].Decoded
			budget := 0
			if dec.Thinking != nil {
				budget = dec.Thinking.BudgetTokens
			}
			if dec.MaxTokens != c.wantMax || budget != c.wantBudget {
				t.Errorf("max_tokens %d, budget %d; want %d, %d", dec.MaxTokens, budget, c.wantMax, c.wantBudget)
			}
		})
	}
}

// TestTemperatureNotSent: API version 2026-10-21 rejects sampling parameters.
func TestTemperatureNotSent(t *testing.T) {
	temp := 0.2
	req := userReq("hi")
	req.Temperature = &temp
	if body := sentBody(t, req); bytes.Contains(body, []byte("temperature")) {
		t.Errorf("temperature sent: %s", body)
	}
}

// TestThinkingHistory checks PROV-5 for what the conformance suite cannot
// script: redacted thinking, and unsigned thinking, which the API rejects.
func TestThinkingHistory(t *testing.T) {
	asst := llm.Message{Role: llm.RoleAssistant, Provider: "anthropic", Model: model, Content: []llm.Block{
		&llm.Thinking{Redacted: true, Signature: "REDACTED-DATA"},
		&llm.Thinking{Text: "unsigned"},
		&llm.Text{Text: "answer"},
	}}
	cases := []struct {
		name  string
		model string
		want  []llm.Block
	}{
		{"same model", model, []llm.Block{&llm.Thinking{Redacted: true, Signature: "REDACTED-DATA"}, &llm.Text{Text: "answer"}}},
		{"other model", "claude-haiku-4-5", []llm.Block{&llm.Text{Text: "answer"}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := newMock(t)
			s.Enqueue(mockserver.Turn{Text: "ok"})
			req := &llm.Request{Model: c.model, Messages: []llm.Message{llm.UserText("q"), asst, llm.UserText("more")}}
			if _, err := llm.Complete(context.Background(), newProvider(s), req); err != nil {
				t.Fatal(err)
			}
			got := s.Requests()[0].Decoded.Messages[1].Content
			if diff := cmp.Diff(c.want, got); diff != "" {
				t.Errorf("assistant content sent (-want +got):\n%s", diff)
			}
		})
	}
}

// TestInvalidRequestNotSent: a request that cannot be serialised fails as a
// bad request without reaching the network.
func TestInvalidRequestNotSent(t *testing.T) {
	cases := map[string]*llm.Request{
		"tool input": {Model: model, Messages: []llm.Message{llm.UserText("q"),
			{Role: llm.RoleAssistant, Content: []llm.Block{&llm.ToolUse{ID: "t1", Name: "x", Input: json.RawMessage("{oops")}}}}},
		"tool schema": {Model: model, Messages: []llm.Message{llm.UserText("q")},
			Tools: []llm.ToolSpec{{Name: "x", InputSchema: json.RawMessage("{")}}},
		"empty image": {Model: model, Messages: []llm.Message{{Role: llm.RoleUser, Content: []llm.Block{&llm.Image{}}}}},
		"role":        {Model: model, Messages: []llm.Message{{Role: "system", Content: []llm.Block{&llm.Text{Text: "x"}}}}},
	}
	for name, req := range cases {
		t.Run(name, func(t *testing.T) {
			s := newMock(t)
			if _, err := drain(newProvider(s), req); llm.KindOf(err) != llm.KindBadRequest {
				t.Errorf("error %v, want a bad request", err)
			}
			if n := len(s.Requests()); n != 0 {
				t.Errorf("%d requests sent", n)
			}
		})
	}
}

// sse renders events as the API's named SSE events; the event name is the
// data's "type".
func sse(events ...string) string {
	var b strings.Builder
	for _, e := range events {
		var v struct {
			Type string `json:"type"`
		}
		_ = json.Unmarshal([]byte(e), &v)
		b.WriteString("event: " + v.Type + "\ndata: " + e + "\n\n")
	}
	return b.String()
}

const (
	evStart    = `{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4-5-20250929","content":[],"stop_reason":null,"usage":{"input_tokens":11,"cache_read_input_tokens":5,"cache_creation_input_tokens":3,"output_tokens":1}}}`
	evStop     = `{"type":"message_stop"}`
	evEndDelta = `{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":9}}`
)

// streamCase is a hand-written stream and what the adapter must make of it.
type streamCase struct {
	name     string
	body     string
	wantText string
	want     *llm.Response
	kind     llm.ErrorKind // the error expected, 0 for none
	message  string        // must appear in the error's Message
}

func streamCases() []streamCase {
	usage := llm.Usage{InputTokens: 11, CacheReadTokens: 5, CacheWriteTokens: 3, OutputTokens: 9}
	return []streamCase{
		{
			name: "redacted thinking, text in the start event, server tool, unknown event",
			body: sse(evStart,
				`{"type":"content_block_start","index":0,"content_block":{"type":"redacted_thinking","data":"OPAQUE"}}`,
				`{"type":"content_block_stop","index":0}`,
				`{"type":"content_block_start","index":1,"content_block":{"type":"server_tool_use","id":"srvtoolu_1","name":"web_search","input":{}}}`,
				`{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"query\":\"x\"}"}}`,
				`{"type":"content_block_stop","index":1}`,
				`{"type":"content_block_start","index":2,"content_block":{"type":"text","text":"Hi"}}`,
				`{"type":"brand_new_event","index":2}`,
				`{"type":"content_block_delta","index":2,"delta":{"type":"text_delta","text":" there"}}`,
				`{"type":"content_block_stop","index":2}`,
				evEndDelta, evStop),
			wantText: "Hi there",
			want: &llm.Response{ID: "msg_1", StopReason: llm.StopEndTurn, Usage: usage, Message: llm.Message{
				Role: llm.RoleAssistant, Provider: "anthropic", Model: model,
				Content: []llm.Block{&llm.Thinking{Redacted: true, Signature: "OPAQUE"},
					// The server tool's call is kept, its streamed input in place.
					&llm.Opaque{Provider: "anthropic", Type: "server_tool_use",
						Raw: json.RawMessage(`{"id":"srvtoolu_1","input":{"query":"x"},"name":"web_search","type":"server_tool_use"}`)},
					&llm.Text{Text: "Hi there"}}}},
		},
		{
			name: "context window stop, usage from message_delta",
			body: sse(evStart,
				`{"type":"message_delta","delta":{"stop_reason":"model_context_window_exceeded"},"usage":{"input_tokens":20,"cache_read_input_tokens":0,"output_tokens":4,"output_tokens_details":{"thinking_tokens":2}}}`,
				evStop),
			want: &llm.Response{ID: "msg_1", StopReason: llm.StopMaxTokens,
				Usage:   llm.Usage{InputTokens: 20, CacheWriteTokens: 3, OutputTokens: 4, ReasoningTokens: 2},
				Message: llm.Message{Role: llm.RoleAssistant, Provider: "anthropic", Model: model, Content: []llm.Block{}}},
		},
		{
			name: "overloaded error event",
			body: sse(evStart, `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded right now"}}`),
			kind: llm.KindOverloaded, message: "Overloaded right now",
		},
		{
			name: "rate limit error event",
			body: sse(evStart, `{"type":"error","error":{"type":"rate_limit_error","message":"slow"}}`),
			kind: llm.KindRateLimit, message: "slow",
		},
		{
			name: "unknown error type",
			body: sse(`{"type":"error","error":{"type":"mystery_error","message":"what"}}`),
			kind: llm.KindServer, message: "what",
		},
		{
			name: "delta before its block",
			body: sse(evStart, `{"type":"content_block_delta","index":3,"delta":{"type":"text_delta","text":"x"}}`),
			kind: llm.KindMalformed,
		},
		{
			name: "tool input that is not JSON",
			body: sse(evStart,
				`{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"toolu_1","name":"bash","input":{}}}`,
				`{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\"command\":"}}`,
				`{"type":"content_block_stop","index":0}`, evEndDelta, evStop),
			kind: llm.KindMalformed, message: "toolu_1",
		},
		{
			// PROV-7, LOOP-5: a call cut at max_tokens is not a malformed
			// stream to retry; it comes back with its raw arguments and the
			// max_tokens stop, and the loop answers it "not run".
			name: "tool input cut at max_tokens",
			body: sse(evStart,
				`{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"toolu_1","name":"bash","input":{}}}`,
				`{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\"command\":"}}`,
				`{"type":"content_block_stop","index":0}`,
				`{"type":"message_delta","delta":{"stop_reason":"max_tokens","stop_sequence":null},"usage":{"output_tokens":9}}`, evStop),
			want: &llm.Response{ID: "msg_1", StopReason: llm.StopMaxTokens, Usage: usage, Message: llm.Message{
				Role: llm.RoleAssistant, Provider: "anthropic", Model: model,
				Content: []llm.Block{&llm.ToolUse{ID: "toolu_1", Name: "bash", Input: json.RawMessage(`{"_raw_arguments":"{\"command\":"}`)}}}},
		},
		{
			name: "two JSON values in one event",
			body: sse(evStart) + "event: message_stop\ndata: {\"type\":\"message_stop\"} {\"type\":\"message_stop\"}\n\n",
			kind: llm.KindMalformed, message: "more than one",
		},
		{
			name: "event cut inside its JSON",
			body: sse(evStart) + "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\n\n",
			kind: llm.KindMalformed,
		},
		{name: "error event that is not JSON", body: "event: error\ndata: upstream exploded\n\n", kind: llm.KindServer, message: "upstream exploded"},
		{name: "empty body", body: "", kind: llm.KindStreamCut},
		{name: "only pings", body: "event: ping\ndata: {\"type\":\"ping\"}\n\n", kind: llm.KindStreamCut},
	}
}

// TestStreamEvents feeds hand-written streams to the adapter: what the mock
// does not produce (redacted thinking, error events, server tools, unknown
// events) and what it must never produce.
func TestStreamEvents(t *testing.T) {
	for _, c := range streamCases() {
		t.Run(c.name, func(t *testing.T) {
			ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/event-stream")
				_, _ = io.WriteString(w, c.body)
			}))
			defer ts.Close()
			ds, err := drain(anthropic.New(anthropic.Config{APIKey: key, BaseURL: ts.URL}), userReq("hi"))
			if c.kind != 0 {
				e, ok := llm.AsError(err)
				if !ok || e.Kind != c.kind || !strings.Contains(e.Message, c.message) {
					t.Fatalf("error %v; want kind %v with message containing %q", err, c.kind, c.message)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var text strings.Builder
			for _, d := range ds {
				if d.Kind == llm.DeltaText {
					text.WriteString(d.Text)
				}
				if (d.Kind == llm.DeltaToolStart || d.Kind == llm.DeltaToolInput) && d.ToolUseID == "srvtoolu_1" {
					t.Errorf("tool delta for a server tool: %+v", d)
				}
			}
			if text.String() != c.wantText {
				t.Errorf("streamed text %q, want %q", text.String(), c.wantText)
			}
			if diff := cmp.Diff(c.want, ds[len(ds)-1].Response); diff != "" {
				t.Errorf("response (-want +got):\n%s", diff)
			}
		})
	}
}

// TestJSONReply checks a reply that arrives as one JSON message although a
// stream was asked for (a proxy that buffers), and the mock's non-streamed
// rendering: the deltas and the response match the streamed ones.
func TestJSONReply(t *testing.T) {
	turn := mockserver.Turn{Thinking: "think", ThinkingSignature: "SIG", Text: "Hello",
		ToolCalls: []mockserver.ToolCall{{ID: "toolu_9", Name: "bash", Input: `{"command":"ls"}`}},
		Usage:     llm.Usage{InputTokens: 3, OutputTokens: 4, CacheReadTokens: 1, CacheWriteTokens: 2}}
	req := userReq("hi")

	streamed := newMock(t)
	streamed.Enqueue(turn)
	want, err := drain(newProvider(streamed), req)
	if err != nil {
		t.Fatal(err)
	}

	mock := mockserver.NewUnstarted()
	mock.Enqueue(turn)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		body = bytes.Replace(body, []byte(`"stream":true`), []byte(`"stream":false`), 1)
		r.Body = io.NopCloser(bytes.NewReader(body))
		r.ContentLength = int64(len(body))
		mock.Handler().ServeHTTP(w, r)
	}))
	defer ts.Close()
	got, err := drain(anthropic.New(anthropic.Config{APIKey: key, BaseURL: ts.URL}), req)
	if err != nil {
		t.Fatal(err)
	}
	if mock.Requests()[0].Stream {
		t.Fatal("the mock was asked for a stream")
	}
	if diff := cmp.Diff(merged(want), merged(got)); diff != "" {
		t.Errorf("JSON reply differs from the streamed one (-streamed +json):\n%s", diff)
	}
}

// merged joins consecutive deltas of the same kind and call, and blanks the
// reply id, so a streamed and a one-piece reply compare equal.
func merged(ds []llm.Delta) []llm.Delta {
	var out []llm.Delta
	for _, d := range ds {
		if d.Response != nil {
			r := *d.Response
			r.ID = ""
			d.Response = &r
		}
		if n := len(out); n > 0 && d.Kind != llm.DeltaDone && d.Kind != llm.DeltaToolStart &&
			out[n-1].Kind == d.Kind && out[n-1].ToolUseID == d.ToolUseID {
			out[n-1].Text += d.Text
			continue
		}
		out = append(out, d)
	}
	return out
}

// TestTokenPerRequest: the token source is asked before every request, so a
// refreshed token is used at once (SPEC PROV-4).
func TestTokenPerRequest(t *testing.T) {
	s := mockserver.New()
	defer s.Close()
	n := 0
	p := anthropic.New(anthropic.Config{BaseURL: s.URL, Token: func(context.Context) (string, error) {
		n++
		return "tok-" + strconv.Itoa(n), nil
	}})
	for range 2 {
		s.Enqueue(mockserver.Turn{Text: "ok"})
		if _, err := llm.Complete(context.Background(), p, userReq("hi")); err != nil {
			t.Fatal(err)
		}
	}
	var got []string
	for _, r := range s.Requests() {
		got = append(got, r.Header.Get("Authorization"))
	}
	if diff := cmp.Diff([]string{"Bearer tok-1", "Bearer tok-2"}, got); diff != "" {
		t.Errorf("Authorization headers (-want +got):\n%s", diff)
	}
}

// TestImageMediaTypeSniffed: an image without a media type is sent with the
// one its bytes show.
func TestImageMediaTypeSniffed(t *testing.T) {
	s := newMock(t)
	s.Enqueue(mockserver.Turn{Text: "ok"})
	png := []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
	req := &llm.Request{Model: model, Messages: []llm.Message{{Role: llm.RoleUser, Content: []llm.Block{&llm.Image{Data: png}}}}}
	if _, err := llm.Complete(context.Background(), newProvider(s), req); err != nil {
		t.Fatal(err)
	}
	want := []llm.Block{&llm.Image{MediaType: "image/png", Data: png}}
	if diff := cmp.Diff(want, s.Requests()[0].Decoded.Messages[0].Content); diff != "" {
		t.Errorf("image sent (-want +got):\n%s", diff)
	}
}

// TestStopEarly: a consumer may stop at any delta; the adapter must not
// yield again (range-over-func would panic) and must release the stream.
func TestStopEarly(t *testing.T) {
	turn := mockserver.Turn{Thinking: "t", ThinkingSignature: "S", Text: "hello world",
		ToolCalls: []mockserver.ToolCall{{ID: "toolu_1", Name: "bash", Input: `{"command":"ls"}`}}}
	for _, stopAt := range []llm.DeltaKind{llm.DeltaThinking, llm.DeltaText, llm.DeltaToolStart, llm.DeltaToolInput, llm.DeltaDone} {
		t.Run(stopAt.String(), func(t *testing.T) {
			s := newMock(t)
			s.Enqueue(turn)
			seen := false
			for d, err := range newProvider(s).Stream(context.Background(), userReq("hi")) {
				if err != nil {
					t.Fatal(err)
				}
				if d.Kind == stopAt {
					seen = true
					break
				}
			}
			if !seen {
				t.Errorf("no %v delta", stopAt)
			}
		})
	}
}
