package queue_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"github.com/reinhq/rein/runner/queue"
)

// fakeKeeper records the calls a Lease makes and answers renewals with err.
type fakeKeeper struct {
	mu    sync.Mutex
	err   error
	calls []string
}

func (k *fakeKeeper) Renew(ctx context.Context) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.calls = append(k.calls, "renew")
	return k.err
}

func (k *fakeKeeper) Release(ctx context.Context, more bool) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	if more {
		k.calls = append(k.calls, "release more")
	} else {
		k.calls = append(k.calls, "release")
	}
	return nil
}

func (k *fakeKeeper) set(err error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.err = err
}

func (k *fakeKeeper) log() []string {
	k.mu.Lock()
	defer k.mu.Unlock()
	return append([]string(nil), k.calls...)
}

func newLease(t *testing.T, k queue.Keeper, o queue.Options, closed <-chan struct{}) *queue.Lease {
	t.Helper()
	o, err := o.WithDefaults()
	if err != nil {
		t.Fatal(err)
	}
	return queue.NewLease(queue.Grant{SessionID: "s1", Token: 7}, k, o, queue.Scope{Done: closed})
}

func waitLost(t *testing.T, l *queue.Lease) {
	t.Helper()
	select {
	case <-l.Lost():
	case <-time.After(10 * time.Second):
		t.Fatal("Lost not closed")
	}
}

// TestLeaseUnreachable: renewals that cannot reach the backend keep the
// lease until its deadline, then it is lost, and Done releases it with
// more set.
func TestLeaseUnreachable(t *testing.T) {
	k := &fakeKeeper{err: queue.ErrUnavailable}
	l := newLease(t, k, queue.Options{TTL: 200 * time.Millisecond, RenewEvery: 20 * time.Millisecond}, nil)
	waitLost(t, l)
	if err := l.Err(); !errors.Is(err, queue.ErrLeaseLost) {
		t.Errorf("Err = %v, want ErrLeaseLost", err)
	}
	if err := l.Renew(context.Background()); !errors.Is(err, queue.ErrLeaseLost) {
		t.Errorf("Renew of a lost lease = %v, want ErrLeaseLost", err)
	}
	if err := l.Done(context.Background(), false); err != nil {
		t.Fatal(err)
	}
	calls := k.log()
	if len(calls) < 2 || calls[0] != "renew" || calls[len(calls)-1] != "release more" {
		t.Errorf("calls = %v, want renewals then one release with more", calls)
	}
}

// TestLeaseRefused: a renewal the backend refuses loses the lease at once.
func TestLeaseRefused(t *testing.T) {
	k := &fakeKeeper{}
	l := newLease(t, k, queue.Options{TTL: time.Hour, RenewEvery: -1}, nil)
	if err := l.Renew(context.Background()); err != nil {
		t.Fatalf("Renew = %v", err)
	}
	k.set(queue.ErrLeaseLost)
	if err := l.Renew(context.Background()); !errors.Is(err, queue.ErrLeaseLost) {
		t.Errorf("refused Renew = %v, want ErrLeaseLost", err)
	}
	waitLost(t, l)
	k.set(queue.ErrUnavailable)
	if err := l.Renew(context.Background()); !errors.Is(err, queue.ErrLeaseLost) {
		t.Errorf("Renew after the loss = %v, want ErrLeaseLost", err)
	}
	if diff := cmp.Diff([]string{"renew", "renew"}, k.log()); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}
}

// TestLeaseUnavailableWithinTTL: a failed renewal before the deadline
// returns the error and keeps the lease.
func TestLeaseUnavailableWithinTTL(t *testing.T) {
	k := &fakeKeeper{err: queue.ErrUnavailable}
	l := newLease(t, k, queue.Options{TTL: time.Hour, RenewEvery: -1}, nil)
	if err := l.Renew(context.Background()); !errors.Is(err, queue.ErrUnavailable) || errors.Is(err, queue.ErrLeaseLost) {
		t.Errorf("Renew = %v, want ErrUnavailable only", err)
	}
	if err := l.Err(); err != nil {
		t.Errorf("Err = %v, want nil", err)
	}
	if err := l.Done(context.Background(), false); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"renew", "release"}, k.log()); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}
}

