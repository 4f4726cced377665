package openai_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/reinhq/rein/llm"
	"github.com/reinhq/rein/llm/llmtest"
	"github.com/reinhq/rein/llm/openai"
)

// Output items of server-side tools as the Responses API documents them on
// the wire (web_search_call, code_interpreter_call) and items of kinds rein
// does not know, kept as opaque blocks (issue 23; PROV-2, PROV-5).

const (
	wsAdded = `{"type":"response.output_item.added","output_index":0,"item":{"id":"ws_67c9fa05","type":"web_search_call","status":"in_progress"}}`
	wsDone  = `{"type":"response.output_item.done","output_index":0,"item":{"id":"ws_67c9fa05","type":"web_search_call","status":"completed","action":{"type":"search","query":"positive news <today> & more"}}}`
	ciAdded = `{"type":"response.output_item.added","output_index":1,"item":{"id":"ci_1","type":"code_interpreter_call","status":"in_progress","code":"","container_id":"cntr_1","outputs":null}}`
	ciDone  = `{"type":"response.output_item.done","output_index":1,"item":{"id":"ci_1","type":"code_interpreter_call","status":"completed","code":"print(2**10)","container_id":"cntr_1","outputs":[{"type":"logs","logs":"1024\n"}]}}`
	msgText = `{"type":"response.output_text.delta","output_index":2,"content_index":0,"delta":"1024, and good news."}`
)

// webSearchStream is a recorded shape of a reply that searched, ran code
// and answered, with the progress events between.
func webSearchStream(final string) string {
	return sse(
		ev("response.created", `{"type":"response.created","response":{"id":"resp_ws","status":"in_progress","output":[]}}`),
		ev("response.output_item.added", wsAdded),
		ev("response.web_search_call.in_progress", `{"type":"response.web_search_call.in_progress","output_index":0,"item_id":"ws_67c9fa05"}`),
		ev("response.web_search_call.searching", `{"type":"response.web_search_call.searching","output_index":0,"item_id":"ws_67c9fa05"}`),
		ev("response.web_search_call.completed", `{"type":"response.web_search_call.completed","output_index":0,"item_id":"ws_67c9fa05"}`),
		ev("response.output_item.done", wsDone),
		ev("response.output_item.added", ciAdded),
		ev("response.code_interpreter_call_code.delta", `{"type":"response.code_interpreter_call_code.delta","output_index":1,"item_id":"ci_1","delta":"print(2**10)"}`),
		ev("response.code_interpreter_call.interpreting", `{"type":"response.code_interpreter_call.interpreting","output_index":1,"item_id":"ci_1"}`),
		ev("response.output_item.done", ciDone),
		ev("response.output_item.added", `{"type":"response.output_item.added","output_index":2,"item":{"id":"msg_1","type":"message","role":"assistant","content":[]}}`),
		ev("response.content_part.added", `{"type":"response.content_part.added","output_index":2,"content_index":0,"part":{"type":"output_text","text":"","annotations":[]}}`),
		ev("response.output_text.delta", msgText),
		ev("response.output_text.annotation.added", `{"type":"response.output_text.annotation.added","output_index":2,"annotation":{"type":"url_citation","url":"https://example.com"}}`),
		ev("response.output_text.done", `{"type":"response.output_text.done","output_index":2,"text":"1024, and good news."}`),
		ev("response.completed", final))
}

