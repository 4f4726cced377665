package anthropic_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/reinhq/rein/llm"
	"github.com/reinhq/rein/llm/anthropic"
	"github.com/reinhq/rein/llm/llmtest"
)

// Server tools' blocks as the Messages API documents them on the wire (web
// search, web fetch, code execution: server_tool_use, then its
// *_tool_result), kept as opaque blocks (issue 23; PROV-2, PROV-5).

const (
	srvUse = `{"type":"content_block_start","index":1,"content_block":{"type":"server_tool_use","id":"srvtoolu_014hJH82Qum7Td6UV8gDXThB","name":"web_search","input":{}}}`
	srvIn1 = `{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"query"}}`
	srvIn2 = `{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"\": \"latest quantum computing breakthroughs 2025\"}"}}`
	srvRes = `{"type":"content_block_start","index":2,"content_block":{"type":"web_search_tool_result","tool_use_id":"srvtoolu_014hJH82Qum7Td6UV8gDXThB",` +
		`"content":[{"type":"web_search_result","title":"Quantum Computing Breakthroughs in 2025","url":"https://example.com/q?a=1&b=<2>","encrypted_content":"EqgfCioIARgBIiQ3YTAwMjY1Mi1mZjM5LTQ1NGUtODgxNC1kNjNjNTk1ZWI3Y2I","page_age":"April 30, 2025"}]}}`
	citeText  = `{"type":"content_block_start","index":3,"content_block":{"type":"text","text":"","citations":[]}}`
	citeDelta = `{"type":"content_block_delta","index":3,"delta":{"type":"citations_delta","citation":{"type":"web_search_result_location","cited_text":"Researchers announced…","url":"https://example.com","title":"Quantum","encrypted_index":"Eo8BCioIAhgBIiQyYjQ4"}}}`
	textIn    = `{"type":"content_block_delta","index":3,"delta":{"type":"text_delta","text":"Researchers announced a breakthrough."}}`
)

// stops returns content_block_stop for each index.
func stops(idx ...string) []string {
	out := make([]string, 0, len(idx))
	for _, i := range idx {
		out = append(out, `{"type":"content_block_stop","index":`+i+`}`)
	}
	return out
}

func events(parts ...any) []string {
	var out []string
	for _, p := range parts {
		switch p := p.(type) {
		case string:
			out = append(out, p)
		case []string:
			out = append(out, p...)
		}
	}
	return out
}

