package anthropic_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/reinhq/rein/llm"
	"github.com/reinhq/rein/llm/anthropic"
	"github.com/reinhq/rein/llm/llmtest"
	"github.com/reinhq/rein/llm/llmtest/mockserver"
)

const benchChunks = 200

// BenchmarkStream streams a 200-chunk text reply. "mock" is served by the
// in-process mock server, so its allocations include the server's; "canned"
// replays the same bytes from a trivial handler, which leaves mostly the
// adapter's (and net/http's) own cost.
func BenchmarkStream(b *testing.B) {
	text := strings.Repeat("abcd", benchChunks) // ChunkSize 4: 200 text deltas
	turn := mockserver.Turn{Text: text, Usage: llm.Usage{InputTokens: 100, OutputTokens: benchChunks}}

	b.Run("mock", func(b *testing.B) {
		s := newMock(b)
		s.ChunkSize = 4
		runStreamBench(b, newProvider(s), func() { s.Reset(); s.Enqueue(turn) })
	})

	b.Run("canned", func(b *testing.B) {
		var sb strings.Builder
		sb.WriteString(sse(evStart, `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`))
		for range benchChunks {
			sb.WriteString(sse(`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"abcd"}}`))
		}
		sb.WriteString(sse(`{"type":"content_block_stop","index":0}`, evEndDelta, evStop))
		body := sb.String()
		ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			_, _ = w.Write([]byte(body))
		}))
		b.Cleanup(ts.Close)
		runStreamBench(b, anthropic.New(anthropic.Config{APIKey: key, BaseURL: ts.URL}), func() {})
	})
}

// BenchmarkStreamServerTools streams a reply that searched the web: a
// server tool's call with streamed input, its result (some 4 KB), a text
// block with a citation and 200 text deltas, and 20 events of an unknown
// type — the opaque blocks and drop counts of issue 23 on the decode path.
func BenchmarkStreamServerTools(b *testing.B) {
	var sb strings.Builder
	results := strings.Repeat(`{"type":"web_search_result","title":"A result","url":"https://example.com/a","encrypted_content":"EqgfCioIARgBIiQ3YTAwMjY1Mi1mZjM5LTQ1NGUtODgxNC1kNjNjNTk1ZWI3Y2I","page_age":null},`, 20)
	sb.WriteString(sse(evStart, srvUse, srvIn1, srvIn2, `{"type":"content_block_stop","index":1}`,
		`{"type":"content_block_start","index":2,"content_block":{"type":"web_search_tool_result","tool_use_id":"srvtoolu_014hJH82Qum7Td6UV8gDXThB","content":[`+strings.TrimSuffix(results, ",")+`]}}`,
		`{"type":"content_block_stop","index":2}`, citeText, citeDelta))
	for i := range benchChunks {
		sb.WriteString(sse(`{"type":"content_block_delta","index":3,"delta":{"type":"text_delta","text":"abcd"}}`))
		if i%10 == 0 {
			sb.WriteString(sse(`{"type":"brand_new_event","index":3}`))
		}
	}
	sb.WriteString(sse(`{"type":"content_block_stop","index":3}`, evEndDelta, evStop))
	body := sb.String()
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = w.Write([]byte(body))
	}))
	b.Cleanup(ts.Close)
	runStreamBench(b, anthropic.New(anthropic.Config{APIKey: key, BaseURL: ts.URL}), func() {})
}

func runStreamBench(b *testing.B, p llm.Provider, prepare func()) {
	llmtest.BenchStream(b, p, userReq("go"), benchChunks, prepare)
}
