package agent

import (
	"context"
	"errors"
	"iter"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/reinhq/rein/llm"
	"github.com/reinhq/rein/llm/llmtest"
	"github.com/reinhq/rein/tool"
)

var ctxb = context.Background()

// LOOP-1, LOOP-2: one tool call, then a final answer.
func TestOneTool(t *testing.T) {
	p := llmtest.NewScripted(
		llmtest.Reply{Text: "Reading.", ToolCalls: []llm.ToolUse{call("c1", "read", sleepIn{ID: "a"})}, Chunk: 3,
			Usage: llm.Usage{InputTokens: 10, OutputTokens: 5}},
		llmtest.Reply{Text: "It says a.", Usage: llm.Usage{InputTokens: 20, OutputTokens: 3}},
	)
	res := drive(t, ctxb, newAgent(p, testTools(t, &probe{})), Input{Prompt: prompt("read a"), RunID: runID()})
	if res.done.Reason != ReasonCompleted || res.done.Text != "It says a." {
		t.Fatalf("done = %+v", res.done)
	}
	if res.done.Turns != 2 || res.done.Usage.InputTokens != 30 || res.done.Stats.ToolCalls != 1 {
		t.Errorf("done = %+v", res.done)
	}
	var types []EventType
	for _, e := range res.events {
		if e.Type != EventTextDelta {
			types = append(types, e.Type)
		}
	}
	want := []EventType{EventRunStart, EventMessage, EventUsage, EventMessage, EventToolStart, EventToolEnd,
		EventMessage, EventUsage, EventMessage, EventDone}
	if diff := cmp.Diff(want, types); diff != "" {
		t.Errorf("event order (-want +got):\n%s", diff)
	}
	if res.count(EventTextDelta) < 3 {
		t.Errorf("text was not streamed: %d deltas", res.count(EventTextDelta))
	}
	reqs := p.Requests()
	if len(reqs) != 2 || len(reqs[1].Messages) != 3 || len(reqs[0].Tools) != 5 {
		t.Fatalf("requests: %d, second has %d messages", len(reqs), len(reqs[1].Messages))
	}
	if got := resultsOf(reqs[1].Messages[2]); got["c1"] != "read a" {
		t.Errorf("tool result sent = %v", got)
	}
}

// LOOP-6: read-only calls run in parallel and finish out of order; results
// are written back in declaration order. The calls' durations are on the
// bubble's clock, so the order they finish in does not depend on the load.
func TestParallelReadOnlyDeclarationOrder(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		pr := &probe{barrier: 3}
		p := llmtest.NewScripted(
			llmtest.Reply{ToolCalls: []llm.ToolUse{
				call("c1", "read", sleepIn{ID: "1", MS: 60}),
				call("c2", "read", sleepIn{ID: "2", MS: 1}),
				call("c3", "read", sleepIn{ID: "3", MS: 30}),
			}},
			llmtest.Reply{Text: "done"},
		)
		res := drive(t, ctxb, newAgent(p, testTools(t, pr)), Input{Prompt: prompt("go")})
		if res.done.Reason != ReasonCompleted {
			t.Fatalf("done = %+v", res.done)
		}
		if pr.max != 3 {
			t.Errorf("max concurrency = %d, want 3", pr.max)
		}
		var ids []string
		for _, r := range res.msgs[2].ToolResults() {
			ids = append(ids, r.ToolUseID)
		}
		if diff := cmp.Diff([]string{"c1", "c2", "c3"}, ids); diff != "" {
			t.Errorf("results order (-want +got):\n%s", diff)
		}
		ends := res.toolEnds()
		if ends[0].ID != "c2" {
			t.Errorf("tool_end events should follow completion order; first was %s", ends[0].ID)
		}
	})
}

