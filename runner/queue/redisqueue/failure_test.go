package redisqueue_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/redis/go-redis/v9"

	"github.com/reinhq/rein/runner/queue"
)

const ttl = 300 * time.Millisecond

func take(t *testing.T, q queue.Queue) *queue.Lease {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	l, err := q.Take(ctx)
	if err != nil {
		t.Fatalf("Take: %v", err)
	}
	return l
}

func enqueue(t *testing.T, q queue.Queue, sids ...string) {
	t.Helper()
	for _, sid := range sids {
		if err := q.Enqueue(context.Background(), sid); err != nil {
			t.Fatalf("Enqueue(%s): %v", sid, err)
		}
	}
}

func done(t *testing.T, l *queue.Lease, more bool) {
	t.Helper()
	if err := l.Done(context.Background(), more); err != nil {
		t.Fatalf("Done(%s): %v", l.SessionID, err)
	}
}

// TestDeadConsumer closes a process holding a lease without Done: another
// process reclaims the session's message with XAUTOCLAIM once the lease
// ran out, with a higher token.
func TestDeadConsumer(t *testing.T) {
	u := redisURL(t)
	prefix := newPrefix(t, u)
	dead := newQueue(t, u, prefix, queue.Options{TTL: ttl, Consumer: "dead"})
	alive := newQueue(t, u, prefix, queue.Options{TTL: ttl, Consumer: "alive"})
	enqueue(t, dead, "s1")
	l := take(t, dead)
	if err := dead.Close(); err != nil {
		t.Fatal(err)
	}
	<-l.Lost()
	got := take(t, alive)
	if got.SessionID != "s1" || got.Token <= l.Token {
		t.Errorf("reclaimed %s token %d, want s1 above %d", got.SessionID, got.Token, l.Token)
	}
	done(t, got, false)
	st, err := alive.Stats(context.Background())
	if err != nil || st != (queue.Stats{}) {
		t.Errorf("Stats after the reclaimed lease's Done = %+v, %v; want zero", st, err)
	}
}

// TestRedisOutage stops Redis for a while: Enqueue, Take and Stats fail
// with ErrUnavailable meanwhile, and work again once it is back.
func TestRedisOutage(t *testing.T) {
	srv := newPrivateRedis(t)
	q := newQueue(t, srv.url(), "q:", queue.Options{TTL: ttl})
	enqueue(t, q, "s1")
	done(t, take(t, q), false)
	srv.stop()
	ctx := context.Background()
	if err := q.Enqueue(ctx, "s2"); !errors.Is(err, queue.ErrUnavailable) {
		t.Errorf("Enqueue with Redis down: %v, want ErrUnavailable", err)
	}
	if _, err := q.Take(ctx); !errors.Is(err, queue.ErrUnavailable) {
		t.Errorf("Take with Redis down: %v, want ErrUnavailable", err)
	}
	if _, err := q.Stats(ctx); !errors.Is(err, queue.ErrUnavailable) {
		t.Errorf("Stats with Redis down: %v, want ErrUnavailable", err)
	}
	time.Sleep(time.Second)
	srv.start()
	eventually(t, 10*time.Second, "Enqueue works again", func() bool { return q.Enqueue(ctx, "s3") == nil })
	if l := take(t, q); l.SessionID != "s3" {
		t.Errorf("took %s after the outage, want s3", l.SessionID)
	} else {
		done(t, l, false)
	}
}

// fakeLedger lists the sessions with queued runs.
type fakeLedger struct {
	mu       sync.Mutex
	sessions []string
	calls    int
}

func (f *fakeLedger) resync(ctx context.Context) ([]string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls++
	return append([]string(nil), f.sessions...), nil
}

func (f *fakeLedger) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls
}

// TestRedisRestart restarts Redis empty under a queue holding a lease: the
// queue finds the restart, Resync enqueues the sessions of the ledger
// again, the session held is handed out only after its lease (taken back
// or lost), and every token is above the ones granted before.
func TestRedisRestart(t *testing.T) {
	srv := newPrivateRedis(t)
	lg := &fakeLedger{sessions: []string{"s1", "s2"}}
	q := newQueue(t, srv.url(), "q:", queue.Options{TTL: time.Second, Resync: lg.resync})
	eventually(t, 10*time.Second, "Resync at start", func() bool { return lg.count() == 1 })
	last := map[string]int64{}
	l1 := take(t, q)
	last[l1.SessionID] = l1.Token
	l2 := take(t, q)
	last[l2.SessionID] = l2.Token
	done(t, l2, false) // l1 is held across the restart
	if l1.SessionID == l2.SessionID {
		t.Fatalf("took %s twice", l1.SessionID)
	}
	enqueue(t, q, l2.SessionID) // lost in the restart

	srv.stop()
	srv.start()
	eventually(t, 10*time.Second, "Resync after the restart", func() bool { return lg.count() == 2 })
	// l1's holder takes its lease back at its next renewal, or loses it if
	// the session's new message is taken first: Redis forgot the lease, so
	// l1's session may be handed out before l1's next renewal tells it; the
	// higher token keeps l1's writes out meanwhile.
	seen := map[string]bool{}
	check := func(l *queue.Lease) {
		t.Helper()
		if l.Token <= last[l.SessionID] {
			t.Errorf("after the restart took %s with token %d, not above %d", l.SessionID, l.Token, last[l.SessionID])
		}
		last[l.SessionID], seen[l.SessionID] = l.Token, true
		done(t, l, false)
	}
	for !seen[l2.SessionID] {
		l := take(t, q)
		check(l)
		if l.SessionID == l1.SessionID {
			select {
			case <-l1.Lost():
			case <-time.After(10 * time.Second):
				t.Fatalf("%s was taken again (token %d) but its old lease (token %d) is not lost", l.SessionID,
					l.Token, l1.Token)
			}
			if err := l1.Err(); !errors.Is(err, queue.ErrLeaseLost) {
				t.Errorf("Err of the old lease = %v, want ErrLeaseLost", err)
			}
		}
	}
	if err := l1.Err(); err != nil {
		t.Logf("the lease held across the restart was lost: %v", err)
	} else {
		t.Logf("the lease held across the restart was taken back")
	}
	if err := l1.Done(context.Background(), false); err != nil && !errors.Is(err, queue.ErrLeaseLost) {
		t.Errorf("Done of the lease held across the restart: %v", err)
	}
	if !seen[l1.SessionID] {
		if l := take(t, q); l.SessionID != l1.SessionID {
			t.Errorf("took %s, want %s", l.SessionID, l1.SessionID)
		} else {
			check(l)
		}
	}
}

