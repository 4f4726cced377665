package sessiontest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"testing"

	"github.com/reinhq/rein/session"
)

// RunFencing runs the suite of fencing tokens (see Fencing in the
// documentation of package session) for a store that enforces them: the
// shared store of several processes. Stores that serve one process may
// ignore tokens and do not run it. newStore returns an empty store and its
// ledger (often the same value); it is called once per subtest and may
// register cleanups on t.
//
// The suite checks that a holder whose token was overtaken can no longer
// append, update, rewrite or delete the session, update its runs, or
// append its events or audit records, and that nothing of a refused call
// is stored; that the newer holder goes on; that writes without a token,
// and tokens for other sessions, are not checked; that one fence guards
// all the writes of a session; and that writers racing with tokens 1 to
// 20 leave no write of a lower token after one of a higher.
func RunFencing(t *testing.T, newStore func(t *testing.T) (session.Store, session.Ledger)) {
	tests := []struct {
		name string
		fn   func(*testing.T, session.Store, session.Ledger)
	}{
		{"Holders", testFenceHolders},
		{"Unfenced", testFenceUnfenced},
		{"OneFencePerSession", testFenceShared},
		{"Delete", testFenceDelete},
		{"Race", testFenceRace},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st, l := newStore(t)
			tt.fn(t, st, l)
		})
	}
}

// fenced returns ctx carrying token for session id.
func fenced(ctx context.Context, id string, token int64) context.Context {
	return session.WithFence(ctx, id, token)
}

// wantFenced reports a nil error or one not wrapping session.ErrFenced.
func wantFenced(t *testing.T, what string, err error) {
	t.Helper()
	if !errors.Is(err, session.ErrFenced) {
		t.Errorf("%s with an overtaken token: %v, want ErrFenced", what, err)
	}
}

func auditOf(t *testing.T, l session.Ledger, sessionID string) []session.AuditRecord {
	t.Helper()
	ctx := t.Context()
	recs, err := l.Audit(ctx, session.AuditFilter{SessionID: sessionID})
	if err != nil {
		t.Fatal(err)
	}
	return recs
}