// LOOP-6: mutating calls run alone, between parallel batches of read-only ones.
func TestMixedCallsMutatingSerial(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		pr := &probe{}
		p := llmtest.NewScripted(
			llmtest.Reply{ToolCalls: []llm.ToolUse{
				call("r1", "read", sleepIn{ID: "1", MS: 20}),
				call("r2", "read", sleepIn{ID: "2", MS: 20}),
				call("w1", "write", sleepIn{ID: "w1", MS: 10}),
				call("w2", "write", sleepIn{ID: "w2", MS: 10}),
				call("r3", "read", sleepIn{ID: "3", MS: 5}),
			}},
			llmtest.Reply{Text: "done"},
		)
		res := drive(t, ctxb, newAgent(p, testTools(t, pr), func(c *Config) { c.MaxParallel = 8 }), Input{Prompt: prompt("go")})
		if res.done.Reason != ReasonCompleted {
			t.Fatalf("done = %+v", res.done)
		}
		if pr.overlap {
			t.Error("a mutating tool ran alongside another tool")
		}
		if pr.max > 2 { // r1 and r2 may overlap; parallelism itself is TestParallelReadOnlyDeclarationOrder's
			t.Errorf("max concurrency = %d, want at most 2 (r1, r2)", pr.max)
		}
		if idx := strings.Index(strings.Join(pr.order, ","), "write:w1,write:w2,read:3"); idx < 0 {
			t.Errorf("start order = %v", pr.order)
		}
	})
}

// LOOP-7: a tool error goes back to the model and is counted.
func TestToolErrorIsInformation(t *testing.T) {
	p := llmtest.NewScripted(
		llmtest.Reply{ToolCalls: []llm.ToolUse{call("c1", "fail", struct{}{}), call("c2", "read", sleepIn{ID: "ok"})}},
		llmtest.Reply{Text: "recovered"},
	)
	res := drive(t, ctxb, newAgent(p, testTools(t, &probe{})), Input{Prompt: prompt("go")})
	if res.done.Reason != ReasonCompleted {
		t.Fatalf("done = %+v", res.done)
	}
	rs := res.msgs[2].ToolResults()
	if !rs[0].IsError || rs[1].IsError {
		t.Errorf("is_error = %v, %v", rs[0].IsError, rs[1].IsError)
	}
	st := res.done.Stats
	if st.ToolCalls != 2 || st.ToolErrors != 1 || st.ErrorsByTool["fail"]["error"] != 1 {
		t.Errorf("stats = %+v", st)
	}
}

// TOOL-1, TOOL-2: an unknown tool and invalid input get error results that
// help the model fix the call.
func TestUnknownToolAndInvalidInput(t *testing.T) {
	p := llmtest.NewScripted(
		llmtest.Reply{ToolCalls: []llm.ToolUse{
			call("c1", "reed", sleepIn{ID: "x"}),
			{ID: "c2", Name: "read", Input: []byte(`{"id": 42}`)},
		}},
		llmtest.Reply{Text: "ok"},
	)
	res := drive(t, ctxb, newAgent(p, testTools(t, &probe{})), Input{Prompt: prompt("go")})
	got := resultsOf(res.msgs[2])
	if !strings.Contains(got["c1"], `unknown tool "reed"`) || !strings.Contains(got["c1"], "read") {
		t.Errorf("unknown tool result = %q", got["c1"])
	}
	if !strings.Contains(got["c2"], `field "id"`) {
		t.Errorf("invalid input result = %q; want it to name the field", got["c2"])
	}
	if st := res.done.Stats; st.ErrorsByTool["reed"]["unknown_tool"] != 1 || st.ErrorsByTool["read"]["invalid"] != 1 {
		t.Errorf("stats = %+v", st)
	}
}

// LOOP-4: max turns ends the run with max_turns.
func TestMaxTurns(t *testing.T) {
	p := llmtest.NewScripted()
	p.Repeat = &llmtest.Reply{ToolCalls: []llm.ToolUse{call("c", "read", sleepIn{ID: "x"})}}
	res := drive(t, ctxb, newAgent(p, testTools(t, &probe{}), func(c *Config) { c.MaxTurns = 3 }), Input{Prompt: prompt("loop")})
	if res.done.Reason != ReasonMaxTurns || res.done.Turns != 3 || len(p.Requests()) != 3 {
		t.Fatalf("done = %+v, requests %d", res.done, len(p.Requests()))
	}
}

