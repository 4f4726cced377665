package openai_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/reinhq/rein/llm"
	"github.com/reinhq/rein/llm/openai"
)

// Streams recorded from real vendor APIs that the adapters once failed on
// (SPEC PROV-2), rebuilt from the vendors' documented wire formats.

func newChat(url string) llm.Provider {
	return openai.NewChat(openai.Config{APIKey: key, BaseURL: url})
}

func newResponses(url string) llm.Provider {
	return openai.NewResponses(openai.Config{APIKey: key, BaseURL: url})
}

// TestPROV2ResponsesErrorEvent: an error event carries its details nested
// in "error", as OpenAI sends it, or at the top level, as OpenAI documents
// it. Either way it is classified by its code (else its type) with the
// vendor's message kept, and a used-up quota is never retried.
func TestPROV2ResponsesErrorEvent(t *testing.T) {
	nested := func(typ, code, msg string) string {
		return sse(ev("response.created", `{"type":"response.created","sequence_number":0,"response":{"id":"resp_1","status":"in_progress","output":[]}}`),
			ev("error", `{"type":"error","sequence_number":1,"error":{"type":"`+typ+`","code":`+code+`,"message":"`+msg+`","param":null}}`))
	}
	cases := []struct {
		name    string
		body    string
		kind    llm.ErrorKind
		message string
	}{
		{"nested insufficient_quota", nested("insufficient_quota", `"insufficient_quota"`,
			"You exceeded your current quota, please check your plan and billing details."), llm.KindQuota, "exceeded your current quota"},
		{"nested quota under another type", nested("invalid_request_error", `"insufficient_quota"`, "No credit left."), llm.KindQuota, "No credit left."},
		{"nested rate limit of type tokens", nested("tokens", `"rate_limit_exceeded"`,
			"Rate limit reached for gpt-4o in organization org-abc on tokens per min (TPM)"), llm.KindRateLimit, "Rate limit reached"},
		{"nested server error without a code", nested("server_error", "null",
			"The server had an error while processing your request."), llm.KindServer, "The server had an error"},
		{"nested context overflow", nested("invalid_request_error", `"context_length_exceeded"`,
			"Your input exceeds the context window of this model."), llm.KindContextOverflow, "context window"},
		{"nested invalid prompt", nested("invalid_request_error", `"invalid_prompt"`, "Invalid prompt: flagged."), llm.KindBadRequest, "Invalid prompt"},
		{"nested invalid request", nested("invalid_request", "null", "Unknown parameter: 'x'."), llm.KindBadRequest, "Unknown parameter"},
		{"top-level (documented) server error", sse(ev("error", `{"type":"error","code":"server_error","message":"Something went wrong","param":null,"sequence_number":1}`)),
			llm.KindServer, "Something went wrong"},
		{"top-level quota", sse(ev("error", `{"type":"error","code":"insufficient_quota","message":"Quota used up.","param":null,"sequence_number":1}`)),
			llm.KindQuota, "Quota used up."},
		{"error as a string", sse(ev("error", `{"type":"error","error":"upstream timed out"}`)), llm.KindServer, "upstream timed out"},
		{"error named only in the data", sse(`data: {"type":"error","error":{"type":"tokens","code":"rate_limit_exceeded","message":"slow down"}}`),
			llm.KindRateLimit, "slow down"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rs := newRaw(t, 200, "text/event-stream", c.body)
			_, _, err := run(newResponses(rs.URL), hi("gpt-5"))
			e, ok := llm.AsError(err)
			if !ok || e.Kind != c.kind || !strings.Contains(e.Message, c.message) {
				t.Fatalf("error = %v (kind %v), want kind %v with %q", err, llm.KindOf(err), c.kind, c.message)
			}
			if e.Status != 0 {
				t.Errorf("status %d; no HTTP error status was received", e.Status)
			}
		})
	}

	// Through the retry policy: a used-up quota is one request, at once.
	rs := newRaw(t, 200, "text/event-stream", cases[0].body)
	p := llm.Retrying(newResponses(rs.URL), llm.RetryPolicy{Initial: time.Millisecond, Max: time.Millisecond})
	if _, _, err := run(p, hi("gpt-5")); llm.KindOf(err) != llm.KindQuota || rs.requests() != 1 {
		t.Errorf("quota: error %v after %d requests; want a quota error after 1", err, rs.requests())
	}
}

