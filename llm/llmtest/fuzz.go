package llmtest

import (
	"bytes"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/reinhq/rein/llm"
)

// StaticClient returns an HTTP client that answers every request, without a
// network, with status 200, contentType and body: for fuzzing an adapter's
// reading of replies.
func StaticClient(contentType string, body []byte) *http.Client {
	return &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		if r.Body != nil {
			_, _ = io.Copy(io.Discard, r.Body)
			_ = r.Body.Close()
		}
		return &http.Response{
			StatusCode: http.StatusOK, Status: "200 OK", Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
			Header:  http.Header{"Content-Type": {contentType}},
			Body:    io.NopCloser(bytes.NewReader(body)),
			Request: r,
		}, nil
	})}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// CheckStream sends req through p and fails t unless the stream keeps the
// contract of [llm.Provider], whatever the vendor sent: it ends with exactly
// one DeltaDone holding a response, or with one error that is an
// [*llm.Error] and is the last value; a tool's input deltas follow its start;
// every tool call of the response was announced; the text and thinking
// streamed are the final message's, no more and no less (what the user saw
// is what is stored: issue 23).
func CheckStream(t testing.TB, p llm.Provider, req *llm.Request) {
	t.Helper()
	started := map[string]bool{}
	var text, thinking strings.Builder
	var done *llm.Response
	ended := false
	for d, err := range p.Stream(t.Context(), req) {
		if ended {
			t.Fatalf("a value after the stream's end: %+v, %v", d, err)
		}
		if err != nil {
			if _, ok := llm.AsError(err); !ok {
				t.Fatalf("error %T %v is not an *llm.Error", err, err)
			}
			ended = true
			continue
		}
		switch d.Kind {
		case llm.DeltaToolStart:
			started[d.ToolUseID] = true
		case llm.DeltaToolInput:
			if !started[d.ToolUseID] {
				t.Fatalf("input for tool call %q before its start", d.ToolUseID)
			}
		case llm.DeltaDone:
			if d.Response == nil {
				t.Fatal("DeltaDone without a response")
			}
			done, ended = d.Response, true
		case llm.DeltaText:
			text.WriteString(d.Text)
		case llm.DeltaThinking:
			thinking.WriteString(d.Text)
		default:
			t.Fatalf("delta of kind %v", d.Kind)
		}
	}
	if !ended {
		t.Fatal("the stream ended without DeltaDone or an error")
	}
	if done != nil {
		if got, want := text.String(), done.Message.TextOf(); got != want {
			t.Fatalf("streamed text %q, final message's %q", got, want)
		}
		if got, want := thinking.String(), ThinkingOf(done.Message); got != want {
			t.Fatalf("streamed thinking %q, final message's %q", got, want)
		}
		for _, u := range done.Message.ToolUses() {
			if !started[u.ID] {
				t.Fatalf("tool call %q (%s) in the response was never announced", u.ID, u.Name)
			}
		}
	}
}

// ThinkingOf returns the concatenated text of a message's thinking blocks.
func ThinkingOf(m llm.Message) string {
	var b strings.Builder
	for _, bl := range m.Content {
		if th, ok := bl.(*llm.Thinking); ok {
			b.WriteString(th.Text)
		}
	}
	return b.String()
}