// LOOP-4, LOOP-5: cancelling mid-stream ends the run as cancelled; no tool runs.
func TestCancelMidStream(t *testing.T) {
	pr := &probe{}
	p := llmtest.NewScripted(llmtest.Reply{Text: "partial answer", ToolCalls: []llm.ToolUse{call("c1", "write", sleepIn{ID: "x"})}, Hang: true})
	ctx, cancel := context.WithCancel(ctxb)
	defer cancel()
	a := newAgent(p, testTools(t, pr))
	var res result
	for ev := range a.Run(ctx, Input{Prompt: prompt("go")}) {
		res.events = append(res.events, ev)
		if ev.Type == EventTextDelta {
			cancel()
		}
		if ev.Type == EventMessage {
			res.msgs = append(res.msgs, *ev.Message)
		}
		if ev.Type == EventDone {
			res.done = ev.Done
		}
	}
	if res.done == nil || res.done.Reason != ReasonCancelled {
		t.Fatalf("done = %+v", res.done)
	}
	if len(pr.order) != 0 {
		t.Errorf("a tool ran from a cancelled reply: %v", pr.order)
	}
	last := res.msgs[len(res.msgs)-1]
	if last.Role != llm.RoleAssistant || len(last.ToolUses()) != 0 || last.TextOf() == "" {
		t.Errorf("kept message = %+v; want the text shown, no tool calls", last)
	}
}

// LOOP-4, LOOP-5: cancelling mid-tool gives every call a result marked
// interrupted, and calls not started a result saying they did not run.
func TestCancelMidTool(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := llmtest.NewScripted(llmtest.Reply{ToolCalls: []llm.ToolUse{
			call("c1", "hang", struct{}{}), call("c2", "write", sleepIn{ID: "later"}),
		}})
		ctx, cancel := context.WithCancel(ctxb)
		defer cancel()
		a := newAgent(p, testTools(t, &probe{}))
		var res result
		for ev := range a.Run(ctx, Input{Prompt: prompt("go")}) {
			if ev.Type == EventToolStart && ev.Tool.Name == "hang" {
				go func() { synctest.Wait(); cancel() }() // once the call hangs
			}
			if ev.Type == EventMessage {
				res.msgs = append(res.msgs, *ev.Message)
			}
			if ev.Type == EventDone {
				res.done = ev.Done
			}
		}
		if res.done.Reason != ReasonCancelled {
			t.Fatalf("done = %+v", res.done)
		}
		got := resultsOf(res.msgs[len(res.msgs)-1])
		if !strings.Contains(got["c1"], "interrupted") || !strings.Contains(got["c1"], "side effects") {
			t.Errorf("c1 = %q", got["c1"])
		}
		if !strings.Contains(got["c2"], "not run") {
			t.Errorf("c2 = %q", got["c2"])
		}
	})
}

// LOOP-10: an empty reply is retried once, then reported as an error.
func TestEmptyReply(t *testing.T) {
	p := llmtest.NewScripted(llmtest.Reply{}, llmtest.Reply{Text: "here"})
	res := drive(t, ctxb, newAgent(p, nil), Input{Prompt: prompt("hi")})
	if res.done.Reason != ReasonCompleted || res.done.Text != "here" {
		t.Fatalf("done = %+v", res.done)
	}
	p = llmtest.NewScripted(llmtest.Reply{}, llmtest.Reply{Text: "  "})
	res = drive(t, ctxb, newAgent(p, nil), Input{Prompt: prompt("hi")})
	if res.done.Reason != ReasonError || !strings.Contains(res.done.Error, "empty reply twice") {
		t.Fatalf("done = %+v", res.done)
	}
}

