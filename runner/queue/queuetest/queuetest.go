// Package queuetest is the conformance suite every [queue.Queue] backend
// passes: delivery and coalescing, order of first enqueue, re-delivery by
// Done(more), messages that meet a lease, exclusivity and fencing tokens
// under many concurrent holders, lease expiry and renewal, nothing
// stranded when enqueues race Done, cancellation and Close.
//
// The suite asserts behaviour, never durations: it waits for what must
// come with generous timeouts and checks that what must not come does not
// within a short one.
package queuetest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/reinhq/rein/runner/queue"
)

// Open returns a new, empty queue made with opts (the backend fills the
// rest: its server, a key prefix of the test's own). The suite closes it
// at the end of the test (Close must be idempotent).
type Open func(t *testing.T, opts queue.Options) queue.Queue

// Timeouts of the suite.
const (
	// wait bounds a wait for something that must come.
	wait = 20 * time.Second
	// quiet is how long the suite checks that nothing comes.
	quiet = 300 * time.Millisecond
	// shortTTL is the lease length of the expiry tests.
	shortTTL = 300 * time.Millisecond
)

// Run runs the suite.
func Run(t *testing.T, open Open) {
	tests := []struct {
		name string
		fn   func(*testing.T, Open)
	}{
		{"TakeEnqueued", testTakeEnqueued},
		{"Coalesce", testCoalesce},
		{"FIFO", testFIFO},
		{"DoneMoreRedelivers", testDoneMore},
		{"EnqueueWhileLeased", testEnqueueWhileLeased},
		{"EnqueueDuringDone", testEnqueueDuringDone},
		{"DoneIdempotent", testDoneIdempotent},
		{"Expiry", testExpiry},
		{"RenewKeeps", testRenewKeeps},
		{"TakeHonoursContext", testTakeContext},
		{"CloseUnblocksTake", testClose},
		{"InvalidSessionID", testInvalid},
		{"Stats", testStats},
		{"Resync", testResync},
		{"Exclusive", testExclusive},
		{"NothingStranded", testNothingStranded},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.fn(t, func(t *testing.T, opts queue.Options) queue.Queue {
				q := open(t, opts)
				t.Cleanup(func() {
					if err := q.Close(); err != nil {
						t.Errorf("Close: %v", err)
					}
				})
				return q
			})
		})
	}
}

func testTakeEnqueued(t *testing.T, open Open) {
	q := open(t, queue.Options{})
	mustEnqueue(t, q, "s1")
	l := mustTake(t, q)
	if l.SessionID != "s1" || l.Token <= 0 || l.Enqueued.IsZero() {
		t.Errorf("Take = %+v, want s1 with a positive token and an enqueue time", l.Grant)
	}
	select {
	case <-l.Lost():
		t.Errorf("Lost closed on a new lease: %v", l.Err())
	default:
	}
	mustDone(t, l, false)
	select {
	case <-l.Lost():
	default:
		t.Error("Lost not closed after Done")
	}
	if err := l.Err(); err != nil {
		t.Errorf("Err after a clean Done = %v, want nil", err)
	}
	expectNothing(t, q)
}

func testCoalesce(t *testing.T, open Open) {
	q := open(t, queue.Options{})
	for range 5 {
		mustEnqueue(t, q, "s1")
	}
	mustEnqueue(t, q, "s2")
	if st := mustStats(t, q); st.Waiting != 2 || st.Leased != 0 {
		t.Errorf("Stats after 5 enqueues of s1 and one of s2 = %+v, want 2 waiting", st)
	}
	got := []string{take(t, q, false), take(t, q, false)}
	if diff := cmp.Diff([]string{"s1", "s2"}, got); diff != "" {
		t.Errorf("sessions taken (-want +got):\n%s", diff)
	}
	expectNothing(t, q)
}

func testFIFO(t *testing.T, open Open) {
	q := open(t, queue.Options{})
	var want, got []string
	for i := range 20 {
		sid := fmt.Sprintf("s%02d", (i*7)%20)
		want = append(want, sid)
		mustEnqueue(t, q, sid)
		mustEnqueue(t, q, want[0]) // coalesced: keeps its place
	}
	for range want {
		got = append(got, take(t, q, false))
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("order of the takes (-want +got):\n%s", diff)
	}
}

func testDoneMore(t *testing.T, open Open) {
	q := open(t, queue.Options{})
	mustEnqueue(t, q, "s1")
	l1 := mustTake(t, q)
	mustDone(t, l1, true)
	l2 := mustTake(t, q)
	if l2.SessionID != "s1" || l2.Token <= l1.Token {
		t.Errorf("after Done(more) took %s with token %d, want s1 above %d", l2.SessionID, l2.Token, l1.Token)
	}
	mustDone(t, l2, false)
	expectNothing(t, q)
}