// TestPROV2ChatStreamErrorCodes: an error chunk of Chat Completions is
// classified by its code, else its type, as the Responses error event is.
func TestPROV2ChatStreamErrorCodes(t *testing.T) {
	cases := []struct {
		name, chunk string
		kind        llm.ErrorKind
	}{
		{"quota", `{"error":{"message":"You exceeded your current quota","type":"insufficient_quota","code":"insufficient_quota"}}`, llm.KindQuota},
		{"server error by type", `{"error":{"message":"The server had an error","type":"server_error","code":null}}`, llm.KindServer},
		{"context overflow", `{"error":{"message":"This model's maximum context length is 8192 tokens.","type":"invalid_request_error","code":"context_length_exceeded"}}`, llm.KindContextOverflow},
		{"bad request by type", `{"error":{"message":"Invalid value for 'x'.","type":"invalid_request_error","code":null}}`, llm.KindBadRequest},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rs := newRaw(t, 200, "text/event-stream", sse(chunk(`{"content":"x"}`), "data: "+c.chunk))
			_, _, err := run(newChat(rs.URL), hi("m"))
			if e, ok := llm.AsError(err); !ok || e.Kind != c.kind || e.Message == "" {
				t.Fatalf("error = %v (kind %v), want kind %v with the vendor's message", err, llm.KindOf(err), c.kind)
			}
		})
	}
}

// TestPROV2ChatContentParts: Mistral's reasoning models stream
// delta.content as an array of typed parts, thinking parts included; text
// parts are text, thinking parts thinking, in their order. A plain string
// still works beside them, and so does a whole reply in that form.
func TestPROV2ChatContentParts(t *testing.T) {
	mistral := func(delta string) string {
		return `data: {"id":"5a1c","object":"chat.completion.chunk","created":1760000000,"model":"magistral-medium-2509","choices":[{"index":0,"delta":` +
			delta + `,"finish_reason":null}]}`
	}
	usageChunk := `data: {"id":"5a1c","object":"chat.completion.chunk","created":1760000000,"model":"magistral-medium-2509",` +
		`"choices":[{"index":0,"delta":{"content":""},"finish_reason":"stop"}],"usage":{"prompt_tokens":12,"total_tokens":30,"completion_tokens":18}}`
	runStreamCases(t, []streamCase{
		{
			name: "thinking parts, then text parts and a string",
			body: sse(mistral(`{"role":"assistant","content":[{"type":"thinking","thinking":[{"type":"text","text":"Okay, the user"}]}]}`),
				mistral(`{"content":[{"type":"thinking","thinking":[{"type":"text","text":" says hi."}],"closed":true}]}`),
				mistral(`{"content":[{"type":"text","text":"Hello"}]}`),
				mistral(`{"content":"! How can I help?"}`),
				mistral(`{"content":[{"type":"reference","reference_ids":[1]},{"type":"text","text":" \u2014 ok"}]}`),
				usageChunk, "data: [DONE]"),
			want: llm.Response{ID: "5a1c", StopReason: llm.StopEndTurn,
				Message: assistant(&llm.Thinking{Text: "Okay, the user says hi."}, &llm.Text{Text: "Hello! How can I help? — ok"}),
				Usage:   llm.Usage{InputTokens: 12, OutputTokens: 18}},
			wantDeltas: []llm.Delta{{Kind: llm.DeltaThinking, Text: "Okay, the user"}, {Kind: llm.DeltaThinking, Text: " says hi."},
				{Kind: llm.DeltaText, Text: "Hello"}, {Kind: llm.DeltaText, Text: "! How can I help?"}, {Kind: llm.DeltaText, Text: " — ok"}},
		},
		{
			name: "thinking and text parts in one delta, then a tool call",
			body: sse(mistral(`{"role":"assistant","content":[{"type":"thinking","thinking":[{"type":"text","text":"List it."}]},{"type":"text","text":"Listing."}]}`),
				mistral(`{"tool_calls":[{"id":"Xb1","function":{"name":"ls","arguments":"{\"path\":\".\"}"},"index":0}]}`),
				`data: {"id":"5a1c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":""},"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":5,"total_tokens":9,"completion_tokens":4}}`,
				"data: [DONE]"),
			want: llm.Response{ID: "5a1c", StopReason: llm.StopToolUse,
				Message: assistant(&llm.Thinking{Text: "List it."}, &llm.Text{Text: "Listing."},
					&llm.ToolUse{ID: "Xb1", Name: "ls", Input: json.RawMessage(`{"path":"."}`)}),
				Usage: llm.Usage{InputTokens: 5, OutputTokens: 4}},
			wantDeltas: []llm.Delta{{Kind: llm.DeltaThinking, Text: "List it."}, {Kind: llm.DeltaText, Text: "Listing."},
				{Kind: llm.DeltaToolStart, ToolUseID: "Xb1", ToolName: "ls"}, {Kind: llm.DeltaToolInput, ToolUseID: "Xb1", Text: `{"path":"."}`}},
		},
		{
			name:        "a whole reply with content parts",
			contentType: "application/json",
			body: `{"id":"w1","object":"chat.completion","model":"magistral-small-2509","choices":[{"index":0,"finish_reason":"stop","message":{"role":"assistant",` +
				`"content":[{"type":"thinking","thinking":[{"type":"text","text":"Hmm."}]},{"type":"text","text":"Yes."}]}}],"usage":{"prompt_tokens":3,"completion_tokens":2,"total_tokens":5}}`,
			want: llm.Response{ID: "w1", StopReason: llm.StopEndTurn,
				Message: assistant(&llm.Thinking{Text: "Hmm."}, &llm.Text{Text: "Yes."}), Usage: llm.Usage{InputTokens: 3, OutputTokens: 2}},
		},
		{
			name: "null content and escapes in a string",
			body: sse(chunk(`{"role":"assistant","content":null}`), chunk(`{"content":"a\"b\\n\u00e9"}`), finish("stop"), "data: [DONE]"),
			want: llm.Response{ID: "c1", StopReason: llm.StopEndTurn, Message: assistant(&llm.Text{Text: "a\"b\\né"})},
		},
	}, func(url string) llm.Provider {
		return openai.NewChat(openai.Config{APIKey: key, BaseURL: url, Name: "mistral"})
	}, "mistral", "m")
}