// LOOP-8: an image result is moved into a user message for a model that
// takes no images in tool results, and replaced by a note without vision.
func TestImageResults(t *testing.T) {
	for _, tc := range []struct {
		name string
		caps Caps
		want func(t *testing.T, msgs []llm.Message)
	}{
		{"inline", Caps{}, func(t *testing.T, msgs []llm.Message) {
			if n := len(msgs); n != 3 || countImages(msgs[2].ToolResults()[0].Content) != 1 {
				t.Errorf("image not inline: %+v", msgs)
			}
		}},
		{"moved", Caps{NoToolResultImages: true}, func(t *testing.T, msgs []llm.Message) {
			if len(msgs) != 4 || msgs[3].Role != llm.RoleUser || countImages(msgs[3].Content) != 1 {
				t.Errorf("image not moved into a user message: %+v", msgs)
			}
		}},
		{"no vision", Caps{NoVision: true, NoToolResultImages: true}, func(t *testing.T, msgs []llm.Message) {
			for _, m := range msgs {
				if countImages(m.Content) > 0 {
					t.Errorf("image sent to a model without vision")
				}
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := llmtest.NewScripted(llmtest.Reply{ToolCalls: []llm.ToolUse{call("c1", "image", struct{}{})}}, llmtest.Reply{Text: "a cat"})
			res := drive(t, ctxb, newAgent(p, testTools(t, &probe{}), func(c *Config) { c.Caps = tc.caps }), Input{Prompt: prompt("look")})
			if res.done.Reason != ReasonCompleted {
				t.Fatalf("done = %+v", res.done)
			}
			tc.want(t, p.Requests()[1].Messages)
			// The stored history keeps the image where the tool put it.
			if countImages(res.msgs[2].ToolResults()[0].Content) != 1 {
				t.Error("stored tool result lost its image")
			}
		})
	}
}

// LOOP-9: a session whose last message holds tool results continues without
// a new user message.
func TestContinuePending(t *testing.T) {
	hist := []llm.Message{
		llm.UserText("go"),
		{Role: llm.RoleAssistant, Content: []llm.Block{&llm.ToolUse{ID: "c1", Name: "read", Input: []byte(`{"id":"a"}`)}}},
		{Role: llm.RoleUser, Content: []llm.Block{&llm.ToolResult{ToolUseID: "c1", Content: []llm.Block{&llm.Text{Text: "read a"}}}}},
	}
	p := llmtest.NewScripted(llmtest.Reply{Text: "continued"})
	res := drive(t, ctxb, newAgent(p, testTools(t, &probe{})), Input{History: hist})
	if res.done.Reason != ReasonCompleted || res.done.Text != "continued" || !res.events[0].RunStart.Continued {
		t.Fatalf("done = %+v", res.done)
	}
	if n := len(p.Requests()[0].Messages); n != 3 {
		t.Errorf("request carried %d messages, want the 3 of the history", n)
	}
	res = drive(t, ctxb, newAgent(p, nil), Input{History: hist[:1]})
	if res.done.Reason != ReasonError || !strings.Contains(res.done.Error, "nothing to continue") {
		t.Errorf("continue without pending results: %+v", res.done)
	}
}

// LOOP-5: a stream that fails after announcing a tool call runs nothing, and
// the retried request carries no trace of the call.
func TestFailedStreamRunsNoTool(t *testing.T) {
	pr := &probe{}
	cut := &llm.Error{Kind: llm.KindStreamCut, Provider: "scripted", Message: "cut"}
	p := llmtest.NewScripted(
		llmtest.Reply{Text: "Writing", ToolCalls: []llm.ToolUse{call("c1", "write", sleepIn{ID: "once"})}, Err: cut},
		llmtest.Reply{Text: "Writing", ToolCalls: []llm.ToolUse{call("c2", "write", sleepIn{ID: "once"})}},
		llmtest.Reply{Text: "done"},
	)
	a := New(Config{Provider: p, ProviderName: "scripted", Model: "m", Tools: testTools(t, pr),
		Retry: llm.RetryPolicy{Initial: time.Millisecond, Max: time.Millisecond}})
	res := drive(t, ctxb, a, Input{Prompt: prompt("write once")})
	if res.done.Reason != ReasonCompleted {
		t.Fatalf("done = %+v", res.done)
	}
	if diff := cmp.Diff([]string{"write:once"}, pr.order); diff != "" {
		t.Errorf("tools run (-want +got):\n%s", diff)
	}
	if res.count(EventRetry) != 1 || res.done.Stats.Retries != 1 {
		t.Errorf("retry events = %d", res.count(EventRetry))
	}
	reqs := p.Requests()
	if len(reqs[1].Messages) != 1 {
		t.Errorf("retried request carries %d messages; want only the prompt", len(reqs[1].Messages))
	}
	var text strings.Builder
	for _, e := range res.events {
		if e.Type == EventTextDelta && e.Turn == 1 {
			text.WriteString(e.Text)
		}
	}
	if text.String() != "Writing" {
		t.Errorf("turn 1 text shown = %q; want it once", text.String())
	}
}

// LOOP-3: the termination reasons the loop produces.
func TestTerminationReasons(t *testing.T) {
	overflow := &llm.Error{Kind: llm.KindContextOverflow, Provider: "scripted", Message: "prompt is too long"}
	auth := &llm.Error{Kind: llm.KindAuth, Provider: "scripted", Message: "invalid key", Hint: "set X"}
	tests := []struct {
		name    string
		replies []llmtest.Reply
		cfg     func(*Config)
		want    Reason
	}{
		{"completed", []llmtest.Reply{{Text: "hi"}}, nil, ReasonCompleted},
		{"max_tokens", []llmtest.Reply{{Text: "long", Stop: llm.StopMaxTokens}}, nil, ReasonMaxTokens},
		{"refusal", []llmtest.Reply{{Text: "no", Stop: llm.StopRefusal}}, nil, ReasonRefusal},
		{"error", []llmtest.Reply{{Err: auth}}, nil, ReasonError},
		{"context_overflow", []llmtest.Reply{{Err: overflow}}, nil, ReasonContextOverflow},
		{"timeout", []llmtest.Reply{{Text: "x", Hang: true}}, func(c *Config) { c.Timeout = 20 * time.Millisecond }, ReasonTimeout},
		{"max_turns", []llmtest.Reply{{ToolCalls: []llm.ToolUse{call("c", "read", sleepIn{ID: "x"})}}}, func(c *Config) { c.MaxTurns = 1 }, ReasonMaxTurns},
		{"permission_denied", []llmtest.Reply{{ToolCalls: []llm.ToolUse{call("c", "write", sleepIn{ID: "x"})}}},
			func(c *Config) { c.Permissions = &fakePerms{decision: Ask, answer: Answer{Stop: true, By: "user"}} }, ReasonPermissionDenied},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := llmtest.NewScripted(tt.replies...)
			mods := []func(*Config){}
			if tt.cfg != nil {
				mods = append(mods, tt.cfg)
			}
			res := drive(t, ctxb, newAgent(p, testTools(t, &probe{}), mods...), Input{Prompt: prompt("go")})
			if res.done.Reason != tt.want {
				t.Fatalf("reason = %s, want %s (%s)", res.done.Reason, tt.want, res.done.Error)
			}
			if tt.want != ReasonCompleted && res.done.Error == "" {
				t.Errorf("done.error is empty for %s", tt.want)
			}
		})
	}
	// cancelled is covered by TestCancelMidStream and TestCancelMidTool.
	res := drive(t, ctxb, newAgent(llmtest.NewScripted(llmtest.Reply{Err: auth}), nil), Input{Prompt: prompt("go")})
	if !strings.Contains(res.done.Error, "set X") {
		t.Errorf("auth error lost its hint: %q", res.done.Error)
	}
}

