package anthropic_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/reinhq/rein/llm"
	"github.com/reinhq/rein/llm/anthropic"
)

// Streams recorded from the Messages API that the adapter once failed on
// (SPEC PROV-2), rebuilt from the API's documented events.

// serve answers every request with body, as contentType.
func serve(t *testing.T, contentType, body string) *anthropic.Provider {
	t.Helper()
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", contentType)
		_, _ = io.WriteString(w, body)
	}))
	t.Cleanup(ts.Close)
	return anthropic.New(anthropic.Config{APIKey: key, BaseURL: ts.URL})
}

// streamed returns the deltas before DeltaDone, and the response.
func streamed(t *testing.T, p llm.Provider) ([]llm.Delta, *llm.Response) {
	t.Helper()
	ds, err := drain(p, userReq("hi"))
	if err != nil {
		t.Fatal(err)
	}
	last := ds[len(ds)-1]
	if last.Kind != llm.DeltaDone {
		t.Fatalf("stream ended with %v", last.Kind)
	}
	return ds[:len(ds)-1], last.Response
}

func reply(id string, stop llm.StopReason, u llm.Usage, blocks ...llm.Block) *llm.Response {
	return &llm.Response{ID: id, StopReason: stop, Usage: u, Message: llm.Message{
		Role: llm.RoleAssistant, Provider: "anthropic", Model: model, Content: blocks}}
}

