package openai_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/reinhq/rein/llm"
	"github.com/reinhq/rein/llm/llmtest/mockserver"
	"github.com/reinhq/rein/llm/openai"
)

// ev renders one named Responses event.
func ev(name, data string) string { return "event: " + name + "\ndata: " + data }

const completed = `{"type":"response.completed","response":{"id":"resp_1","status":"completed","output":[],` +
	`"usage":{"input_tokens":50,"input_tokens_details":{"cached_tokens":40},"output_tokens":9,"output_tokens_details":{"reasoning_tokens":7}}}}`

// TestResponsesStreams checks how Responses events become deltas and the
// final message (PROV-1, PROV-5).
func TestResponsesStreams(t *testing.T) {
	runStreamCases(t, responsesStreamCases(), func(url string) llm.Provider {
		return openai.NewResponses(openai.Config{APIKey: key, BaseURL: url})
	}, "openai", "gpt-5")
}

func responsesStreamCases() []streamCase {
	usage := llm.Usage{InputTokens: 10, CacheReadTokens: 40, OutputTokens: 9, ReasoningTokens: 7}
	return []streamCase{
		{
			name: "reasoning with two summary parts",
			body: sse(
				ev("response.created", `{"type":"response.created","response":{"id":"resp_1","status":"in_progress","output":[]}}`),
				ev("response.output_item.added", `{"type":"response.output_item.added","output_index":0,"item":{"id":"rs_1","type":"reasoning","summary":[]}}`),
				ev("response.reasoning_summary_text.delta", `{"type":"response.reasoning_summary_text.delta","item_id":"rs_1","output_index":0,"summary_index":0,"delta":"**Plan**"}`),
				ev("response.reasoning_summary_text.delta", `{"type":"response.reasoning_summary_text.delta","item_id":"rs_1","output_index":0,"summary_index":1,"delta":"**Check**"}`),
				ev("response.reasoning_summary.delta", `{"type":"response.reasoning_summary.delta","delta":{"some":"object"}}`),
				ev("response.output_item.done", `{"type":"response.output_item.done","output_index":0,"item":{"id":"rs_1","type":"reasoning","encrypted_content":"gAAA==","summary":[{"type":"summary_text","text":"**Plan**"},{"type":"summary_text","text":"**Check**"}]}}`),
				ev("response.output_item.added", `{"type":"response.output_item.added","output_index":1,"item":{"id":"msg_1","type":"message","role":"assistant","content":[]}}`),
				ev("response.output_text.delta", `{"type":"response.output_text.delta","item_id":"msg_1","output_index":1,"content_index":0,"delta":"Hi"}`),
				ev("response.completed", completed)),
			want: llm.Response{ID: "resp_1", StopReason: llm.StopEndTurn, Usage: usage, Message: assistant(
				&llm.Thinking{ID: "rs_1", Text: "**Plan**\n\n**Check**", Signature: "gAAA=="}, &llm.Text{Text: "Hi"})},
			wantDeltas: []llm.Delta{{Kind: llm.DeltaThinking, Text: "**Plan**"}, {Kind: llm.DeltaThinking, Text: "\n\n**Check**"},
				{Kind: llm.DeltaText, Text: "Hi"}},
		},
		{
			name: "events named only in their data, items only in the final response",
			body: sse(`data: {"type":"response.created","response":{"id":"resp_2"}}`,
				`data: {"type":"response.completed","response":{"id":"resp_2","status":"completed","output":[`+
					`{"id":"rs_9","type":"reasoning","encrypted_content":"E","summary":[]},`+
					`{"id":"ws_1","type":"web_search_call","status":"completed"},`+
					`{"id":"msg_9","type":"message","role":"assistant","content":[{"type":"output_text","text":"Found it.","annotations":[]}]},`+
					`{"id":"fc_9","type":"function_call","call_id":"call_9","name":"open","arguments":"{\"u\":1}"}]}}`),
			want: llm.Response{ID: "resp_2", StopReason: llm.StopToolUse, Message: assistant(
				&llm.Thinking{ID: "rs_9", Signature: "E"},
				&llm.Opaque{Provider: "openai", Type: "web_search_call", Raw: json.RawMessage(`{"id":"ws_1","type":"web_search_call","status":"completed"}`)},
				&llm.Text{Text: "Found it."},
				&llm.ToolUse{ID: "call_9", Name: "open", Input: json.RawMessage(`{"u":1}`)})},
			wantDeltas: []llm.Delta{{Kind: llm.DeltaText, Text: "Found it."},
				{Kind: llm.DeltaToolStart, ToolUseID: "call_9", ToolName: "open"}, {Kind: llm.DeltaToolInput, ToolUseID: "call_9", Text: `{"u":1}`}},
		},
		{
			name: "refusal",
			body: sse(ev("response.output_item.added", `{"type":"response.output_item.added","output_index":0,"item":{"id":"msg_1","type":"message","content":[]}}`),
				ev("response.refusal.delta", `{"type":"response.refusal.delta","output_index":0,"delta":"I can't."}`),
				ev("response.completed", completed)),
			want: llm.Response{ID: "resp_1", StopReason: llm.StopRefusal, Usage: usage, Message: assistant(&llm.Text{Text: "I can't."})},
		},
		{
			name: "incomplete for another reason",
			body: sse(ev("response.output_text.delta", `{"type":"response.output_text.delta","output_index":0,"delta":"par"}`),
				ev("response.incomplete", `{"type":"response.incomplete","response":{"id":"resp_3","status":"incomplete","incomplete_details":{"reason":"max_tool_calls"}}}`)),
			want: llm.Response{ID: "resp_3", StopReason: llm.StopUnknownOther, Message: assistant(&llm.Text{Text: "par"})},
		},
		{
			name:        "a server that ignores stream",
			contentType: "application/json",
			body: `{"id":"resp_4","object":"response","status":"completed","output":[{"id":"msg_4","type":"message","role":"assistant",` +
				`"content":[{"type":"output_text","text":"Plain.","annotations":[]}]}],"usage":{"input_tokens":3,"output_tokens":1}}`,
			want: llm.Response{ID: "resp_4", StopReason: llm.StopEndTurn, Usage: llm.Usage{InputTokens: 3, OutputTokens: 1},
				Message: assistant(&llm.Text{Text: "Plain."})},
		},
	}
}