// TestLeaseClosed: closing the queue loses the lease.
func TestLeaseClosed(t *testing.T) {
	closed := make(chan struct{})
	l := newLease(t, &fakeKeeper{}, queue.Options{TTL: time.Hour}, closed)
	close(closed)
	waitLost(t, l)
	if err := l.Err(); !errors.Is(err, queue.ErrLeaseLost) || !errors.Is(err, queue.ErrClosed) {
		t.Errorf("Err = %v, want ErrLeaseLost and ErrClosed", err)
	}
}

// TestLeaseRenews: the automatic renewal calls the keeper, and stops at
// Done.
func TestLeaseRenews(t *testing.T) {
	k := &fakeKeeper{}
	l := newLease(t, k, queue.Options{TTL: 90 * time.Millisecond}, nil)
	for len(k.log()) < 3 {
		time.Sleep(10 * time.Millisecond)
	}
	if err := l.Done(context.Background(), true); err != nil {
		t.Fatal(err)
	}
	n := len(k.log())
	time.Sleep(100 * time.Millisecond)
	calls := k.log()
	if len(calls) != n || calls[n-1] != "release more" {
		t.Errorf("calls = %v: want renewals, then one release with more, then nothing", calls)
	}
	if err := l.Err(); err != nil {
		t.Errorf("Err after Done = %v", err)
	}
}

func TestOptions(t *testing.T) {
	o, err := queue.Options{TTL: time.Second, RenewEvery: time.Minute}.WithDefaults()
	if err != nil {
		t.Fatal(err)
	}
	if o.RenewEvery != 500*time.Millisecond || o.Consumer == "" || o.Logger == nil || o.Now == nil {
		t.Errorf("WithDefaults = %+v", o)
	}
	o, _ = queue.Options{}.WithDefaults()
	if o.TTL != queue.DefaultTTL || o.RenewEvery != queue.DefaultTTL/3 {
		t.Errorf("defaults: TTL %v RenewEvery %v", o.TTL, o.RenewEvery)
	}
	for _, c := range []string{"a b", "a\x00", strings.Repeat("c", queue.MaxConsumer+1)} {
		if _, err := (queue.Options{Consumer: c}).WithDefaults(); !errors.Is(err, queue.ErrInvalid) {
			t.Errorf("Consumer %.20q: %v, want ErrInvalid", c, err)
		}
	}
	if _, err := queue.NewMemory(queue.Options{Consumer: "a b"}); !errors.Is(err, queue.ErrInvalid) {
		t.Errorf("NewMemory with a bad consumer: %v", err)
	}
}

func TestTokenFloor(t *testing.T) {
	at := time.UnixMilli(1_760_000_000_123)
	if got := queue.TokenFloor(at); got != 1_760_000_000_123_000 {
		t.Errorf("TokenFloor = %d", got)
	}
	if queue.TokenFloor(at.Add(time.Millisecond)) <= queue.TokenFloor(at)+999 {
		t.Error("a millisecond later leaves no room for 1000 tokens")
	}
}

func FuzzCheckSessionID(f *testing.F) {
	for _, s := range []string{"", "s1", "01HZX3K4", "a b", "a\tb", "\xff", "é", "x\u200by", strings.Repeat("x", 600)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, id string) {
		err := queue.CheckSessionID(id)
		if err != nil {
			if !errors.Is(err, queue.ErrInvalid) {
				t.Fatalf("error %v does not wrap ErrInvalid", err)
			}
			return
		}
		if id == "" || len(id) > queue.MaxSessionID || !utf8.ValidString(id) || strings.ContainsAny(id, " \t\r\n\x00") {
			t.Fatalf("accepted %q", id)
		}
	})
}
