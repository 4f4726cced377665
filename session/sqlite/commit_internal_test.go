package sqlite

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reinhq/rein/llm"
	"github.com/reinhq/rein/session"
)

// openBatching opens a store with sessions s0 … s<n-1>, closed when the
// test ends.
func openBatching(t *testing.T, n int) *Store {
	t.Helper()
	st, err := Open(filepath.Join(t.TempDir(), "rein.db"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	for i := range n {
		if err := st.Create(context.Background(), &session.Session{ID: fmt.Sprint("s", i)}); err != nil {
			t.Fatal(err)
		}
	}
	return st
}

// holdWriter makes the store's writer busy with a write that waits until
// the returned function is called, so the writes made meanwhile queue up
// and are committed together in the next batch.
func holdWriter(t *testing.T, st *Store) (release func()) {
	t.Helper()
	gate, running := make(chan struct{}), make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- st.write(context.Background(), func(ctx context.Context, tx *txn) error {
			close(running)
			<-gate
			return nil
		})
	}()
	<-running
	return func() {
		close(gate)
		if err := <-done; err != nil {
			t.Errorf("the holding write: %v", err)
		}
	}
}

// waitQueued waits until n writes wait for the writer.
func waitQueued(t *testing.T, st *Store, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for st.writer.waiting() != n {
		if time.Now().After(deadline) {
			t.Fatalf("%d writes queued after 10s, want %d", st.writer.waiting(), n)
		}
		time.Sleep(time.Millisecond)
	}
}

func message(text string) session.Entry {
	m := llm.UserText(text)
	return session.Entry{Kind: session.KindMessage, Message: &m}
}

// count is how many entries session id has.
func count(t *testing.T, st *Store, id string) int {
	t.Helper()
	n := 0
	for _, err := range st.Entries(context.Background(), id, 0) {
		if err != nil {
			t.Fatal(err)
		}
		n++
	}
	return n
}

// SESS-1, API-2: when the transaction of a batch fails at COMMIT, every
// write in the batch gets the error and none of them is stored: no write
// of another session is acknowledged without its commit. The failure is
// SQLite's own: one write of the batch leaves a deferred foreign-key
// violation, which COMMIT refuses.
func TestGroupCommitFailedBatchFailsEveryWrite_SESS1(t *testing.T) {
	const writers = 8
	st := openBatching(t, writers)
	release := holdWriter(t, st)
	errs := make([]error, writers)
	var wg sync.WaitGroup
	for i := range writers {
		wg.Go(func() { _, errs[i] = st.Append(context.Background(), fmt.Sprint("s", i), message("hello")) })
	}
	waitQueued(t, st, writers)
	poisoned := make(chan error, 1)
	go func() {
		poisoned <- st.write(context.Background(), func(ctx context.Context, tx *txn) error {
			if _, err := tx.ExecContext(ctx, `PRAGMA defer_foreign_keys = ON`); err != nil {
				return err
			}
			_, err := tx.ExecContext(ctx, `INSERT INTO entries (session_id, seq, data) VALUES ('ghost', 1, '{}')`)
			return err
		})
	}()
	waitQueued(t, st, writers+1)
	release()
	wg.Wait()
	if err := <-poisoned; err == nil || !strings.Contains(err.Error(), "FOREIGN KEY") {
		t.Errorf("the poisoning write: %v, want the foreign key failure", err)
	}
	for i, err := range errs {
		if err == nil || !strings.Contains(err.Error(), "FOREIGN KEY") || !strings.Contains(err.Error(), "none of them was stored") {
			t.Errorf("Append to s%d in the failed batch: %v, want the batch's failure", i, err)
		}
		if n := count(t, st, fmt.Sprint("s", i)); n != 0 {
			t.Errorf("s%d holds %d entries after its batch failed, want 0", i, n)
		}
	}
	// The store goes on: the next write commits, numbered as if the failed
	// batch never was.
	last, err := st.Append(context.Background(), "s0", message("again"))
	if err != nil || last != 1 {
		t.Errorf("Append after the failed batch = %d, %v; want seq 1", last, err)
	}
}

// API-2: a write that fails inside a batch is undone alone (its
// savepoint) and gets its own error; the batch's other writes, including
// a second append to the same session, are stored and numbered right.
func TestGroupCommitFailedWriteFailsAlone_API2(t *testing.T) {
	const writers = 6
	st := openBatching(t, writers)
	dup := &session.Run{SessionID: "s0", Caller: "alice"}
	if err := st.CreateRun(context.Background(), dup); err != nil {
		t.Fatal(err)
	}
	release := holdWriter(t, st)
	type result struct {
		last int64
		err  error
	}
	results := make([]result, writers+1)
	var wg sync.WaitGroup
	queued := 0
	queue := func(fn func()) {
		wg.Go(fn)
		queued++
		waitQueued(t, st, queued) // in this order in the batch
	}
	for i := range writers {
		queue(func() {
			results[i].last, results[i].err = st.Append(context.Background(), fmt.Sprint("s", i), message("one"), message("two"))
		})
	}
	var missing, exists error
	queue(func() { _, missing = st.Append(context.Background(), "nobody", message("lost")) })
	queue(func() {
		exists = st.CreateRun(context.Background(), &session.Run{ID: dup.ID, SessionID: "s0", Caller: "alice"})
	})
	queue(func() {
		results[writers].last, results[writers].err = st.Append(context.Background(), "s0", message("three"))
	})
	release()
	wg.Wait()
	if !errors.Is(missing, session.ErrNotFound) {
		t.Errorf("Append to an unknown session in a batch: %v, want ErrNotFound", missing)
	}
	if !errors.Is(exists, session.ErrExists) {
		t.Errorf("CreateRun of a stored id in a batch: %v, want ErrExists", exists)
	}
	for i, r := range results[:writers] {
		if r.err != nil || r.last != 2 {
			t.Errorf("Append to s%d beside the failed writes = %d, %v; want seq 2", i, r.last, r.err)
		}
	}
	if r := results[writers]; r.err != nil || r.last != 3 {
		t.Errorf("second Append to s0 in the batch = %d, %v; want seq 3", r.last, r.err)
	}
	if n := count(t, st, "s0"); n != 3 {
		t.Errorf("s0 holds %d entries, want 3", n)
	}
}

// API-2: a caller whose context ends while its write waits for its turn
// gets the context's error and nothing is written; a write already taken
// into a batch is answered with the batch's outcome.
func TestGroupCommitWithdrawnWrite_API2(t *testing.T) {
	st := openBatching(t, 1)
	release := holdWriter(t, st)
	ctx, cancel := context.WithCancel(context.Background())
	got := make(chan error, 1)
	go func() {
		_, err := st.Append(ctx, "s0", message("never"))
		got <- err
	}()
	waitQueued(t, st, 1)
	cancel()
	if err := <-got; !errors.Is(err, context.Canceled) {
		t.Errorf("Append whose context ended while queued: %v, want context.Canceled", err)
	}
	if n := st.writer.waiting(); n != 0 {
		t.Errorf("%d writes still queued after the only one withdrew", n)
	}
	release()
	if n := count(t, st, "s0"); n != 0 {
		t.Errorf("s0 holds %d entries after its only write withdrew, want 0", n)
	}
}

// SESS-1: Close commits the writes waiting for their turn before it
// closes the database (each caller gets its commit's outcome), and a
// write after Close fails.
func TestGroupCommitCloseCommitsQueued_SESS1(t *testing.T) {
	path := filepath.Join(t.TempDir(), "rein.db")
	st, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	const writers = 4
	for i := range writers {
		if err := st.Create(context.Background(), &session.Session{ID: fmt.Sprint("s", i)}); err != nil {
			t.Fatal(err)
		}
	}
	release := holdWriter(t, st)
	errs := make([]error, writers)
	var wg sync.WaitGroup
	for i := range writers {
		wg.Go(func() { _, errs[i] = st.Append(context.Background(), fmt.Sprint("s", i), message("kept")) })
	}
	waitQueued(t, st, writers)
	closed := make(chan error, 1)
	go func() { closed <- st.Close() }()
	release()
	wg.Wait()
	if err := <-closed; err != nil {
		t.Fatal(err)
	}
	if _, err := st.Append(context.Background(), "s0", message("late")); !errors.Is(err, errClosed) {
		t.Errorf("Append after Close: %v, want the store's closed error", err)
	}
	st, err = Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for i, err := range errs {
		if err != nil {
			t.Errorf("Append to s%d queued at Close: %v", i, err)
		}
		if n := count(t, st, fmt.Sprint("s", i)); n != 1 {
			t.Errorf("s%d holds %d entries after reopening, want 1", i, n)
		}
	}
}

// API-2, SESS-1: many goroutines appending at once, some giving up at
// random moments: every append that returned nil is stored, in order, and
// none that returned an error is (the leader hand-over between batches
// loses no write and stores no withdrawn one).
func TestGroupCommitConcurrentWriters_API2(t *testing.T) {
	const writers, appends = 16, 30
	st := openBatching(t, writers)
	acked := make([]int, writers)
	var wg sync.WaitGroup
	for g := range writers {
		wg.Go(func() {
			for i := range appends {
				ctx, cancel := context.WithTimeout(context.Background(), time.Duration((g*appends+i)%7)*100*time.Microsecond)
				if i%3 != 0 {
					cancel()
					ctx, cancel = context.WithCancel(context.Background())
				}
				last, err := st.Append(ctx, fmt.Sprint("s", g), message(fmt.Sprint(g, "/", i)))
				cancel()
				switch {
				case err == nil:
					acked[g]++
					if last != int64(acked[g]) {
						t.Errorf("s%d: append %d acknowledged as seq %d, want %d", g, i, last, acked[g])
					}
				case !errors.Is(err, context.DeadlineExceeded):
					t.Errorf("s%d: append %d: %v", g, i, err)
				}
			}
		})
	}
	wg.Wait()
	for g := range writers {
		if n := count(t, st, fmt.Sprint("s", g)); n != acked[g] {
			t.Errorf("s%d holds %d entries, %d appends were acknowledged", g, n, acked[g])
		}
	}
}
