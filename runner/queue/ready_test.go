package queue_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/reinhq/rein/runner/queue"
)

// fakeClock is a clock tests move by hand.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) add(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// API-5: readiness fails once work has waited longer than the lease time
// with no worker taking it, and passes again as soon as one does.
func TestTakenCheck_API5(t *testing.T) {
	ctx := context.Background()
	clock := &fakeClock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	q, err := queue.NewMemory(queue.Options{TTL: 30 * time.Second, RenewEvery: -1, Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	check := queue.TakenCheck(q, 30*time.Second)
	if err := check(ctx); err != nil {
		t.Fatalf("an empty queue: %v", err)
	}
	if err := q.Enqueue(ctx, "s1"); err != nil {
		t.Fatal(err)
	}
	clock.add(29 * time.Second)
	if err := check(ctx); err != nil {
		t.Fatalf("work waiting within the lease time: %v", err)
	}
	clock.add(2 * time.Second)
	err = check(ctx)
	if !errors.Is(err, queue.ErrNoWorker) {
		t.Fatalf("work waiting 31s with a 30s lease: %v, want ErrNoWorker", err)
	}
	t.Log(err)
	lease, err := q.Take(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer lease.Done(ctx, false)
	if err := check(ctx); err != nil {
		t.Errorf("a worker took the work: %v", err)
	}
}