// A broken invariant fails loudly (LOOP-5).
func TestBrokenHistoryFailsLoudly(t *testing.T) {
	hist := []llm.Message{
		llm.UserText("go"),
		{Role: llm.RoleAssistant, Content: []llm.Block{&llm.ToolUse{ID: "c1", Name: "read", Input: []byte(`{}`)}}},
	}
	res := drive(t, ctxb, newAgent(llmtest.NewScripted(llmtest.Reply{Text: "x"}), nil), Input{History: hist, Prompt: prompt("again")})
	var pe *llm.PairingError
	if res.done.Reason != ReasonError || !errors.As(res.err, &pe) {
		t.Fatalf("done = %+v, err = %v", res.done, res.err)
	}
}

// fakePerms is a Permissions with a fixed decision and answer.
type fakePerms struct {
	decision Decision
	answer   Answer
	mu       sync.Mutex
	audits   []Audit
}

func (f *fakePerms) Decide(ctx context.Context, c Check) (Verdict, error) {
	if c.Meta.ReadOnly {
		return Verdict{Decision: Allow}, nil
	}
	return Verdict{Decision: f.decision, Reason: "writes need approval"}, nil
}

func (f *fakePerms) Ask(ctx context.Context, c Check, reason string) (Answer, error) {
	return f.answer, nil
}

