package mockserver

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/reinhq/rein/llm"
	"github.com/reinhq/rein/llm/vendorhttp"
)

func TestAnthropicDecode(t *testing.T) {
	png := []byte("\x89PNG\r\n")
	cases := []struct {
		name    string
		body    string
		want    *llm.Request
		stream  bool
		wantErr string
	}{
		{
			name:   "string content and string system",
			body:   `{"model":"claude-x","max_tokens":10,"system":"be brief","stream":true,"messages":[{"role":"user","content":"hi"}]}`,
			stream: true,
			want: &llm.Request{Model: "claude-x", MaxTokens: 10, System: "be brief",
				Messages: []llm.Message{llm.UserText("hi")}},
		},
		{
			name: "every block kind",
			body: `{"model":"claude-x","max_tokens":4096,"thinking":{"type":"enabled","budget_tokens":2048},
				"system":[{"type":"text","text":"sys","cache_control":{"type":"ephemeral"}}],
				"tools":[{"name":"read","description":"Read.","input_schema":{"type":"object"}}],
				"stop_sequences":["END"],
				"messages":[
				{"role":"user","content":[{"type":"text","text":"look"},{"type":"image","source":{"type":"base64","media_type":"image/png","data":"iVBORw0K"}}]},
				{"role":"assistant","content":[{"type":"thinking","thinking":"hmm","signature":"sig1"},{"type":"redacted_thinking","data":"opaque"},
					{"type":"tool_use","id":"toolu_1","name":"read","input":{"path":"a"}}]},
				{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","is_error":true,"content":[{"type":"text","text":"boom"},{"type":"image","source":{"type":"url","url":"https://x/y.png"}}]},
					{"type":"tool_result","tool_use_id":"toolu_2","content":"plain"}]}]}`,
			want: &llm.Request{Model: "claude-x", MaxTokens: 4096, System: "sys", StopSequences: []string{"END"},
				Thinking: &llm.ThinkingConfig{BudgetTokens: 2048},
				Tools:    []llm.ToolSpec{{Name: "read", Description: "Read.", InputSchema: json.RawMessage(`{"type":"object"}`)}},
				Messages: []llm.Message{
					{Role: llm.RoleUser, Content: []llm.Block{&llm.Text{Text: "look"}, &llm.Image{MediaType: "image/png", Data: png}}},
					{Role: llm.RoleAssistant, Content: []llm.Block{&llm.Thinking{Text: "hmm", Signature: "sig1"},
						&llm.Thinking{Redacted: true, Signature: "opaque"},
						&llm.ToolUse{ID: "toolu_1", Name: "read", Input: json.RawMessage(`{"path":"a"}`)}}},
					{Role: llm.RoleUser, Content: []llm.Block{
						&llm.ToolResult{ToolUseID: "toolu_1", IsError: true, Content: []llm.Block{&llm.Text{Text: "boom"}, &llm.Image{URL: "https://x/y.png"}}},
						&llm.ToolResult{ToolUseID: "toolu_2", Content: []llm.Block{&llm.Text{Text: "plain"}}}}},
				}},
		},
		{name: "no max_tokens", body: `{"model":"m","messages":[]}`, wantErr: "max_tokens"},
		{name: "unsigned thinking", body: `{"model":"m","max_tokens":5,"messages":[{"role":"assistant","content":[{"type":"thinking","thinking":"x"}]}]}`, wantErr: "signature"},
		{name: "small budget", body: `{"model":"m","max_tokens":5000,"thinking":{"type":"enabled","budget_tokens":100},"messages":[]}`, wantErr: "1024"},
		{name: "max_tokens under budget", body: `{"model":"m","max_tokens":2000,"thinking":{"type":"enabled","budget_tokens":2000},"messages":[]}`, wantErr: "max_tokens"},
		{name: "unknown block", body: `{"model":"m","max_tokens":5,"messages":[{"role":"user","content":[{"type":"video"}]}]}`, wantErr: "video"},
		{name: "empty text", body: `{"model":"m","max_tokens":5,"messages":[{"role":"user","content":[{"type":"text","text":""}]}]}`, wantErr: "non-empty"},
		{name: "system role", body: `{"model":"m","max_tokens":5,"messages":[{"role":"system","content":"x"}]}`, wantErr: "role"},
		{
			name: "five breakpoints",
			body: `{"model":"m","max_tokens":5,"system":[{"type":"text","text":"s","cache_control":{"type":"ephemeral"}}],
				"tools":[{"name":"a","input_schema":{},"cache_control":{"type":"ephemeral"}}],
				"messages":[{"role":"user","content":[{"type":"text","text":"1","cache_control":{"type":"ephemeral"}},{"type":"text","text":"2","cache_control":{"type":"ephemeral"}},{"type":"text","text":"3","cache_control":{"type":"ephemeral"}}]}]}`,
			wantErr: "maximum of 4",
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, stream, err := anthropicHandler{}.decode([]byte(c.body))
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("error = %v, want one containing %q", err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if stream != c.stream {
				t.Errorf("stream = %v, want %v", stream, c.stream)
			}
			if diff := cmp.Diff(c.want, got); diff != "" {
				t.Errorf("decoded request (-want +got):\n%s", diff)
			}
		})
	}
}

