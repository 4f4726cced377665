package bustest

import (
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/reinhq/rein/eventbus"
)

// The size of testConcurrentBoundary: events per session, subscribers per
// session.
const n, subscribers = 2000, 8

// testConcurrentBoundary subscribes while the sessions' publishers run, so
// replays meet live events at every point: each subscriber must get every
// event after max(afterID, Gap), once, in order. The buffer is large enough
// that no one is cut off; the window is small so that some afterIDs have
// been evicted.
func testConcurrentBoundary(t *testing.T, newBus func(Config) eventbus.Bus) {
	const sessions, window = 4, 32
	b := newBus(Config{Window: window, Buffer: n + window})
	var wg sync.WaitGroup
	for s := range sessions {
		sid := string(rune('a' + s))
		publish(t, b, sid, 1) // the bus knows the stream from its start
		var progress atomic.Int64
		progress.Store(1)
		wg.Go(func() {
			for id := int64(2); id <= n; id++ {
				if err := b.Publish(t.Context(), event(sid, id)); err != nil {
					t.Errorf("Publish(%s, %d): %v", sid, id, err)
					return
				}
				progress.Store(id)
				if id%64 == 0 {
					runtime.Gosched()
				}
			}
		})
		for j := range subscribers {
			wg.Go(func() { follow(t, b, sid, j, &progress) })
		}
	}
	wg.Wait()
}

// follow is subscriber j of sid: it waits for the publisher to reach its
// share of the stream, subscribes a little behind it and reads to the end.
func follow(t *testing.T, b eventbus.Bus, sid string, j int, progress *atomic.Int64) {
	for progress.Load() < int64(j*n/subscribers) {
		runtime.Gosched()
	}
	after := max(0, progress.Load()-int64(j*5))
	sub, err := b.Subscribe(t.Context(), sid, after)
	if err != nil {
		t.Errorf("Subscribe(%s, %d): %v", sid, after, err)
		return
	}
	defer sub.Close()
	gap := sub.Gap()
	if gap != 0 && (gap <= after || gap >= n) {
		t.Errorf("%s after %d: Gap() = %d, want 0 or in (after, %d)", sid, after, gap, n)
		return
	}
	next := max(after, gap) + 1
	for next <= n {
		ev, ok := <-sub.Events()
		switch {
		case !ok:
			t.Errorf("%s after %d: ended before %d: %v", sid, after, next, sub.Err())
			return
		case ev.SessionID != sid || ev.ID != next:
			t.Errorf("%s after %d (gap %d): got %s/%d, want %s/%d", sid, after, gap, ev.SessionID, ev.ID, sid, next)
			return
		}
		next++
	}
}