func (f *fakePerms) Audit(ctx context.Context, a Audit) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.audits = append(f.audits, a)
}

// LOOP-4: calls queued behind the parallel bound do not start once the run
// is cancelled.
func TestQueuedCallsHonourCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(ctxb)
	defer cancel()
	var ran atomic.Int32
	stopper := tool.New("stopper", "Cancels the run.", tool.Meta{ReadOnly: true, ConcurrencySafe: true},
		func(c context.Context, call tool.Call, in struct{}) (tool.Result, error) {
			ran.Add(1)
			cancel()
			return tool.Text("cancelled"), nil
		})
	tools, _ := tool.NewSet(tool.OriginBuiltin, stopper)
	p := llmtest.NewScripted(llmtest.Reply{ToolCalls: []llm.ToolUse{
		call("c1", "stopper", struct{}{}), call("c2", "stopper", struct{}{}), call("c3", "stopper", struct{}{}), call("c4", "stopper", struct{}{}),
	}})
	res := drive(t, ctx, newAgent(p, tools, func(c *Config) { c.MaxParallel = 1 }), Input{Prompt: prompt("go")})
	if res.done.Reason != ReasonCancelled {
		t.Fatalf("done = %+v", res.done)
	}
	if n := ran.Load(); n != 1 {
		t.Errorf("%d calls ran after the first cancelled the run; want 1", n)
	}
	got := resultsOf(res.msgs[len(res.msgs)-1])
	notRun := 0
	for _, text := range got {
		if strings.HasPrefix(text, "not run") {
			notRun++
		}
	}
	if len(got) != 4 || notRun != 3 { // whichever call won the slot ran; the rest did not start
		t.Errorf("results = %v", got)
	}
}

// fakeCompactor compacts once, on the first Fit, to the last message, and
// reports a summary call it paid for.
type fakeCompactor struct{ done bool }

func (f *fakeCompactor) Fit(ctx context.Context, req *llm.Request, focus *Focus) ([]llm.Message, *CompactionEvent, error) {
	if f.done {
		return req.Messages, nil, nil
	}
	f.done = true
	hist := req.Messages[len(req.Messages)-1:]
	return hist, &CompactionEvent{TokensBefore: 100, TokensAfter: 10, Layers: []string{"summarize"},
		Usage: llm.Usage{InputTokens: 1000, OutputTokens: 50}, ModelCalls: 1}, nil
}

func (f *fakeCompactor) Overflow(ctx context.Context, req *llm.Request, focus *Focus) ([]llm.Message, *CompactionEvent, error) {
	return nil, nil, errors.New("unused")
}

