// Package bustest is the conformance suite every [eventbus.Bus] backend
// passes: ordering, replay from the window, gaps, slow subscribers, the end
// of subscriptions and of the bus, and session isolation.
//
// The suite only assumes what the Bus contract says, so it suits backends
// that deliver asynchronously: it never asserts a time, and a test that
// waits for an event that never comes fails by the test binary's timeout.
package bustest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/reinhq/rein/eventbus"
)

// Config is what a bus made for one test must be configured with.
type Config struct {
	// Window is the number of events retained per session.
	Window int
	// Buffer is the number of live events a subscriber may have waiting
	// before it is cut off.
	Buffer int
}

// Run runs the suite. newBus returns a new, empty bus configured with c,
// holding no session of an earlier test; the suite closes it at the end of
// the test (so Close must be idempotent, as the contract says).
func Run(t *testing.T, newBus func(t *testing.T, c Config) eventbus.Bus) {
	tests := []struct {
		name string
		fn   func(*testing.T, func(Config) eventbus.Bus)
	}{
		{"ReplayThenLive", testReplayThenLive},
		{"AfterID", testAfterID},
		{"NonContiguousIDs", testNonContiguousIDs},
		{"GapAfterEviction", testGapAfterEviction},
		{"GapUnknownSession", testGapUnknownSession},
		{"ConcurrentBoundary", testConcurrentBoundary},
		{"SlowSubscriberCutOff", testSlowSubscriberCutOff},
		{"PublisherNeverBlocks", testPublisherNeverBlocks},
		{"ReplayLargerThanBuffer", testReplayLargerThanBuffer},
		{"ContextCancel", testContextCancel},
		{"DoneContext", testDoneContext},
		{"SubscriptionClose", testSubscriptionClose},
		{"BusClose", testBusClose},
		{"OutOfOrder", testOutOfOrder},
		{"SessionsIsolated", testSessionsIsolated},
		{"InvalidInput", testInvalidInput},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.fn(t, func(c Config) eventbus.Bus {
				b := newBus(t, c)
				t.Cleanup(func() {
					if err := b.Close(); err != nil {
						t.Errorf("Close: %v", err)
					}
				})
				return b
			})
		})
	}
}

// event returns event id of session sid, with fields derived from both.
func event(sid string, id int64) eventbus.Event {
	typ := "text_delta"
	if id%5 == 0 {
		typ = "message"
	}
	return eventbus.Event{SessionID: sid, ID: id, RunID: "run-" + sid, Type: typ, Durable: id%5 == 0,
		Data: fmt.Appendf(nil, `{"type":%q,"n":%d}`, typ, id)}
}

// publish publishes the events of sid with the given ids.
func publish(t *testing.T, b eventbus.Bus, sid string, ids ...int64) {
	t.Helper()
	for _, id := range ids {
		if err := b.Publish(t.Context(), event(sid, id)); err != nil {
			t.Fatalf("Publish(%s, %d): %v", sid, id, err)
		}
	}
}

// span returns the ids from..to.
func span(from, to int64) []int64 {
	var ids []int64
	for id := from; id <= to; id++ {
		ids = append(ids, id)
	}
	return ids
}

func subscribe(t *testing.T, b eventbus.Bus, sid string, after int64) eventbus.Subscription {
	t.Helper()
	sub, err := b.Subscribe(t.Context(), sid, after)
	if err != nil {
		t.Fatalf("Subscribe(%s, %d): %v", sid, after, err)
	}
	t.Cleanup(sub.Close)
	return sub
}

// receive reads events from sub up to the first whose ID is last or above,
// so that a missing event shows as a difference, not as a wait; it fails if
// the subscription ends first.
func receive(t *testing.T, sub eventbus.Subscription, last int64) []eventbus.Event {
	t.Helper()
	var got []eventbus.Event
	for len(got) == 0 || got[len(got)-1].ID < last {
		ev, ok := <-sub.Events()
		if !ok {
			t.Fatalf("subscription ended after %d events, before %d: Err() = %v", len(got), last, sub.Err())
		}
		got = append(got, *ev)
	}
	return got
}

// receiveIDs is receive returning the IDs.
func receiveIDs(t *testing.T, sub eventbus.Subscription, last int64) []int64 {
	t.Helper()
	var ids []int64
	for _, ev := range receive(t, sub, last) {
		ids = append(ids, ev.ID)
	}
	return ids
}