// testEnqueueWhileLeased enqueues a leased session while another consumer
// waits in Take: it must not get the session before the lease is released,
// and must get it after.
func testEnqueueWhileLeased(t *testing.T, open Open) {
	q := open(t, queue.Options{})
	mustEnqueue(t, q, "s1")
	l1 := mustTake(t, q)
	var released atomic.Bool
	got := make(chan *queue.Lease, 1)
	go func() {
		ctx, cancel := context.WithTimeout(t.Context(), wait)
		defer cancel()
		l, err := q.Take(ctx)
		if err != nil {
			t.Errorf("the second consumer's Take: %v", err)
			got <- nil
			return
		}
		if !released.Load() {
			t.Errorf("the second consumer took %s (token %d) while token %d held it", l.SessionID, l.Token, l1.Token)
		}
		got <- l
	}()
	mustEnqueue(t, q, "s1")
	time.Sleep(quiet) // let the second consumer meet the message while s1 is leased
	released.Store(true)
	mustDone(t, l1, false)
	l2 := <-got
	if l2 == nil {
		return
	}
	if l2.SessionID != "s1" || l2.Token <= l1.Token {
		t.Errorf("second lease %s token %d, want s1 above %d", l2.SessionID, l2.Token, l1.Token)
	}
	mustDone(t, l2, false)
	expectNothing(t, q)
}

// testEnqueueDuringDone races an Enqueue with Done, many times: every
// Enqueue made after the session was taken must lead to one more delivery.
func testEnqueueDuringDone(t *testing.T, open Open) {
	q := open(t, queue.Options{})
	mustEnqueue(t, q, "s1")
	l := mustTake(t, q)
	for i := range 200 {
		done := make(chan error, 1)
		go func() { done <- q.Enqueue(t.Context(), "s1") }()
		mustDone(t, l, false)
		if err := <-done; err != nil {
			t.Fatalf("round %d: Enqueue: %v", i, err)
		}
		next := mustTake(t, q)
		if next.SessionID != "s1" || next.Token <= l.Token {
			t.Fatalf("round %d: took %s token %d after token %d", i, next.SessionID, next.Token, l.Token)
		}
		l = next
	}
	mustDone(t, l, false)
	expectNothing(t, q)
}

func testDoneIdempotent(t *testing.T, open Open) {
	q := open(t, queue.Options{})
	mustEnqueue(t, q, "s1")
	l := mustTake(t, q)
	mustDone(t, l, false)
	if err := l.Done(t.Context(), true); err != nil {
		t.Errorf("second Done = %v, want nil", err)
	}
	if err := l.Renew(t.Context()); !errors.Is(err, queue.ErrLeaseLost) {
		t.Errorf("Renew after Done = %v, want ErrLeaseLost", err)
	}
	expectNothing(t, q) // the second Done(more) did nothing
}

// testExpiry lets a lease run out: another consumer takes the session with
// a higher token, the old holder's Renew fails with ErrLeaseLost and its
// Lost is closed; the old holder's Done re-enqueues the session for after
// the new lease.
func testExpiry(t *testing.T, open Open) {
	q := open(t, queue.Options{TTL: shortTTL, RenewEvery: -1})
	mustEnqueue(t, q, "s1")
	old := mustTake(t, q)
	l := mustTake(t, q) // blocks until old's lease runs out
	if l.SessionID != "s1" || l.Token <= old.Token {
		t.Fatalf("after expiry took %s token %d, want s1 above %d", l.SessionID, l.Token, old.Token)
	}
	if err := old.Renew(t.Context()); !errors.Is(err, queue.ErrLeaseLost) {
		t.Errorf("Renew of the expired lease = %v, want ErrLeaseLost", err)
	}
	select {
	case <-old.Lost():
	case <-time.After(wait):
		t.Fatal("Lost of the expired lease not closed")
	}
	if err := old.Err(); !errors.Is(err, queue.ErrLeaseLost) {
		t.Errorf("Err of the expired lease = %v, want ErrLeaseLost", err)
	}
	if err := old.Done(t.Context(), false); err != nil && !errors.Is(err, queue.ErrLeaseLost) {
		t.Errorf("Done of the expired lease = %v, want nil or ErrLeaseLost", err)
	}
	if err := l.Renew(t.Context()); err != nil {
		t.Errorf("Renew of the new lease = %v", err)
	}
	mustDone(t, l, false)
	// The lost holder's Done counted as Done(more): the next holder heals.
	again := mustTake(t, q)
	if again.SessionID != "s1" || again.Token <= l.Token {
		t.Errorf("after the lost lease's Done took %s token %d, want s1 above %d", again.SessionID, again.Token, l.Token)
	}
	mustDone(t, again, false)
}