// TestPROV2KeepAlive: an event with empty data, which proxies send to keep
// a connection open, is skipped, wherever it comes.
func TestPROV2KeepAlive(t *testing.T) {
	alive := "data:\n\ndata: \n\n: comment\n\nevent: ping\ndata:\n\n"
	t.Run("chat", func(t *testing.T) {
		body := alive + sse(chunk(`{"role":"assistant","content":"Hi"}`)) + alive + sse(finish("stop"), "data: [DONE]") + alive
		rs := newRaw(t, 200, "text/event-stream", body)
		_, resp, err := run(newChat(rs.URL), hi("m"))
		if err != nil || resp.Message.TextOf() != "Hi" {
			t.Fatalf("reply %+v, error %v", resp, err)
		}
	})
	t.Run("responses", func(t *testing.T) {
		body := alive + sse(ev("response.output_text.delta", `{"type":"response.output_text.delta","output_index":0,"delta":"Hi"}`)) +
			alive + sse(ev("response.completed", completed))
		rs := newRaw(t, 200, "text/event-stream", body)
		_, resp, err := run(newResponses(rs.URL), hi("gpt-5"))
		if err != nil || resp.Message.TextOf() != "Hi" {
			t.Fatalf("reply %+v, error %v", resp, err)
		}
	})
}

// TestPROV2ByteOrderMark: a UTF-8 byte-order mark before the first event
// loses nothing; in a Chat stream that event held the first tool call's id
// and name.
func TestPROV2ByteOrderMark(t *testing.T) {
	const bom = "\xEF\xBB\xBF"
	cases := []struct {
		name        string
		api         func(string) llm.Provider
		contentType string
		body        string
		want        llm.Message
	}{
		{"chat", newChat, "text/event-stream", bom + sse(
			chunk(`{"role":"assistant","content":null,"tool_calls":[{"index":0,"id":"call_A1","type":"function","function":{"name":"read_file","arguments":""}}]}`),
			chunk(`{"tool_calls":[{"index":0,"function":{"arguments":"{\"path\":"}}]}`),
			chunk(`{"tool_calls":[{"index":0,"function":{"arguments":"\"a.go\"}"}}]}`),
			finish("tool_calls"), "data: [DONE]"),
			assistant(&llm.ToolUse{ID: "call_A1", Name: "read_file", Input: json.RawMessage(`{"path":"a.go"}`)})},
		{"chat, whole reply", newChat, "application/json", bom + `{"id":"c","choices":[{"index":0,"message":{"role":"assistant","content":"Hi"},"finish_reason":"stop"}]}`,
			assistant(&llm.Text{Text: "Hi"})},
		{"responses", newResponses, "text/event-stream", bom + sse(
			ev("response.output_item.added", `{"type":"response.output_item.added","output_index":0,"item":{"id":"fc_1","type":"function_call","call_id":"call_B2","name":"ls","arguments":""}}`),
			ev("response.function_call_arguments.delta", `{"type":"response.function_call_arguments.delta","output_index":0,"delta":"{}"}`),
			ev("response.completed", completed)),
			assistant(&llm.ToolUse{ID: "call_B2", Name: "ls", Input: json.RawMessage(`{}`)})},
		{"responses, whole reply", newResponses, "application/json", bom + `{"id":"r","status":"completed","output":[{"id":"m","type":"message","content":[{"type":"output_text","text":"Hi"}]}]}`,
			assistant(&llm.Text{Text: "Hi"})},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rs := newRaw(t, 200, c.contentType, c.body)
			ds, resp, err := run(c.api(rs.URL), hi("gpt-5"))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(c.want.Content, resp.Message.Content); diff != "" {
				t.Errorf("content (-want +got):\n%s", diff)
			}
			checkAnnounced(t, ds, resp)
		})
	}
}

