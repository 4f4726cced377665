package gemini_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/reinhq/rein/llm"
	"github.com/reinhq/rein/llm/gemini"
	"github.com/reinhq/rein/llm/llmtest/mockserver"
)

// TestRawStreams feeds replies the mock does not produce, written as the
// Gemini API sends them, and checks the Response (or error) they become.
func TestRawStreams(t *testing.T) {
	type want struct {
		content []llm.Block
		stop    llm.StopReason
		usage   llm.Usage
		kind    llm.ErrorKind // set: an error of this kind
	}
	cases := []struct {
		name   string
		chunks []string
		want   want
	}{
		{
			name: "call with id and signature (Gemini 3)",
			chunks: []string{
				`{"candidates":[{"content":{"role":"model","parts":[{"functionCall":{"id":"fc-7","name":"ls","args":{"path":"."}},"thoughtSignature":"c2ln"}]},"finishReason":"STOP"}],"usageMetadata":{"promptTokenCount":9,"candidatesTokenCount":2,"totalTokenCount":11},"responseId":"r1"}`,
			},
			want: want{
				content: []llm.Block{&llm.ToolUse{ID: "fc-7", Name: "ls", Input: json.RawMessage(`{"path":"."}`), Signature: "c2ln"}},
				stop:    llm.StopToolUse,
				usage:   llm.Usage{InputTokens: 9, OutputTokens: 2},
			},
		},
		{
			name: "signature on an empty thought part; cumulative usage",
			chunks: []string{
				`{"candidates":[{"content":{"role":"model","parts":[{"text":"a","thought":true}]}}],"usageMetadata":{"promptTokenCount":5,"thoughtsTokenCount":1}}`,
				`{"candidates":[{"content":{"role":"model","parts":[{"text":"","thought":true,"thoughtSignature":"c2ln"}]}}],"usageMetadata":{"promptTokenCount":5,"thoughtsTokenCount":2}}`,
				`{"candidates":[{"content":{"role":"model","parts":[{"text":"hi"}]},"finishReason":"STOP"}],"usageMetadata":{"promptTokenCount":5,"cachedContentTokenCount":4,"candidatesTokenCount":1,"thoughtsTokenCount":2}}`,
			},
			want: want{
				content: []llm.Block{&llm.Thinking{Text: "a", Signature: "c2ln"}, &llm.Text{Text: "hi"}},
				stop:    llm.StopEndTurn,
				usage:   llm.Usage{InputTokens: 1, CacheReadTokens: 4, OutputTokens: 3, ReasoningTokens: 2},
			},
		},
		{
			name:   "prompt blocked",
			chunks: []string{`{"promptFeedback":{"blockReason":"PROHIBITED_CONTENT"},"usageMetadata":{"promptTokenCount":4}}`},
			want:   want{content: []llm.Block{}, stop: llm.StopRefusal, usage: llm.Usage{InputTokens: 4}},
		},
		{
			name:   "recitation",
			chunks: []string{`{"candidates":[{"content":{"role":"model","parts":[{"text":"x"}]},"finishReason":"RECITATION"}]}`},
			want:   want{content: []llm.Block{&llm.Text{Text: "x"}}, stop: llm.StopRefusal, usage: llm.Usage{Estimated: true}},
		},
		{
			name:   "malformed function call",
			chunks: []string{`{"candidates":[{"finishReason":"MALFORMED_FUNCTION_CALL"}]}`},
			want:   want{content: []llm.Block{}, stop: llm.StopUnknownOther, usage: llm.Usage{Estimated: true}},
		},
		{
			name:   "no finish reason",
			chunks: []string{`{"candidates":[{"content":{"role":"model","parts":[{"text":"x"}]}}]}`},
			want:   want{kind: llm.KindStreamCut},
		},
		{
			name:   "bad signature",
			chunks: []string{`{"candidates":[{"content":{"role":"model","parts":[{"text":"x","thoughtSignature":"%%%"}]}}]}`},
			want:   want{kind: llm.KindMalformed},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/event-stream")
				for _, ch := range c.chunks {
					_, _ = w.Write([]byte("data: " + ch + "\r\n\r\n"))
				}
			}))
			defer ts.Close()
			p := gemini.New(gemini.Config{APIKey: testKey, BaseURL: ts.URL})
			resp, err := llm.Complete(t.Context(), p, &llm.Request{Model: model, Messages: []llm.Message{llm.UserText("hi")}})
			if c.want.kind != 0 {
				if llm.KindOf(err) != c.want.kind {
					t.Fatalf("error %v (kind %v), want kind %v", err, llm.KindOf(err), c.want.kind)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if resp.Message.Content == nil {
				resp.Message.Content = []llm.Block{}
			}
			got := want{content: resp.Message.Content, stop: resp.StopReason, usage: resp.Usage}
			if c.want.usage.Estimated {
				// PROV-2: no usageMetadata came; the prompt is estimated.
				if !got.usage.Estimated || got.usage.InputTokens <= 0 {
					t.Errorf("usage %+v, want an estimate", got.usage)
				}
				got.usage = c.want.usage
			}
			if diff := cmp.Diff(c.want, got, cmp.AllowUnexported(want{})); diff != "" {
				t.Errorf("reply (-want +got):\n%s", diff)
			}
		})
	}
}

