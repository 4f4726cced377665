package sqlite_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/reinhq/rein/llm"
	"github.com/reinhq/rein/session"
	"github.com/reinhq/rein/session/sessiontest"
	"github.com/reinhq/rein/session/sqlite"
)

var ctx = context.Background()

// newStore opens a store in a new temporary directory, closed when the test
// ends.
func newStore(t testing.TB, opts sqlite.Options) *sqlite.Store {
	t.Helper()
	st, err := sqlite.Open(filepath.Join(t.TempDir(), "rein.db"), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

func TestConformance(t *testing.T) {
	sessiontest.Run(t, func(t *testing.T) session.Store { return newStore(t, sqlite.Options{}) })
}

func TestLedgerConformance(t *testing.T) {
	sessiontest.RunLedger(t, func(t *testing.T) session.Ledger { return newStore(t, sqlite.Options{}) })
}

func userEntry(text string) session.Entry {
	m := llm.UserText(text)
	return session.Entry{Kind: session.KindMessage, Message: &m}
}

// API-5: the data directory and the database are private to the user; a
// path with characters special in URIs is taken as it is.
func TestFileModes(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data dir #1?x=%20", "rein")
	path := filepath.Join(dir, "rein.db")
	st, err := sqlite.Open(path, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if st.Path() != path {
		t.Errorf("Path() = %q, want %q", st.Path(), path)
	}
	if err := st.Create(ctx, &session.Session{ID: "s"}); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]os.FileMode{dir: 0o700 | os.ModeDir, path: 0o600, path + "-wal": 0o600} {
		info, err := os.Stat(name)
		if err != nil {
			t.Fatal(err)
		}
		if info.Mode() != want {
			t.Errorf("%s: mode %v, want %v", name, info.Mode(), want)
		}
	}
	var names []string
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if diff := cmp.Diff([]string{"rein.db", "rein.db-shm", "rein.db-wal"}, names); diff != "" {
		t.Errorf("files in the directory (-want +got):\n%s", diff)
	}
}

// What was written is there after the store is closed and opened again,
// seq counters included.
func TestReopen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "rein.db")
	st, err := sqlite.Open(path, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Create(ctx, &session.Session{ID: "s", Caller: "alice", Workspace: "w"}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Append(ctx, "s", userEntry("a"), userEntry("b")); err != nil {
		t.Fatal(err)
	}
	if err := st.Rewrite(ctx, "s", nil); err != nil {
		t.Fatal(err)
	}
	run := &session.Run{SessionID: "s", Prompt: "hi"}
	if err := st.CreateRun(ctx, run); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	again, err := sqlite.Open(path, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	if last, err := again.Append(ctx, "s", userEntry("c")); err != nil || last != 3 {
		t.Errorf("Append after reopening: seq %d, %v; want 3 (seqs are never reused)", last, err)
	}
	if got, err := again.GetRun(ctx, run.ID); err != nil || got.Prompt != "hi" || got.Seq != run.Seq {
		t.Errorf("GetRun after reopening: %+v, %v", got, err)
	}
	next := &session.Run{SessionID: "s"}
	if err := again.CreateRun(ctx, next); err != nil || next.Seq <= run.Seq {
		t.Errorf("CreateRun after reopening: seq %d (%v), want above %d", next.Seq, err, run.Seq)
	}
	list, _, err := again.List(ctx, session.ListOptions{Caller: "alice", Workspace: "w"})
	if err != nil || len(list) != 1 {
		t.Errorf("List after reopening: %v, %v", list, err)
	}
}

// A database written by a newer rein is refused, saying so.
func TestNewerSchema(t *testing.T) {
	path := filepath.Join(t.TempDir(), "rein.db")
	st, err := sqlite.Open(path, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	st.Close()
	db := rawDB(t, path)
	if _, err := db.Exec(`INSERT INTO schema_version (version, name, applied_at) VALUES (99, '0099_future', 0)`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	_, err = sqlite.Open(path, sqlite.Options{})
	if !errors.Is(err, sqlite.ErrNewerSchema) || !strings.Contains(err.Error(), "version 99") || !strings.Contains(err.Error(), path) {
		t.Errorf("Open of a newer database: %v; want ErrNewerSchema naming the file and version 99", err)
	}
}

// rawDB opens the database file directly, to damage it.
func rawDB(t *testing.T, path string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// SESS-1, SESS-2: a row that does not hold its entry is reported as damage
// (a heal entry with Seq 0), never fatal; the session loads, forks and
// takes appends; once a resume stored the report, it is not news.
func TestDamagedRows(t *testing.T) {
	tests := []struct {
		name, data, reason string
	}{
		{"not JSON", `{"seq":2,"time":"2026-01-01T00:00:00Z","ki`, "corrupt: unexpected end of JSON input"},
		{"another seq", `{"seq":7,"time":"2026-01-01T00:00:00Z","kind":"message","message":{"role":"user","content":[]}}`,
			"corrupt: the row of seq 2 holds entry 7"},
		{"payload of another kind", `{"seq":2,"time":"2026-01-01T00:00:00Z","kind":"run","message":{"role":"user","content":[]}}`,
			"corrupt: invalid session input: run entry also carries a message payload"},
		{"empty", ``, "corrupt: unexpected end of JSON input"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "rein.db")
			st, err := sqlite.Open(path, sqlite.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			if err := st.Create(ctx, &session.Session{ID: "s"}); err != nil {
				t.Fatal(err)
			}
			if _, err := st.Append(ctx, "s", userEntry("m1"), userEntry("m2"), userEntry("m3")); err != nil {
				t.Fatal(err)
			}
			if _, err := rawDB(t, path).Exec(`UPDATE entries SET data = ? WHERE seq = 2`, tt.data); err != nil {
				t.Fatal(err)
			}
			state, err := session.Load(ctx, st, "s")
			if err != nil {
				t.Fatalf("Load: %v", err)
			}
			want := []session.Damage{{Line: 2, Bytes: int64(len(tt.data)), Reason: tt.reason}}
			if diff := cmp.Diff(want, state.Heal.Damaged); diff != "" {
				t.Errorf("damage (-want +got):\n%s", diff)
			}
			if got := messageTexts(state.Messages); got != "m1 m3" {
				t.Errorf("messages %q, want %q", got, "m1 m3")
			}
			fork, err := st.Fork(ctx, "s", 0)
			if err != nil {
				t.Fatal(err)
			}
			if fs, err := session.Load(ctx, st, fork.ID); err != nil || !fs.Heal.Empty() || messageTexts(fs.Messages) != "m1 m3" {
				t.Errorf("the fork: %v, heal %q, messages %q; want the good entries only", err, fs.Heal.String(), messageTexts(fs.Messages))
			}
			if err := session.SaveHeal(ctx, st, "s", state); err != nil {
				t.Fatal(err)
			}
			again, err := session.Load(ctx, st, "s")
			if err != nil || !again.Heal.Empty() || messageTexts(again.Messages) != "m1 m3" {
				t.Errorf("after SaveHeal: %v, heal %q, messages %q", err, again.Heal.String(), messageTexts(again.Messages))
			}
		})
	}
}

func messageTexts(msgs []llm.Message) string {
	var out []string
	for _, m := range msgs {
		out = append(out, m.TextOf())
	}
	return strings.Join(out, " ")
}

// Two stores on one file (as two processes would be) append to one session
// at once: each waits for the other's write lock instead of failing with
// SQLITE_BUSY, and every seq is handed out once.
func TestTwoStoresOneFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "rein.db")
	var stores []*sqlite.Store
	for range 2 {
		st, err := sqlite.Open(path, sqlite.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		stores = append(stores, st)
	}
	if err := stores[0].Create(ctx, &session.Session{ID: "s"}); err != nil {
		t.Fatal(err)
	}
	const writers, appends = 3, 20
	var mu sync.Mutex
	seen := map[int64]bool{}
	var wg sync.WaitGroup
	for _, st := range stores {
		for range writers {
			wg.Go(func() {
				for range appends {
					last, err := st.Append(ctx, "s", userEntry("x"))
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
	if n != 2*writers*appends {
		t.Errorf("%d entries, want %d", n, 2*writers*appends)
	}
}

// Entries streams a snapshot: appending while iterating neither blocks nor
// shows up in the iteration, and stopping early gives the connection back
// (with a pool of two, a leak would hang the next call).
func TestEntriesSnapshot(t *testing.T) {
	st := newStore(t, sqlite.Options{MaxConns: 2})
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

// A cancelled write stores nothing.
func TestCancelled(t *testing.T) {
	st := newStore(t, sqlite.Options{})
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
}
