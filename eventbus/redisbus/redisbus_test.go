package redisbus_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"

	"github.com/reinhq/rein/eventbus"
	"github.com/reinhq/rein/eventbus/bustest"
	"github.com/reinhq/rein/eventbus/redisbus"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestConformance(t *testing.T) {
	u := redisURL(t)
	bustest.Run(t, func(t *testing.T, c bustest.Config) eventbus.Bus {
		return newBus(t, u, redisbus.Options{Prefix: newPrefix(t, u), Window: c.Window, Buffer: c.Buffer})
	})
}

// TestConformanceAcrossProcesses runs the suite with every event
// published on one bus and every subscription made on another: a worker
// process and an API process.
func TestConformanceAcrossProcesses(t *testing.T) {
	u := redisURL(t)
	bustest.Run(t, func(t *testing.T, c bustest.Config) eventbus.Bus {
		opts := redisbus.Options{Prefix: newPrefix(t, u), Window: c.Window, Buffer: c.Buffer}
		return pair{pub: newBus(t, u, opts), sub: newBus(t, u, opts)}
	})
}

// pair is two buses seen as one: Publish goes to one, Subscribe to the
// other.
type pair struct{ pub, sub *redisbus.Bus }

func (p pair) Publish(ctx context.Context, e eventbus.Event) error { return p.pub.Publish(ctx, e) }

func (p pair) Subscribe(ctx context.Context, sid string, after int64) (eventbus.Subscription, error) {
	return p.sub.Subscribe(ctx, sid, after)
}

func (p pair) Close() error { return errors.Join(p.sub.Close(), p.pub.Close()) }

func TestNewUnreachable(t *testing.T) {
	_, err := redisbus.New(context.Background(), "redis://127.0.0.1:1/0", redisbus.Options{Timeout: time.Second})
	if err == nil || !strings.Contains(err.Error(), "127.0.0.1:1") || !strings.Contains(err.Error(), "check that it runs") {
		t.Errorf("New on a closed port: %v, want an error naming the address and what to check", err)
	}
	if _, err := redisbus.New(context.Background(), "http://x", redisbus.Options{}); err == nil {
		t.Error("New with an http URL: no error")
	}
	_, err = redisbus.New(context.Background(), "redis://u:secret@%zz/0", redisbus.Options{})
	if err == nil || strings.Contains(err.Error(), "secret") {
		t.Errorf("New with a bad URL: %v, want an error without the password", err)
	}
}

