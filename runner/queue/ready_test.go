package queue_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/reinhq/rein/runner/queue"
)

// API-5: readiness fails once work has waited longer than the lease time
// with no worker taking it, and passes again as soon as one does. The
// clock is synctest's.
func TestTakenCheck_API5(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		q, err := queue.NewMemory(queue.Options{TTL: 30 * time.Second, RenewEvery: -1})
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
		time.Sleep(29 * time.Second)
		if err := check(ctx); err != nil {
			t.Fatalf("work waiting within the lease time: %v", err)
		}
		time.Sleep(2 * time.Second)
		if err := check(ctx); !errors.Is(err, queue.ErrNoWorker) {
			t.Fatalf("work waiting 31s with a 30s lease: %v, want ErrNoWorker", err)
		}
		lease, err := q.Take(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if err := check(ctx); err != nil {
			t.Errorf("a worker took the work: %v", err)
		}
		if err := lease.Done(ctx, false); err != nil {
			t.Fatal(err)
		}
	})
}
