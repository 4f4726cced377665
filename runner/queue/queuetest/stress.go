package queuetest

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/reinhq/rein/runner/queue"
)

// tracker checks exclusivity and fencing: no session held twice at once,
// tokens of a session increasing from one holder to the next.
type tracker struct {
	t      testing.TB
	mu     sync.Mutex
	held   map[string]int64 // session → token of its holder
	last   map[string]int64 // session → token of its last holder
	takes  int
	faults int
}

func newTracker(t testing.TB) *tracker {
	return &tracker{t: t, held: map[string]int64{}, last: map[string]int64{}}
}

func (tr *tracker) take(l *queue.Lease) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	tr.takes++
	if tok, ok := tr.held[l.SessionID]; ok {
		tr.fault("session %s taken with token %d while token %d holds it", l.SessionID, l.Token, tok)
	}
	if l.Token <= tr.last[l.SessionID] {
		tr.fault("session %s taken with token %d, not above the last one %d", l.SessionID, l.Token, tr.last[l.SessionID])
	}
	tr.held[l.SessionID] = l.Token
	tr.last[l.SessionID] = l.Token
}

// release is called before Done: once Done returns, another may hold it.
func (tr *tracker) release(l *queue.Lease) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	if tr.held[l.SessionID] != l.Token {
		tr.fault("session %s released by token %d, held by %d", l.SessionID, l.Token, tr.held[l.SessionID])
	}
	delete(tr.held, l.SessionID)
}

func (tr *tracker) fault(format string, args ...any) {
	tr.faults++
	if tr.faults <= 10 {
		tr.t.Errorf(format, args...)
	}
}

// ledger plays the ledger of runs: queued runs by session.
type ledger struct {
	mu     sync.Mutex
	queued map[string]int
	total  int
}

func (lg *ledger) add(sid string) {
	lg.mu.Lock()
	defer lg.mu.Unlock()
	lg.queued[sid]++
	lg.total++
}

// pop runs one queued run of sid, if any.
func (lg *ledger) pop(sid string) bool {
	lg.mu.Lock()
	defer lg.mu.Unlock()
	if lg.queued[sid] == 0 {
		return false
	}
	lg.queued[sid]--
	lg.total--
	return true
}

func (lg *ledger) has(sid string) bool {
	lg.mu.Lock()
	defer lg.mu.Unlock()
	return lg.queued[sid] > 0
}

func (lg *ledger) left() int {
	lg.mu.Lock()
	defer lg.mu.Unlock()
	return lg.total
}

// worker runs leases until ctx ends: each runs up to 3 of the session's
// queued runs (a worker that yields to other sessions), then Done(more)
// says whether the ledger still has some.
func worker(ctx context.Context, t testing.TB, q queue.Queue, tr *tracker, lg *ledger) {
	for n := 0; ctx.Err() == nil; n++ {
		l, err := q.Take(ctx)
		if err != nil {
			if ctx.Err() == nil && !errors.Is(err, queue.ErrClosed) {
				t.Errorf("Take: %v", err)
			}
			return
		}
		tr.take(l)
		for i := 0; i <= n%3 && lg.pop(l.SessionID); i++ {
			runtime.Gosched()
		}
		more := lg.has(l.SessionID)
		tr.release(l)
		if err := l.Done(t.Context(), more); err != nil {
			t.Errorf("Done(%s, %v): %v", l.SessionID, more, err)
		}
	}
}

// testExclusive runs thousands of takes by many consumers over a few
// sessions, with enqueues from many goroutines: no session is ever held
// twice, tokens increase, every run is run.
func testExclusive(t *testing.T, open Open) {
	stress(t, open(t, queue.Options{}), 16, 8, 8, 400)
}

// testNothingStranded is the race between an Enqueue and the Done of the
// session's holder, over many sessions and rounds: at the end the ledger
// is empty, so no queued run was stranded.
func testNothingStranded(t *testing.T, open Open) {
	stress(t, open(t, queue.Options{}), 8, 64, 16, 200)
}

// stress runs workers consumers while producers each add rounds runs to
// random sessions among sessions, then waits until the ledger is empty.
func stress(t *testing.T, q queue.Queue, workers, sessions, producers, rounds int) {
	tr := newTracker(t)
	lg := &ledger{queued: map[string]int{}}
	ctx, cancel := context.WithCancel(t.Context())
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() { worker(ctx, t, q, tr, lg) })
	}
	var pg sync.WaitGroup
	var enqueued atomic.Int64
	for p := range producers {
		pg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(p), 7))
			for range rounds {
				sid := fmt.Sprintf("s%d", r.IntN(sessions))
				lg.add(sid)
				if err := q.Enqueue(t.Context(), sid); err != nil {
					t.Errorf("Enqueue(%s): %v", sid, err)
					return
				}
				enqueued.Add(1)
				if r.IntN(4) == 0 {
					runtime.Gosched()
				}
			}
		})
	}
	pg.Wait()
	end := time.Now().Add(wait)
	for lg.left() > 0 && time.Now().Before(end) {
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	wg.Wait()
	if n := lg.left(); n > 0 {
		lg.mu.Lock()
		t.Errorf("%d queued runs stranded after %d enqueues: %v", n, enqueued.Load(), lg.queued)
		lg.mu.Unlock()
	}
	t.Logf("%d enqueues, %d takes by %d consumers", enqueued.Load(), tr.takes, workers)
}

func mustEnqueue(t testing.TB, q queue.Queue, sid string) {
	t.Helper()
	if err := q.Enqueue(t.Context(), sid); err != nil {
		t.Fatalf("Enqueue(%.40s): %v", sid, err)
	}
}

// mustTake takes a lease, failing the test if none comes.
func mustTake(t testing.TB, q queue.Queue) *queue.Lease {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), wait)
	defer cancel()
	l, err := q.Take(ctx)
	if err != nil {
		t.Fatalf("Take: %v", err)
	}
	return l
}

// take takes a lease, releases it with more and returns its session.
func take(t testing.TB, q queue.Queue, more bool) string {
	t.Helper()
	l := mustTake(t, q)
	mustDone(t, l, more)
	return l.SessionID
}

func mustDone(t testing.TB, l *queue.Lease, more bool) {
	t.Helper()
	if err := l.Done(t.Context(), more); err != nil {
		t.Fatalf("Done(%s token %d, %v): %v", l.SessionID, l.Token, more, err)
	}
}

func mustStats(t testing.TB, q queue.Queue) queue.Stats {
	t.Helper()
	st, err := q.Stats(t.Context())
	if err != nil {
		t.Fatalf("Stats: %v", err)
	}
	return st
}

// expectNothing checks that no session is handed out for a while.
func expectNothing(t testing.TB, q queue.Queue) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), quiet)
	defer cancel()
	if l, err := q.Take(ctx); err == nil {
		t.Errorf("Take handed out %s (token %d), want nothing", l.SessionID, l.Token)
		_ = l.Done(t.Context(), false)
	} else if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Take with nothing queued = %v, want DeadlineExceeded", err)
	}
}
