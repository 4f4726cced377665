package sqlite

import (
	"context"
	"testing"

	"github.com/reinhq/rein/llm"
	"github.com/reinhq/rein/session"
)

// The statement cache prepares each query text once, in writes and reads
// alike, keeps no query that fails to prepare, and refuses after Close.
func TestStatementCache_SESS1(t *testing.T) {
	st := openBatching(t, 2)
	ctx := context.Background()
	m := llm.UserText("hi")
	for i := range 3 {
		if _, err := st.Append(ctx, "s0", session.Entry{Kind: session.KindMessage, Message: &m}); err != nil {
			t.Fatal(err)
		}
		if _, err := st.Get(ctx, "s1"); err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			continue
		}
		st.stmts.mu.Lock()
		n := len(st.stmts.byText)
		st.stmts.mu.Unlock()
		if i == 1 {
			defer func(first int) {
				st.stmts.mu.Lock()
				defer st.stmts.mu.Unlock()
				if got := len(st.stmts.byText); got != first {
					t.Errorf("%d statements after the same calls again, want %d: a query text was prepared twice", got, first)
				}
			}(n)
		}
	}
	if _, err := st.stmts.get(ctx, `SELECT nothing FROM nowhere`); err == nil {
		t.Error("a query naming no table prepared")
	}
	st.stmts.mu.Lock()
	_, kept := st.stmts.byText[`SELECT nothing FROM nowhere`]
	st.stmts.mu.Unlock()
	if kept {
		t.Error("a query that failed to prepare was kept")
	}
	other := openBatching(t, 0)
	other.Close()
	if _, err := other.stmts.get(ctx, `SELECT 1`); err == nil {
		t.Error("get after Close prepared a statement, want an error")
	}
}

// SESS-1: the writer prepares each statement once on its connection and
// reuses it in every later transaction; a connection found broken at the
// next write is replaced, and that write is stored all the same.
func TestWriterConnection_SESS1(t *testing.T) {
	st := openBatching(t, 1)
	ctx := context.Background()
	m := llm.UserText("hi")
	entry := session.Entry{Kind: session.KindMessage, Message: &m}
	if _, err := st.Append(ctx, "s0", entry); err != nil {
		t.Fatal(err)
	}
	w := st.writer.w
	prepared := map[string]bool{}
	for q := range w.byTxt {
		prepared[q] = true
	}
	for range 3 {
		if _, err := st.Append(ctx, "s0", entry); err != nil {
			t.Fatal(err)
		}
	}
	if len(w.byTxt) != len(prepared) {
		t.Errorf("%d statements on the writer's connection after the same writes again, want %d", len(w.byTxt), len(prepared))
	}
	// The connection goes away under the writer (as a driver reporting it
	// bad would make database/sql close it).
	if err := w.conn.Close(); err != nil {
		t.Fatal(err)
	}
	last, err := st.Append(ctx, "s0", entry)
	if err != nil || last != 5 {
		t.Fatalf("Append after the writer's connection broke = %d, %v; want seq 5", last, err)
	}
	if n := count(t, st, "s0"); n != 5 {
		t.Errorf("s0 holds %d entries, want 5", n)
	}
	for q := range w.byTxt {
		if !prepared[q] {
			t.Errorf("the new connection prepared %q, which the first never ran", q)
		}
	}
}
