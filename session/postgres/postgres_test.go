package postgres

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/reinhq/rein/llm"
	"github.com/reinhq/rein/session"
	"github.com/reinhq/rein/session/postgres/pgtest"
	"github.com/reinhq/rein/session/sessiontest"
)

var ctx = context.Background()

// envURL names the variable that points the tests at a database.
const envURL = pgtest.EnvURL

// baseURL returns the test database's URL, or skips the test when none is
// set.
func baseURL(t testing.TB) string { return pgtest.BaseURL(t) }

// withParams returns connString with the settings added.
func withParams(t testing.TB, connString string, kv ...string) string {
	return pgtest.WithParams(t, connString, kv...)
}

// rawConn connects to connString outside any store, closed when the test
// ends.
func rawConn(t testing.TB, connString string) *pgx.Conn {
	t.Helper()
	c, err := pgx.Connect(ctx, connString)
	if err != nil {
		t.Fatalf("connect to the test database: %v", err)
	}
	t.Cleanup(func() { c.Close(context.Background()) })
	return c
}

func testSchema(t testing.TB) (string, string) {
	t.Helper()
	return pgtest.Schema(t)
}

// newStore opens a store on a new schema, closed when the test ends.
func newStore(t testing.TB, opts Options) *Store {
	t.Helper()
	u, _ := testSchema(t)
	return openStore(t, u, opts)
}