// TestOpaqueServerTools is a table over recorded shapes of server tools'
// replies: every block rein does not model is kept, in order, its streamed
// input in place, and what is dropped is counted.
func TestOpaqueServerTools(t *testing.T) {
	cases := []struct {
		name   string
		ct     string
		body   string
		types  []string // the opaque blocks' types, in order
		text   string
		raw    map[string]string // type → the raw JSON expected
		drops  map[string]uint64 // kind/type → drops this reply adds
		stop   llm.StopReason
		noneOK bool
	}{
		{
			name:  "web search, with citations",
			body:  sse(events(evStart, srvUse, srvIn1, srvIn2, stops("1"), srvRes, stops("2"), citeText, citeDelta, textIn, stops("3"), evEndDelta, evStop)...),
			types: []string{"server_tool_use", "web_search_tool_result"},
			text:  "Researchers announced a breakthrough.",
			raw: map[string]string{
				"server_tool_use": `{"id":"srvtoolu_014hJH82Qum7Td6UV8gDXThB","input":{"query":"latest quantum computing breakthroughs 2025"},"name":"web_search","type":"server_tool_use"}`,
				"web_search_tool_result": `{"type":"web_search_tool_result","tool_use_id":"srvtoolu_014hJH82Qum7Td6UV8gDXThB","content":[{"type":"web_search_result","title":"Quantum Computing Breakthroughs in 2025",` +
					`"url":"https://example.com/q?a=1\u0026b=\u003c2\u003e","encrypted_content":"EqgfCioIARgBIiQ3YTAwMjY1Mi1mZjM5LTQ1NGUtODgxNC1kNjNjNTk1ZWI3Y2I","page_age":"April 30, 2025"}]}`,
			},
			drops: map[string]uint64{"delta/citations_delta": 1},
			stop:  llm.StopEndTurn,
		},
		{
			name: "code execution (bash), input whole in the start",
			body: sse(evStart,
				`{"type":"content_block_start","index":0,"content_block":{"type":"server_tool_use","id":"srvtoolu_01","name":"bash_code_execution","input":{"command":"python -c 'print(2**10)'"}}}`,
				`{"type":"content_block_stop","index":0}`,
				`{"type":"content_block_start","index":1,"content_block":{"type":"bash_code_execution_tool_result","tool_use_id":"srvtoolu_01","content":{"type":"bash_code_execution_result","stdout":"1024\n","stderr":"","return_code":0,"content":[]}}}`,
				`{"type":"content_block_stop","index":1}`,
				`{"type":"content_block_start","index":2,"content_block":{"type":"text","text":"2^10 is 1024."}}`,
				`{"type":"content_block_stop","index":2}`, evEndDelta, evStop),
			types: []string{"server_tool_use", "bash_code_execution_tool_result"},
			text:  "2^10 is 1024.",
			raw: map[string]string{"bash_code_execution_tool_result": `{"type":"bash_code_execution_tool_result","tool_use_id":"srvtoolu_01",` +
				`"content":{"type":"bash_code_execution_result","stdout":"1024\n","stderr":"","return_code":0,"content":[]}}`},
			stop: llm.StopEndTurn,
		},
		{
			name: "code execution (legacy code_execution_tool_result), paused turn",
			body: sse(evStart,
				`{"type":"content_block_start","index":0,"content_block":{"type":"server_tool_use","id":"srvtoolu_02","name":"code_execution","input":{}}}`,
				`{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\"code\":\"print(1)\"}"}}`,
				`{"type":"content_block_stop","index":0}`,
				`{"type":"content_block_start","index":1,"content_block":{"type":"code_execution_tool_result","tool_use_id":"srvtoolu_02","content":{"type":"code_execution_result","stdout":"1\n","stderr":"","return_code":0}}}`,
				`{"type":"content_block_stop","index":1}`,
				`{"type":"message_delta","delta":{"stop_reason":"pause_turn"},"usage":{"output_tokens":30}}`, evStop),
			types: []string{"server_tool_use", "code_execution_tool_result"},
			stop:  llm.StopPauseTurn,
		},
		{
			name: "web fetch, and a block type from the future",
			body: sse(evStart,
				`{"type":"content_block_start","index":0,"content_block":{"type":"server_tool_use","id":"srvtoolu_03","name":"web_fetch","input":{"url":"https://example.com/doc"}}}`,
				`{"type":"content_block_stop","index":0}`,
				`{"type":"content_block_start","index":1,"content_block":{"type":"web_fetch_tool_result","tool_use_id":"srvtoolu_03","content":{"type":"web_fetch_result","url":"https://example.com/doc","content":{"type":"document","source":{"type":"text","media_type":"text/plain","data":"Doc text"}},"retrieved_at":"2025-08-25T10:30:00Z"}}}`,
				`{"type":"content_block_stop","index":1}`,
				`{"type":"content_block_start","index":2,"content_block":{"type":"hologram_2027","frames":[1,2,3]}}`,
				`{"type":"content_block_delta","index":2,"delta":{"type":"hologram_delta","frame":4}}`,
				`{"type":"content_block_stop","index":2}`,
				`{"type":"brand_new_event","index":2}`, evEndDelta, evStop),
			types: []string{"server_tool_use", "web_fetch_tool_result", "hologram_2027"},
			raw:   map[string]string{"hologram_2027": `{"type":"hologram_2027","frames":[1,2,3]}`},
			drops: map[string]uint64{"delta/hologram_delta": 1, "event/brand_new_event": 1},
			stop:  llm.StopEndTurn,
		},
		{
			name: "whole JSON reply (a proxy that ignored stream)",
			ct:   "application/json",
			body: `{"id":"msg_j","type":"message","role":"assistant","content":[` +
				`{"type":"server_tool_use","id":"srvtoolu_j","name":"web_search","input":{"query":"q"}},` +
				`{"type":"web_search_tool_result","tool_use_id":"srvtoolu_j","content":{"type":"web_search_tool_result_error","error_code":"max_uses_exceeded"}},` +
				`{"type":"text","text":"No results."}],"stop_reason":"end_turn","usage":{"input_tokens":5,"output_tokens":3}}`,
			types: []string{"server_tool_use", "web_search_tool_result"},
			text:  "No results.",
			stop:  llm.StopEndTurn,
		},
		{
			name: "server tool blocks whole in message_start",
			body: sse(`{"type":"message_start","message":{"id":"msg_s","type":"message","role":"assistant","content":[`+
				`{"type":"server_tool_use","id":"srvtoolu_s","name":"web_search","input":{"query":"q"}},`+
				`{"type":"web_search_tool_result","tool_use_id":"srvtoolu_s","content":[]}],"stop_reason":null,"usage":{"input_tokens":4,"output_tokens":1}}}`,
				`{"type":"content_block_start","index":2,"content_block":{"type":"text","text":"Nothing found."}}`,
				`{"type":"content_block_stop","index":2}`, evEndDelta, evStop),
			types: []string{"server_tool_use", "web_search_tool_result"},
			text:  "Nothing found.",
			stop:  llm.StopEndTurn,
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := map[string]uint64{}
			for k := range c.drops {
				kind, typ, _ := strings.Cut(k, "/")
				before[k] = llm.DropsOf("anthropic", kind, typ)
			}
			ct := c.ct
			if ct == "" {
				ct = "text/event-stream"
			}
			p := serve(t, ct, c.body)
			llmtest.CheckStream(t, p, userReq("hi"))
			resp, err := llm.Complete(context.Background(), p, userReq("hi"))
			if err != nil {
				t.Fatal(err)
			}
			var types []string
			for _, b := range resp.Message.Content {
				if o, ok := b.(*llm.Opaque); ok {
					types = append(types, o.Type)
					if o.Provider != "anthropic" {
						t.Errorf("%s stamped %q", o.Type, o.Provider)
					}
					if err := o.Check(); err != nil {
						t.Errorf("%s: %v", o.Type, err)
					}
					if want, ok := c.raw[o.Type]; ok && string(o.Raw) != want {
						t.Errorf("%s raw\n got %s\nwant %s", o.Type, o.Raw, want)
					}
				}
			}
			if strings.Join(types, ",") != strings.Join(c.types, ",") {
				t.Errorf("opaque blocks %q, want %q", types, c.types)
			}
			if got := resp.Message.TextOf(); got != c.text {
				t.Errorf("text %q, want %q", got, c.text)
			}
			if resp.StopReason != c.stop {
				t.Errorf("stop %q, want %q", resp.StopReason, c.stop)
			}
			for k, n := range c.drops {
				kind, typ, _ := strings.Cut(k, "/")
				// Two reads of the reply: CheckStream's and Complete's.
				if got := llm.DropsOf("anthropic", kind, typ) - before[k]; got != 2*n {
					t.Errorf("drops of %s: %d, want %d", k, got, 2*n)
				}
			}
		})
	}
}