// TestResponsesOpaqueItems is a table over recorded shapes: every item of a
// kind rein does not model is kept in order, in its final form; what is
// dropped is counted, and the progress events of server tools are not.
func TestResponsesOpaqueItems(t *testing.T) {
	cases := []struct {
		name  string
		ct    string
		body  string
		types []string
		raw   map[string]string
		drops map[string]uint64
		text  string
	}{
		{
			name:  "web search and code interpreter, streamed",
			body:  webSearchStream(completed),
			types: []string{"web_search_call", "code_interpreter_call"},
			raw: map[string]string{
				"web_search_call":       `{"id":"ws_67c9fa05","type":"web_search_call","status":"completed","action":{"type":"search","query":"positive news \u003ctoday\u003e \u0026 more"}}`,
				"code_interpreter_call": `{"id":"ci_1","type":"code_interpreter_call","status":"completed","code":"print(2**10)","container_id":"cntr_1","outputs":[{"type":"logs","logs":"1024\n"}]}`,
			},
			drops: map[string]uint64{"event/response.web_search_call.searching": 0, "event/response.output_text.annotation.added": 0},
			text:  "1024, and good news.",
		},
		{
			name: "an item and an event of kinds from the future",
			body: sse(
				ev("response.output_item.added", `{"type":"response.output_item.added","output_index":0,"item":{"id":"hc_1","type":"hologram_call","status":"in_progress"}}`),
				ev("response.hologram_call.frame", `{"type":"response.hologram_call.frame","output_index":0,"frame":3}`),
				ev("response.output_item.done", `{"type":"response.output_item.done","output_index":0,"item":{"id":"hc_1","type":"hologram_call","status":"completed","frames":[1,2,3]}}`),
				ev("response.output_item.added", `{"type":"response.output_item.added","output_index":1,"item":{"id":"x","status":"completed"}}`),
				ev("response.output_text.delta", `{"type":"response.output_text.delta","output_index":2,"delta":"ok"}`),
				ev("response.completed", completed)),
			types: []string{"hologram_call"},
			raw:   map[string]string{"hologram_call": `{"id":"hc_1","type":"hologram_call","status":"completed","frames":[1,2,3]}`},
			drops: map[string]uint64{"event/response.hologram_call.frame": 1, "block/untyped": 1},
			text:  "ok",
		},
		{
			name:  "a whole reply",
			ct:    "application/json",
			body:  `{"id":"resp_w","status":"completed","output":[` + itemOf(wsDone) + `,{"id":"msg_w","type":"message","role":"assistant","content":[{"type":"output_text","text":"Done.","annotations":[]}]}],"usage":{"input_tokens":3,"output_tokens":1}}`,
			types: []string{"web_search_call"},
			text:  "Done.",
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := map[string]uint64{}
			for k := range c.drops {
				kind, typ, _ := strings.Cut(k, "/")
				before[k] = llm.DropsOf("openai", kind, typ)
			}
			ct := c.ct
			if ct == "" {
				ct = "text/event-stream"
			}
			rs := newRaw(t, 200, ct, c.body)
			p := openai.NewResponses(openai.Config{APIKey: key, BaseURL: rs.URL})
			llmtest.CheckStream(t, p, hi("gpt-5"))
			_, resp, err := run(p, hi("gpt-5"))
			if err != nil {
				t.Fatal(err)
			}
			var types []string
			for _, b := range resp.Message.Content {
				if o, ok := b.(*llm.Opaque); ok {
					types = append(types, o.Type)
					if err := o.Check(); err != nil || o.Provider != "openai" {
						t.Errorf("%s: %v, provider %q", o.Type, err, o.Provider)
					}
					if want, ok := c.raw[o.Type]; ok && string(o.Raw) != want {
						t.Errorf("%s raw\n got %s\nwant %s", o.Type, o.Raw, want)
					}
				}
			}
			if strings.Join(types, ",") != strings.Join(c.types, ",") {
				t.Errorf("opaque blocks %q, want %q", types, c.types)
			}
			if resp.Message.TextOf() != c.text {
				t.Errorf("text %q, want %q", resp.Message.TextOf(), c.text)
			}
			for k, n := range c.drops {
				kind, typ, _ := strings.Cut(k, "/")
				if got := llm.DropsOf("openai", kind, typ) - before[k]; got != 2*n {
					t.Errorf("drops of %s: %d, want %d", k, got, 2*n)
				}
			}
		})
	}
}