type countingTransport struct{ n atomic.Int32 }

func (c *countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	c.n.Add(1)
	return http.DefaultTransport.RoundTrip(r)
}

// TestHTTPClient checks that the configured client carries the requests and
// that ValidateAuth lists models with the key.
func TestHTTPClient(t *testing.T) {
	s := newServer(t)
	ct := &countingTransport{}
	p := gemini.New(gemini.Config{APIKey: testKey, BaseURL: s.URL, HTTPClient: &http.Client{Transport: ct}})
	if err := p.ValidateAuth(t.Context()); err != nil {
		t.Fatal(err)
	}
	if ct.n.Load() != 1 {
		t.Errorf("%d requests through the configured client, want 1", ct.n.Load())
	}
	if got := gemini.New(gemini.Config{BaseURL: s.URL}).ValidateAuth(t.Context()); llm.KindOf(got) != llm.KindAuth || !strings.Contains(got.Error(), "GEMINI_API_KEY") {
		t.Errorf("no key: %v, want an auth error naming GEMINI_API_KEY", got)
	}
}

// TestNoContinuation checks that the SDK's automatic stream continuation is
// off: a stream that ends with a continuation token and no finish reason is
// one request and a retryable stream cut, left to llm.Retrying (PROV-7).
func TestNoContinuation(t *testing.T) {
	var requests atomic.Int32
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = w.Write([]byte(`data: {"candidates":[{"content":{"role":"model","parts":[{"text":"x"}]},"continuationToken":"dG9r"}]}` + "\n\n"))
	}))
	defer ts.Close()
	p := gemini.New(gemini.Config{APIKey: testKey, BaseURL: ts.URL})
	_, err := llm.Complete(t.Context(), p, &llm.Request{Model: model, Messages: []llm.Message{llm.UserText("hi")}})
	if llm.KindOf(err) != llm.KindStreamCut || requests.Load() != 1 {
		t.Errorf("error %v after %d requests; want a stream cut after 1", err, requests.Load())
	}
}

