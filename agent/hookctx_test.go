package agent

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/reinhq/rein/hook"
	"github.com/reinhq/rein/llm"
	"github.com/reinhq/rein/llm/llmtest"
)

// traceKey stands for what a caller puts in the run's context: a trace
// span, a request id, a logger.
type traceKey struct{}

// ctxProbe registers a hook on each event that records the value under
// traceKey in the context the hook ran on, and whether that context was
// already done.
type ctxProbe struct {
	mu   sync.Mutex
	seen map[hook.Event][]string
	trig map[hook.Event][]hook.Trigger
	done map[hook.Event]bool
}

func newCtxProbe(t *testing.T, events ...hook.Event) (*ctxProbe, *hook.Registry) {
	t.Helper()
	p := &ctxProbe{seen: map[hook.Event][]string{}, trig: map[hook.Event][]hook.Trigger{}, done: map[hook.Event]bool{}}
	reg := hook.NewRegistry(hook.Options{})
	for _, ev := range events {
		err := reg.Register(hook.Registration{Event: ev, Name: "probe-" + string(ev), Hook: hook.Func(func(ctx context.Context, in hook.Input) (hook.Outcome, error) {
			v, _ := ctx.Value(traceKey{}).(string)
			p.mu.Lock()
			defer p.mu.Unlock()
			p.seen[ev] = append(p.seen[ev], v)
			p.trig[ev] = append(p.trig[ev], in.Trigger)
			p.done[ev] = p.done[ev] || ctx.Err() != nil
			return hook.Outcome{}, nil
		})})
		if err != nil {
			t.Fatal(err)
		}
	}
	return p, reg
}

// overflowCompactor never compacts on Fit and compacts to the last message
// on Overflow.
type overflowCompactor struct{}

func (overflowCompactor) Fit(ctx context.Context, req *llm.Request, focus *Focus) ([]llm.Message, *CompactionEvent, error) {
	return req.Messages, nil, nil
}

func (overflowCompactor) Overflow(ctx context.Context, req *llm.Request, focus *Focus) ([]llm.Message, *CompactionEvent, error) {
	return req.Messages[len(req.Messages)-1:], &CompactionEvent{TokensBefore: 100, TokensAfter: 10, Layers: []string{"snip"}}, nil
}

// HOOK-1, CTX-5: the compaction hooks run on the run's context — its
// values (the trace span) reach them — whichever way the compaction was
// set off; they hear auto for what the harness set off itself.
func TestCompactionHooksGetRunContext(t *testing.T) {
	overflow := &llm.Error{Kind: llm.KindContextOverflow, Provider: "scripted", Message: "prompt is too long"}
	tests := []struct {
		name      string
		compactor Compactor
		replies   []llmtest.Reply
		trigger   CompactionTrigger
	}{
		{"budget", &fakeCompactor{}, []llmtest.Reply{{Text: "ok"}}, TriggerBudget},
		{"overflow", overflowCompactor{}, []llmtest.Reply{{Err: overflow}, {Text: "ok"}}, TriggerOverflow},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			probe, reg := newCtxProbe(t, hook.PreCompact, hook.PostCompact)
			ctx := context.WithValue(t.Context(), traceKey{}, "span-"+tt.name)
			p := llmtest.NewScripted(tt.replies...)
			res := drive(t, ctx, newAgent(p, nil, func(c *Config) { c.Compactor = tt.compactor; c.Hooks = reg }),
				Input{History: []llm.Message{llm.UserText("old"), {Role: llm.RoleAssistant, Content: []llm.Block{&llm.Text{Text: "old reply"}}}}, Prompt: prompt("new")})
			if res.done.Reason != ReasonCompleted || res.count(EventCompaction) != 1 {
				t.Fatalf("done = %+v, %d compactions", res.done, res.count(EventCompaction))
			}
			for _, ev := range []hook.Event{hook.PreCompact, hook.PostCompact} {
				if got := probe.seen[ev]; len(got) != 1 || got[0] != "span-"+tt.name {
					t.Errorf("%s hook saw trace values %q, want the run's [span-%s]", ev, got, tt.name)
				}
				if got := probe.trig[ev]; len(got) != 1 || got[0] != hook.TriggerAuto {
					t.Errorf("%s hook heard triggers %q, want [auto]", ev, got)
				}
			}
			for _, e := range res.events {
				if e.Type == EventCompaction && e.Compaction.Trigger != tt.trigger {
					t.Errorf("compaction trigger %q, want %q", e.Compaction.Trigger, tt.trigger)
				}
			}
		})
	}
}

// The notification hook that reports the end of a run keeps the run's
// context values, and runs even when the run was cancelled (its context is
// the run's without the cancellation).
func TestEndNotificationGetsRunContext(t *testing.T) {
	probe, reg := newCtxProbe(t, hook.Notification)
	ctx, cancel := context.WithCancelCause(context.WithValue(t.Context(), traceKey{}, "span-end"))
	cancel(errors.New("the user pressed Esc"))
	res := drive(t, ctx, newAgent(llmtest.NewScripted(llmtest.Reply{Text: "never"}), nil, func(c *Config) { c.Hooks = reg }),
		Input{Prompt: prompt("go")})
	if res.done.Reason != ReasonCancelled {
		t.Fatalf("done = %+v, want cancelled", res.done)
	}
	if got := probe.seen[hook.Notification]; len(got) == 0 || got[len(got)-1] != "span-end" {
		t.Errorf("notification hooks saw trace values %q, want the run's span-end last", got)
	}
	if probe.done[hook.Notification] {
		t.Error("the end-of-run notification ran on a cancelled context")
	}
}
