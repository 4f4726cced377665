package openai_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/reinhq/rein/llm"
	"github.com/reinhq/rein/llm/llmtest/mockserver"
	"github.com/reinhq/rein/llm/openai"
)

// chunk renders one chat.completion.chunk data line with the given delta.
func chunk(delta string) string {
	return `data: {"id":"c1","object":"chat.completion.chunk","choices":[{"index":0,"delta":` + delta + `,"finish_reason":null}]}`
}

func finish(reason string) string {
	return `data: {"id":"c1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{},"finish_reason":"` + reason + `"}]}`
}

// TestChatCompatibleStreams checks PROV-2: what OpenAI-compatible servers
// stream instead of, or besides, OpenAI's own chunks.
func TestChatCompatibleStreams(t *testing.T) {
	runStreamCases(t, chatStreamCases(), func(url string) llm.Provider {
		return openai.NewChat(openai.Config{APIKey: key, BaseURL: url, Name: "compat"})
	}, "compat", "m")
}

// streamCase is a canned reply and what the adapter must make of it.
type streamCase struct {
	name        string
	contentType string // text/event-stream when empty
	body        string
	want        llm.Response // Provider and Model are filled in; tool ids ignored
	wantDeltas  []llm.Delta  // compared, DeltaDone excluded, when set
}

func chatStreamCases() []streamCase {
	return []streamCase{
		{
			name: "DeepSeek reasoning_content and cache hits",
			body: sse(chunk(`{"role":"assistant","content":null,"reasoning_content":""}`),
				chunk(`{"content":null,"reasoning_content":"Think"}`), chunk(`{"content":null,"reasoning_content":"ing."}`),
				chunk(`{"content":"Hi"}`), finish("stop"),
				`data: {"id":"c1","choices":[],"usage":{"prompt_tokens":100,"completion_tokens":30,"total_tokens":130,"completion_tokens_details":{"reasoning_tokens":20},"prompt_cache_hit_tokens":64,"prompt_cache_miss_tokens":36}}`,
				"data: [DONE]"),
			want: llm.Response{ID: "c1", StopReason: llm.StopEndTurn,
				Message: assistant(&llm.Thinking{Text: "Thinking."}, &llm.Text{Text: "Hi"}),
				Usage:   llm.Usage{InputTokens: 36, CacheReadTokens: 64, OutputTokens: 30, ReasoningTokens: 20}},
			wantDeltas: []llm.Delta{{Kind: llm.DeltaThinking, Text: "Think"}, {Kind: llm.DeltaThinking, Text: "ing."}, {Kind: llm.DeltaText, Text: "Hi"}},
		},
		{
			name: "Ollama reasoning, no usage, no [DONE]",
			body: sse(chunk(`{"role":"assistant","content":"","reasoning":"Hmm."}`), chunk(`{"content":"Yes."}`), finish("stop")),
			want: llm.Response{ID: "c1", StopReason: llm.StopEndTurn,
				Message: assistant(&llm.Thinking{Text: "Hmm."}, &llm.Text{Text: "Yes."})},
		},
		{
			name: "tool call without id, finish stop",
			body: sse(chunk(`{"tool_calls":[{"index":0,"type":"function","function":{"name":"ls","arguments":"{\"pa"}}]}`),
				chunk(`{"tool_calls":[{"index":0,"function":{"arguments":"th\":\".\"}"}}]}`), finish("stop"), "data: [DONE]"),
			want: llm.Response{ID: "c1", StopReason: llm.StopToolUse,
				Message: assistant(&llm.ToolUse{Name: "ls", Input: json.RawMessage(`{"path":"."}`)})},
		},
		{
			name: "every call at index 0 with its own id",
			body: sse(chunk(`{"tool_calls":[{"index":0,"id":"a","type":"function","function":{"name":"ls","arguments":"{}"}}]}`),
				chunk(`{"tool_calls":[{"index":0,"id":"b","type":"function","function":{"name":"cat","arguments":"{\"f\":1}"}}]}`),
				finish("tool_calls"), "data: [DONE]"),
			want: llm.Response{ID: "c1", StopReason: llm.StopToolUse, Message: assistant(
				&llm.ToolUse{ID: "a", Name: "ls", Input: json.RawMessage(`{}`)},
				&llm.ToolUse{ID: "b", Name: "cat", Input: json.RawMessage(`{"f":1}`)})},
		},
		{
			name: "no index, arguments as an object, name after arguments",
			body: sse(chunk(`{"tool_calls":[{"id":"a","function":{"arguments":{"x":[1,2]}}}]}`),
				chunk(`{"tool_calls":[{"function":{"name":"sum"}}]}`), finish("tool_calls"), "data: [DONE]"),
			want: llm.Response{ID: "c1", StopReason: llm.StopToolUse, Message: assistant(
				&llm.ToolUse{ID: "a", Name: "sum", Input: json.RawMessage(`{"x":[1,2]}`)})},
			wantDeltas: []llm.Delta{{Kind: llm.DeltaToolStart, ToolUseID: "a", ToolName: "sum"},
				{Kind: llm.DeltaToolInput, ToolUseID: "a", Text: `{"x":[1,2]}`}},
		},
		{
			name: "arguments that are not JSON stay visible",
			body: sse(chunk(`{"tool_calls":[{"index":0,"id":"a","function":{"name":"ls","arguments":"{oops"}}]}`), finish("tool_calls"), "data: [DONE]"),
			want: llm.Response{ID: "c1", StopReason: llm.StopToolUse, Message: assistant(
				&llm.ToolUse{ID: "a", Name: "ls", Input: json.RawMessage(`{"_raw_arguments":"{oops"}`)})},
		},
		{
			name: "refusal",
			body: sse(chunk(`{"refusal":"I can't help with that."}`), finish("stop"), "data: [DONE]"),
			want: llm.Response{ID: "c1", StopReason: llm.StopRefusal, Message: assistant(&llm.Text{Text: "I can't help with that."})},
		},
		{
			name: "an unknown finish reason",
			body: sse(chunk(`{"content":"x"}`), finish("recitation"), "data: [DONE]"),
			want: llm.Response{ID: "c1", StopReason: llm.StopUnknownOther, Message: assistant(&llm.Text{Text: "x"})},
		},
		{
			name:        "a server that ignores stream",
			contentType: "application/json",
			body: `{"id":"c9","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"Hello","tool_calls":[` +
				`{"id":"t1","type":"function","function":{"name":"a","arguments":"{}"}},{"id":"t2","type":"function","function":{"name":"b","arguments":""}}]},"finish_reason":"tool_calls"}],` +
				`"usage":{"prompt_tokens":10,"completion_tokens":5,"prompt_tokens_details":{"cached_tokens":4}}}`,
			want: llm.Response{ID: "c9", StopReason: llm.StopToolUse, Message: assistant(&llm.Text{Text: "Hello"},
				&llm.ToolUse{ID: "t1", Name: "a", Input: json.RawMessage(`{}`)}, &llm.ToolUse{ID: "t2", Name: "b", Input: json.RawMessage(`{}`)}),
				Usage: llm.Usage{InputTokens: 6, CacheReadTokens: 4, OutputTokens: 5}},
		},
	}
}

