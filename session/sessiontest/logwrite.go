package sessiontest

import (
	"errors"
	"math"
	"testing"

	"github.com/reinhq/rein/session"
)

// testAppendUpdate checks session.AppendUpdate: the entries are appended
// and the record changed when change says so, left alone when it does
// not; and, for a store that is a session.LogWriter, a write failing in
// any part stores none of it.
func testAppendUpdate(t *testing.T, st session.Store) {
	ctx := t.Context()
	mustCreate(t, st, &session.Session{ID: "s"})
	last, err := session.AppendUpdate(ctx, st, "s", []session.Entry{userEntry("one"), userEntry("two")}, func(s *session.Session) bool {
		s.Preview, s.Runs = "one", 1
		return true
	})
	if err != nil || last != 2 {
		t.Fatalf("AppendUpdate: last seq %d, %v; want 2", last, err)
	}
	last, err = session.AppendUpdate(ctx, st, "s", []session.Entry{userEntry("three")}, func(s *session.Session) bool {
		s.Runs = 99
		return false // not stored
	})
	if err != nil || last != 3 {
		t.Fatalf("AppendUpdate, no change: last seq %d, %v; want 3", last, err)
	}
	got, err := st.Get(ctx, "s")
	if err != nil || got.Preview != "one" || got.Runs != 1 {
		t.Errorf("record after AppendUpdate: %+v, %v; want preview one, 1 run", got, err)
	}
	if n := len(readAll(t, st, "s", 0)); n != 3 {
		t.Errorf("%d entries, want 3", n)
	}
	if _, err := session.AppendUpdate(ctx, st, "nope", []session.Entry{userEntry("x")}, func(*session.Session) bool { return true }); !errors.Is(err, session.ErrNotFound) {
		t.Errorf("AppendUpdate of an unknown session: %v, want ErrNotFound", err)
	}
	if _, atomic := st.(session.LogWriter); !atomic {
		return
	}
	_, err = session.AppendUpdate(ctx, st, "s", []session.Entry{userEntry("four")}, func(s *session.Session) bool {
		s.CostUSD = math.NaN() // JSON has no NaN: the record cannot be stored
		return true
	})
	if !errors.Is(err, session.ErrInvalid) {
		t.Errorf("AppendUpdate with an invalid record: %v, want ErrInvalid", err)
	}
	if n := len(readAll(t, st, "s", 0)); n != 3 {
		t.Errorf("after a failed AppendUpdate: %d entries, want 3 (nothing of it is stored)", n)
	}
}