func openStore(t testing.TB, u string, opts Options) *Store {
	t.Helper()
	st, err := Open(ctx, u, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

func TestConformance(t *testing.T) {
	baseURL(t)
	t.Parallel()
	sessiontest.Run(t, func(t *testing.T) session.Store { return newStore(t, Options{}) })
}

func TestLedgerConformance(t *testing.T) {
	baseURL(t)
	t.Parallel()
	sessiontest.RunLedger(t, func(t *testing.T) session.Ledger {
		return newStore(t, Options{})
	})
}

// exec runs a statement on a connection of the store, for tests that
// reach under the API.
func (s *Store) exec(sql string, args ...any) (int64, error) {
	var n int64
	err := s.read(ctx, func(c *pgx.Conn) error {
		tag, err := c.Exec(ctx, sql, args...)
		n = tag.RowsAffected()
		return err
	})
	return n, err
}

func userEntry(text string) session.Entry {
	m := llm.UserText(text)
	return session.Entry{Kind: session.KindMessage, Message: &m}
}

// Two stores on one database (as two processes would be) append to one
// session at once: every seq is handed out once, without a gap.
func TestTwoStoresOneDatabase(t *testing.T) {
	t.Parallel()
	u, _ := testSchema(t)
	stores := []*Store{openStore(t, u, Options{}), openStore(t, u, Options{})}
	if err := stores[0].Create(ctx, &session.Session{ID: "s"}); err != nil {
		t.Fatal(err)
	}
	const writers, appends = 4, 15
	var mu sync.Mutex
	seen := map[int64]bool{}
	var wg sync.WaitGroup
	for _, st := range stores {
		for range writers {
			wg.Go(func() {
				for range appends {
					last, err := st.Append(ctx, "s", userEntry("x"), userEntry("y"))
					if err != nil {
						t.Error(err)
						return
					}
					mu.Lock()
					if seen[last] {
						t.Errorf("seq %d handed out twice", last)
					}
					seen[last] = true
					mu.Unlock()
				}
			})
		}
	}
	wg.Wait()
	n := 0
	for e, err := range stores[1].Entries(ctx, "s", 0) {
		if err != nil || e.Seq != int64(n+1) {
			t.Fatalf("entry %d: seq %d, %v", n, e.Seq, err)
		}
		n++
	}
	if want := 2 * 2 * writers * appends; n != want {
		t.Errorf("%d entries, want %d", n, want)
	}
}

// Writers of one session's events in two stores race to store the same
// ids: each id is stored once, and every loser learns it with ErrInvalid
// (the contract's answer), not a raw unique violation.
func TestEventsRace(t *testing.T) {
	t.Parallel()
	u, _ := testSchema(t)
	stores := []*Store{openStore(t, u, Options{}), openStore(t, u, Options{})}
	const ids, writers = 20, 3
	var mu sync.Mutex
	won := map[int64]int{}
	var wg sync.WaitGroup
	for _, st := range stores {
		for range writers {
			wg.Go(func() {
				for id := int64(1); id <= ids; id++ {
					err := st.AppendEvents(ctx, session.Event{SessionID: "s", ID: id, Type: "message", Data: []byte(`{}`)})
					if err != nil && !errors.Is(err, session.ErrInvalid) {
						t.Errorf("AppendEvents %d: %v, want nil or ErrInvalid", id, err)
					}
					if err == nil {
						mu.Lock()
						won[id]++
						mu.Unlock()
					}
				}
			})
		}
	}
	wg.Wait()
	evs, err := stores[0].Events(ctx, "s", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	for i, e := range evs {
		if i > 0 && e.ID <= evs[i-1].ID {
			t.Errorf("event %d: id %d after %d", i, e.ID, evs[i-1].ID)
		}
		if won[e.ID] != 1 {
			t.Errorf("event %d stored by %d writers, want 1", e.ID, won[e.ID])
		}
	}
	if len(evs) != len(won) {
		t.Errorf("%d events stored, %d acknowledged", len(evs), len(won))
	}
}

// Entries streams a snapshot: appending while iterating neither blocks nor
// shows up in the iteration, and stopping early gives the connection back
// (with a pool of two, a leak would hang the next call).
func TestEntriesSnapshot(t *testing.T) {
	t.Parallel()
	st := newStore(t, Options{MaxConns: 2})
	if err := st.Create(ctx, &session.Session{ID: "s"}); err != nil {
		t.Fatal(err)
	}
	for i := range 10 {
		if _, err := st.Append(ctx, "s", userEntry(fmt.Sprint(i))); err != nil {
			t.Fatal(err)
		}
	}
	n := 0
	for e, err := range st.Entries(ctx, "s", 0) {
		if err != nil {
			t.Fatal(err)
		}
		n++
		if _, err := st.Append(ctx, "s", userEntry("during "+e.Message.TextOf())); err != nil {
			t.Fatalf("Append while iterating: %v", err)
		}
	}
	if n != 10 {
		t.Errorf("the iteration saw %d entries, want the 10 there when it began", n)
	}
	for range 5 {
		for range st.Entries(ctx, "s", 0) {
			break
		}
	}
	if last, err := st.Append(ctx, "s"); err != nil || last != 20 {
		t.Errorf("after stopping iterations early: last seq %d, %v; want 20", last, err)
	}
}

// A cancelled write stores nothing, and the pool stays usable.
func TestCancelled(t *testing.T) {
	t.Parallel()
	st := newStore(t, Options{MaxConns: 2})
	if err := st.Create(ctx, &session.Session{ID: "s"}); err != nil {
		t.Fatal(err)
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := st.Append(cancelled, "s", userEntry("x")); !errors.Is(err, context.Canceled) {
		t.Errorf("Append with a cancelled context: %v, want context.Canceled", err)
	}
	if err := st.CreateRun(cancelled, &session.Run{SessionID: "s"}); !errors.Is(err, context.Canceled) {
		t.Errorf("CreateRun with a cancelled context: %v, want context.Canceled", err)
	}
	if last, err := st.Append(ctx, "s"); err != nil || last != 0 {
		t.Errorf("last seq %d, %v; want 0", last, err)
	}
	if runs, err := st.ListRuns(ctx, session.RunFilter{}); err != nil || len(runs) != 0 {
		t.Errorf("runs %v, %v; want none", runs, err)
	}
}

// Connections the server dropped while they sat idle in the pool are
// replaced, not handed to a caller.
func TestDroppedConnections(t *testing.T) {
	t.Parallel()
	u, _ := testSchema(t)
	app := "rein_drop_" + rand.Text()[:8]
	st := openStore(t, withParams(t, u, "application_name", app), Options{MaxConns: 3})
	if err := st.Create(ctx, &session.Session{ID: "s"}); err != nil {
		t.Fatal(err)
	}
	var killed int
	err := rawConn(t, baseURL(t)).QueryRow(ctx,
		`SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name = $1`, app).Scan(&killed)
	if err != nil || killed == 0 {
		t.Fatalf("terminated %d connections of the store, %v", killed, err)
	}
	time.Sleep(1100 * time.Millisecond) // pgxpool pings a connection idle for over a second before lending it
	for range 3 {
		if _, err := st.Get(ctx, "s"); err != nil {
			t.Fatalf("Get after the server dropped the pool's connections: %v", err)
		}
	}
}

// After Close, calls fail at once with a clear error.
func TestClosed(t *testing.T) {
	t.Parallel()
	st := newStore(t, Options{})
	st.Close()
	if _, err := st.Get(ctx, "s"); err == nil || !strings.Contains(err.Error(), "closed") {
		t.Errorf("Get after Close: %v, want an error saying the store is closed", err)
	}
}

// Deleting a session while others append to it: every append either
// lands before the delete or finds the session gone (ErrNotFound), never
// a deadlock or a half-deleted log.
func TestDeleteWhileAppending(t *testing.T) {
	t.Parallel()
	st := newStore(t, Options{})
	for round := range 5 {
		id := fmt.Sprint("s", round)
		if err := st.Create(ctx, &session.Session{ID: id}); err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		var deleted atomic.Bool
		for range 4 {
			wg.Go(func() {
				for !deleted.Load() {
					_, err := st.Append(ctx, id, userEntry("x"))
					if errors.Is(err, session.ErrNotFound) {
						return
					}
					if err != nil {
						t.Errorf("Append during Delete: %v", err)
						return
					}
				}
			})
		}
		if _, err := st.Append(ctx, id, userEntry("first")); err != nil {
			t.Fatal(err)
		}
		if err := st.Delete(ctx, id); err != nil {
			t.Errorf("Delete during appends: %v", err)
		}
		deleted.Store(true)
		wg.Wait()
		if n, err := st.exec(`DELETE FROM entries WHERE session_id = $1`, id); err != nil || n != 0 {
			t.Errorf("entries left of the deleted session: %d, %v", n, err)
		}
	}
}