func runStreamCases(t *testing.T, cases []streamCase, newProvider func(url string) llm.Provider, provider, model string) {
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ct := c.contentType
			if ct == "" {
				ct = "text/event-stream"
			}
			rs := newRaw(t, 200, ct, c.body)
			req := hi(model)
			ds, resp, err := run(newProvider(rs.URL), req)
			if err != nil {
				t.Fatal(err)
			}
			c.want.Message.Provider, c.want.Message.Model = provider, model
			if c.want.Usage == (llm.Usage{}) {
				// PROV-2: a reply without usage is estimated, never free.
				checkEstimated(t, resp.Usage)
				c.want.Usage = resp.Usage
			}
			if diff := cmp.Diff(&c.want, resp, cmpopts.IgnoreFields(llm.ToolUse{}, "ID")); diff != "" {
				t.Errorf("response (-want +got):\n%s", diff)
			}
			for _, u := range resp.Message.ToolUses() {
				if u.ID == "" {
					t.Errorf("tool call %s has no id", u.Name)
				}
			}
			if c.wantDeltas != nil {
				if diff := cmp.Diff(c.wantDeltas, ds[:len(ds)-1], cmpopts.IgnoreFields(llm.Delta{}, "Response")); diff != "" {
					t.Errorf("deltas (-want +got):\n%s", diff)
				}
			}
			checkAnnounced(t, ds, resp)
		})
	}
}

// checkEstimated checks the usage of a reply whose server reported none: an
// estimate, marked so, of a prompt and a reply that cost something.
func checkEstimated(t *testing.T, u llm.Usage) {
	t.Helper()
	if !u.Estimated || u.InputTokens <= 0 || u.OutputTokens <= 0 {
		t.Errorf("usage %+v; want an estimate of a non-empty prompt and reply", u)
	}
}

// checkAnnounced checks that every final tool call was announced by a start
// delta with its id, and that its input deltas add up to its input.
func checkAnnounced(t *testing.T, ds []llm.Delta, resp *llm.Response) {
	t.Helper()
	inputs := map[string]*strings.Builder{}
	for _, d := range ds {
		switch d.Kind {
		case llm.DeltaToolStart:
			inputs[d.ToolUseID] = &strings.Builder{}
		case llm.DeltaToolInput:
			if inputs[d.ToolUseID] == nil {
				t.Errorf("input for %q before its start", d.ToolUseID)
				continue
			}
			inputs[d.ToolUseID].WriteString(d.Text)
		}
	}
	for _, u := range resp.Message.ToolUses() {
		b := inputs[u.ID]
		if b == nil {
			t.Errorf("tool call %q was never announced", u.ID)
			continue
		}
		if got := strings.TrimSpace(b.String()); got != "" && !strings.HasPrefix(string(u.Input), `{"_raw`) && got != string(u.Input) {
			t.Errorf("tool call %q: streamed input %q, final %s", u.ID, got, u.Input)
		}
	}
}