// TestRenewAfterRestart: a lease whose key Redis lost when it restarted is
// taken back by its next renewal, since no one took the session since; a
// message for the session then waits for its Done.
func TestRenewAfterRestart(t *testing.T) {
	srv := newPrivateRedis(t)
	q := newQueue(t, srv.url(), "q:", queue.Options{TTL: 5 * time.Second, RenewEvery: -1})
	enqueue(t, q, "s1")
	l := take(t, q)
	srv.stop()
	srv.start()
	ctx := context.Background()
	eventually(t, 10*time.Second, "Renew works again", func() bool {
		err := l.Renew(ctx)
		if errors.Is(err, queue.ErrLeaseLost) {
			t.Fatalf("Renew after the restart: %v, want the lease taken back", err)
		}
		return err == nil
	})
	enqueue(t, q, "s1")
	tctx, cancel := context.WithTimeout(ctx, 4*ttl)
	defer cancel()
	if other, err := q.Take(tctx); err == nil {
		t.Fatalf("took %s (token %d) while the lease taken back (token %d) holds it", other.SessionID, other.Token,
			l.Token)
	}
	done(t, l, false)
	again := take(t, q)
	if again.SessionID != "s1" || again.Token <= l.Token {
		t.Errorf("after Done took %s token %d, want s1 above %d", again.SessionID, again.Token, l.Token)
	}
	done(t, again, false)
}

// TestTwoProcesses runs two queues on one Redis and prefix: they share the
// work, each session is taken once, and the stream is empty at the end.
func TestTwoProcesses(t *testing.T) {
	u := redisURL(t)
	prefix := newPrefix(t, u)
	qs := []queue.Queue{newQueue(t, u, prefix, queue.Options{}), newQueue(t, u, prefix, queue.Options{})}
	var want []string
	for i := range 40 {
		want = append(want, fmt.Sprintf("s%02d", i))
	}
	enqueue(t, qs[0], want...)
	var mu sync.Mutex
	got := map[string]int{}
	per := make([]int, len(qs))
	var wg sync.WaitGroup
	for i, q := range qs {
		for range 2 {
			wg.Go(func() {
				for {
					mu.Lock()
					n := len(got)
					mu.Unlock()
					if n == len(want) {
						return
					}
					ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
					l, err := q.Take(ctx)
					cancel()
					if err != nil {
						continue
					}
					time.Sleep(2 * time.Millisecond) // the run
					mu.Lock()
					got[l.SessionID]++
					per[i]++
					mu.Unlock()
					if err := l.Done(context.Background(), false); err != nil {
						t.Errorf("Done: %v", err)
					}
				}
			})
		}
	}
	wg.Wait()
	wantCount := map[string]int{}
	for _, s := range want {
		wantCount[s] = 1
	}
	if diff := cmp.Diff(wantCount, got); diff != "" {
		t.Errorf("takes per session (-want +got):\n%s", diff)
	}
	if per[0] == 0 || per[1] == 0 {
		t.Errorf("takes per process = %v, want both to share the work", per)
	}
	if n := admin(t, u).XLen(context.Background(), prefix+"q").Val(); n != 0 {
		t.Errorf("the stream holds %d entries once all is done, want 0", n)
	}
}

// TestMalformedMessage: a message without a valid session id is dropped,
// and the next one is taken.
func TestMalformedMessage(t *testing.T) {
	u := redisURL(t)
	prefix := newPrefix(t, u)
	q := newQueue(t, u, prefix, queue.Options{})
	c := admin(t, u)
	ctx := context.Background()
	for _, v := range []map[string]any{{"x": "1"}, {"s": ""}, {"s": "a b"}} {
		if err := c.XAdd(ctx, &redis.XAddArgs{Stream: prefix + "q", Values: v}).Err(); err != nil {
			t.Fatal(err)
		}
	}
	enqueue(t, q, "s1")
	l := take(t, q)
	if l.SessionID != "s1" {
		t.Errorf("took %q, want s1", l.SessionID)
	}
	done(t, l, false)
	if n := c.XLen(ctx, prefix+"q").Val(); n != 0 {
		t.Errorf("the stream holds %d entries, want 0", n)
	}
}
