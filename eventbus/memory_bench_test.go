package eventbus_test

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/reinhq/rein/eventbus"
)

// readers subscribes n goroutines to sid that read until the bus closes,
// calling got after each event; wait waits for them to end.
func readers(b *testing.B, m *eventbus.Memory, sid string, n int, got func(*eventbus.Event)) (wait func()) {
	var wg sync.WaitGroup
	for range n {
		sub, err := m.Subscribe(context.Background(), sid, 0)
		if err != nil {
			b.Fatal(err)
		}
		wg.Go(func() {
			for ev := range sub.Events() {
				got(ev)
			}
		})
	}
	return wg.Wait
}

// BenchmarkPublish is the cost of one event delivered to every subscriber,
// the subscribers' reading included: the publisher sends batches smaller
// than the buffer and waits for every subscriber to read each one, so none
// is cut off.
func BenchmarkPublish(b *testing.B) {
	data := []byte(`{"type":"text_delta","text":"hello"}`)
	for _, subs := range []int{0, 1, 1000} {
		b.Run(fmt.Sprintf("subscribers=%d", subs), func(b *testing.B) {
			const batch = 256
			m := eventbus.NewMemory(eventbus.Options{})
			var pending atomic.Int64
			caught := make(chan struct{})
			wait := readers(b, m, "s", subs, func(ev *eventbus.Event) {
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
				if err := m.Publish(ctx, eventbus.Event{SessionID: "s", ID: id, Type: "text_delta", Data: data}); err != nil {
					b.Fatal(err)
				}
				if subs > 0 && id%batch == 0 {
					<-caught
				}
			}
			b.StopTimer()
			if slow := m.Stats().Slow; slow > 0 {
				b.Fatalf("%d subscribers were cut off", slow)
			}
			m.Close()
			wait()
		})
	}
}

// BenchmarkFanout is the latency from the start of Publish to the moment
// the last of 1,000 subscribers, each reading in its own goroutine, has the
// event: p50 and p99 over b.N events.
func BenchmarkFanout(b *testing.B) {
	const subs = 1000
	m := eventbus.NewMemory(eventbus.Options{})
	var remaining atomic.Int64
	last := make(chan time.Time, 1)
	wait := readers(b, m, "s", subs, func(*eventbus.Event) {
		if remaining.Add(-1) == 0 {
			last <- time.Now()
		}
	})
	data := []byte(`{"type":"text_delta","text":"hello"}`)
	ctx := context.Background()
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := range b.N {
		remaining.Store(subs)
		start := time.Now()
		if err := m.Publish(ctx, eventbus.Event{SessionID: "s", ID: int64(i + 1), Type: "text_delta", Data: data}); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, (<-last).Sub(start))
	}
	b.StopTimer()
	m.Close()
	wait()
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Nanoseconds()), "p50-ns")
	b.ReportMetric(float64(lat[len(lat)*99/100].Nanoseconds()), "p99-ns")
	b.ReportMetric(float64(lat[len(lat)-1].Nanoseconds()), "max-ns")
}

// BenchmarkIdleSubscribers is the heap an idle subscription holds with the
// default options: 10,000 of them on one session, measured after a GC.
// With a cancelable context, the subscription also registers an AfterFunc.
func BenchmarkIdleSubscribers(b *testing.B) {
	const subs = 10_000
	for _, cancelable := range []bool{false, true} {
		b.Run(fmt.Sprintf("cancelable=%v", cancelable), func(b *testing.B) {
			ctx, cancel := context.Background(), context.CancelFunc(func() {})
			if cancelable {
				ctx, cancel = context.WithCancel(ctx)
			}
			defer cancel()
			var perSub float64
			for range b.N {
				m := eventbus.NewMemory(eventbus.Options{})
				mustPublishB(b, m, "s", 1) // the session's record exists before the measure
				held := make([]eventbus.Subscription, 0, subs)
				before := heap()
				for range subs {
					sub, err := m.Subscribe(ctx, "s", 1)
					if err != nil {
						b.Fatal(err)
					}
					held = append(held, sub)
				}
				perSub = float64(heap()-before) / subs
				runtime.KeepAlive(held)
				m.Close()
			}
			b.ReportMetric(perSub, "bytes/subscriber")
		})
	}
}

func mustPublishB(b *testing.B, m *eventbus.Memory, sid string, id int64) {
	if err := m.Publish(context.Background(), eventbus.Event{SessionID: sid, ID: id}); err != nil {
		b.Fatal(err)
	}
}

// heap returns the live heap after a collection.
func heap() int64 {
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapAlloc)
}