// TestAnthropicErrorBody checks the API's error shape and that rein's
// classifier reads it (SPEC PROV-7).
func TestAnthropicErrorBody(t *testing.T) {
	cases := []struct {
		status   int
		fault    Fault
		wantType string
		wantMsg  string
		kind     llm.ErrorKind
	}{
		{400, Fault{Message: "bad"}, "invalid_request_error", "bad", llm.KindBadRequest},
		{400, Fault{ContextOverflow: true}, "invalid_request_error", anthropicOverflowMessage, llm.KindContextOverflow},
		{401, Fault{}, "authentication_error", "Unauthorized", llm.KindAuth},
		{403, Fault{}, "permission_error", "Forbidden", llm.KindPermission},
		{404, Fault{}, "not_found_error", "Not Found", llm.KindNotFound},
		{413, Fault{}, "request_too_large", "Request Entity Too Large", llm.KindContextOverflow},
		{429, Fault{}, "rate_limit_error", "Rate limit exceeded, please slow down", llm.KindRateLimit},
		{500, Fault{}, "api_error", "Internal Server Error", llm.KindServer},
		{504, Fault{}, "timeout_error", "Gateway Timeout", llm.KindServer},
		{529, Fault{}, "overloaded_error", "Overloaded", llm.KindOverloaded},
	}
	for _, c := range cases {
		t.Run(c.wantType+"/"+http.StatusText(c.status), func(t *testing.T) {
			body := anthropicHandler{}.errorBody(c.status, &c.fault)
			var got struct {
				Type  string `json:"type"`
				Error struct {
					Type    string `json:"type"`
					Message string `json:"message"`
				} `json:"error"`
				RequestID string `json:"request_id"`
			}
			if err := json.Unmarshal(body, &got); err != nil {
				t.Fatalf("%s: %v", body, err)
			}
			if got.Type != "error" || got.Error.Type != c.wantType || got.Error.Message != c.wantMsg || got.RequestID == "" {
				t.Errorf("body = %s; want type %q message %q", body, c.wantType, c.wantMsg)
			}
			if e := vendorhttp.FromHTTP("anthropic", c.status, nil, body); e.Kind != c.kind || e.Message != c.wantMsg {
				t.Errorf("classified as %v %q, want %v %q", e.Kind, e.Message, c.kind, c.wantMsg)
			}
		})
	}
}

type sseEvent struct {
	Name string
	Data map[string]any
}

// postAnthropic sends body to the server and returns the status, content type
// and raw reply.
func postAnthropic(t *testing.T, s *Server, body string) (int, string, []byte) {
	t.Helper()
	resp, err := http.Post(s.URL+"/v1/messages", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, resp.Header.Get("Content-Type"), raw
}

func parseSSE(t *testing.T, raw []byte) []sseEvent {
	t.Helper()
	var out []sseEvent
	for _, chunk := range bytes.Split(bytes.TrimSpace(raw), []byte("\n\n")) {
		var ev sseEvent
		for _, line := range strings.Split(string(chunk), "\n") {
			switch {
			case strings.HasPrefix(line, "event: "):
				ev.Name = strings.TrimPrefix(line, "event: ")
			case strings.HasPrefix(line, "data: "):
				if err := json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &ev.Data); err != nil {
					t.Fatalf("event %q: data %q: %v", ev.Name, line, err)
				}
			}
		}
		if ev.Data["type"] != ev.Name {
			t.Errorf("event %q carries data of type %v", ev.Name, ev.Data["type"])
		}
		out = append(out, ev)
	}
	return out
}

const anthropicTestBody = `{"model":"claude-sonnet-4-5","max_tokens":100,"stream":%s,"stop_sequences":["END"],"messages":[{"role":"user","content":"hi"}]}`