// expect reads the events with the given ids of sid from sub and checks
// them in full.
func expect(t *testing.T, sub eventbus.Subscription, sid string, ids ...int64) {
	t.Helper()
	want := make([]eventbus.Event, len(ids))
	for i, id := range ids {
		want[i] = event(sid, id)
	}
	if diff := cmp.Diff(want, receive(t, sub, ids[len(ids)-1])); diff != "" {
		t.Fatalf("events (-want +got):\n%s", diff)
	}
}

// expectNothing publishes a marker event of sid with id marker and checks
// that it is the next event sub yields: so nothing came before it.
func expectNothing(t *testing.T, b eventbus.Bus, sub eventbus.Subscription, sid string, marker int64) {
	t.Helper()
	publish(t, b, sid, marker)
	expect(t, sub, sid, marker)
}

// end reads sub until it ends and returns the IDs it still got and Err().
func end(sub eventbus.Subscription) ([]int64, error) {
	var ids []int64
	for ev := range sub.Events() {
		ids = append(ids, ev.ID)
	}
	return ids, sub.Err()
}

// contiguous reports whether ids are from, from+1, …
func contiguous(ids []int64, from int64) bool {
	for i, id := range ids {
		if id != from+int64(i) {
			return false
		}
	}
	return true
}

func testReplayThenLive(t *testing.T, newBus func(Config) eventbus.Bus) {
	b := newBus(Config{Window: 64, Buffer: 16})
	publish(t, b, "s1", span(1, 10)...)
	sub := subscribe(t, b, "s1", 0)
	if g := sub.Gap(); g != 0 {
		t.Errorf("Gap() = %d, want 0: the window holds the stream from its first event", g)
	}
	publish(t, b, "s1", 11) // so that a short replay shows as a difference
	expect(t, sub, "s1", span(1, 11)...)
	publish(t, b, "s1", span(12, 20)...)
	expect(t, sub, "s1", span(12, 20)...)
	if err := sub.Err(); err != nil {
		t.Errorf("Err() of a live subscription = %v, want nil", err)
	}
}

func testAfterID(t *testing.T, newBus func(Config) eventbus.Bus) {
	b := newBus(Config{Window: 64, Buffer: 16})
	publish(t, b, "s1", span(1, 10)...)
	tests := []struct {
		after  int64
		replay []int64
	}{
		{0, span(1, 10)},
		{4, span(5, 10)},
		{9, []int64{10}},
		{10, nil},
		{12, nil}, // beyond the last: live events up to 12 are skipped too
	}
	var subs []eventbus.Subscription
	for _, tt := range tests {
		sub := subscribe(t, b, "s1", tt.after)
		if g := sub.Gap(); g != 0 {
			t.Errorf("after %d: Gap() = %d, want 0", tt.after, g)
		}
		subs = append(subs, sub)
	}
	publish(t, b, "s1", span(11, 13)...)
	for i, tt := range tests {
		var want []int64
		for _, id := range append(tt.replay, span(11, 13)...) {
			if id > tt.after {
				want = append(want, id)
			}
		}
		if diff := cmp.Diff(want, receiveIDs(t, subs[i], 13)); diff != "" {
			t.Errorf("after %d: ids (-want +got):\n%s", tt.after, diff)
		}
	}
	publish(t, b, "s1", 20)
	for i, tt := range tests {
		if diff := cmp.Diff([]int64{20}, receiveIDs(t, subs[i], 20)); diff != "" {
			t.Errorf("after %d: ids after the marker (-want +got):\n%s", tt.after, diff)
		}
	}
}

func testNonContiguousIDs(t *testing.T, newBus func(Config) eventbus.Bus) {
	// IDs as the runner makes them: durable<<20 | delta number.
	const d = 1 << 20
	ids := []int64{1 * d, 1*d + 1, 1*d + 2, 2 * d, 2*d + 1, 3 * d}
	b := newBus(Config{Window: 64, Buffer: 16})
	publish(t, b, "s1", ids...)
	tests := []struct {
		after int64
		want  []int64
	}{
		{0, ids},
		{1*d + 1, ids[2:]},
		{1*d + 5, ids[3:]}, // not an ID that was published
		{2 * d, ids[4:]},
		{3 * d, nil},
	}
	subs := make([]eventbus.Subscription, len(tests))
	for i, tt := range tests {
		sub := subscribe(t, b, "s1", tt.after)
		subs[i] = sub
		// The first held event is 1<<20: the bus cannot know whether the
		// stream had events below it.
		var gap int64
		if tt.after < d-1 {
			gap = d - 1
		}
		if g := sub.Gap(); g != gap {
			t.Errorf("after %d: Gap() = %d, want %d", tt.after, g, gap)
		}
	}
	publish(t, b, "s1", 4*d) // ends every subscriber's reading
	for i, tt := range tests {
		want := append(slices.Clone(tt.want), 4*d)
		if diff := cmp.Diff(want, receiveIDs(t, subs[i], 4*d)); diff != "" {
			t.Errorf("after %d: ids (-want +got):\n%s", tt.after, diff)
		}
	}
}

