package gatewaytest

import (
	"testing"
	"time"
)

// pollEvery is how often [Poll] checks its condition.
const pollEvery = 2 * time.Millisecond

// Poll checks cond until it holds or within passes (or the test ends), and
// reports whether it held. It is for waits on what testing/synctest cannot
// hold in a bubble — a platform fake behind a real socket, a child
// process — and sleeps no fixed time: it returns as soon as cond holds.
func Poll(t testing.TB, within time.Duration, cond func() bool) bool {
	t.Helper()
	if cond() {
		return true
	}
	deadline := time.NewTimer(within)
	defer deadline.Stop()
	tick := time.NewTicker(pollEvery)
	defer tick.Stop()
	for {
		select {
		case <-tick.C:
		case <-deadline.C:
			return cond()
		case <-t.Context().Done():
			return cond()
		}
		if cond() {
			return true
		}
	}
}

// Eventually fails t unless cond holds within the given time; what says
// what was awaited.
func Eventually(t testing.TB, within time.Duration, what string, cond func() bool) {
	t.Helper()
	if !Poll(t, within, cond) {
		t.Fatalf("timed out after %s waiting for %s", within, what)
	}
}
