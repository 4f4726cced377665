package redisbus_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/reinhq/rein/eventbus"
	"github.com/reinhq/rein/eventbus/redisbus"
)

var benchData = []byte(`{"type":"text_delta","text":"hello"}`)

// benchBuses returns a publishing bus and a subscribing one, as a worker
// and an API process, on a prefix of their own.
func benchBuses(b *testing.B, opts redisbus.Options) (worker, api *redisbus.Bus) {
	u := redisURL(b)
	opts.Prefix = newPrefix(b, u)
	return newBus(b, u, opts), newBus(b, u, opts)
}

// readers subscribes n goroutines to sid on bus that read until the
// subscription ends, calling got after each event; wait waits for them.
func readers(b *testing.B, bus eventbus.Bus, sid string, n int, got func(*eventbus.Event)) (subs []eventbus.Subscription, wait func()) {
	var wg sync.WaitGroup
	for range n {
		sub, err := bus.Subscribe(context.Background(), sid, 0)
		if err != nil {
			b.Fatal(err)
		}
		subs = append(subs, sub)
		wg.Go(func() {
			for ev := range sub.Events() {
				got(ev)
			}
		})
	}
	return subs, wg.Wait
}

// BenchmarkFanout is the latency from the start of Publish on one bus to
// the moment the last of 100 subscribers on another bus (another process)
// has the event: p50 and p99 over b.N events, published one at a time.
func BenchmarkFanout(b *testing.B) {
	const subs = 100
	worker, api := benchBuses(b, redisbus.Options{})
	var remaining atomic.Int64
	last := make(chan time.Time, 1)
	all, wait := readers(b, api, "s", subs, func(*eventbus.Event) {
		if remaining.Add(-1) == 0 {
			last <- time.Now()
		}
	})
	ctx := context.Background()
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := range b.N {
		remaining.Store(subs)
		start := time.Now()
		if err := worker.Publish(ctx, eventbus.Event{SessionID: "s", ID: int64(i + 1), Type: "text_delta", Data: benchData}); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, (<-last).Sub(start))
	}
	b.StopTimer()
	for _, sub := range all {
		sub.Close()
	}
	wait()
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
	b.ReportMetric(float64(lat[len(lat)-1].Microseconds()), "max-µs")
}

// BenchmarkPublish is Publish's throughput from one goroutine (one
// session, as a run publishes), with no subscriber and with 100 on another
// bus that must all receive every event (the publisher waits for them
// every 256 events, so none is cut off).
func BenchmarkPublish(b *testing.B) {
	for _, subs := range []int{0, 100} {
		b.Run(fmt.Sprintf("subscribers=%d", subs), func(b *testing.B) {
			const batch = 256
			worker, api := benchBuses(b, redisbus.Options{})
			var pending atomic.Int64
			caught := make(chan struct{})
			all, wait := readers(b, api, "s", subs, func(ev *eventbus.Event) {
				if ev.ID%batch == 0 && pending.Add(-1) == 0 {
					caught <- struct{}{}
				}
			})
			ctx := context.Background()
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				id := int64(i + 1)
				if subs > 0 && id%batch == 0 {
					pending.Store(int64(subs))
				}
				if err := worker.Publish(ctx, eventbus.Event{SessionID: "s", ID: id, Type: "text_delta", Data: benchData}); err != nil {
					b.Fatal(err)
				}
				if subs > 0 && id%batch == 0 {
					<-caught
				}
			}
			b.StopTimer()
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
			if slow := api.Stats().Slow; slow > 0 {
				b.Fatalf("%d subscribers were cut off", slow)
			}
			for _, sub := range all {
				sub.Close()
			}
			wait()
		})
	}
}

// BenchmarkPublishParallel is Publish's throughput with many runs
// publishing at once (8 per CPU), each to its own session, through one
// bus's pool.
func BenchmarkPublishParallel(b *testing.B) {
	worker, _ := benchBuses(b, redisbus.Options{})
	var sessions atomic.Int64
	ctx := context.Background()
	b.SetParallelism(8)
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		sid := fmt.Sprintf("s%d", sessions.Add(1))
		var id int64
		for pb.Next() {
			id++
			if err := worker.Publish(ctx, eventbus.Event{SessionID: sid, ID: id, Type: "text_delta", Data: benchData}); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
}