func testGapAfterEviction(t *testing.T, newBus func(Config) eventbus.Bus) {
	b := newBus(Config{Window: 8, Buffer: 16})
	publish(t, b, "s1", span(1, 20)...) // the window holds 13..20
	tests := []struct {
		after int64
		gap   int64
		want  []int64
	}{
		{0, 12, span(13, 20)},
		{5, 12, span(13, 20)},
		{11, 12, span(13, 20)},
		{12, 0, span(13, 20)},
		{15, 0, span(16, 20)},
		{20, 0, nil},
		{25, 0, nil},
	}
	subs := make([]eventbus.Subscription, len(tests))
	for i, tt := range tests {
		subs[i] = subscribe(t, b, "s1", tt.after)
		if g := subs[i].Gap(); g != tt.gap {
			t.Errorf("after %d: Gap() = %d, want %d", tt.after, g, tt.gap)
		}
	}
	publish(t, b, "s1", 30) // ends every subscriber's reading
	for i, tt := range tests {
		want := append(slices.Clone(tt.want), 30)
		if diff := cmp.Diff(want, receiveIDs(t, subs[i], 30)); diff != "" {
			t.Errorf("after %d: ids (-want +got):\n%s", tt.after, diff)
		}
	}

	// With gaps between IDs, Gap lies between the highest evicted ID and
	// the first one delivered.
	publish(t, b, "s2", 10, 20, 30, 40, 50, 60, 70, 80, 90, 100, 110, 120) // holds 50..120
	sub := subscribe(t, b, "s2", 0)
	if g := sub.Gap(); g < 40 || g >= 50 {
		t.Errorf("s2 after 0: Gap() = %d, want in [40, 50)", g)
	}
	if ev := receive(t, sub, 50)[0]; ev.ID != 50 {
		t.Errorf("s2 after 0: first event %d, want 50", ev.ID)
	}
	sub = subscribe(t, b, "s2", 45)
	if g := sub.Gap(); g != 0 && (g <= 45 || g >= 50) {
		t.Errorf("s2 after 45: Gap() = %d, want 0 or in (45, 50)", g)
	}
}

func testGapUnknownSession(t *testing.T, newBus func(Config) eventbus.Bus) {
	b := newBus(Config{Window: 64, Buffer: 16})
	early := subscribe(t, b, "s1", 0)
	late := subscribe(t, b, "s1", 7)
	for _, sub := range []eventbus.Subscription{early, late} {
		if g := sub.Gap(); g != eventbus.GapUnknown {
			t.Errorf("Gap() of a session the bus never saw = %d, want GapUnknown", g)
		}
	}
	publish(t, b, "s1", 5, 8)
	expect(t, early, "s1", 5, 8)
	expect(t, late, "s1", 8)

	// The bus cannot know whether 1..4 were published before it saw 5.
	sub := subscribe(t, b, "s1", 0)
	if g := sub.Gap(); g != 4 {
		t.Errorf("after 0, first held event 5: Gap() = %d, want 4", g)
	}
	expect(t, sub, "s1", 5, 8)
	sub = subscribe(t, b, "s1", 4)
	if g := sub.Gap(); g != 0 {
		t.Errorf("after 4, first held event 5: Gap() = %d, want 0", g)
	}
	expect(t, sub, "s1", 5, 8)
}