// itemOf returns the item of an output_item event.
func itemOf(event string) string {
	var e struct {
		Item json.RawMessage `json:"item"`
	}
	_ = json.Unmarshal([]byte(event), &e)
	return string(e.Item)
}

// TestResponsesOpaqueReplay: the opaque items of a reply, stored in the
// session as JSON and read back, go to the Responses API in the next
// request's input byte for byte and in their place; Chat Completions, under
// the same provider name, has no place for them and counts them.
func TestResponsesOpaqueReplay(t *testing.T) {
	rs := newRaw(t, 200, "text/event-stream", webSearchStream(completed))
	p := openai.NewResponses(openai.Config{APIKey: key, BaseURL: rs.URL})
	_, resp, err := run(p, hi("gpt-5"))
	if err != nil {
		t.Fatal(err)
	}
	stored, _ := json.Marshal(resp.Message)
	var loaded llm.Message
	if err := json.Unmarshal(stored, &loaded); err != nil {
		t.Fatal(err)
	}
	req := hi("gpt-5")
	req.Messages = append(req.Messages, loaded, llm.UserText("and?"))
	if _, _, err := run(p, req); err != nil {
		t.Fatal(err)
	}
	ws, ci := loaded.Content[0].(*llm.Opaque), loaded.Content[1].(*llm.Opaque)
	want := string(ws.Raw) + "," + string(ci.Raw) + `,{"content":[{"annotations":[],"text":"1024, and good news.","type":"output_text"}],"role":"assistant","type":"message"}`
	rs.mu.Lock()
	body := string(rs.bodies[1])
	rs.mu.Unlock()
	if !strings.Contains(body, want) {
		t.Errorf("items not replayed byte for byte; want\n%s\nin\n%s", want, body)
	}

	before := llm.DropsOf("openai", llm.DropReplay, "web_search_call")
	chat := newRaw(t, 200, "text/event-stream", sse(`data: {"id":"c","choices":[{"index":0,"delta":{"content":"x"},"finish_reason":"stop"}]}`, "data: [DONE]"))
	if _, _, err := run(openai.NewChat(openai.Config{APIKey: key, BaseURL: chat.URL}), req); err != nil {
		t.Fatal(err)
	}
	if sent := string(chat.bodies[0]); strings.Contains(sent, "ws_67c9fa05") || !strings.Contains(sent, "good news") {
		t.Errorf("chat request: opaque items sent, or the text lost:\n%s", sent)
	}
	if llm.DropsOf("openai", llm.DropReplay, "web_search_call") != before+1 {
		t.Error("the item Chat Completions left out was not counted")
	}
}

