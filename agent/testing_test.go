package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/reinhq/rein/llm"
	"github.com/reinhq/rein/tool"
)

// probe counts concurrent executions to check the scheduling of LOOP-6.
type probe struct {
	// barrier, when set, holds each read call until that many calls run at
	// once (or a generous bound passes), so a test of parallelism does not
	// depend on how the scheduler happens to start goroutines.
	barrier int
	mu      sync.Mutex
	reached chan struct{} // closed once barrier calls run at once
	running int
	max     int
	order   []string // start order
	overlap bool     // a mutating tool ran alongside another
	mutRun  bool
}

func (p *probe) enter(name string, mutating bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.running++
	if p.running > p.max {
		p.max = p.running
	}
	if p.barrier > 0 && p.running >= p.barrier {
		p.barrierLocked()
		select {
		case <-p.reached:
		default:
			close(p.reached)
		}
	}
	if p.mutRun || (mutating && p.running > 1) {
		p.overlap = true
	}
	if mutating {
		p.mutRun = true
	}
	p.order = append(p.order, name)
}

func (p *probe) leave(mutating bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.running--
	if mutating {
		p.mutRun = false
	}
}

// barrierLocked returns the channel closed at the barrier; p.mu is held.
func (p *probe) barrierLocked() chan struct{} {
	if p.reached == nil {
		p.reached = make(chan struct{})
	}
	return p.reached
}

// await waits until the barrier is reached, at most 5 s (the test's
// concurrency check then reports the calls that never ran together).
func (p *probe) await() {
	if p.barrier == 0 {
		return
	}
	p.mu.Lock()
	reached := p.barrierLocked()
	p.mu.Unlock()
	select {
	case <-reached:
	case <-time.After(5 * time.Second):
	}
}

type sleepIn struct {
	ID string `json:"id"`
	MS int    `json:"ms,omitempty"`
}

// testTools returns read (read-only, parallel), write (mutating), fail
// (always fails), image (returns an image) and hang (waits for ctx).
func testTools(t testing.TB, p *probe) *tool.Set {
	t.Helper()
	read := tool.New("read", "Reads.", tool.Meta{ReadOnly: true, ConcurrencySafe: true, Category: tool.CategoryRead},
		func(ctx context.Context, c tool.Call, in sleepIn) (tool.Result, error) {
			p.enter("read:"+in.ID, false)
			defer p.leave(false)
			p.await()
			select {
			case <-time.After(time.Duration(in.MS) * time.Millisecond):
			case <-ctx.Done():
				return tool.Text("partial " + in.ID), nil
			}
			return tool.Text("read " + in.ID), nil
		})
	write := tool.New("write", "Writes.", tool.Meta{Category: tool.CategoryEdit},
		func(ctx context.Context, c tool.Call, in sleepIn) (tool.Result, error) {
			p.enter("write:"+in.ID, true)
			defer p.leave(true)
			time.Sleep(time.Duration(in.MS) * time.Millisecond)
			return tool.Text("wrote " + in.ID), nil
		})
	fail := tool.New("fail", "Fails.", tool.Meta{ReadOnly: true, ConcurrencySafe: true},
		func(ctx context.Context, c tool.Call, in struct{}) (tool.Result, error) {
			return tool.Errorf("it broke"), nil
		})
	image := tool.New("image", "Screenshot.", tool.Meta{ReadOnly: true},
		func(ctx context.Context, c tool.Call, in struct{}) (tool.Result, error) {
			return tool.Result{Content: []llm.Block{&llm.Text{Text: "screenshot"}, &llm.Image{MediaType: "image/png", Data: []byte("png")}}}, nil
		})
	hang := tool.New("hang", "Hangs until cancelled.", tool.Meta{Category: tool.CategoryExecute},
		func(ctx context.Context, c tool.Call, in struct{}) (tool.Result, error) {
			p.enter("hang", true)
			defer p.leave(true)
			<-ctx.Done()
			return tool.Text("hung"), nil
		})
	s, err := tool.NewSet(tool.OriginBuiltin, read, write, fail, image, hang)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// result is everything a run yielded.
type result struct {
	events []Event
	done   *DoneEvent
	err    error
	msgs   []llm.Message // the durable messages, in order
}

func (r result) count(t EventType) int {
	n := 0
	for _, e := range r.events {
		if e.Type == t {
			n++
		}
	}
	return n
}

func (r result) toolEnds() []*ToolEvent {
	var out []*ToolEvent
	for _, e := range r.events {
		if e.Type == EventToolEnd {
			out = append(out, e.Tool)
		}
	}
	return out
}

func drive(t testing.TB, ctx context.Context, a *Agent, in Input) result {
	t.Helper()
	var res result
	for ev, err := range a.Run(ctx, in) {
		res.events = append(res.events, ev)
		if ev.Type == EventMessage {
			res.msgs = append(res.msgs, *ev.Message)
		}
		if ev.Type == EventDone {
			if res.done != nil {
				t.Fatal("two done events")
			}
			res.done, res.err = ev.Done, err
		}
	}
	if res.done == nil {
		t.Fatal("run ended without a done event")
	}
	if last := res.events[len(res.events)-1]; last.Type != EventDone {
		t.Fatalf("last event is %s, want done", last.Type)
	}
	if err := llm.CheckPairing(append(append([]llm.Message(nil), in.History...), res.msgs...)); err != nil && res.done.Reason != ReasonError {
		// A finished run leaves a history whose last assistant message may
		// hold no calls; anything else must pair up.
		t.Fatalf("history after the run breaks LOOP-5: %v", err)
	}
	return res
}

func newAgent(p llm.Provider, tools *tool.Set, mod ...func(*Config)) *Agent {
	cfg := Config{Provider: p, ProviderName: "scripted", Model: "test-model", Tools: tools, NoRetry: true}
	for _, m := range mod {
		m(&cfg)
	}
	return New(cfg)
}

func prompt(text string) *llm.Message {
	m := llm.UserText(text)
	return &m
}

func call(id, name string, input any) llm.ToolUse {
	b, _ := json.Marshal(input)
	return llm.ToolUse{ID: id, Name: name, Input: b}
}

func resultsOf(m llm.Message) map[string]string {
	out := map[string]string{}
	for _, r := range m.ToolResults() {
		out[r.ToolUseID] = llm.Message{Content: r.Content}.TextOf()
	}
	return out
}

var seq atomic.Int64

func runID() string { return fmt.Sprintf("run-%d", seq.Add(1)) }
