package eventbus

import (
	"context"
	"testing"
)

// TestCrowdSlotsFreed: when the last of a crowd of listeners leaves a
// session, the slots the crowd grew go with it (issue 30: memory back near
// idle after 10,000 clients left); a session's few listeners keep theirs.
func TestCrowdSlotsFreed(t *testing.T) {
	m := NewMemory(Options{})
	defer m.Close()
	ctx := context.Background()
	for _, n := range []int{1000, 3} {
		subs := make([]Subscription, n)
		for i := range subs {
			s, err := m.Subscribe(ctx, "s1", 0)
			if err != nil {
				t.Fatal(err)
			}
			subs[i] = s
		}
		s, err := m.session("s1")
		if err != nil {
			t.Fatal(err)
		}
		s.mu.Lock()
		grown := cap(s.subs)
		s.mu.Unlock()
		for _, sub := range subs {
			sub.Close()
		}
		s.mu.Lock()
		left := cap(s.subs)
		s.mu.Unlock()
		if n > maxKeptSubs && left != 0 {
			t.Errorf("%d listeners left: the session keeps %d slots (had %d), want none", n, left, grown)
		}
		if n <= maxKeptSubs && left != grown {
			t.Errorf("%d listeners left: %d slots kept, want the %d they had", n, left, grown)
		}
	}
}