func assistant(blocks ...llm.Block) llm.Message {
	return llm.Message{Role: llm.RoleAssistant, Content: blocks}
}

// TestChatStreamFailures checks PROV-7 for failures inside a 200 stream.
func TestChatStreamFailures(t *testing.T) {
	cases := []struct {
		name    string
		body    string
		kind    llm.ErrorKind
		message string
	}{
		{"error chunk", sse(chunk(`{"content":"x"}`), `data: {"error":{"message":"Rate limit reached for requests","type":"requests","code":"rate_limit_exceeded"}}`),
			llm.KindRateLimit, "Rate limit reached"},
		{"OpenRouter numeric code", sse(`data: {"error":{"message":"Provider returned error","code":502}}`), llm.KindServer, "Provider returned error"},
		{"no finish and no [DONE]", sse(chunk(`{"content":"x"}`)), llm.KindStreamCut, "[DONE]"},
		{"empty body", "", llm.KindStreamCut, "[DONE]"},
		{"not JSON", sse(chunk(`{"content":"x"}`), "data: {nope"), llm.KindMalformed, "malformed"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rs := newRaw(t, 200, "text/event-stream", c.body)
			_, _, err := run(openai.NewChat(openai.Config{APIKey: key, BaseURL: rs.URL}), hi("m"))
			e, ok := llm.AsError(err)
			if !ok || e.Kind != c.kind || !strings.Contains(e.Message, c.message) {
				t.Fatalf("error = %v, want kind %v with %q", err, c.kind, c.message)
			}
		})
	}
}

// TestChatOpenRouterReasoning checks PROV-5 for OpenRouter: reasoning_details
// pieces are merged into the thinking's signature and go back verbatim to the
// same model only.
func TestChatOpenRouterReasoning(t *testing.T) {
	rs := newRaw(t, 200, "text/event-stream", sse(
		chunk(`{"role":"assistant","content":"","reasoning":"Let me ","reasoning_details":[{"type":"reasoning.text","text":"Let me ","format":"anthropic-claude-v1","index":0}]}`),
		chunk(`{"content":"","reasoning":"see.","reasoning_details":[{"type":"reasoning.text","text":"see.","format":"anthropic-claude-v1","index":0}]}`),
		chunk(`{"content":"","reasoning_details":[{"type":"reasoning.text","signature":"EqSig==","format":"anthropic-claude-v1","index":0}]}`),
		chunk(`{"content":"","reasoning_details":[{"type":"reasoning.encrypted","data":"ENC","id":"r1","format":"anthropic-claude-v1","index":1}]}`),
		chunk(`{"content":"Done."}`), finish("stop"), "data: [DONE]"))
	p := openai.NewChat(openai.Config{APIKey: key, BaseURL: rs.URL, Name: "openrouter"})
	_, resp, err := run(p, hi("anthropic/claude-sonnet-4.5"))
	if err != nil {
		t.Fatal(err)
	}
	const details = `[{"type":"reasoning.text","text":"Let me see.","signature":"EqSig==","format":"anthropic-claude-v1","index":0},` +
		`{"type":"reasoning.encrypted","id":"r1","data":"ENC","format":"anthropic-claude-v1","index":1}]`
	want := assistant(&llm.Thinking{Text: "Let me see.", Signature: details}, &llm.Text{Text: "Done."})
	want.Provider, want.Model = "openrouter", "anthropic/claude-sonnet-4.5"
	if diff := cmp.Diff(want, resp.Message); diff != "" {
		t.Fatalf("message (-want +got):\n%s", diff)
	}

	for _, c := range []struct {
		model string
		sent  bool
	}{{"anthropic/claude-sonnet-4.5", true}, {"openai/gpt-5", false}} {
		s := newMock(t)
		s.Enqueue(mockserver.Turn{Text: "ok"})
		req := hi(c.model)
		req.Messages = append(req.Messages, resp.Message, llm.UserText("more"))
		if _, _, err := run(openai.NewChat(openai.Config{APIKey: key, BaseURL: s.URL + "/v1", Name: "openrouter"}), req); err != nil {
			t.Fatal(err)
		}
		body := string(s.Requests()[0].Body)
		if got := strings.Contains(body, `"reasoning_details":`+details); got != c.sent {
			t.Errorf("to %s: reasoning_details sent verbatim = %v, want %v\n%s", c.model, got, c.sent, body)
		}
	}
}

// TestCancelledBeforeStart checks that a cancelled context fails as
// cancelled without sending anything.
func TestCancelledBeforeStart(t *testing.T) {
	for _, a := range apis {
		t.Run(a.name, func(t *testing.T) {
			s := newMock(t)
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			for _, err := range a.provider(s).Stream(ctx, hi(a.model)) {
				if llm.KindOf(err) != llm.KindCancelled {
					t.Errorf("error = %v, want cancelled", err)
				}
				break
			}
			if n := len(s.Requests()); n != 0 {
				t.Errorf("%d requests sent", n)
			}
		})
	}
}