// TestResponsesIncomplete checks how an incomplete reply maps onto a stop
// reason when it holds tool calls: the calls are always in the message (the
// loop answers each: LOOP-5), and the stop reason says whether they can be
// run (tool_use) or may be cut (max_tokens).
func TestResponsesIncomplete(t *testing.T) {
	call := func(idx, id, args string, done bool) []string {
		out := []string{ev("response.output_item.added", `{"type":"response.output_item.added","output_index":`+idx+`,"item":{"id":"fc_`+id+`","type":"function_call","call_id":"`+id+`","name":"read","arguments":""}}`),
			ev("response.function_call_arguments.delta", `{"type":"response.function_call_arguments.delta","output_index":`+idx+`,"delta":`+strconvQuote(args)+`}`)}
		if done {
			out = append(out, ev("response.output_item.done", `{"type":"response.output_item.done","output_index":`+idx+`,"item":{"id":"fc_`+id+`","type":"function_call","call_id":"`+id+`","name":"read","arguments":`+strconvQuote(args)+`}}`))
		}
		return out
	}
	incomplete := func(details string) string {
		return ev("response.incomplete", `{"type":"response.incomplete","response":{"id":"resp_i","status":"incomplete"`+details+`}}`)
	}
	cases := []struct {
		name  string
		body  []string
		stop  llm.StopReason
		calls int
	}{
		{"max_output_tokens, one call whole and one cut", append(append(call("0", "c1", `{"path":"a"}`, true), call("1", "c2", `{"pa`, false)...),
			incomplete(`,"incomplete_details":{"reason":"max_output_tokens"}`)), llm.StopMaxTokens, 2},
		{"max_output_tokens, every call whole", append(call("0", "c1", `{"path":"a"}`, true), incomplete(`,"incomplete_details":{"reason":"max_output_tokens"}`)), llm.StopMaxTokens, 1},
		{"content_filter with a call", append(call("0", "c1", `{"path":"a"}`, true), incomplete(`,"incomplete_details":{"reason":"content_filter"}`)), llm.StopRefusal, 1},
		{"an unknown reason, every call whole", append(call("0", "c1", `{"path":"a"}`, true), incomplete(`,"incomplete_details":{"reason":"max_tool_calls"}`)), llm.StopToolUse, 1},
		{"an unknown reason, a call cut", append(call("0", "c1", `{"pa`, false), incomplete(`,"incomplete_details":{"reason":"max_tool_calls"}`)), llm.StopMaxTokens, 1},
		{"no reason, a call cut", append(call("0", "c1", `{"pa`, false), incomplete(``)), llm.StopMaxTokens, 1},
		{"a reason without a status", append(call("0", "c1", `{"pa`, false),
			ev("response.incomplete", `{"type":"response.incomplete","response":{"id":"resp_i","incomplete_details":{"reason":"max_output_tokens"}}}`)), llm.StopMaxTokens, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rs := newRaw(t, 200, "text/event-stream", sse(c.body...))
			_, resp, err := run(openai.NewResponses(openai.Config{APIKey: key, BaseURL: rs.URL}), hi("gpt-5"))
			if err != nil {
				t.Fatal(err)
			}
			if resp.StopReason != c.stop || len(resp.Message.ToolUses()) != c.calls {
				t.Errorf("stop %q with %d calls, want %q with %d", resp.StopReason, len(resp.Message.ToolUses()), c.stop, c.calls)
			}
		})
	}
}

func strconvQuote(s string) string { b, _ := json.Marshal(s); return string(b) }

// TestResponsesSpliced: a second response.created after content was
// streamed is malformed (the retry layer calls again); before any content
// it replaces the first.
func TestResponsesSpliced(t *testing.T) {
	created := func(id string) string {
		return ev("response.created", `{"type":"response.created","response":{"id":"`+id+`","status":"in_progress","output":[]}}`)
	}
	text := ev("response.output_text.delta", `{"type":"response.output_text.delta","output_index":0,"delta":"Hel"}`)
	rs := newRaw(t, 200, "text/event-stream", sse(created("resp_a"), text, created("resp_b"), text, ev("response.completed", completed)))
	_, _, err := run(openai.NewResponses(openai.Config{APIKey: key, BaseURL: rs.URL}), hi("gpt-5"))
	if llm.KindOf(err) != llm.KindMalformed || !strings.Contains(err.Error(), "second response.created") {
		t.Fatalf("error %v, want malformed naming the second response.created", err)
	}
	rs = newRaw(t, 200, "text/event-stream", sse(created("resp_a"), created("resp_b"), text, ev("response.completed", completed)))
	_, resp, err := run(openai.NewResponses(openai.Config{APIKey: key, BaseURL: rs.URL}), hi("gpt-5"))
	if err != nil || resp.ID != "resp_b" || resp.Message.TextOf() != "Hel" {
		t.Fatalf("restart before content: %+v, %v", resp, err)
	}
}

