package postgres

import (
	"errors"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/reinhq/rein/session"
)

// SPEC API-3: a session has one running run at a time. The store reports
// a second as ErrConflict and leaves the run as it was; once the first
// ends, the next may start; other sessions are not held up.
func TestOneRunningRun(t *testing.T) {
	t.Parallel()
	st := newStore(t, Options{})
	first := &session.Run{SessionID: "s", Status: session.RunRunning}
	second := &session.Run{SessionID: "s"}
	for _, r := range []*session.Run{first, second} {
		if err := st.CreateRun(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	start := *second
	start.Status = session.RunRunning
	if err := st.UpdateRun(ctx, &start); !errors.Is(err, session.ErrConflict) {
		t.Errorf("UpdateRun starting a second run of the session: %v, want ErrConflict", err)
	}
	if got, err := st.GetRun(ctx, second.ID); err != nil || got.Status != session.RunQueued {
		t.Errorf("the refused run: %+v, %v; want it still queued", got, err)
	}
	if err := st.CreateRun(ctx, &session.Run{SessionID: "s", Status: session.RunRunning}); !errors.Is(err, session.ErrConflict) {
		t.Errorf("CreateRun of a second running run: %v, want ErrConflict", err)
	}
	if err := st.CreateRun(ctx, &session.Run{SessionID: "other", Status: session.RunRunning}); err != nil {
		t.Errorf("a running run of another session: %v", err)
	}
	if err := st.UpdateRun(ctx, first); err != nil { // running again: no change, no conflict
		t.Errorf("UpdateRun of the running run itself: %v", err)
	}
	first.Status = session.RunCompleted
	if err := st.UpdateRun(ctx, first); err != nil {
		t.Fatal(err)
	}
	if err := st.UpdateRun(ctx, &start); err != nil {
		t.Errorf("starting the next run once the first ended: %v", err)
	}
	running, err := st.ListRuns(ctx, session.RunFilter{SessionID: "s", Statuses: []session.RunStatus{session.RunRunning}})
	if err != nil || len(running) != 1 || running[0].ID != second.ID {
		t.Errorf("running runs of s: %v, %v; want the second only", running, err)
	}
}

// The database itself refuses a second running run of a session, even
// written by raw SQL that bypasses the store.
func TestOneRunningRunRawSQL(t *testing.T) {
	t.Parallel()
	u, _ := testSchema(t)
	st := openStore(t, u, Options{})
	raw := rawConn(t, u)
	insert := `INSERT INTO runs (id, session_id, caller, status, run) VALUES ($1, 's', '', $2, '{}')`
	if _, err := raw.Exec(ctx, insert, "r1", "running"); err != nil {
		t.Fatal(err)
	}
	_, err := raw.Exec(ctx, insert, "r2", "running")
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) || pgErr.Code != "23505" || pgErr.ConstraintName != oneRunning {
		t.Errorf("a second running run by raw SQL: %v; want a unique violation of %s", err, oneRunning)
	}
	if _, err := raw.Exec(ctx, insert, "r3", "queued"); err != nil {
		t.Fatalf("a queued run beside the running one: %v", err)
	}
	if _, err := raw.Exec(ctx, `UPDATE runs SET status = 'running' WHERE id = 'r3'`); !errors.As(err, &pgErr) || pgErr.Code != "23505" {
		t.Errorf("raw UPDATE starting a second run: %v; want a unique violation", err)
	}
	// The store sees the raw run and refuses to start another beside it.
	r := &session.Run{SessionID: "s"}
	if err := st.CreateRun(ctx, r); err != nil {
		t.Fatal(err)
	}
	r.Status = session.RunRunning
	if err := st.UpdateRun(ctx, r); !errors.Is(err, session.ErrConflict) {
		t.Errorf("UpdateRun beside a run started by raw SQL: %v, want ErrConflict", err)
	}
}
