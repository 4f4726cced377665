package mcpserver

import (
	"context"
	"strings"
	"testing"
	"testing/synctest"
)

// A session runs one run at a time: a second hold of a session whose run
// goes on is refused, saying what to do; one whose run was cancelled
// waits for that run to end, or for its own context (SPEC FRONT-2).
func TestHold_FRONT2(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := &Server{}
		running := &flight{ended: make(chan struct{}), cancel: func() {}}
		s.holdNew("s1", running)
		if err := s.hold(t.Context(), "s1", &flight{}); err == nil || !strings.Contains(err.Error(), "session s1 is running") {
			t.Fatalf("hold of a running session: %v", err)
		}

		running.stop()
		next := &flight{ended: make(chan struct{}), cancel: func() {}}
		got := make(chan error, 1)
		go func() { got <- s.hold(t.Context(), "s1", next) }()
		synctest.Wait()
		select {
		case err := <-got:
			t.Fatalf("hold returned (%v) before the cancelled run ended", err)
		default:
		}
		s.release("s1", running)
		close(running.ended)
		if err := <-got; err != nil {
			t.Fatalf("hold after the cancelled run ended: %v", err)
		}
		if s.holds.m["s1"] != next {
			t.Error("the session is not held by the new run")
		}

		next.stop()
		ctx, cancel := context.WithCancel(t.Context())
		go func() { got <- s.hold(ctx, "s1", &flight{}) }()
		synctest.Wait()
		cancel()
		if err := <-got; err == nil || !strings.Contains(err.Error(), "waiting for its cancelled run to end") {
			t.Errorf("hold cancelled while waiting: %v", err)
		}
		s.release("s1", &flight{}) // not the holder: nothing changes
		if s.holds.m["s1"] != next {
			t.Error("release by a run that does not hold the session let it go")
		}
		s.release("", next) // a run that made no session

		// A run whose driving call is cancelled is stopping before drive
		// sees it; a parked run (no call drives it) is not.
		parked := &flight{ended: make(chan struct{})}
		s.holdNew("s2", parked)
		if err := s.hold(t.Context(), "s2", &flight{}); err == nil {
			t.Error("hold of a session whose run is parked succeeded")
		}
		callCtx, cancelCall := context.WithCancel(t.Context())
		parked.driver.Store(&callCtx)
		cancelCall()
		go func() { got <- s.hold(t.Context(), "s2", &flight{}) }()
		synctest.Wait()
		s.release("s2", parked)
		close(parked.ended)
		if err := <-got; err != nil {
			t.Errorf("hold after the cancelled call's run ended: %v", err)
		}
	})
}