// TestEventFraming checks the reading of server-sent events the adapter does
// itself: LF or CRLF line ends, comments and other fields, data split over
// lines, lines longer than the read buffer, and a last event the body ends
// in without its blank line.
func TestEventFraming(t *testing.T) {
	long := strings.Repeat("x", 20000)
	final := `{"candidates":[{"content":{"parts":[{"text":"!"}]},"finishReason":"STOP"}],"responseId":"r9"}`
	cases := []struct{ name, body, text string }{
		{"LF", "data: " + `{"candidates":[{"content":{"parts":[{"text":"a"}]}}]}` + "\n\ndata: " + final + "\n\n", "a!"},
		{"comments and fields", ": keep-alive\r\n\r\nevent: chunk\r\nid: 1\r\ndata:" + final + "\r\n\r\n", "!"},
		{"data over lines", "data: {\"candidates\":[{\"content\":\r\ndata: {\"parts\":[{\"text\":\"b\"}]}}]}\r\n\r\ndata: " + final + "\r\n\r\n", "b!"},
		{"long line", `data: {"candidates":[{"content":{"parts":[{"text":"` + long + `"}]}}]}` + "\n\ndata: " + final + "\n\n", long + "!"},
		{"no blank line at the end", "data: " + final, "!"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/event-stream")
				_, _ = w.Write([]byte(c.body))
			}))
			defer ts.Close()
			p := gemini.New(gemini.Config{APIKey: testKey, BaseURL: ts.URL})
			resp, err := llm.Complete(t.Context(), p, &llm.Request{Model: model, Messages: []llm.Message{llm.UserText("hi")}})
			if err != nil {
				t.Fatal(err)
			}
			if got := resp.Message.TextOf(); got != c.text || resp.ID != "r9" {
				t.Errorf("text %.40q (id %q), want %.40q", got, resp.ID, c.text)
			}
		})
	}
}

// TestStreamFaults checks replies the mock does not produce: a body cut by
// the server mid-event, an event that is not JSON, an error reply that is
// not JSON, and a stream read through a client with a Timeout (which must
// not end the stream once the SDK is done with its part).
func TestStreamFaults(t *testing.T) {
	cases := []struct {
		name    string
		handler http.HandlerFunc
		kind    llm.ErrorKind
	}{
		{"cut mid-event", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Length", "1000")
			_, _ = w.Write([]byte(`data: {"candidates":[{"content":{"parts":[{"te`))
		}, llm.KindStreamCut},
		{"not JSON", func(w http.ResponseWriter, r *http.Request) {
			_, _ = w.Write([]byte("data: {oops\n\n"))
		}, llm.KindMalformed},
		{"two values", func(w http.ResponseWriter, r *http.Request) {
			_, _ = w.Write([]byte("data: {} {}\n\n"))
		}, llm.KindMalformed},
		{"plain error reply", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Retry-After", "3")
			http.Error(w, "slow down", http.StatusTooManyRequests)
		}, llm.KindRateLimit},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ts := httptest.NewServer(c.handler)
			defer ts.Close()
			p := gemini.New(gemini.Config{APIKey: testKey, BaseURL: ts.URL})
			_, err := llm.Complete(t.Context(), p, &llm.Request{Model: model, Messages: []llm.Message{llm.UserText("hi")}})
			if llm.KindOf(err) != c.kind {
				t.Errorf("error %v (kind %v), want kind %v", err, llm.KindOf(err), c.kind)
			}
		})
	}
}

// TestClientTimeout checks that a configured client's Timeout, which the SDK
// would end with its request, leaves the adapter's stream alone.
func TestClientTimeout(t *testing.T) {
	s := newServer(t)
	s.ChunkSize = 2
	s.Enqueue(mockserver.Turn{Text: "a slow but steady reply", Fault: &mockserver.Fault{EventDelay: 5 * time.Millisecond}})
	p := gemini.New(gemini.Config{APIKey: testKey, BaseURL: s.URL, HTTPClient: &http.Client{Timeout: 10 * time.Second}})
	resp, err := llm.Complete(t.Context(), p, &llm.Request{Model: model, Messages: []llm.Message{llm.UserText("hi")}})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Message.TextOf() != "a slow but steady reply" || len(s.Requests()) != 1 {
		t.Errorf("text %q after %d requests", resp.Message.TextOf(), len(s.Requests()))
	}
}
