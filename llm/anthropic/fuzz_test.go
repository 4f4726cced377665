package anthropic_test

import (
	"testing"

	"github.com/reinhq/rein/llm/anthropic"
	"github.com/reinhq/rein/llm/llmtest"
)

// FuzzStream feeds arbitrary replies, streamed and whole, to the adapter:
// it never panics and always keeps the stream's contract (SPEC PROV-1,
// PROV-2). The seeds hold the shapes of PROV-2: content in message_start, a
// tool input whole in its block's start, a byte-order mark, keep-alives;
// and those of issue 23: server tools' opaque blocks, unknown events, a
// spliced stream.
func FuzzStream(f *testing.F) {
	for _, c := range streamCases() {
		f.Add([]byte(c.body), false)
	}
	f.Add([]byte("\xEF\xBB\xBF"+sse(evStart, evEndDelta, evStop)), false)
	f.Add([]byte("data:\n\nevent: ping\ndata:\n\n"+sse(evStart, evEndDelta, evStop)), false)
	f.Add([]byte(sse(`{"type":"message_start","message":{"id":"m","content":[{"type":"tool_use","id":"t","name":"q","input":{"a":1},"caller":{"type":"code_execution_20250825","tool_id":"s"}}],"stop_reason":"tool_use","usage":{"input_tokens":1}}}`, evStop)), false)
	f.Add([]byte(sse(evStart, `{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"t","name":"q","input":{"a":1}}}`,
		`{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{}"}}`, evStop)), false)
	f.Add([]byte(`{"id":"m","content":[{"type":"tool_use","id":"t","name":"q","input":{"a":1}}],"stop_reason":"tool_use","usage":{"input_tokens":1}}`), true)
	// Issue 23: server tools' blocks kept opaque, their input streamed;
	// unknown events and deltas; a spliced stream; a whole reply with them.
	f.Add([]byte(sse(events(evStart, srvUse, srvIn1, srvIn2, stops("1"), srvRes, stops("2"), citeText, citeDelta, textIn, stops("3"), evEndDelta, evStop)...)), false)
	f.Add([]byte(sse(evStart, `{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":"a"}}`,
		evStart, `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":"b"}}`, evEndDelta, evStop)), false)
	f.Add([]byte(sse(evStart, `{"type":"content_block_start","index":0,"content_block":{"type":"x_future","a":"<&>"}}`,
		`{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\"q\":1}"}}`, `{"type":"future_event"}`, evStop)), false)
	f.Add([]byte(`{"id":"m","content":[{"type":"server_tool_use","id":"s","name":"web_search","input":{"query":"q"}},{"type":"web_search_tool_result","tool_use_id":"s","content":[]},{"type":"text","text":"t"}],"stop_reason":"end_turn"}`), true)
	f.Fuzz(func(t *testing.T, body []byte, whole bool) {
		ct := "text/event-stream"
		if whole {
			ct = "application/json"
		}
		p := anthropic.New(anthropic.Config{APIKey: key, BaseURL: "http://vendor.invalid", HTTPClient: llmtest.StaticClient(ct, body)})
		llmtest.CheckStream(t, p, userReq("hi"))
	})
}
