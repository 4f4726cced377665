package postgres

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/reinhq/rein/session"
	"github.com/reinhq/rein/session/sessiontest"
)

func TestFencing(t *testing.T) {
	baseURL(t)
	t.Parallel()
	sessiontest.RunFencing(t, func(t *testing.T) (session.Store, session.Ledger) {
		st := newStore(t, Options{})
		return st, st
	})
}

// A refused write says which session, which token and which fence, and is
// not mistaken for an unreachable database.
func TestFencedError(t *testing.T) {
	t.Parallel()
	st := newStore(t, Options{})
	if err := st.Create(ctx, &session.Session{ID: "s"}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Append(session.WithFence(ctx, "s", 7), "s", userEntry("7")); err != nil {
		t.Fatal(err)
	}
	_, err := st.Append(session.WithFence(ctx, "s", 5), "s", userEntry("5"))
	if !errors.Is(err, session.ErrFenced) || errors.Is(err, session.ErrUnavailable) {
		t.Fatalf("Append with token 5 after 7: %v, want ErrFenced (only)", err)
	}
	for _, want := range []string{"session s", "token 5", "fence 7", "lease"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	// The connection that saw the refusal goes back to the pool usable.
	if last, err := st.Append(ctx, "s"); err != nil || last != 1 {
		t.Errorf("last seq %d, %v; want 1", last, err)
	}
	if n, err := st.exec(`SELECT 1 FROM session_fences WHERE session_id = 's' AND token = 7`); err != nil || n != 1 {
		t.Errorf("fence row of s: %d, %v; want token 7", n, err)
	}
	// Delete drops the fence with the session.
	if err := st.Delete(ctx, "s"); err != nil {
		t.Fatal(err)
	}
	if n, err := st.exec(`SELECT 1 FROM session_fences WHERE session_id = 's'`); err != nil || n != 0 {
		t.Errorf("fence rows of the deleted session: %d, %v; want none", n, err)
	}
}

// Holders in two stores on one database (two worker processes), with
// tokens 1 to 20 interleaved across them, write the entries, runs,
// events and audit records of one session at once: after a token wrote,
// no lower token writes, and no two writers deadlock.
func TestFencingTwoStores(t *testing.T) {
	t.Parallel()
	u, _ := testSchema(t)
	stores := []*Store{openStore(t, u, Options{}), openStore(t, u, Options{})}
	if err := stores[0].Create(ctx, &session.Session{ID: "s"}); err != nil {
		t.Fatal(err)
	}
	run := &session.Run{SessionID: "s"}
	if err := stores[0].CreateRun(ctx, run); err != nil {
		t.Fatal(err)
	}
	const holders, rounds = 20, 6
	start := make(chan struct{})
	var wg sync.WaitGroup
	var mu sync.Mutex
	var events int64
	for token := int64(1); token <= holders; token++ {
		st := stores[token%2]
		wg.Go(func() {
			c := session.WithFence(ctx, "s", token)
			<-start
			for i := range rounds {
				var err error
				switch i % 4 {
				case 0:
					_, err = st.Append(c, "s", userEntry(fmt.Sprint(token)))
				case 1:
					r := *run
					r.Status, r.Error = session.RunRunning, fmt.Sprint(token)
					err = st.UpdateRun(c, &r)
				case 2:
					// Event ids increase with the token: a lower token
					// after a higher would be refused anyway, by the
					// fence first.
					mu.Lock()
					events++
					id := token<<20 | events
					mu.Unlock()
					err = st.AppendEvents(c, session.Event{SessionID: "s", ID: id, Type: "t", Data: []byte(`{}`)})
					if errors.Is(err, session.ErrInvalid) {
						err = nil // a higher token's event came first; the fence let this one through
					}
				case 3:
					err = st.AppendAudit(c, session.AuditRecord{SessionID: "s", Kind: "fence", Data: []byte(fmt.Sprint(token))})
				}
				if errors.Is(err, session.ErrFenced) {
					return
				}
				if err != nil {
					t.Errorf("token %d, step %d: %v", token, i, err)
					return
				}
			}
		})
	}
	close(start)
	wg.Wait()
	prev := int64(0)
	for e, err := range stores[1].Entries(ctx, "s", 0) {
		if err != nil {
			t.Fatal(err)
		}
		var token int64
		fmt.Sscan(e.Message.TextOf(), &token)
		if token < prev {
			t.Errorf("entry %d by token %d after one by %d", e.Seq, token, prev)
		}
		prev = token
	}
	recs, err := stores[1].Audit(ctx, session.AuditFilter{SessionID: "s"})
	if err != nil {
		t.Fatal(err)
	}
	prev = 0
	for _, r := range recs {
		var token int64
		fmt.Sscan(string(r.Data), &token)
		if token < prev {
			t.Errorf("audit record %d by token %d after one by %d", r.ID, token, prev)
		}
		prev = token
	}
	if got, err := stores[0].GetRun(ctx, run.ID); err != nil || got.Error != fmt.Sprint(holders) {
		t.Errorf("the run was last updated by token %q (%v), want %d", got.Error, err, holders)
	}
	for _, st := range stores {
		r := *run
		r.Status = session.RunCompleted
		if err := st.UpdateRun(session.WithFence(ctx, "s", holders-1), &r); !errors.Is(err, session.ErrFenced) {
			t.Errorf("UpdateRun with token %d after the race: %v, want ErrFenced", holders-1, err)
		}
	}
}

// BenchmarkAppendFenced is BenchmarkAppend with a fencing token on every
// append (one holder writing): the cost of the fence check.
func BenchmarkAppendFenced(b *testing.B) {
	st := newStore(b, Options{})
	if err := st.Create(ctx, &session.Session{ID: "s"}); err != nil {
		b.Fatal(err)
	}
	e := benchEntries(2)[1]
	c := session.WithFence(ctx, "s", 1)
	var took latencies
	for b.Loop() {
		took.time(b, func() error { _, err := st.Append(c, "s", e); return err })
	}
	took.report(b)
}
