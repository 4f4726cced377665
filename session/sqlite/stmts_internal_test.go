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