// TestResponsesStreamFailures checks PROV-7 for failures reported inside a
// 200 stream.
func TestResponsesStreamFailures(t *testing.T) {
	cases := []struct {
		name    string
		body    string
		kind    llm.ErrorKind
		message string
	}{
		{"error event", sse(ev("error", `{"type":"error","code":"rate_limit_exceeded","message":"Rate limit reached for gpt-5","param":null}`)),
			llm.KindRateLimit, "Rate limit reached"},
		{"response.failed", sse(ev("response.failed", `{"type":"response.failed","response":{"id":"r","status":"failed","error":{"code":"server_error","message":"The server had an error"}}}`)),
			llm.KindServer, "The server had an error"},
		{"context overflow while streaming", sse(ev("response.failed", `{"type":"response.failed","response":{"status":"failed","error":{"code":"context_length_exceeded","message":"Your input exceeds the context window of this model."}}}`)),
			llm.KindContextOverflow, "context window"},
		{"no final event", sse(ev("response.output_text.delta", `{"type":"response.output_text.delta","output_index":0,"delta":"x"}`)),
			llm.KindStreamCut, "response.completed"},
		{"final event without its response", sse(ev("response.completed", `{"type":"response.completed"}`)), llm.KindMalformed, "without a response"},
		{"unknown event that is not JSON", sse(ev("response.future", `{oops`)), llm.KindMalformed, "malformed"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rs := newRaw(t, 200, "text/event-stream", c.body)
			_, _, err := run(openai.NewResponses(openai.Config{APIKey: key, BaseURL: rs.URL}), hi("gpt-5"))
			e, ok := llm.AsError(err)
			if !ok || e.Kind != c.kind || !strings.Contains(e.Message, c.message) {
				t.Fatalf("error = %v, want kind %v with %q", err, c.kind, c.message)
			}
		})
	}
}

// TestResponsesReplay checks PROV-5 on the wire: a reasoning item goes back
// with its id, summary and encrypted content; one that cannot be replayed
// statelessly (no id or no encrypted content) is left out.
func TestResponsesReplay(t *testing.T) {
	s := newMock(t)
	s.Enqueue(mockserver.Turn{Text: "ok"})
	asst := llm.Message{Role: llm.RoleAssistant, Provider: "openai", Model: "gpt-5", Content: []llm.Block{
		&llm.Thinking{ID: "rs_a", Text: "", Signature: "ENC_A"},
		&llm.Thinking{ID: "rs_b", Text: "no signature"},
		&llm.Thinking{Text: "no id", Signature: "ENC_C"},
		&llm.Text{Text: "answer"},
	}}
	req := hi("gpt-5")
	req.Messages = append(req.Messages, asst, llm.UserText("again"))
	if _, _, err := run(openai.NewResponses(openai.Config{APIKey: key, BaseURL: s.URL + "/v1"}), req); err != nil {
		t.Fatal(err)
	}
	body := string(s.Requests()[0].Body)
	if !strings.Contains(body, `{"id":"rs_a","summary":[],"encrypted_content":"ENC_A","type":"reasoning"}`) {
		t.Errorf("reasoning item not replayed as expected:\n%s", body)
	}
	for _, dropped := range []string{"rs_b", "ENC_C"} {
		if strings.Contains(body, dropped) {
			t.Errorf("%s sent although it cannot be replayed:\n%s", dropped, body)
		}
	}
}
