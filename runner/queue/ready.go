package queue

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// ErrNoWorker says work waits in the queue longer than a lease lasts: no
// worker takes it — none runs, or every one is stuck or full.
var ErrNoWorker = errors.New("no worker takes the queued work")

// TakenCheck returns a readiness check of q (SPEC API-5): an error
// wrapping [ErrNoWorker] when the oldest waiting message has waited longer
// than ttl, the lease time. A worker that runs takes work well within it
// (a session leased to a dead one is handed out again after ttl), so an
// API process with no worker running stops answering "ready" instead of
// leaving runs queued for ever. A queue that cannot say fails the check
// with its own error.
func TakenCheck(q Queue, ttl time.Duration) func(context.Context) error {
	if ttl <= 0 {
		ttl = DefaultTTL
	}
	return func(ctx context.Context) error {
		st, err := q.Stats(ctx)
		if err != nil {
			return err
		}
		if st.Waiting > 0 && st.OldestWait > ttl {
			return fmt.Errorf("%w: %d session(s) waiting, the oldest for %s, longer than the lease time %s: start a worker (rein worker), or look at the running ones",
				ErrNoWorker, st.Waiting, st.OldestWait.Round(time.Second), ttl)
		}
		return nil
	}
}