// capture answers each request with the next of bodies (as SSE) and keeps
// the request bodies.
type capture struct {
	mu     sync.Mutex
	bodies []string
	sent   [][]byte
}

func (c *capture) serve(t *testing.T, name string) *anthropic.Provider {
	t.Helper()
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		c.mu.Lock()
		c.sent = append(c.sent, b)
		body := sse(evStart, evEndDelta, evStop)
		if len(c.bodies) > 0 {
			body, c.bodies = c.bodies[0], c.bodies[1:]
		}
		c.mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, body)
	}))
	t.Cleanup(ts.Close)
	return anthropic.New(anthropic.Config{APIKey: key, BaseURL: ts.URL, Name: name})
}

// TestOpaqueReplay: the opaque blocks of a reply, stored in the session as
// JSON and read back, go to the same provider in the next request's
// assistant message byte for byte and in their place; a provider of another
// name gets none of them (PROV-5).
func TestOpaqueReplay(t *testing.T) {
	c := &capture{bodies: []string{sse(events(evStart, srvUse, srvIn1, srvIn2, stops("1"), srvRes, stops("2"), citeText, textIn, stops("3"), evEndDelta, evStop)...)}}
	p := c.serve(t, "")
	resp, err := llm.Complete(context.Background(), p, userReq("quantum news?"))
	if err != nil {
		t.Fatal(err)
	}
	stored, err := json.Marshal(resp.Message) // as the session stores it
	if err != nil {
		t.Fatal(err)
	}
	var loaded llm.Message
	if err := json.Unmarshal(stored, &loaded); err != nil {
		t.Fatal(err)
	}
	req := userReq("quantum news?")
	req.Messages = append(req.Messages, loaded, llm.UserText("more?"))
	if _, err := llm.Complete(context.Background(), p, req); err != nil {
		t.Fatal(err)
	}
	use, res := loaded.Content[0].(*llm.Opaque), loaded.Content[1].(*llm.Opaque)
	want := `{"content":[` + string(use.Raw) + `,` + string(res.Raw) +
		`,{"text":"Researchers announced a breakthrough.","cache_control":{"type":"ephemeral"},"type":"text"}],"role":"assistant"}`
	if body := string(c.sent[1]); !strings.Contains(body, want) {
		t.Errorf("assistant message not replayed byte for byte; want\n%s\nin\n%s", want, body)
	}

	// The same history to a provider of another name: left out.
	sent := &capture{}
	other := sent.serve(t, "other-vendor")
	if _, err := llm.Complete(context.Background(), other, req); err != nil {
		t.Fatal(err)
	}
	if body := string(sent.sent[0]); strings.Contains(body, "srvtoolu_") || !strings.Contains(body, "Researchers announced") {
		t.Errorf("to another provider: opaque blocks sent, or the text lost:\n%s", body)
	}
}

