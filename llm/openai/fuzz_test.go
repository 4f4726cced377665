package openai_test

import (
	"testing"

	"github.com/reinhq/rein/llm"
	"github.com/reinhq/rein/llm/llmtest"
	"github.com/reinhq/rein/llm/openai"
)

// fuzzSeeds are replies of both APIs, the shapes of SPEC PROV-2 among them:
// a byte-order mark, keep-alive events, nested error events, Mistral's
// content parts, xAI usage, unknown output items.
func fuzzSeeds() []string {
	seeds := []string{
		"\xEF\xBB\xBF" + sse(chunk(`{"role":"assistant","tool_calls":[{"index":0,"id":"a","type":"function","function":{"name":"ls","arguments":"{}"}}]}`), finish("tool_calls"), "data: [DONE]"),
		"data:\n\ndata: \n\n" + sse(chunk(`{"content":"x"}`), finish("stop"), "data: [DONE]"),
		sse(chunk(`{"content":[{"type":"thinking","thinking":[{"type":"text","text":"t"}]},{"type":"text","text":"x"}]}`), finish("stop"),
			`data: {"choices":[],"usage":{"prompt_tokens":1,"completion_tokens":2,"total_tokens":13,"completion_tokens_details":{"reasoning_tokens":10}}}`, "data: [DONE]"),
		sse(ev("error", `{"type":"error","error":{"type":"insufficient_quota","code":"insufficient_quota","message":"m"}}`)),
		sse(ev("response.output_item.added", `{"type":"response.output_item.added","output_index":0,"item":{"type":"mcp_list_tools","content":"s","name":7}}`),
			ev("response.completed", completed)),
		"\xEF\xBB\xBF" + sse(ev("response.output_item.added", `{"type":"response.output_item.added","output_index":0,"item":{"id":"f","type":"function_call","call_id":"c","name":"ls","arguments":"{}"}}`),
			ev("response.completed", completed)),
	}
	// Issue 23: server tools' items kept opaque, unknown items and events,
	// a spliced stream, an incomplete reply with a cut call.
	seeds = append(seeds, webSearchStream(completed),
		sse(ev("response.created", `{"type":"response.created","response":{"id":"a"}}`), ev("response.output_text.delta", msgText),
			ev("response.created", `{"type":"response.created","response":{"id":"b"}}`), ev("response.completed", completed)),
		sse(ev("response.output_item.done", `{"type":"response.output_item.done","output_index":0,"item":{"type":"x_call","a":"<&>"}}`),
			ev("response.future.delta", `{"type":"response.future.delta"}`), ev("response.output_text.delta", msgText), ev("response.completed", completed)),
		sse(ev("response.output_item.added", `{"type":"response.output_item.added","output_index":0,"item":{"id":"f","type":"function_call","call_id":"c","name":"ls","arguments":"{\"a"}}`),
			ev("response.incomplete", `{"type":"response.incomplete","response":{"id":"r","status":"incomplete","incomplete_details":{"reason":"max_tool_calls"}}}`)))
	for _, c := range append(chatStreamCases(), responsesStreamCases()...) {
		seeds = append(seeds, c.body)
	}
	return seeds
}

// FuzzStream feeds arbitrary replies to both APIs, streamed and whole: the
// adapters never panic and always keep the stream's contract (SPEC PROV-1,
// PROV-2).
func FuzzStream(f *testing.F) {
	for _, s := range fuzzSeeds() {
		f.Add([]byte(s), false)
	}
	f.Add([]byte(`{"id":"c","choices":[{"index":0,"message":{"content":[{"type":"text","text":"x"}]},"finish_reason":"stop"}]}`), true)
	f.Fuzz(func(t *testing.T, body []byte, whole bool) {
		ct := "text/event-stream"
		if whole {
			ct = "application/json"
		}
		cfg := openai.Config{APIKey: key, BaseURL: "http://vendor.invalid/v1", HTTPClient: llmtest.StaticClient(ct, body)}
		req := &llm.Request{Model: "m", Messages: []llm.Message{llm.UserText("hi")}}
		llmtest.CheckStream(t, openai.NewChat(cfg), req)
		llmtest.CheckStream(t, openai.NewResponses(cfg), req)
	})
}