func testSlowSubscriberCutOff(t *testing.T, newBus func(Config) eventbus.Bus) {
	const buffer = 8
	b := newBus(Config{Window: 64, Buffer: buffer})
	slow := subscribe(t, b, "s1", 0) // never reads until the end
	fast := subscribe(t, b, "s1", 0)
	var id int64
	for range 5 * buffer / 4 {
		publish(t, b, "s1", span(id+1, id+4)...)
		expect(t, fast, "s1", span(id+1, id+4)...)
		id += 4
	}
	got, err := end(slow)
	if !errors.Is(err, eventbus.ErrSlow) {
		t.Errorf("Err() of a subscriber that never read = %v, want ErrSlow", err)
	}
	if len(got) < buffer || len(got) >= int(id) || !contiguous(got, 1) {
		t.Errorf("the slow subscriber got %v, want 1..n with %d <= n < %d", got, buffer, id)
	}
	slow.Close()
	if err := slow.Err(); !errors.Is(err, eventbus.ErrSlow) {
		t.Errorf("Err() after Close of a cut off subscription = %v, want ErrSlow still", err)
	}
	publish(t, b, "s1", id+1)
	expect(t, fast, "s1", id+1)
	if err := fast.Err(); err != nil {
		t.Errorf("Err() of the fast subscriber = %v, want nil", err)
	}
}

func testPublisherNeverBlocks(t *testing.T, newBus func(Config) eventbus.Bus) {
	const window, buffer = 16, 4
	b := newBus(Config{Window: window, Buffer: buffer})
	never := subscribe(t, b, "s1", 0)
	// Were Publish to wait for the subscriber, this would hang.
	publish(t, b, "s1", span(1, 20*(window+buffer))...)
	got, err := end(never)
	if !errors.Is(err, eventbus.ErrSlow) {
		t.Errorf("Err() = %v, want ErrSlow", err)
	}
	if !contiguous(got, 1) {
		t.Errorf("the cut off subscriber got %v, want 1..n", got)
	}
}

func testReplayLargerThanBuffer(t *testing.T, newBus func(Config) eventbus.Bus) {
	const buffer = 8
	b := newBus(Config{Window: 64, Buffer: buffer})
	publish(t, b, "s1", span(1, 40)...)
	sub := subscribe(t, b, "s1", 0)
	// The replay of 40 plus a full buffer of live events fit without a read.
	publish(t, b, "s1", span(41, 40+buffer)...)
	expect(t, sub, "s1", span(1, 40+buffer)...)
	expectNothing(t, b, sub, "s1", 41+buffer)
}

func testContextCancel(t *testing.T, newBus func(Config) eventbus.Bus) {
	b := newBus(Config{Window: 64, Buffer: 16})
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	sub, err := b.Subscribe(ctx, "s1", 0)
	if err != nil {
		t.Fatal(err)
	}
	other := subscribe(t, b, "s1", 0)
	publish(t, b, "s1", 1)
	expect(t, sub, "s1", 1)
	cancel()
	got, err := end(sub)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("Err() after cancel = %v, want context.Canceled", err)
	}
	if len(got) > 0 {
		t.Errorf("got %v after cancel, want nothing: nothing was published", got)
	}
	publish(t, b, "s1", 2) // the publisher is unaffected
	expect(t, other, "s1", 1, 2)
	sub.Close()
	if err := sub.Err(); !errors.Is(err, context.Canceled) {
		t.Errorf("Err() after a later Close = %v, want context.Canceled still", err)
	}

	// A subscription closed before its context is done stays closed with nil.
	ctx2, cancel2 := context.WithCancel(t.Context())
	sub, err = b.Subscribe(ctx2, "s1", 2)
	if err != nil {
		t.Fatal(err)
	}
	sub.Close()
	cancel2()
	if _, err := end(sub); err != nil {
		t.Errorf("Err() of a closed subscription whose context ended later = %v, want nil", err)
	}
}

func testDoneContext(t *testing.T, newBus func(Config) eventbus.Bus) {
	b := newBus(Config{Window: 64, Buffer: 16})
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := b.Subscribe(ctx, "s1", 0); !errors.Is(err, context.Canceled) {
		t.Errorf("Subscribe with a done context: %v, want context.Canceled", err)
	}
	sub := subscribe(t, b, "s1", 0)
	if err := b.Publish(ctx, event("s1", 1)); !errors.Is(err, context.Canceled) {
		t.Errorf("Publish with a done context: %v, want context.Canceled", err)
	}
	publish(t, b, "s1", 1) // the first attempt published nothing
	expect(t, sub, "s1", 1)
}

