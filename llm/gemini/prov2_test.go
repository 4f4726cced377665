package gemini_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/reinhq/rein/llm"
	"github.com/reinhq/rein/llm/gemini"
)

// TestPROV2Framing: streamGenerateContent?alt=sse replies that once lost
// their first chunk (SPEC PROV-2). A UTF-8 byte-order mark before it, where
// the whole tool call was, and keep-alive events with empty data lose
// nothing.
func TestPROV2Framing(t *testing.T) {
	const bom = "\xEF\xBB\xBF"
	call := `{"candidates":[{"content":{"role":"model","parts":[{"functionCall":{"name":"read_file","args":{"path":"a.go"}},"thoughtSignature":"c2ln"}]},"index":0}],` +
		`"usageMetadata":{"promptTokenCount":20,"totalTokenCount":20},"modelVersion":"gemini-2.5-pro","responseId":"r1"}`
	final := `{"candidates":[{"content":{"role":"model","parts":[{"text":""}]},"finishReason":"STOP","index":0}],` +
		`"usageMetadata":{"promptTokenCount":20,"candidatesTokenCount":8,"totalTokenCount":28},"modelVersion":"gemini-2.5-pro","responseId":"r1"}`
	want := []llm.Block{&llm.ToolUse{Name: "read_file", Input: json.RawMessage(`{"path":"a.go"}`), Signature: "c2ln"}}
	for _, c := range []struct{ name, body string }{
		{"byte-order mark", bom + "data: " + call + "\r\n\r\ndata: " + final + "\r\n\r\n"},
		{"byte-order mark, LF", bom + "data: " + call + "\n\ndata: " + final + "\n\n"},
		{"keep-alive events", "data:\r\n\r\ndata: " + call + "\r\n\r\ndata: \r\n\r\n: ping\r\n\r\ndata: " + final + "\r\n\r\ndata:\r\n\r\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/event-stream")
				_, _ = w.Write([]byte(c.body))
			}))
			defer ts.Close()
			p := gemini.New(gemini.Config{APIKey: testKey, BaseURL: ts.URL})
			var starts int
			var resp *llm.Response
			for d, err := range p.Stream(context.Background(), &llm.Request{Model: model, Messages: []llm.Message{llm.UserText("read a.go")}}) {
				if err != nil {
					t.Fatal(err)
				}
				switch d.Kind {
				case llm.DeltaToolStart:
					starts++
				case llm.DeltaDone:
					resp = d.Response
				}
			}
			if resp == nil {
				t.Fatal("no response")
			}
			if diff := cmp.Diff(want, resp.Message.Content, cmpopts.IgnoreFields(llm.ToolUse{}, "ID")); diff != "" {
				t.Errorf("content (-want +got):\n%s", diff)
			}
			if starts != 1 || resp.StopReason != llm.StopToolUse || resp.ID != "r1" ||
				resp.Usage != (llm.Usage{InputTokens: 20, OutputTokens: 8}) {
				t.Errorf("%d starts, stop %q, id %q, usage %+v", starts, resp.StopReason, resp.ID, resp.Usage)
			}
		})
	}
}

// TestPROV2UsageMissing: a reply without usageMetadata is estimated, and
// marked so, rather than reported free.
func TestPROV2UsageMissing(t *testing.T) {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = w.Write([]byte(`data: {"candidates":[{"content":{"role":"model","parts":[{"text":"An answer of some length."}]},"finishReason":"STOP"}]}` + "\n\n"))
	}))
	defer ts.Close()
	p := gemini.New(gemini.Config{APIKey: testKey, BaseURL: ts.URL})
	resp, err := llm.Complete(t.Context(), p, &llm.Request{Model: model, System: strings.Repeat("Be brief. ", 30),
		Messages: []llm.Message{llm.UserText("hi")}})
	if err != nil {
		t.Fatal(err)
	}
	if u := resp.Usage; !u.Estimated || u.InputTokens < 30 || u.OutputTokens <= 0 {
		t.Errorf("usage %+v, want an estimate", u)
	}
}