// TestPROV2ContentInMessageStart: with programmatic tool calling, the reply
// to a tool result can come whole in message_start — its content holding the
// code execution's next tool call (with a caller), stop_reason tool_use — and
// no content block events after it. The call is announced, its input
// streamed as one delta, and it ends up in the final message.
func TestPROV2ContentInMessageStart(t *testing.T) {
	start := `{"type":"message_start","message":{"id":"msg_02","type":"message","role":"assistant","model":"claude-sonnet-4-5-20250929",` +
		`"content":[{"type":"tool_use","id":"toolu_02","name":"query_database","input":{"sql":"SELECT region, SUM(revenue) FROM sales GROUP BY region"},` +
		`"caller":{"type":"code_execution_20250825","tool_id":"srvtoolu_01"}}],` +
		`"stop_reason":"tool_use","stop_sequence":null,"usage":{"input_tokens":1520,"cache_read_input_tokens":0,"output_tokens":0},` +
		`"container":{"id":"container_011","expires_at":"2025-12-17T10:00:00Z"}}}`
	input := json.RawMessage(`{"sql":"SELECT region, SUM(revenue) FROM sales GROUP BY region"}`)
	want := reply("msg_02", llm.StopToolUse, llm.Usage{InputTokens: 1520},
		&llm.ToolUse{ID: "toolu_02", Name: "query_database", Input: input})
	wantDs := []llm.Delta{{Kind: llm.DeltaToolStart, ToolUseID: "toolu_02", ToolName: "query_database"},
		{Kind: llm.DeltaToolInput, ToolUseID: "toolu_02", Text: string(input)}}
	for _, c := range []struct{ name, body string }{
		{"then message_stop", sse(start, evStop)},
		{"then a message_delta without a stop reason", sse(start, `{"type":"message_delta","delta":{"stop_sequence":null},"usage":{"output_tokens":0}}`, evStop)},
		{"then a message_delta with it", sse(start, `{"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":0}}`, evStop)},
	} {
		t.Run(c.name, func(t *testing.T) {
			ds, resp := streamed(t, serve(t, "text/event-stream", c.body))
			if diff := cmp.Diff(want, resp); diff != "" {
				t.Errorf("response (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(wantDs, ds); diff != "" {
				t.Errorf("deltas (-want +got):\n%s", diff)
			}
		})
	}

	// Blocks in message_start, then more by the usual events.
	body := sse(strings.Replace(start, `"stop_reason":"tool_use"`, `"stop_reason":null`, 1),
		`{"type":"content_block_start","index":1,"content_block":{"type":"text","text":""}}`,
		`{"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"Querying."}}`,
		`{"type":"content_block_stop","index":1}`,
		`{"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":5}}`, evStop)
	_, resp := streamed(t, serve(t, "text/event-stream", body))
	if diff := cmp.Diff(reply("msg_02", llm.StopToolUse, llm.Usage{InputTokens: 1520, OutputTokens: 5},
		&llm.ToolUse{ID: "toolu_02", Name: "query_database", Input: input}, &llm.Text{Text: "Querying."}), resp); diff != "" {
		t.Errorf("response (-want +got):\n%s", diff)
	}
}

// TestPROV2WholeToolInput: a tool input given whole in content_block_start
// (no input_json_delta after it) is streamed as one delta when the block
// stops, and is the final call's input; input_json_delta events, when they
// come, replace it.
func TestPROV2WholeToolInput(t *testing.T) {
	blockStart := `{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"toolu_1","name":"bash","input":{"command":"ls -la"}}}`
	cases := []struct {
		name   string
		events []string
		input  string
	}{
		{"no deltas", []string{blockStart, `{"type":"content_block_stop","index":0}`}, `{"command":"ls -la"}`},
		{"no deltas and no block stop", []string{blockStart}, `{"command":"ls -la"}`},
		{"deltas replace it", []string{blockStart,
			`{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\"command\":"}}`,
			`{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"\"pwd\"}"}}`,
			`{"type":"content_block_stop","index":0}`}, `{"command":"pwd"}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			events := append([]string{evStart}, c.events...)
			events = append(events, `{"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":9}}`, evStop)
			ds, resp := streamed(t, serve(t, "text/event-stream", sse(events...)))
			want := reply("msg_1", llm.StopToolUse, llm.Usage{InputTokens: 11, CacheReadTokens: 5, CacheWriteTokens: 3, OutputTokens: 9},
				&llm.ToolUse{ID: "toolu_1", Name: "bash", Input: json.RawMessage(c.input)})
			if diff := cmp.Diff(want, resp); diff != "" {
				t.Errorf("response (-want +got):\n%s", diff)
			}
			var streamedInput strings.Builder
			for i, d := range ds {
				switch {
				case i == 0 && (d.Kind != llm.DeltaToolStart || d.ToolUseID != "toolu_1"):
					t.Errorf("first delta %+v, want the call's start", d)
				case d.Kind == llm.DeltaToolInput:
					streamedInput.WriteString(d.Text)
				}
			}
			if streamedInput.String() != c.input {
				t.Errorf("streamed input %q, want %q", streamedInput.String(), c.input)
			}
		})
	}
}

// TestPROV2Framing: a byte-order mark before the first event and keep-alive
// events with empty data lose nothing; a whole JSON reply may start with a
// byte-order mark too.
func TestPROV2Framing(t *testing.T) {
	const bom = "\xEF\xBB\xBF"
	alive := "data:\n\ndata: \n\nevent: ping\ndata:\n\n"
	events := []string{evStart,
		`{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`,
		`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hi"}}`,
		`{"type":"content_block_stop","index":0}`, evEndDelta, evStop}
	var kept strings.Builder
	for _, e := range events {
		kept.WriteString(alive + sse(e))
	}
	want := reply("msg_1", llm.StopEndTurn, llm.Usage{InputTokens: 11, CacheReadTokens: 5, CacheWriteTokens: 3, OutputTokens: 9}, &llm.Text{Text: "Hi"})
	for _, c := range []struct{ name, contentType, body string }{
		{"byte-order mark", "text/event-stream", bom + sse(events...)},
		{"keep-alive events", "text/event-stream", kept.String()},
		{"byte-order mark before a JSON reply", "application/json", bom + `{"id":"msg_1","type":"message","role":"assistant","content":[{"type":"text","text":"Hi"}],` +
			`"stop_reason":"end_turn","usage":{"input_tokens":11,"cache_read_input_tokens":5,"cache_creation_input_tokens":3,"output_tokens":9}}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, resp := streamed(t, serve(t, c.contentType, c.body))
			if diff := cmp.Diff(want, resp); diff != "" {
				t.Errorf("response (-want +got):\n%s", diff)
			}
		})
	}
}

// TestPROV2UsageMissing: a reply whose counts a proxy dropped is estimated,
// and marked so, rather than reported free.
func TestPROV2UsageMissing(t *testing.T) {
	body := sse(`{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","content":[]}}`,
		`{"type":"content_block_start","index":0,"content_block":{"type":"text","text":"A fairly long answer to estimate."}}`,
		`{"type":"content_block_stop","index":0}`, `{"type":"message_delta","delta":{"stop_reason":"end_turn"}}`, evStop)
	_, resp := streamed(t, serve(t, "text/event-stream", body))
	if u := resp.Usage; !u.Estimated || u.InputTokens <= 0 || u.OutputTokens <= 0 {
		t.Errorf("usage %+v, want an estimate", u)
	}
	if diff := cmp.Diff(reply("msg_1", llm.StopEndTurn, resp.Usage, &llm.Text{Text: "A fairly long answer to estimate."}), resp,
		cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("response (-want +got):\n%s", diff)
	}
}

// TestPROV2BlockIndex: a content block index out of range is malformed
// data, never a panic or a huge allocation.
func TestPROV2BlockIndex(t *testing.T) {
	for _, idx := range []string{"-1", "99999999999"} {
		body := sse(evStart, `{"type":"content_block_start","index":`+idx+`,"content_block":{"type":"text","text":"x"}}`, evStop)
		if _, err := drain(serve(t, "text/event-stream", body), userReq("hi")); llm.KindOf(err) != llm.KindMalformed {
			t.Errorf("index %s: error %v, want malformed", idx, err)
		}
	}
}