func lastEvent(t *testing.T, l session.Ledger, sessionID string) int64 {
	t.Helper()
	ctx := t.Context()
	id, err := l.LastEventID(ctx, sessionID)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

func lastSeq(t *testing.T, st session.Store, id string) int64 {
	t.Helper()
	ctx := t.Context()
	last, err := st.Append(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	return last
}

// A holder with token 5 writes, then one with token 7: every write of the
// first is refused from then on, storing nothing, and the second goes on.
func testFenceHolders(t *testing.T, st session.Store, l session.Ledger) {
	ctx := t.Context()
	mustCreate(t, st, &session.Session{ID: "s", Title: "start"})
	run := &session.Run{SessionID: "s", Prompt: "p"}
	mustCreateRun(t, l, run)
	old, cur := fenced(ctx, "s", 5), fenced(ctx, "s", 7)

	// The first holder writes everything a worker writes.
	if _, err := st.Append(old, "s", userEntry("by 5")); err != nil {
		t.Fatalf("Append with token 5: %v", err)
	}
	started := *run
	started.Status = session.RunRunning
	if err := l.UpdateRun(old, &started); err != nil {
		t.Fatalf("UpdateRun with token 5: %v", err)
	}
	if err := l.AppendEvents(old, event("s", 1, "by 5")); err != nil {
		t.Fatalf("AppendEvents with token 5: %v", err)
	}
	if err := l.AppendAudit(old, session.AuditRecord{SessionID: "s", Kind: session.AuditRun, Data: json.RawMessage(`{"by":5}`)}); err != nil {
		t.Fatalf("AppendAudit with token 5: %v", err)
	}
	if _, err := st.Append(old, "s", userEntry("by 5 again")); err != nil {
		t.Errorf("Append with token 5 again (equal to the fence): %v", err)
	}

	// The second holder takes over.
	if _, err := st.Append(cur, "s", userEntry("by 7")); err != nil {
		t.Fatalf("Append with token 7: %v", err)
	}

	// The first is fenced off, whatever it writes.
	seq, evID, nAudit := lastSeq(t, st, "s"), lastEvent(t, l, "s"), len(auditOf(t, l, "s"))
	_, err := st.Append(old, "s", userEntry("late 5"), userEntry("late 5 too"))
	wantFenced(t, "Append", err)
	ended := started
	ended.Status, ended.Reason = session.RunCompleted, "completed"
	wantFenced(t, "UpdateRun", l.UpdateRun(old, &ended))
	wantFenced(t, "AppendEvents", l.AppendEvents(old, event("s", 2, "late 5")))
	wantFenced(t, "AppendAudit", l.AppendAudit(old, session.AuditRecord{SessionID: "s", Kind: session.AuditRun}))
	wantFenced(t, "Update", st.Update(old, &session.Session{ID: "s", Title: "late 5"}))
	wantFenced(t, "Rewrite", st.Rewrite(old, "s", nil))
	if _, err := st.Append(fenced(ctx, "s", 6), "s", userEntry("6")); !errors.Is(err, session.ErrFenced) {
		t.Errorf("Append with token 6 after 7: %v, want ErrFenced", err)
	}

	if got := lastSeq(t, st, "s"); got != seq {
		t.Errorf("last seq %d after the refused writes, want %d", got, seq)
	}
	if n := len(readAll(t, st, "s", 0)); n != 3 {
		t.Errorf("%d entries after the refused writes, want 3 (a refused Rewrite clears nothing)", n)
	}
	if got, err := l.GetRun(ctx, run.ID); err != nil || got.Status != session.RunRunning {
		t.Errorf("run after a refused UpdateRun: %+v, %v; want it still running", got, err)
	}
	if got := lastEvent(t, l, "s"); got != evID {
		t.Errorf("last event %d after a refused AppendEvents, want %d", got, evID)
	}
	if got := len(auditOf(t, l, "s")); got != nAudit {
		t.Errorf("%d audit records after a refused AppendAudit, want %d", got, nAudit)
	}
	if got, err := st.Get(ctx, "s"); err != nil || got.Title != "start" {
		t.Errorf("session after a refused Update: %+v, %v", got, err)
	}

	// The second goes on with every write.
	if _, err := st.Append(cur, "s", userEntry("7 again")); err != nil {
		t.Errorf("Append with token 7: %v", err)
	}
	if err := l.UpdateRun(cur, &ended); err != nil {
		t.Errorf("UpdateRun with token 7: %v", err)
	}
	if err := l.AppendEvents(cur, event("s", 2, "by 7")); err != nil {
		t.Errorf("AppendEvents with token 7: %v", err)
	}
	if err := l.AppendAudit(cur, session.AuditRecord{SessionID: "s", Kind: session.AuditRun}); err != nil {
		t.Errorf("AppendAudit with token 7: %v", err)
	}
	if err := st.Update(cur, &session.Session{ID: "s", Title: "by 7"}); err != nil {
		t.Errorf("Update with token 7: %v", err)
	}
	if err := st.Rewrite(cur, "s", []session.Entry{userEntry("rewritten by 7")}); err != nil {
		t.Errorf("Rewrite with token 7: %v", err)
	}
	if got, err := l.GetRun(ctx, run.ID); err != nil || got.Status != session.RunCompleted {
		t.Errorf("run after UpdateRun with token 7: %+v, %v", got, err)
	}
}

// Writes without a token, or with a token for another session, are not
// checked, and leave the fence as it is.
func testFenceUnfenced(t *testing.T, st session.Store, l session.Ledger) {
	ctx := t.Context()
	mustCreate(t, st, &session.Session{ID: "s"})
	mustCreate(t, st, &session.Session{ID: "t"})
	if _, err := st.Append(fenced(ctx, "s", 100), "s", userEntry("100")); err != nil {
		t.Fatal(err)
	}
	other := fenced(ctx, "t", 1) // a token of t only
	run := &session.Run{SessionID: "s"}
	mustCreateRun(t, l, run)
	for _, c := range []struct {
		name string
		ctx  context.Context
	}{{"no token", ctx}, {"a token of another session", other}} {
		if _, err := st.Append(c.ctx, "s", userEntry(c.name)); err != nil {
			t.Errorf("Append with %s: %v", c.name, err)
		}
		if err := st.Update(c.ctx, &session.Session{ID: "s", Title: c.name}); err != nil {
			t.Errorf("Update with %s: %v", c.name, err)
		}
		cancelled := *run
		cancelled.Status = session.RunCancelled
		if err := l.UpdateRun(c.ctx, &cancelled); err != nil {
			t.Errorf("UpdateRun with %s: %v", c.name, err)
		}
		if err := l.AppendEvents(c.ctx, event("s", lastEvent(t, l, "s")+1, c.name)); err != nil {
			t.Errorf("AppendEvents with %s: %v", c.name, err)
		}
		if err := l.AppendAudit(c.ctx, session.AuditRecord{SessionID: "s", Kind: session.AuditRun}); err != nil {
			t.Errorf("AppendAudit with %s: %v", c.name, err)
		}
	}
	// The fence of s is still 100; t's is 1.
	if _, err := st.Append(fenced(ctx, "s", 99), "s", userEntry("99")); !errors.Is(err, session.ErrFenced) {
		t.Errorf("Append with token 99 after 100 and unfenced writes: %v, want ErrFenced", err)
	}
	if _, err := st.Append(fenced(ctx, "t", 2), "t", userEntry("2")); err != nil {
		t.Errorf("Append to t with token 2: %v", err)
	}
	if _, err := st.Append(other, "t", userEntry("1")); !errors.Is(err, session.ErrFenced) {
		t.Errorf("Append to t with token 1 after 2: %v, want ErrFenced", err)
	}
	// Audit records of no session are never fenced.
	if err := l.AppendAudit(fenced(ctx, "s", 1), session.AuditRecord{Kind: session.AuditRun}); err != nil {
		t.Errorf("AppendAudit of a record of no session: %v", err)
	}
}

// One fence guards every write of a session, whichever raised it; a batch
// of several sessions is refused whole when one of them is fenced off.
func testFenceShared(t *testing.T, st session.Store, l session.Ledger) {
	ctx := t.Context()
	mustCreate(t, st, &session.Session{ID: "s"})
	run := &session.Run{SessionID: "s"}
	mustCreateRun(t, l, run)
	steps := []struct {
		name  string
		write func(ctx context.Context) error
	}{
		{"AppendEvents", func(c context.Context) error {
			return l.AppendEvents(c, event("s", lastEvent(t, l, "s")+1, "x"))
		}},
		{"AppendAudit", func(c context.Context) error {
			return l.AppendAudit(c, session.AuditRecord{SessionID: "s", Kind: session.AuditRun})
		}},
		{"UpdateRun", func(c context.Context) error {
			r := *run
			r.Status = session.RunRunning
			return l.UpdateRun(c, &r)
		}},
		{"Update", func(c context.Context) error { return st.Update(c, &session.Session{ID: "s"}) }},
		{"Append", func(c context.Context) error { _, err := st.Append(c, "s", userEntry("x")); return err }},
		{"Rewrite", func(c context.Context) error { return st.Rewrite(c, "s", nil) }},
	}
	// Each write raises the fence; every other write is then fenced off
	// below it.
	for i, raise := range steps {
		token := int64(10 * (i + 1))
		if err := raise.write(fenced(ctx, "s", token)); err != nil {
			t.Fatalf("%s with token %d: %v", raise.name, token, err)
		}
		for _, w := range steps {
			if err := w.write(fenced(ctx, "s", token-1)); !errors.Is(err, session.ErrFenced) {
				t.Errorf("%s with token %d after %s with %d: %v, want ErrFenced", w.name, token-1, raise.name, token, err)
			}
		}
	}

	mustCreate(t, st, &session.Session{ID: "u"})
	both := session.WithFence(fenced(ctx, "s", 1), "u", 1)
	before := lastEvent(t, l, "u")
	err := l.AppendEvents(both, event("u", before+1, "u"), event("s", lastEvent(t, l, "s")+1, "s"))
	wantFenced(t, "AppendEvents of two sessions, one fenced off", err)
	if got := lastEvent(t, l, "u"); got != before {
		t.Errorf("events of u stored by a refused batch: last id %d, want %d", got, before)
	}
	n := len(auditOf(t, l, "u"))
	err = l.AppendAudit(both, session.AuditRecord{SessionID: "u", Kind: session.AuditRun}, session.AuditRecord{SessionID: "s", Kind: session.AuditRun})
	wantFenced(t, "AppendAudit of two sessions, one fenced off", err)
	if got := len(auditOf(t, l, "u")); got != n {
		t.Errorf("audit records of u stored by a refused batch: %d, want %d", got, n)
	}
}

// Delete with an overtaken token is refused; with the current one, or
// none, it deletes.
func testFenceDelete(t *testing.T, st session.Store, _ session.Ledger) {
	ctx := t.Context()
	mustCreate(t, st, &session.Session{ID: "s"})
	if _, err := st.Append(fenced(ctx, "s", 7), "s", userEntry("7")); err != nil {
		t.Fatal(err)
	}
	wantFenced(t, "Delete", st.Delete(fenced(ctx, "s", 5), "s"))
	if _, err := st.Get(ctx, "s"); err != nil {
		t.Errorf("Get after a refused Delete: %v", err)
	}
	if err := st.Delete(fenced(ctx, "s", 7), "s"); err != nil {
		t.Errorf("Delete with token 7: %v", err)
	}
	if _, err := st.Get(ctx, "s"); !errors.Is(err, session.ErrNotFound) {
		t.Errorf("Get after Delete: %v, want ErrNotFound", err)
	}
	mustCreate(t, st, &session.Session{ID: "t"})
	if _, err := st.Append(fenced(ctx, "t", 7), "t", userEntry("7")); err != nil {
		t.Fatal(err)
	}
	if err := st.Delete(ctx, "t"); err != nil {
		t.Errorf("Delete without a token: %v", err)
	}
}

// Writers with tokens 1 to 20 race on one session: once a write of a
// token has succeeded, no write of a lower token does. In the log (seq
// order) and the audit trail (id order) the tokens never decrease, and
// after the race only the highest token still writes.
func testFenceRace(t *testing.T, st session.Store, l session.Ledger) {
	ctx := t.Context()
	mustCreate(t, st, &session.Session{ID: "s"})
	const holders, writes = 20, 8
	start := make(chan struct{})
	var wg sync.WaitGroup
	var mu sync.Mutex
	won := map[int64]int{}
	for token := int64(1); token <= holders; token++ {
		wg.Go(func() {
			c := fenced(ctx, "s", token)
			<-start
			for i := range writes {
				var err error
				if i%2 == 0 {
					_, err = st.Append(c, "s", userEntry(strconv.FormatInt(token, 10)))
				} else {
					err = l.AppendAudit(c, session.AuditRecord{SessionID: "s", Kind: "fence", Data: json.RawMessage(fmt.Sprint(token))})
				}
				switch {
				case errors.Is(err, session.ErrFenced):
					return // the lease was lost: stop writing
				case err != nil:
					t.Errorf("token %d: %v", token, err)
					return
				}
				mu.Lock()
				won[token]++
				mu.Unlock()
			}
		})
	}
	close(start)
	wg.Wait()

	prev := int64(0)
	for _, e := range readAll(t, st, "s", 0) {
		token, err := strconv.ParseInt(e.Message.TextOf(), 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		if token < prev {
			t.Errorf("entry %d written with token %d after one with token %d", e.Seq, token, prev)
		}
		prev = token
	}
	prev = 0
	for _, r := range auditOf(t, l, "s") {
		token, err := strconv.ParseInt(string(r.Data), 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		if token < prev {
			t.Errorf("audit record %d written with token %d after one with token %d", r.ID, token, prev)
		}
		prev = token
	}
	if won[holders] != writes {
		t.Errorf("the highest token wrote %d times, want %d (writes per token: %v)", won[holders], writes, won)
	}
	if _, err := st.Append(fenced(ctx, "s", holders-1), "s", userEntry("late")); !errors.Is(err, session.ErrFenced) {
		t.Errorf("Append with token %d after the race: %v, want ErrFenced", holders-1, err)
	}
	if _, err := st.Append(fenced(ctx, "s", holders), "s", userEntry("last")); err != nil {
		t.Errorf("Append with token %d after the race: %v", holders, err)
	}
}