// SESS-4: the summary call of a compaction counts in the run's usage and
// model calls.
func TestCompactionUsageCounted(t *testing.T) {
	p := llmtest.NewScripted(llmtest.Reply{Text: "ok", Usage: llm.Usage{InputTokens: 10, OutputTokens: 2}})
	res := drive(t, ctxb, newAgent(p, nil, func(c *Config) { c.Compactor = &fakeCompactor{} }),
		Input{History: []llm.Message{llm.UserText("old"), {Role: llm.RoleAssistant, Content: []llm.Block{&llm.Text{Text: "old reply"}}}}, Prompt: prompt("new")})
	if res.done.Reason != ReasonCompleted || res.count(EventCompaction) != 1 {
		t.Fatalf("done = %+v", res.done)
	}
	if st, u := res.done.Stats, res.done.Usage; st.ModelCalls != 2 || u.InputTokens != 1010 || u.OutputTokens != 52 {
		t.Errorf("stats %+v usage %+v; want the summary call counted", st, u)
	}
}

// PROV-5, issue 23: a history holding another provider's opaque blocks (a
// server tool's search) is sent without them, and run_start says so.
func TestForeignOpaqueWarning(t *testing.T) {
	raw := []byte(`{"type":"web_search_tool_result","tool_use_id":"srvtoolu_1","content":[]}`)
	hist := []llm.Message{
		llm.UserText("search"),
		{Role: llm.RoleAssistant, Provider: "anthropic", Model: "claude-sonnet-4-5", Content: []llm.Block{
			&llm.Opaque{Provider: "anthropic", Type: "web_search_tool_result", Raw: raw}, &llm.Text{Text: "Found it."}}},
	}
	p := llmtest.NewScripted(llmtest.Reply{Text: "ok"})
	res := drive(t, ctxb, newAgent(p, nil, func(c *Config) { c.Warnings = []string{"caller's"} }), Input{History: hist, Prompt: prompt("more")})
	w := res.events[0].RunStart.Warnings
	if len(w) != 2 || w[0] != "caller's" || !strings.Contains(w[1], "not sent to scripted") || !strings.Contains(w[1], "web_search_tool_result (from anthropic)") {
		t.Fatalf("run_start warnings %q", w)
	}
	// The same history to the provider that produced it: no warning.
	res = drive(t, ctxb, newAgent(llmtest.NewScripted(llmtest.Reply{Text: "ok"}), nil, func(c *Config) { c.ProviderName = "anthropic" }),
		Input{History: hist, Prompt: prompt("more")})
	if w := res.events[0].RunStart.Warnings; len(w) != 0 {
		t.Errorf("warnings for the producing provider: %q", w)
	}
}

// LOOP-10, issue 23: a paused turn whose reply is only a server tool's call
// (an opaque block) is kept and sent back to go on, not asked for again as
// an empty reply.
func TestPausedServerTool(t *testing.T) {
	use := &llm.Opaque{Provider: "scripted", Type: "server_tool_use",
		Raw: []byte(`{"type":"server_tool_use","id":"srvtoolu_1","name":"web_search","input":{"query":"q"}}`)}
	p := llmtest.NewScripted(
		llmtest.Reply{Func: func(ctx context.Context, req *llm.Request) iter.Seq2[llm.Delta, error] {
			return func(yield func(llm.Delta, error) bool) {
				yield(llm.Delta{Kind: llm.DeltaDone, Response: &llm.Response{StopReason: llm.StopPauseTurn,
					Message: llm.Message{Role: llm.RoleAssistant, Provider: "scripted", Model: "test-model", Content: []llm.Block{use}}}}, nil)
			}
		}},
		llmtest.Reply{Text: "Found it."})
	res := drive(t, ctxb, newAgent(p, nil), Input{Prompt: prompt("search")})
	if res.done.Reason != ReasonCompleted || res.done.Text != "Found it." {
		t.Fatalf("done = %+v", res.done)
	}
	reqs := p.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests, want 2 (the paused reply was asked for again?)", len(reqs))
	}
	msgs := reqs[1].Messages
	if last := msgs[len(msgs)-1]; len(last.Content) != 1 || last.Content[0] != llm.Block(use) {
		t.Errorf("second request ends with %+v, want the paused reply's opaque block", last)
	}
}