// TestPROV2Usage: a vendor whose completion_tokens exclude reasoning (xAI:
// total = prompt + completion + reasoning) has its reasoning added to the
// output; OpenAI's counts, whose completion includes it, are kept. A reply
// without usage is estimated and marked so, never free.
func TestPROV2Usage(t *testing.T) {
	chatUsage := func(u string) string {
		return sse(chunk(`{"role":"assistant","content":"I am Grok."}`), finish("stop"),
			`data: {"id":"c1","object":"chat.completion.chunk","choices":[],"usage":`+u+`}`, "data: [DONE]")
	}
	respUsage := func(u string) string {
		return sse(ev("response.output_text.delta", `{"type":"response.output_text.delta","output_index":0,"delta":"I am Grok."}`),
			ev("response.completed", `{"type":"response.completed","response":{"id":"r1","status":"completed","output":[],"usage":`+u+`}}`))
	}
	cases := []struct {
		name string
		api  func(string) llm.Provider
		body string
		want llm.Usage
	}{
		{"chat, xAI reasoning outside completion", newChat, chatUsage(`{"prompt_tokens":10,"completion_tokens":50,"total_tokens":380,` +
			`"prompt_tokens_details":{"text_tokens":10,"audio_tokens":0,"image_tokens":0,"cached_tokens":4},` +
			`"completion_tokens_details":{"reasoning_tokens":320,"audio_tokens":0,"accepted_prediction_tokens":0,"rejected_prediction_tokens":0},"num_sources_used":0}`),
			llm.Usage{InputTokens: 6, CacheReadTokens: 4, OutputTokens: 370, ReasoningTokens: 320}},
		{"chat, OpenAI reasoning inside completion", newChat, chatUsage(`{"prompt_tokens":10,"completion_tokens":370,"total_tokens":380,` +
			`"completion_tokens_details":{"reasoning_tokens":320}}`),
			llm.Usage{InputTokens: 10, OutputTokens: 370, ReasoningTokens: 320}},
		{"chat, no total", newChat, chatUsage(`{"prompt_tokens":10,"completion_tokens":50,"completion_tokens_details":{"reasoning_tokens":20}}`),
			llm.Usage{InputTokens: 10, OutputTokens: 50, ReasoningTokens: 20}},
		{"responses, reasoning outside output", newResponses, respUsage(`{"input_tokens":10,"input_tokens_details":{"cached_tokens":0},` +
			`"output_tokens":50,"output_tokens_details":{"reasoning_tokens":320},"total_tokens":380}`),
			llm.Usage{InputTokens: 10, OutputTokens: 370, ReasoningTokens: 320}},
		{"responses, reasoning inside output", newResponses, respUsage(`{"input_tokens":10,"output_tokens":370,"output_tokens_details":{"reasoning_tokens":320},"total_tokens":380}`),
			llm.Usage{InputTokens: 10, OutputTokens: 370, ReasoningTokens: 320}},
		{"chat, zero counts", newChat, chatUsage(`{"prompt_tokens":0,"completion_tokens":0,"total_tokens":0}`), llm.Usage{Estimated: true}},
		{"chat, no usage chunk", newChat, sse(chunk(`{"role":"assistant","content":"I am Grok."}`), finish("stop"), "data: [DONE]"), llm.Usage{Estimated: true}},
		{"responses, no usage", newResponses, respUsage(`null`), llm.Usage{Estimated: true}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rs := newRaw(t, 200, "text/event-stream", c.body)
			req := hi("grok-4")
			req.System = strings.Repeat("You are a careful assistant. ", 20)
			_, resp, err := run(c.api(rs.URL), req)
			if err != nil {
				t.Fatal(err)
			}
			if !c.want.Estimated {
				if resp.Usage != c.want {
					t.Errorf("usage %+v, want %+v", resp.Usage, c.want)
				}
				return
			}
			checkEstimated(t, resp.Usage)
			if resp.Usage.InputTokens < 100 {
				t.Errorf("input estimate %d: the system prompt alone is over 100 tokens", resp.Usage.InputTokens)
			}
		})
	}
}