// TestSplicedStream: a stream that starts over with a second message_start
// after content was streamed (a proxy splicing a retried stream) is
// malformed, so the retry layer calls again, and what was streamed is the
// final message; a second message_start before anything was streamed
// simply replaces the first (issue 23).
func TestSplicedStream(t *testing.T) {
	text := func(idx, s string) []string {
		return []string{`{"type":"content_block_start","index":` + idx + `,"content_block":{"type":"text","text":""}}`,
			`{"type":"content_block_delta","index":` + idx + `,"delta":{"type":"text_delta","text":"` + s + `"}}`,
			`{"type":"content_block_stop","index":` + idx + `}`}
	}
	think := []string{`{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":""}}`,
		`{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"Let me think"}}`}
	spliced := sse(events(evStart, think, evStart, text("0", "Hello there"), evEndDelta, evStop)...)
	clean := sse(events(evStart, think, `{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"sig"}}`,
		`{"type":"content_block_stop","index":0}`, text("1", "Hello there"), evEndDelta, evStop)...)

	if _, err := drain(serve(t, "text/event-stream", spliced), userReq("hi")); llm.KindOf(err) != llm.KindMalformed ||
		!strings.Contains(err.Error(), "second message_start") {
		t.Fatalf("spliced stream: error %v, want malformed naming the second message_start", err)
	}

	// Through the retry layer: the second attempt is clean; the thinking
	// already shown is not shown twice, and all that was shown is the reply.
	c := &capture{bodies: []string{spliced, clean}}
	p := llm.Retrying(c.serve(t, ""), llm.RetryPolicy{MaxAttempts: 2, Initial: 1, Max: 1})
	var shownText, shownThinking strings.Builder
	var final *llm.Response
	for d, err := range p.Stream(context.Background(), userReq("hi")) {
		if err != nil {
			t.Fatal(err)
		}
		switch d.Kind {
		case llm.DeltaText:
			shownText.WriteString(d.Text)
		case llm.DeltaThinking:
			shownThinking.WriteString(d.Text)
		case llm.DeltaDone:
			final = d.Response
		}
	}
	if final == nil || shownText.String() != final.Message.TextOf() || shownThinking.String() != llmtest.ThinkingOf(final.Message) {
		t.Fatalf("streamed %q / %q, final %+v", shownThinking.String(), shownText.String(), final)
	}
	if shownText.String() != "Hello there" || shownThinking.String() != "Let me think" {
		t.Errorf("streamed %q / %q", shownThinking.String(), shownText.String())
	}

	// A second message_start before any content: the first is replaced.
	restart := sse(events(evStart, `{"type":"message_start","message":{"id":"msg_2","content":[],"usage":{"input_tokens":7,"output_tokens":1}}}`,
		text("0", "Hi"), evEndDelta, evStop)...)
	ds, resp := streamed(t, serve(t, "text/event-stream", restart))
	if resp.ID != "msg_2" || resp.Message.TextOf() != "Hi" || len(ds) != 1 {
		t.Errorf("restart before content: %+v, deltas %+v", resp, ds)
	}
}