func testSubscriptionClose(t *testing.T, newBus func(Config) eventbus.Bus) {
	b := newBus(Config{Window: 64, Buffer: 16})
	sub := subscribe(t, b, "s1", 0)
	other := subscribe(t, b, "s1", 0)
	publish(t, b, "s1", 1)
	sub.Close()
	got, err := end(sub)
	if err != nil {
		t.Errorf("Err() after Close = %v, want nil", err)
	}
	if len(got) > 1 || !contiguous(got, 1) {
		t.Errorf("after Close got %v, want at most [1]", got)
	}
	sub.Close() // idempotent
	if err := sub.Err(); err != nil {
		t.Errorf("Err() after a second Close = %v, want nil", err)
	}
	publish(t, b, "s1", 2)
	expect(t, other, "s1", 1, 2)
}

func testBusClose(t *testing.T, newBus func(Config) eventbus.Bus) {
	b := newBus(Config{Window: 64, Buffer: 16})
	publish(t, b, "s1", 1)
	publish(t, b, "s2", 1)
	subs := []eventbus.Subscription{subscribe(t, b, "s1", 0), subscribe(t, b, "s1", 1),
		subscribe(t, b, "s2", 0), subscribe(t, b, "s3", 0)}
	if err := b.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	for i, sub := range subs {
		if _, err := end(sub); !errors.Is(err, eventbus.ErrClosed) {
			t.Errorf("subscription %d: Err() = %v, want ErrClosed", i, err)
		}
		sub.Close()
	}
	if err := b.Publish(t.Context(), event("s1", 2)); !errors.Is(err, eventbus.ErrClosed) {
		t.Errorf("Publish after Close: %v, want ErrClosed", err)
	}
	if _, err := b.Subscribe(t.Context(), "s1", 0); !errors.Is(err, eventbus.ErrClosed) {
		t.Errorf("Subscribe after Close: %v, want ErrClosed", err)
	}
	if err := b.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

func testOutOfOrder(t *testing.T, newBus func(Config) eventbus.Bus) {
	b := newBus(Config{Window: 64, Buffer: 16})
	sub := subscribe(t, b, "s1", 0)
	publish(t, b, "s1", 5)
	for _, id := range []int64{5, 4, 0, -1} {
		if err := b.Publish(t.Context(), event("s1", id)); !errors.Is(err, eventbus.ErrOutOfOrder) {
			t.Errorf("Publish(%d) after 5: %v, want ErrOutOfOrder", id, err)
		}
	}
	publish(t, b, "s2", 1) // another session's order is its own
	publish(t, b, "s1", 6)
	expect(t, sub, "s1", 5, 6)
	late := subscribe(t, b, "s1", 0)
	expect(t, late, "s1", 5, 6)
	if err := b.Publish(t.Context(), event("s2", 0)); !errors.Is(err, eventbus.ErrOutOfOrder) {
		t.Errorf("Publish(0) to a new session: %v, want ErrOutOfOrder", err)
	}
}

func testSessionsIsolated(t *testing.T, newBus func(Config) eventbus.Bus) {
	b := newBus(Config{Window: 64, Buffer: 16})
	a, c := subscribe(t, b, "a", 0), subscribe(t, b, "c", 0)
	for id := int64(1); id <= 5; id++ {
		publish(t, b, "a", id)
		publish(t, b, "c", 10*id)
	}
	lateA, lateC := subscribe(t, b, "a", 3), subscribe(t, b, "c", 30)
	publish(t, b, "a", 6)
	publish(t, b, "c", 60)
	expect(t, a, "a", 1, 2, 3, 4, 5, 6)
	expect(t, c, "c", 10, 20, 30, 40, 50, 60)
	expect(t, lateA, "a", 4, 5, 6)
	expect(t, lateC, "c", 40, 50, 60)
}

func testInvalidInput(t *testing.T, newBus func(Config) eventbus.Bus) {
	b := newBus(Config{Window: 64, Buffer: 16})
	ctx := t.Context()
	if err := b.Publish(ctx, event("", 1)); !errors.Is(err, eventbus.ErrInvalid) {
		t.Errorf("Publish with no session id: %v, want ErrInvalid", err)
	}
	if _, err := b.Subscribe(ctx, "", 0); !errors.Is(err, eventbus.ErrInvalid) {
		t.Errorf("Subscribe with no session id: %v, want ErrInvalid", err)
	}
	if _, err := b.Subscribe(ctx, "s1", -1); !errors.Is(err, eventbus.ErrInvalid) {
		t.Errorf("Subscribe after -1: %v, want ErrInvalid", err)
	}
}