// TestPROV2ResponsesUnknownItems: an output item of a kind rein does not
// read never fails the stream, whatever its fields hold (other kinds use
// the names rein reads with other types); it is skipped.
func TestPROV2ResponsesUnknownItems(t *testing.T) {
	odd := `{"id":"x_1","type":"mcp_list_tools","server_label":"s","tools":[{"name":"t","input_schema":{}}],` +
		`"content":"a string","summary":{"not":"a list"},"arguments":{"an":"object"},"name":7,"call_id":["x"]}`
	computer := `{"id":"cu_1","type":"computer_call","call_id":"c","action":{"type":"click","x":1,"y":2},"pending_safety_checks":[],"status":"completed"}`
	body := sse(
		ev("response.created", `{"type":"response.created","response":{"id":"resp_u","status":"in_progress","output":[]}}`),
		ev("response.output_item.added", `{"type":"response.output_item.added","output_index":0,"item":`+odd+`}`),
		ev("response.output_item.done", `{"type":"response.output_item.done","output_index":0,"item":`+odd+`}`),
		ev("response.output_item.added", `{"type":"response.output_item.added","output_index":1,"item":`+computer+`}`),
		ev("response.output_item.done", `{"type":"response.output_item.done","output_index":1,"item":`+computer+`}`),
		ev("response.output_item.added", `{"type":"response.output_item.added","output_index":2,"item":{"type":["not","a string"]}}`),
		ev("response.output_item.added", `{"type":"response.output_item.added","output_index":3,"item":"not an object"}`),
		ev("response.output_item.added", `{"type":"response.output_item.added","output_index":4,"item":{"id":"m","type":"message","content":[]}}`),
		ev("response.output_text.delta", `{"type":"response.output_text.delta","output_index":4,"delta":"Done."}`),
		ev("response.completed", `{"type":"response.completed","response":{"id":"resp_u","status":"completed","output":[`+odd+`,`+computer+`],`+
			`"usage":{"input_tokens":5,"output_tokens":2}}}`))
	rs := newRaw(t, 200, "text/event-stream", body)
	_, resp, err := run(newResponses(rs.URL), hi("gpt-5"))
	if err != nil {
		t.Fatal(err)
	}
	want := llm.Response{ID: "resp_u", StopReason: llm.StopEndTurn, Usage: llm.Usage{InputTokens: 5, OutputTokens: 2},
		Message: llm.Message{Role: llm.RoleAssistant, Provider: "openai", Model: "gpt-5", Content: []llm.Block{&llm.Text{Text: "Done."}}}}
	if diff := cmp.Diff(&want, resp); diff != "" {
		t.Errorf("response (-want +got):\n%s", diff)
	}

	// Only in the final response, too.
	rs = newRaw(t, 200, "text/event-stream", sse(ev("response.completed", `{"type":"response.completed","response":{"id":"r","status":"completed","output":[`+
		odd+`,{"id":"m","type":"message","content":[{"type":"output_text","text":"Hi"}]}],"usage":{"input_tokens":5,"output_tokens":2}}}`)))
	_, resp, err = run(newResponses(rs.URL), hi("gpt-5"))
	if err != nil || resp.Message.TextOf() != "Hi" {
		t.Fatalf("reply %+v, error %v", resp, err)
	}

	// A kind rein reads that does not decode is still malformed.
	rs = newRaw(t, 200, "text/event-stream", sse(ev("response.output_item.added",
		`{"type":"response.output_item.added","output_index":0,"item":{"type":"function_call","name":7}}`)))
	if _, _, err := run(newResponses(rs.URL), hi("gpt-5")); llm.KindOf(err) != llm.KindMalformed {
		t.Errorf("bad function_call item: error %v, want malformed", err)
	}
}

// TestPROV2OutputIndex: an output_index out of range is malformed data,
// never a huge allocation.
func TestPROV2OutputIndex(t *testing.T) {
	for _, idx := range []string{"-1", "99999999999"} {
		rs := newRaw(t, 200, "text/event-stream", sse(ev("response.output_text.delta",
			`{"type":"response.output_text.delta","output_index":`+idx+`,"delta":"x"}`), ev("response.completed", completed)))
		if _, _, err := run(newResponses(rs.URL), hi("gpt-5")); llm.KindOf(err) != llm.KindMalformed {
			t.Errorf("index %s: error %v, want malformed", idx, err)
		}
	}
}