// TestHostileStreams is an attack table: what a hostile or broken stream
// can send and what rein does with it.
func TestHostileStreams(t *testing.T) {
	big := strings.Repeat("A", llm.MaxOpaqueBytes)
	t.Run("an opaque block over the cap takes its reply's opaque blocks with it", func(t *testing.T) {
		before := llm.DropsOf("anthropic", llm.DropOversize, "web_search_tool_result")
		body := sse(evStart, srvUse, srvIn1, srvIn2, `{"type":"content_block_stop","index":1}`,
			`{"type":"content_block_start","index":2,"content_block":{"type":"web_search_tool_result","tool_use_id":"srvtoolu_014hJH82Qum7Td6UV8gDXThB","content":[{"type":"web_search_result","encrypted_content":"`+big+`"}]}}`,
			`{"type":"content_block_stop","index":2}`, citeText, textIn, `{"type":"content_block_stop","index":3}`, evEndDelta, evStop)
		_, resp := streamed(t, serve(t, "text/event-stream", body))
		for _, b := range resp.Message.Content {
			if o, ok := b.(*llm.Opaque); ok {
				t.Errorf("opaque %s kept", o.Type)
			}
		}
		if resp.Message.TextOf() != "Researchers announced a breakthrough." {
			t.Errorf("text lost: %q", resp.Message.TextOf())
		}
		if llm.DropsOf("anthropic", llm.DropOversize, "web_search_tool_result") != before+1 {
			t.Error("the oversize drop was not counted")
		}
	})
	t.Run("a server tool input streamed past the cap", func(t *testing.T) {
		piece := `{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"` + strings.Repeat("B", 1<<16) + `"}}`
		evs := []string{evStart, `{"type":"content_block_start","index":0,"content_block":{"type":"server_tool_use","id":"s","name":"web_search","input":{}}}`}
		for range (llm.MaxOpaqueBytes >> 16) + 2 {
			evs = append(evs, piece)
		}
		evs = append(evs, `{"type":"content_block_stop","index":0}`, evEndDelta, evStop)
		_, resp := streamed(t, serve(t, "text/event-stream", sse(evs...)))
		if len(resp.Message.Content) != 0 {
			t.Errorf("content %+v, want none", resp.Message.Content)
		}
	})
	t.Run("thousands of unknown events", func(t *testing.T) {
		evs := []string{evStart}
		for i := range 5000 {
			evs = append(evs, `{"type":"noise_`+strings.Repeat("x", i%70)+`"}`)
		}
		evs = append(evs, `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`,
			`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"still here"}}`,
			`{"type":"content_block_stop","index":0}`, evEndDelta, evStop)
		_, resp := streamed(t, serve(t, "text/event-stream", sse(evs...)))
		if resp.Message.TextOf() != "still here" {
			t.Errorf("text %q", resp.Message.TextOf())
		}
		var series int
		for _, d := range llm.Drops() {
			if d.Provider == "anthropic" && d.Kind == llm.DropEvent {
				series++
			}
		}
		if series > 300 {
			t.Errorf("%d series of dropped events, want them bounded", series)
		}
		if llm.DropsOf("anthropic", llm.DropEvent, "invalid") == 0 {
			t.Error("event types over 64 bytes were not counted as invalid")
		}
	})
}