// TestTwoProcesses publishes on one bus and subscribes on another, as a
// worker and an API process do.
func TestTwoProcesses(t *testing.T) {
	u := redisURL(t)
	prefix := newPrefix(t, u)
	worker := newBus(t, u, redisbus.Options{Prefix: prefix, Window: 8})
	api := newBus(t, u, redisbus.Options{Prefix: prefix, Window: 8})

	early := mustSubscribe(t, api, "s1", 0)
	if g := early.Gap(); g != eventbus.GapUnknown {
		t.Errorf("Gap() of a session no one published to = %d, want GapUnknown", g)
	}
	local := mustSubscribe(t, worker, "s1", 0)
	mustPublish(t, worker, "s1", span(1, 20)...)
	if diff := cmp.Diff(span(1, 20), receive(t, early, 20)); diff != "" {
		t.Errorf("the API process's subscriber (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(span(1, 20), receive(t, local, 20)); diff != "" {
		t.Errorf("the worker process's subscriber (-want +got):\n%s", diff)
	}

	// Late subscribers on the API process get the backlog the window still
	// holds (13..20), and a gap for what it does not.
	tests := []struct {
		after, gap int64
		want       []int64
	}{
		{0, 12, span(13, 21)},
		{15, 0, span(16, 21)},
		{20, 0, []int64{21}},
	}
	subs := make([]eventbus.Subscription, len(tests))
	for i, tt := range tests {
		subs[i] = mustSubscribe(t, api, "s1", tt.after)
		if g := subs[i].Gap(); g != tt.gap {
			t.Errorf("after %d: Gap() = %d, want %d", tt.after, g, tt.gap)
		}
	}
	mustPublish(t, worker, "s1", 21)
	for i, tt := range tests {
		if diff := cmp.Diff(tt.want, receive(t, subs[i], 21)); diff != "" {
			t.Errorf("after %d (-want +got):\n%s", tt.after, diff)
		}
	}

	// The order check is shared: the API process cannot publish behind
	// the worker.
	if err := api.Publish(context.Background(), ev("s1", 21)); !errors.Is(err, eventbus.ErrOutOfOrder) {
		t.Errorf("Publish(21) on the other process after 21: %v, want ErrOutOfOrder", err)
	}
	mustPublish(t, api, "s1", 22)
	if diff := cmp.Diff([]int64{21, 22}, receive(t, early, 22)); diff != "" {
		t.Errorf("after a publish on the API process (-want +got):\n%s", diff)
	}
}

// TestFewConnections subscribes 10,000 times over 1,000 sessions: the bus
// holds one pub/sub connection and a small pool, not one per subscriber,
// and every subscriber gets the events published on another bus.
func TestFewConnections(t *testing.T) {
	u := redisURL(t)
	prefix := newPrefix(t, u)
	name := uniq("conns")
	b := newBus(t, withClientName(t, u, name), redisbus.Options{Prefix: prefix})
	pub := newBus(t, u, redisbus.Options{Prefix: prefix})
	const subs, sessions = 10_000, 1000
	all := make([]eventbus.Subscription, subs)
	for i := range subs {
		all[i] = mustSubscribe(t, b, fmt.Sprintf("s%d", i%sessions), 0)
	}
	if got := b.Stats().Subscribers; got != subs {
		t.Errorf("Subscribers = %d, want %d", got, subs)
	}
	n := len(clients(t, admin(t, u), name))
	t.Logf("connections for %d subscribers: %d", subs, n)
	if n > 4 {
		t.Errorf("the bus holds %d connections for %d subscribers, want at most 4", n, subs)
	}
	for i := range sessions {
		mustPublish(t, pub, fmt.Sprintf("s%d", i), 1)
	}
	for i, sub := range all {
		if got := receive(t, sub, 1); len(got) != 1 {
			t.Fatalf("subscriber %d got %v, want [1]", i, got)
		}
	}
}

// TestConnectionKilled kills the subscriber process's connections while a
// publisher goes on: the bus reconnects, catches up from the stream, and
// the subscription continues with nothing missing.
func TestConnectionKilled(t *testing.T) {
	u := redisURL(t)
	prefix := newPrefix(t, u)
	name := uniq("killed")
	pub := newBus(t, u, redisbus.Options{Prefix: prefix})
	b := newBus(t, withClientName(t, u, name), redisbus.Options{Prefix: prefix, Timeout: 2 * time.Second})
	sub := mustSubscribe(t, b, "s1", 0)
	other := mustSubscribe(t, b, "s2", 0)
	mustPublish(t, pub, "s1", 1, 2, 3)
	if diff := cmp.Diff([]int64{1, 2, 3}, receive(t, sub, 3)); diff != "" {
		t.Fatalf("before the kill (-want +got):\n%s", diff)
	}

	c := admin(t, u)
	for round := range 3 {
		ids := clients(t, c, name)
		if len(ids) == 0 {
			t.Fatalf("round %d: no connection named %s", round, name)
		}
		for _, id := range ids {
			if err := c.Do(context.Background(), "CLIENT", "KILL", "ID", id).Err(); err != nil {
				t.Fatalf("CLIENT KILL ID %s: %v", id, err)
			}
		}
		// Published while the subscriber's feed is down or resubscribing.
		base := int64(10 * (round + 1))
		mustPublish(t, pub, "s1", span(base, base+4)...)
		mustPublish(t, pub, "s2", base)
		if diff := cmp.Diff(span(base, base+4), receive(t, sub, base+4)); diff != "" {
			t.Fatalf("round %d: after the kill (-want +got):\n%s", round, diff)
		}
		if diff := cmp.Diff([]int64{base}, receive(t, other, base)); diff != "" {
			t.Fatalf("round %d: the other session (-want +got):\n%s", round, diff)
		}
		// The killed bus publishes again.
		mustPublish(t, b, "s2", base+1)
		if diff := cmp.Diff([]int64{base + 1}, receive(t, other, base+1)); diff != "" {
			t.Fatalf("round %d: published by the killed bus (-want +got):\n%s", round, diff)
		}
	}
	st := b.Stats()
	t.Logf("stats of the killed bus: %+v", st)
	if st.Reconnects == 0 || st.Lost != 0 {
		t.Errorf("Stats = %+v, want Reconnects > 0 and Lost = 0", st)
	}
	if err := sub.Err(); err != nil {
		t.Errorf("Err() of the subscription = %v, want nil", err)
	}
}

// TestSweep keeps the stream a subscriber reads alive past Idle, and
// forgets a session a sweep after its last subscriber left.
func TestSweep(t *testing.T) {
	u := redisURL(t)
	prefix := newPrefix(t, u)
	const idle = 300 * time.Millisecond
	b := newBus(t, u, redisbus.Options{Prefix: prefix, Idle: idle})
	pub := newBus(t, u, redisbus.Options{Prefix: prefix, Idle: idle})
	sub := mustSubscribe(t, b, "watched", 0)
	mustPublish(t, pub, "watched", 1)
	mustPublish(t, pub, "unwatched", 1)
	c := admin(t, u)
	exists := func(sid string) bool {
		n, err := c.Exists(context.Background(), prefix+"s:"+sid).Result()
		if err != nil {
			t.Fatal(err)
		}
		return n == 1
	}
	eventually(t, 10*time.Second, "the unwatched stream expires", func() bool { return !exists("unwatched") })
	if !exists("watched") {
		t.Error("the stream a subscriber reads expired")
	}
	mustPublish(t, pub, "watched", 2)
	if diff := cmp.Diff([]int64{1, 2}, receive(t, sub, 2)); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	sub.Close()
	eventually(t, 10*time.Second, "the session is forgotten", func() bool { return b.Stats().Sessions == 0 })
	eventually(t, 10*time.Second, "the watched stream expires", func() bool { return !exists("watched") })
}

// TestCloseLeaksNothing closes a bus with subscribers and checks that its
// goroutines are gone.
func TestCloseLeaksNothing(t *testing.T) {
	u := redisURL(t)
	prefix := newPrefix(t, u)
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	b, err := redisbus.New(context.Background(), u, redisbus.Options{Prefix: prefix})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var subs []eventbus.Subscription
	for _, sid := range []string{"a", "b", "c"} {
		sub, err := b.Subscribe(ctx, sid, 0)
		if err != nil {
			t.Fatal(err)
		}
		subs = append(subs, sub)
		mustPublish(t, b, sid, 1)
	}
	for _, sub := range subs {
		if diff := cmp.Diff([]int64{1}, receive(t, sub, 1)); diff != "" {
			t.Errorf("(-want +got):\n%s", diff)
		}
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	for _, sub := range subs {
		for range sub.Events() {
		}
		if !errors.Is(sub.Err(), eventbus.ErrClosed) {
			t.Errorf("Err() after Close = %v, want ErrClosed", sub.Err())
		}
	}
}
