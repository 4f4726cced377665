package queuetest

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/reinhq/rein/runner/queue"
)

// BenchLatency measures the latency from Enqueue to the Take that gets the
// session, on an idle queue with one consumer blocked in Take, and reports
// its median and 99th percentile (p50-ns, p99-ns) beside ns/op (one
// enqueue, take and Done).
func BenchLatency(b *testing.B, q queue.Queue) {
	ctx := b.Context()
	type taken struct {
		at  time.Time
		err error
	}
	got := make(chan taken)
	next := make(chan struct{})
	go func() {
		for range next {
			l, err := q.Take(ctx)
			at := time.Now()
			if err == nil {
				err = l.Done(ctx, false)
			}
			got <- taken{at, err}
		}
	}()
	defer close(next)
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := range b.N {
		next <- struct{}{}
		start := time.Now()
		if err := q.Enqueue(ctx, fmt.Sprintf("lat-%d", i)); err != nil {
			b.Fatal(err)
		}
		r := <-got
		if r.err != nil {
			b.Fatal(r.err)
		}
		lat = append(lat, r.at.Sub(start))
	}
	reportPercentiles(b, lat)
}

// BenchThroughput measures Take then Done(false) by GOMAXPROCS consumers
// on a queue holding b.N waiting sessions (enqueued before the timer
// starts).
func BenchThroughput(b *testing.B, q queue.Queue) {
	ctx := b.Context()
	for i := range b.N {
		if err := q.Enqueue(ctx, fmt.Sprintf("tp-%d", i)); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			l, err := q.Take(ctx)
			if err != nil {
				b.Error(err)
				return
			}
			if err := l.Done(ctx, false); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

func reportPercentiles(b *testing.B, lat []time.Duration) {
	if len(lat) == 0 {
		return
	}
	slices.Sort(lat)
	at := func(p float64) float64 { return float64(lat[min(len(lat)-1, int(p*float64(len(lat))))].Nanoseconds()) }
	b.ReportMetric(at(0.50), "p50-ns")
	b.ReportMetric(at(0.99), "p99-ns")
}