// testRenewKeeps holds a lease for several TTLs with the automatic
// renewal on: no one else gets the session meanwhile.
func testRenewKeeps(t *testing.T, open Open) {
	q := open(t, queue.Options{TTL: 2 * shortTTL, RenewEvery: shortTTL / 3})
	mustEnqueue(t, q, "s1")
	l := mustTake(t, q)
	ctx, cancel := context.WithTimeout(t.Context(), 6*shortTTL)
	defer cancel()
	if other, err := q.Take(ctx); err == nil {
		t.Errorf("took %s (token %d) while token %d held it and renewed", other.SessionID, other.Token, l.Token)
	}
	select {
	case <-l.Lost():
		t.Fatalf("a renewed lease was lost: %v", l.Err())
	default:
	}
	mustDone(t, l, false)
}

func testTakeContext(t *testing.T, open Open) {
	q := open(t, queue.Options{})
	ctx, cancel := context.WithCancel(t.Context())
	res := make(chan error, 1)
	go func() {
		_, err := q.Take(ctx)
		res <- err
	}()
	time.Sleep(quiet / 3)
	cancel()
	select {
	case err := <-res:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("Take after cancel = %v, want context.Canceled", err)
		}
	case <-time.After(wait):
		t.Fatal("Take did not return after its context was cancelled")
	}
	dctx, dcancel := context.WithTimeout(t.Context(), quiet/3)
	defer dcancel()
	if _, err := q.Take(dctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Take past its deadline = %v, want DeadlineExceeded", err)
	}
}

func testClose(t *testing.T, open Open) {
	q := open(t, queue.Options{})
	mustEnqueue(t, q, "s1")
	held := mustTake(t, q)
	res := make(chan error, 1)
	go func() {
		_, err := q.Take(t.Context())
		res <- err
	}()
	time.Sleep(quiet / 3)
	if err := q.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	select {
	case err := <-res:
		if !errors.Is(err, queue.ErrClosed) {
			t.Errorf("Take blocked at Close = %v, want ErrClosed", err)
		}
	case <-time.After(wait):
		t.Fatal("Close did not unblock Take")
	}
	select {
	case <-held.Lost():
	case <-time.After(wait):
		t.Fatal("Close did not end the lease held")
	}
	if err := held.Err(); !errors.Is(err, queue.ErrLeaseLost) {
		t.Errorf("Err of a lease held at Close = %v, want ErrLeaseLost", err)
	}
	ctx := t.Context()
	if err := q.Enqueue(ctx, "s2"); !errors.Is(err, queue.ErrClosed) {
		t.Errorf("Enqueue after Close = %v, want ErrClosed", err)
	}
	if _, err := q.Take(ctx); !errors.Is(err, queue.ErrClosed) {
		t.Errorf("Take after Close = %v, want ErrClosed", err)
	}
	if err := q.Close(); err != nil {
		t.Errorf("second Close = %v", err)
	}
}

func testInvalid(t *testing.T, open Open) {
	q := open(t, queue.Options{})
	for _, sid := range []string{"", "a b", "a\nb", "\xff", strings.Repeat("x", queue.MaxSessionID+1)} {
		if err := q.Enqueue(t.Context(), sid); !errors.Is(err, queue.ErrInvalid) {
			t.Errorf("Enqueue(%.20q) = %v, want ErrInvalid", sid, err)
		}
	}
	mustEnqueue(t, q, strings.Repeat("x", queue.MaxSessionID))
	mustDone(t, mustTake(t, q), false)
}

func testStats(t *testing.T, open Open) {
	q := open(t, queue.Options{})
	if diff := cmp.Diff(queue.Stats{}, mustStats(t, q)); diff != "" {
		t.Errorf("Stats of an empty queue (-want +got):\n%s", diff)
	}
	for _, sid := range []string{"s1", "s2", "s3"} {
		mustEnqueue(t, q, sid)
	}
	time.Sleep(20 * time.Millisecond)
	l := mustTake(t, q)
	st := mustStats(t, q)
	if st.Waiting != 2 || st.Leased != 1 || st.OldestWait <= 0 {
		t.Errorf("Stats with 2 waiting and 1 leased = %+v", st)
	}
	mustDone(t, l, false)
	mustDone(t, mustTake(t, q), false)
	mustDone(t, mustTake(t, q), false)
	if diff := cmp.Diff(queue.Stats{}, mustStats(t, q)); diff != "" {
		t.Errorf("Stats once all is done (-want +got):\n%s", diff)
	}
}

func testResync(t *testing.T, open Open) {
	var calls atomic.Int32
	q := open(t, queue.Options{Resync: func(ctx context.Context) ([]string, error) {
		if calls.Add(1) == 1 {
			return nil, errors.New("ledger briefly away")
		}
		return []string{"r1", "r2", "bad id"}, nil
	}})
	got := map[string]bool{take(t, q, false): true, take(t, q, false): true}
	if diff := cmp.Diff(map[string]bool{"r1": true, "r2": true}, got); diff != "" {
		t.Errorf("sessions taken after Resync (-want +got):\n%s", diff)
	}
}