func TestAnthropicStreamReply(t *testing.T) {
	s := New()
	defer s.Close()
	s.ChunkSize = 3
	s.Enqueue(Turn{Thinking: "ponder", ThinkingSignature: "SIG", Text: "Hello there",
		ToolCalls:  []ToolCall{{ID: "toolu_1", Name: "read", Input: `{"path":"a.go"}`}},
		StopReason: llm.StopSequence, Usage: llm.Usage{InputTokens: 10, OutputTokens: 7, CacheReadTokens: 3, CacheWriteTokens: 2, ReasoningTokens: 4}})
	status, ctype, raw := postAnthropic(t, s, strings.Replace(anthropicTestBody, "%s", "true", 1))
	if status != 200 || ctype != "text/event-stream" {
		t.Fatalf("status %d, content type %q: %s", status, ctype, raw)
	}
	evs := parseSSE(t, raw)
	var names []string
	text, thinking, sig, input := "", "", "", ""
	for _, ev := range evs {
		if len(names) == 0 || names[len(names)-1] != ev.Name || ev.Name != "content_block_delta" {
			names = append(names, ev.Name)
		}
		if d, ok := ev.Data["delta"].(map[string]any); ok {
			switch d["type"] {
			case "text_delta":
				text += d["text"].(string)
			case "thinking_delta":
				thinking += d["thinking"].(string)
			case "signature_delta":
				sig += d["signature"].(string)
			case "input_json_delta":
				input += d["partial_json"].(string)
			}
		}
	}
	want := []string{"message_start", "ping",
		"content_block_start", "content_block_delta", "content_block_stop",
		"content_block_start", "content_block_delta", "content_block_stop",
		"content_block_start", "content_block_delta", "content_block_stop",
		"message_delta", "message_stop"}
	if diff := cmp.Diff(want, names); diff != "" {
		t.Errorf("event sequence (-want +got):\n%s", diff)
	}
	got := []string{text, thinking, sig, input}
	if diff := cmp.Diff([]string{"Hello there", "ponder", "SIG", `{"path":"a.go"}`}, got); diff != "" {
		t.Errorf("reassembled text, thinking, signature, input (-want +got):\n%s", diff)
	}
	start := evs[0].Data["message"].(map[string]any)
	if start["model"] != "claude-sonnet-4-5-20250929" {
		t.Errorf("echoed model %v; want the dated snapshot", start["model"])
	}
	md := evs[len(evs)-2].Data
	wantDelta := map[string]any{"type": "message_delta",
		"delta": map[string]any{"stop_reason": "stop_sequence", "stop_sequence": "END"},
		"usage": map[string]any{"input_tokens": 10.0, "output_tokens": 7.0, "cache_read_input_tokens": 3.0,
			"cache_creation_input_tokens": 2.0, "output_tokens_details": map[string]any{"thinking_tokens": 4.0}}}
	if diff := cmp.Diff(wantDelta, md); diff != "" {
		t.Errorf("message_delta (-want +got):\n%s", diff)
	}
}

func TestAnthropicJSONReply(t *testing.T) {
	s := New()
	defer s.Close()
	s.Enqueue(Turn{Thinking: "ponder", ThinkingSignature: "SIG", Text: "Hello",
		ToolCalls: []ToolCall{{Name: "read", Input: `{"path":"a.go"}`}}, Usage: llm.Usage{InputTokens: 5, OutputTokens: 6}})
	status, ctype, raw := postAnthropic(t, s, strings.Replace(anthropicTestBody, "%s", "false", 1))
	if status != 200 || ctype != "application/json" {
		t.Fatalf("status %d, content type %q: %s", status, ctype, raw)
	}
	var got map[string]any
	if err := json.Unmarshal(raw, &got); err != nil {
		t.Fatal(err)
	}
	delete(got, "id")
	want := map[string]any{"type": "message", "role": "assistant", "model": "claude-sonnet-4-5-20250929",
		"stop_reason": "tool_use", "stop_sequence": nil,
		"content": []any{
			map[string]any{"type": "thinking", "thinking": "ponder", "signature": "SIG"},
			map[string]any{"type": "text", "text": "Hello"},
			map[string]any{"type": "tool_use", "id": "call_1", "name": "read", "input": map[string]any{"path": "a.go"}},
		},
		"usage": map[string]any{"input_tokens": 5.0, "output_tokens": 6.0, "cache_read_input_tokens": 0.0, "cache_creation_input_tokens": 0.0}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("reply (-want +got):\n%s", diff)
	}
}

func TestAnthropicStreamFaults(t *testing.T) {
	cases := []struct {
		name      string
		fault     Fault
		wantFinal bool
		wantBad   bool
	}{
		{name: "cut before final", fault: Fault{CutBeforeFinal: true}},
		{name: "malformed", fault: Fault{Malformed: true}, wantFinal: true, wantBad: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := New()
			defer s.Close()
			f := c.fault
			s.Enqueue(Turn{Text: "abc", Fault: &f})
			_, _, raw := postAnthropic(t, s, strings.Replace(anthropicTestBody, "%s", "true", 1))
			if got := bytes.Contains(raw, []byte("event: message_stop")); got != c.wantFinal {
				t.Errorf("message_stop sent = %v, want %v:\n%s", got, c.wantFinal, raw)
			}
			if got := bytes.Contains(raw, []byte("not json")); got != c.wantBad {
				t.Errorf("malformed line sent = %v, want %v", got, c.wantBad)
			}
		})
	}
}

func TestAnthropicDatedModel(t *testing.T) {
	for in, want := range map[string]string{
		"claude-sonnet-4-5":          "claude-sonnet-4-5-20250929",
		"claude-3-5-haiku-20241022":  "claude-3-5-haiku-20241022",
		"":                           "claude-mock-20250101",
		"claude-opus-4-1-2025080":    "claude-opus-4-1-2025080-20250929",
		"claude-opus-4-1-2025080xyz": "claude-opus-4-1-2025080xyz-20250929",
	} {
		if got := anthropicDatedModel(in); got != want {
			t.Errorf("anthropicDatedModel(%q) = %q, want %q", in, got, want)
		}
	}
}
