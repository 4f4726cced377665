package eventbus_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"

	"github.com/reinhq/rein/eventbus"
	"github.com/reinhq/rein/eventbus/bustest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestMemory(t *testing.T) {
	bustest.Run(t, func(t *testing.T, c bustest.Config) eventbus.Bus {
		return eventbus.NewMemory(eventbus.Options{Window: c.Window, Buffer: c.Buffer})
	})
}

// clock is a settable clock.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

func ev(sid string, id int64) eventbus.Event {
	return eventbus.Event{SessionID: sid, ID: id, Type: "text_delta", Data: []byte(`{}`)}
}

func mustPublish(t *testing.T, m *eventbus.Memory, sid string, ids ...int64) {
	t.Helper()
	for _, id := range ids {
		if err := m.Publish(context.Background(), ev(sid, id)); err != nil {
			t.Fatalf("Publish(%s, %d): %v", sid, id, err)
		}
	}
}

func mustSubscribe(t *testing.T, m *eventbus.Memory, sid string, after int64) eventbus.Subscription {
	t.Helper()
	sub, err := m.Subscribe(context.Background(), sid, after)
	if err != nil {
		t.Fatalf("Subscribe(%s, %d): %v", sid, after, err)
	}
	return sub
}

func TestMemoryIdleSessionsDropped(t *testing.T) {
	const idle = time.Minute
	clk := &clock{now: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	m := eventbus.NewMemory(eventbus.Options{Idle: idle, Now: clk.Now})
	defer m.Close()
	sessions := func(want int, when string) {
		t.Helper()
		if got := m.Stats().Sessions; got != want {
			t.Fatalf("Sessions %s = %d, want %d", when, got, want)
		}
	}

	mustPublish(t, m, "a", 1, 2, 3) // idle from t0
	watched := mustSubscribe(t, m, "b", 0)
	clk.advance(idle - time.Second)
	mustPublish(t, m, "c", 1) // a new record: a sweep runs, nothing is idle yet
	sessions(3, "before a's idle time")

	clk.advance(idle / 4) // the next sweep is due
	mustPublish(t, m, "c", 2)
	sessions(3, "with no new record (no sweep)")
	mustPublish(t, m, "d", 1) // the sweep drops a; b has a subscriber
	sessions(3, "after a's idle time (b, c, d)")

	sub := mustSubscribe(t, m, "a", 0)
	if g := sub.Gap(); g != eventbus.GapUnknown {
		t.Errorf("Gap() of a dropped session = %d, want GapUnknown", g)
	}
	mustPublish(t, m, "a", 2) // the last published ID was forgotten too
	if got := (<-sub.Events()).ID; got != 2 {
		t.Errorf("first event after the drop = %d, want 2", got)
	}
	sub.Close()

	watched.Close() // b is idle from now on
	clk.advance(idle)
	mustSubscribe(t, m, "e", 0).Close() // the sweep drops a, b, c and d
	sessions(1, "after everything idled (e)")
}

func TestMemoryStats(t *testing.T) {
	m := eventbus.NewMemory(eventbus.Options{Buffer: 2})
	defer m.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	closed := mustSubscribe(t, m, "a", 0)
	slow := mustSubscribe(t, m, "a", 0)
	canceled, err := m.Subscribe(ctx, "b", 0)
	if err != nil {
		t.Fatal(err)
	}
	live := mustSubscribe(t, m, "c", 0)
	defer live.Close()
	want := eventbus.Stats{Sessions: 3, Subscribers: 4}
	if diff := cmp.Diff(want, m.Stats()); diff != "" {
		t.Errorf("Stats after subscribing (-want +got):\n%s", diff)
	}

	closed.Close()
	mustPublish(t, m, "a", 1, 2, 3) // slow is cut off at 3, before Publish returns
	cancel()
	for range canceled.Events() {
	}
	want = eventbus.Stats{Sessions: 3, Subscribers: 1, Published: 3, Slow: 1}
	if diff := cmp.Diff(want, m.Stats()); diff != "" {
		t.Fatalf("Stats after the ends (-want +got):\n%s", diff)
	}
	for range slow.Events() {
	}
	if got := m.Subscribers(); got != 1 {
		t.Errorf("Subscribers() = %d, want 1", got)
	}

	m.Close()
	for range live.Events() {
	}
	want = eventbus.Stats{Sessions: 0, Subscribers: 0, Published: 3, Slow: 1}
	if diff := cmp.Diff(want, m.Stats()); diff != "" {
		t.Errorf("Stats after Close (-want +got):\n%s", diff)
	}
}

func TestMemoryDefaults(t *testing.T) {
	m := eventbus.NewMemory(eventbus.Options{})
	defer m.Close()
	never := mustSubscribe(t, m, "a", 0)
	var ids []int64
	for id := int64(1); id <= eventbus.DefaultWindow+1; id++ {
		ids = append(ids, id)
	}
	mustPublish(t, m, "a", ids...) // evicts 1; cuts never off after DefaultBuffer
	sub := mustSubscribe(t, m, "a", 0)
	defer sub.Close()
	if g := sub.Gap(); g != 1 {
		t.Errorf("Gap() after DefaultWindow+1 events = %d, want 1", g)
	}
	var n int
	for range never.Events() {
		n++
	}
	if n != eventbus.DefaultBuffer || !errors.Is(never.Err(), eventbus.ErrSlow) {
		t.Errorf("a subscriber that never read got %d events and %v, want %d and ErrSlow",
			n, never.Err(), eventbus.DefaultBuffer)
	}
}

// TestMemoryNotify: a Memory subscription is a Notifier (issue 30, SPEC
// API-2: idle streams hold no goroutine). An armed function is called once
// when an event arrives for the subscriber, at once when events wait or
// the subscription ended, and when the subscription ends (closed, cut
// off, the bus closed); never for an event the subscriber does not get.
func TestMemoryNotify(t *testing.T) {
	ctx := context.Background()
	pub := func(t *testing.T, m *eventbus.Memory, id int64) {
		t.Helper()
		if err := m.Publish(ctx, eventbus.Event{SessionID: "s", ID: id, Type: "t"}); err != nil {
			t.Fatal(err)
		}
	}
	sub := func(t *testing.T, m *eventbus.Memory, after int64) eventbus.Notifier {
		t.Helper()
		s, err := m.Subscribe(ctx, "s", after)
		if err != nil {
			t.Fatal(err)
		}
		n, ok := s.(eventbus.Notifier)
		if !ok {
			t.Fatalf("%T is not a Notifier", s)
		}
		return n
	}
	for _, tc := range []struct {
		name string
		run  func(t *testing.T, m *eventbus.Memory, s eventbus.Notifier, calls func() int)
		want int
	}{
		{"one publish fires once, a second nothing", func(t *testing.T, m *eventbus.Memory, s eventbus.Notifier, calls func() int) {
			pub(t, m, 1)
			pub(t, m, 2)
		}, 1},
		{"nothing happens, nothing fires", func(*testing.T, *eventbus.Memory, eventbus.Notifier, func() int) {}, 0},
		{"close fires", func(t *testing.T, m *eventbus.Memory, s eventbus.Notifier, calls func() int) {
			s.Close()
		}, 1},
		{"bus close fires", func(t *testing.T, m *eventbus.Memory, s eventbus.Notifier, calls func() int) {
			_ = m.Close()
		}, 1},
		{"cut off as slow fires once", func(t *testing.T, m *eventbus.Memory, s eventbus.Notifier, calls func() int) {
			for id := range int64(10) {
				pub(t, m, id+1)
			}
			if !errors.Is(drainErr(s), eventbus.ErrSlow) {
				t.Error("not cut off")
			}
		}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := eventbus.NewMemory(eventbus.Options{Buffer: 2})
			defer m.Close()
			s := sub(t, m, 0)
			n := 0
			s.Notify(func() { n++ })
			tc.run(t, m, s, func() int { return n })
			if n != tc.want {
				t.Errorf("called %d times, want %d", n, tc.want)
			}
		})
	}
	t.Run("events waiting or ended fire at once, re-arming fires again", func(t *testing.T) {
		m := eventbus.NewMemory(eventbus.Options{})
		defer m.Close()
		pub(t, m, 1)
		s := sub(t, m, 0) // the replay of 1 waits
		n := 0
		s.Notify(func() { n++ })
		if n != 1 {
			t.Fatalf("with an event waiting: %d calls, want 1", n)
		}
		<-s.Events()
		s.Notify(func() { n++ })
		if n != 1 {
			t.Fatalf("with nothing waiting: %d calls, want still 1", n)
		}
		pub(t, m, 2)
		if n != 2 {
			t.Fatalf("after a publish: %d calls, want 2", n)
		}
		s.Close()
		s.Notify(func() { n++ })
		if n != 3 {
			t.Errorf("after the end: %d calls, want 3", n)
		}
	})
	t.Run("an event the subscriber skips does not fire", func(t *testing.T) {
		m := eventbus.NewMemory(eventbus.Options{})
		defer m.Close()
		s := sub(t, m, 5) // after 5: events up to 5 are not its
		n := 0
		s.Notify(func() { n++ })
		pub(t, m, 3)
		if n != 0 {
			t.Errorf("an event below afterID fired: %d calls", n)
		}
		pub(t, m, 6)
		if n != 1 {
			t.Errorf("an event after afterID: %d calls, want 1", n)
		}
	})
}

