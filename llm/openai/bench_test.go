package openai_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/reinhq/rein/llm"
	"github.com/reinhq/rein/llm/llmtest"
	"github.com/reinhq/rein/llm/llmtest/mockserver"
	"github.com/reinhq/rein/llm/openai"
)

const benchChunks = 200

// BenchmarkStream streams a 200-chunk text reply over each API. "mock" is
// served by the in-process mock server, so its allocations include the
// server's; "canned" replays the same bytes from a trivial handler, which
// leaves mostly the adapter's (and net/http's) own cost.
func BenchmarkStream(b *testing.B) {
	text := strings.Repeat("abcd", benchChunks) // ChunkSize 4: 200 text deltas
	turn := mockserver.Turn{Text: text, Usage: llm.Usage{InputTokens: 100, OutputTokens: benchChunks}}
	for _, a := range apis {
		b.Run(a.name+"/mock", func(b *testing.B) {
			s := newMock(b)
			s.ChunkSize = 4
			runStreamBench(b, a, a.provider(s), func() { s.Reset(); s.Enqueue(turn) })
		})
		b.Run(a.name+"/canned", func(b *testing.B) {
			body := cannedBody(a.name)
			ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/event-stream")
				_, _ = w.Write([]byte(body))
			}))
			b.Cleanup(ts.Close)
			runStreamBench(b, a, a.new(openai.Config{APIKey: key, BaseURL: ts.URL}), func() {})
		})
	}
}

// cannedBody is the stream OpenAI sends for a 200-chunk text reply.
func cannedBody(api string) string {
	var lines []string
	if api == "chat" {
		lines = append(lines, chunk(`{"role":"assistant","content":""}`))
		for range benchChunks {
			lines = append(lines, chunk(`{"content":"abcd"}`))
		}
		lines = append(lines, finish("stop"),
			`data: {"id":"c1","object":"chat.completion.chunk","choices":[],"usage":{"prompt_tokens":100,"completion_tokens":200,"total_tokens":300,"prompt_tokens_details":{"cached_tokens":0}}}`,
			"data: [DONE]")
		return sse(lines...)
	}
	lines = append(lines,
		ev("response.created", `{"type":"response.created","sequence_number":0,"response":{"id":"resp_1","object":"response","status":"in_progress","output":[]}}`),
		ev("response.output_item.added", `{"type":"response.output_item.added","sequence_number":1,"output_index":0,"item":{"id":"msg_1","type":"message","status":"in_progress","content":[],"role":"assistant"}}`))
	for range benchChunks {
		lines = append(lines, ev("response.output_text.delta",
			`{"type":"response.output_text.delta","sequence_number":2,"item_id":"msg_1","output_index":0,"content_index":0,"delta":"abcd","logprobs":[]}`))
	}
	lines = append(lines,
		ev("response.output_item.done", `{"type":"response.output_item.done","sequence_number":203,"output_index":0,"item":{"id":"msg_1","type":"message","status":"completed","content":[{"type":"output_text","annotations":[],"text":"`+strings.Repeat("abcd", benchChunks)+`"}],"role":"assistant"}}`),
		ev("response.completed", completed))
	return sse(lines...)
}

// BenchmarkResponsesServerTools streams a Responses reply that searched the
// web and ran code before 200 text deltas, with the server tools' progress
// events and 20 events of an unknown type: the opaque items and drop counts
// of issue 23 on the decode path.
func BenchmarkResponsesServerTools(b *testing.B) {
	lines := []string{ev("response.created", `{"type":"response.created","response":{"id":"resp_1","status":"in_progress","output":[]}}`),
		ev("response.output_item.added", wsAdded),
		ev("response.web_search_call.searching", `{"type":"response.web_search_call.searching","output_index":0,"item_id":"ws_67c9fa05"}`),
		ev("response.output_item.done", wsDone), ev("response.output_item.added", ciAdded), ev("response.output_item.done", ciDone),
		ev("response.output_item.added", `{"type":"response.output_item.added","output_index":2,"item":{"id":"msg_1","type":"message","content":[],"role":"assistant"}}`)}
	for i := range benchChunks {
		lines = append(lines, ev("response.output_text.delta",
			`{"type":"response.output_text.delta","sequence_number":2,"item_id":"msg_1","output_index":2,"content_index":0,"delta":"abcd","logprobs":[]}`))
		if i%10 == 0 {
			lines = append(lines, ev("response.brand_new", `{"type":"response.brand_new"}`))
		}
	}
	body := sse(append(lines, ev("response.completed", completed))...)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = w.Write([]byte(body))
	}))
	b.Cleanup(ts.Close)
	llmtest.BenchStream(b, openai.NewResponses(openai.Config{APIKey: key, BaseURL: ts.URL}), hi("gpt-5"), benchChunks, func() {})
}

func runStreamBench(b *testing.B, a api, p llm.Provider, prepare func()) {
	llmtest.BenchStream(b, p, hi(a.model), benchChunks, prepare)
}
