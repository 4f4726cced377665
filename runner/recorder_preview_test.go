package runner_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/reinhq/rein/agent"
	"github.com/reinhq/rein/llm"
	"github.com/reinhq/rein/runner"
	"github.com/reinhq/rein/session"
)

// previewStore is a store (not a session.LogWriter, as the file store)
// whose record updates wait for gate, when set, and fail while failing
// is above zero.
type previewStore struct {
	session.Store
	gate    chan struct{}
	failing atomic.Int32
	updates atomic.Int32
}

func (p *previewStore) Update(ctx context.Context, s *session.Session) error {
	if p.gate != nil {
		<-p.gate
	}
	p.updates.Add(1)
	if p.failing.Add(-1) >= 0 {
		return errors.New("disk full")
	}
	return p.Store.Update(ctx, s)
}

// recordPrompt records a run's start and its user message.
func recordPrompt(t *testing.T, rec *runner.Recorder, now time.Time) {
	t.Helper()
	prompt := llm.UserText("summarise the change")
	for _, ev := range []agent.Event{
		{Type: agent.EventRunStart, RunID: "r", Time: now, RunStart: &agent.RunStart{Provider: "p", Model: "m"}},
		{Type: agent.EventMessage, RunID: "r", Time: now, Message: &prompt},
	} {
		if err := rec.Record(ctx, ev); err != nil {
			t.Fatal(err)
		}
	}
}

func doneEvent(now time.Time) agent.Event {
	return agent.Event{Type: agent.EventDone, RunID: "r", Time: now, Done: &agent.DoneEvent{Reason: agent.ReasonCompleted, Usage: llm.Usage{InputTokens: 7}}}
}

// SESS-1, CLI-1 (issue 30): the user's message is in the log when Record
// returns, before the session's preview is written: that write (a record
// rewrite with two fsyncs in the file store) runs beside the first model
// request. The run's end waits for it, so the record holds both the
// preview and the run's totals.
func TestRecorderPreviewBesideRun_SESS1(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := &previewStore{Store: session.NewMemStore(), gate: make(chan struct{})}
		if err := store.Create(ctx, &session.Session{ID: "s"}); err != nil {
			t.Fatal(err)
		}
		rec := runner.NewRecorder(store, "s")
		now := time.Now()
		recordPrompt(t, rec, now) // returns although the preview's write waits at the gate
		if got := kinds(t, store); len(got) != 1 || got[0] != session.KindMessage {
			t.Fatalf("the user's message is not in the log when Record returns: %v", got)
		}
		if s, _ := store.Get(ctx, "s"); s.Preview != "" {
			t.Fatalf("preview %q written before the gate opened", s.Preview)
		}

		ended := make(chan error, 1)
		go func() { ended <- rec.Record(ctx, doneEvent(now)) }()
		synctest.Wait()
		select {
		case err := <-ended:
			t.Fatalf("the run's end was recorded before the preview's write ended (err %v)", err)
		default:
		}
		close(store.gate)
		if err := <-ended; err != nil {
			t.Fatal(err)
		}
		s, err := store.Get(ctx, "s")
		if err != nil {
			t.Fatal(err)
		}
		if s.Preview != "summarise the change" || s.Runs != 1 || s.Usage.InputTokens != 7 {
			t.Errorf("session after the run: preview %q, runs %d, usage %+v", s.Preview, s.Runs, s.Usage)
		}
		if n := store.updates.Load(); n != 2 {
			t.Errorf("%d record updates, want 2 (the preview, the run's end)", n)
		}
	})
}

// A preview whose write failed is set by the run's end, which rewrites the
// record anyway: nothing the user gave is lost.
func TestRecorderPreviewRepairedAtEnd_SESS1(t *testing.T) {
	store := &previewStore{Store: session.NewMemStore()}
	if err := store.Create(ctx, &session.Session{ID: "s"}); err != nil {
		t.Fatal(err)
	}
	store.failing.Store(1)
	rec := runner.NewRecorder(store, "s")
	now := time.Now()
	recordPrompt(t, rec, now)
	if err := rec.Record(ctx, doneEvent(now)); err != nil {
		t.Fatal(err)
	}
	s, err := store.Get(ctx, "s")
	if err != nil {
		t.Fatal(err)
	}
	if s.Preview != "summarise the change" || s.Runs != 1 {
		t.Errorf("session after a failed preview write: preview %q, runs %d", s.Preview, s.Runs)
	}
	// The run's end failing is the run's error, as before.
	store.failing.Store(1)
	second := runner.NewRecorder(store, "s")
	if err := second.Record(ctx, doneEvent(now)); err == nil {
		t.Error("a run's end that could not be recorded returned no error")
	}
}