// drainErr receives until s ends and returns why it ended.
func drainErr(s eventbus.Subscription) error {
	for range s.Events() {
	}
	return s.Err()
}

// TestMemoryTake: a Notifier's subscriber takes what waits without a
// channel (issue 30): the replay, then live events, in order, with no
// duplicate; its queue is bounded like the channel (cut off with ErrSlow
// beyond replay + Buffer, the events before the cut still taken); the end
// is reported with the last events.
func TestMemoryTake(t *testing.T) {
	ctx := context.Background()
	ids := func(evs []*eventbus.Event) []int64 {
		var out []int64
		for _, ev := range evs {
			out = append(out, ev.ID)
		}
		return out
	}
	m := eventbus.NewMemory(eventbus.Options{Buffer: 3})
	defer m.Close()
	pub := func(id int64) {
		t.Helper()
		if err := m.Publish(ctx, eventbus.Event{SessionID: "s", ID: id, Type: "t"}); err != nil {
			t.Fatal(err)
		}
	}
	pub(1)
	pub(2)
	s, err := m.Subscribe(ctx, "s", 0)
	if err != nil {
		t.Fatal(err)
	}
	n := s.(eventbus.Notifier)
	evs, ended := n.Take(nil)
	if diff := cmp.Diff([]int64{1, 2}, ids(evs)); diff != "" || ended {
		t.Fatalf("replay (-want +got, ended %v):\n%s", ended, diff)
	}
	if evs, ended = n.Take(nil); len(evs) != 0 || ended {
		t.Fatalf("nothing waits: %v, ended %v", ids(evs), ended)
	}
	pub(3)
	pub(4)
	if evs, ended = n.Take(evs[:0]); !cmp.Equal([]int64{3, 4}, ids(evs)) || ended {
		t.Fatalf("live: %v, ended %v; want [3 4]", ids(evs), ended)
	}
	// As with the channel, replay + Buffer (5) events may wait; the sixth
	// cuts the subscriber off.
	for id := int64(5); id <= 10; id++ {
		pub(id)
	}
	evs, ended = n.Take(nil)
	if !cmp.Equal([]int64{5, 6, 7, 8, 9}, ids(evs)) || !ended || !errors.Is(n.Err(), eventbus.ErrSlow) {
		t.Fatalf("past the buffer: %v, ended %v, err %v; want [5 … 9], ended, ErrSlow", ids(evs), ended, n.Err())
	}
	if st := m.Stats(); st.Slow != 1 || st.Subscribers != 0 {
		t.Errorf("stats %+v, want one slow and no subscriber left", st)
	}

	// Events() after Take: what waits moves to the channel, which is
	// closed when the subscription ends.
	s2, err := m.Subscribe(ctx, "s", 9)
	if err != nil {
		t.Fatal(err)
	}
	s2.Close()
	var got []int64
	for ev := range s2.Events() {
		got = append(got, ev.ID)
	}
	if !cmp.Equal([]int64{10}, got) || s2.Err() != nil {
		t.Errorf("Events() after the end: %v, err %v; want [10], nil", got, s2.Err())
	}
}