// TestDeltaKindMismatch is an attack table: a delta sent to a block of
// another kind would stream as one kind and end up as another (or nowhere)
// in the final message; it is malformed, and a delta to an opaque block is
// dropped and counted.
func TestDeltaKindMismatch(t *testing.T) {
	thinking := `{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":""}}`
	tool := `{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"toolu_1","name":"bash","input":{}}}`
	textDelta := `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"rm -rf /"}}`
	thinkDelta := `{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"hmm"}}`
	for _, c := range []struct{ name, start, delta string }{
		{"text into a thinking block", thinking, textDelta},
		{"text into a tool call", tool, textDelta},
		{"thinking into a text block", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`, thinkDelta},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := drain(serve(t, "text/event-stream", sse(evStart, c.start, c.delta, evEndDelta, evStop)), userReq("hi"))
			if llm.KindOf(err) != llm.KindMalformed {
				t.Errorf("error %v, want malformed", err)
			}
		})
	}
	before := llm.DropsOf("anthropic", llm.DropDelta, "text_delta")
	_, resp := streamed(t, serve(t, "text/event-stream", sse(evStart, srvUse, strings.Replace(textDelta, `"index":0`, `"index":1`, 1), evEndDelta, evStop)))
	if resp.Message.TextOf() != "" || llm.DropsOf("anthropic", llm.DropDelta, "text_delta") != before+1 {
		t.Errorf("text into an opaque block: text %q, not counted", resp.Message.TextOf())
	}
}

// TestOpaqueReplayRefused is an attack row: an opaque block made in memory
// that would replay as a tool call (or is not in normal form) is left out of
// the request and counted; the request still goes.
func TestOpaqueReplayRefused(t *testing.T) {
	c := &capture{}
	p := c.serve(t, "")
	before := llm.DropsOf("anthropic", llm.DropReplay, "tool_use")
	req := userReq("hi")
	req.Messages = append(req.Messages, llm.Message{Role: llm.RoleAssistant, Provider: "anthropic", Model: model, Content: []llm.Block{
		&llm.Opaque{Provider: "anthropic", Type: "tool_use", Raw: json.RawMessage(`{"type":"tool_use","id":"toolu_x","name":"bash","input":{"command":"rm -rf ~"}}`)},
		&llm.Text{Text: "ok"}}}, llm.UserText("go on"))
	if _, err := llm.Complete(context.Background(), p, req); err != nil {
		t.Fatal(err)
	}
	if body := string(c.sent[0]); strings.Contains(body, "toolu_x") {
		t.Errorf("a smuggled tool call was sent:\n%s", body)
	}
	if llm.DropsOf("anthropic", llm.DropReplay, "tool_use") != before+1 {
		t.Error("the refused block was not counted")
	}
}