// TestResponsesHostile is an attack table for the Responses stream.
func TestResponsesHostile(t *testing.T) {
	t.Run("an item over the cap takes the reply's opaque items with it", func(t *testing.T) {
		huge := `{"type":"response.output_item.done","output_index":1,"item":{"id":"ci_1","type":"code_interpreter_call","outputs":[{"type":"logs","logs":"` +
			strings.Repeat("A", llm.MaxOpaqueBytes) + `"}]}}`
		before := llm.DropsOf("openai", llm.DropOversize, "web_search_call")
		rs := newRaw(t, 200, "text/event-stream", sse(ev("response.output_item.done", wsDone), ev("response.output_item.done", huge),
			ev("response.output_text.delta", msgText), ev("response.completed", completed)))
		_, resp, err := run(openai.NewResponses(openai.Config{APIKey: key, BaseURL: rs.URL}), hi("gpt-5"))
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range resp.Message.Content {
			if _, ok := b.(*llm.Opaque); ok {
				t.Errorf("opaque block kept: %T", b)
			}
		}
		if resp.Message.TextOf() == "" || llm.DropsOf("openai", llm.DropOversize, "web_search_call") != before+1 {
			t.Errorf("text %q; the dropped items not counted", resp.Message.TextOf())
		}
	})
	t.Run("thousands of unknown events", func(t *testing.T) {
		evs := make([]string, 0, 5003)
		for i := range 5000 {
			evs = append(evs, ev("response.noise", `{"type":"response.noise","n":`+strings.Repeat("1", 1+i%5)+`}`))
		}
		before := llm.DropsOf("openai", llm.DropEvent, "response.noise")
		evs = append(evs, ev("response.output_text.delta", msgText), ev("response.completed", completed))
		rs := newRaw(t, 200, "text/event-stream", sse(evs...))
		_, resp, err := run(openai.NewResponses(openai.Config{APIKey: key, BaseURL: rs.URL}), hi("gpt-5"))
		if err != nil || resp.Message.TextOf() == "" {
			t.Fatalf("%+v, %v", resp, err)
		}
		if got := llm.DropsOf("openai", llm.DropEvent, "response.noise") - before; got != 5000 {
			t.Errorf("counted %d unknown events, want 5000", got)
		}
	})
}

// TestResponsesKindChange is an attack table: an output index that changes
// kind once it holds content would stream as one kind and end up as
// another in the final message; it is malformed. An index announced and
// still empty may take another kind.
func TestResponsesKindChange(t *testing.T) {
	reasoning := ev("response.reasoning_summary_text.delta", `{"type":"response.reasoning_summary_text.delta","output_index":0,"delta":"think"}`)
	text := ev("response.output_text.delta", `{"type":"response.output_text.delta","output_index":0,"delta":"say"}`)
	for _, c := range []struct{ name, a, b string }{
		{"text into a reasoning item", reasoning, text},
		{"reasoning into a message", text, reasoning},
		{"an opaque item over a message", text, ev("response.output_item.done", `{"type":"response.output_item.done","output_index":0,"item":{"type":"web_search_call","id":"ws"}}`)},
		{"a message over an opaque item", ev("response.output_item.done", wsDone), text},
	} {
		t.Run(c.name, func(t *testing.T) {
			rs := newRaw(t, 200, "text/event-stream", sse(c.a, c.b, ev("response.completed", completed)))
			_, _, err := run(openai.NewResponses(openai.Config{APIKey: key, BaseURL: rs.URL}), hi("gpt-5"))
			if llm.KindOf(err) != llm.KindMalformed || !strings.Contains(err.Error(), "changed from") {
				t.Errorf("error %v, want malformed naming the change", err)
			}
		})
	}
	rs := newRaw(t, 200, "text/event-stream", sse(ev("response.output_item.added", `{"type":"response.output_item.added","output_index":0,"item":{"id":"rs","type":"reasoning","summary":[]}}`),
		ev("response.output_item.added", `{"type":"response.output_item.added","output_index":0,"item":{"id":"m","type":"message","content":[]}}`), text, ev("response.completed", completed)))
	if _, resp, err := run(openai.NewResponses(openai.Config{APIKey: key, BaseURL: rs.URL}), hi("gpt-5")); err != nil || resp.Message.TextOf() != "say" {
		t.Errorf("an empty item re-announced: %+v, %v", resp, err)
	}
}
