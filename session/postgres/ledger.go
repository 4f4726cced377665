package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/reinhq/rein/session"
)

// oneRunning is the unique index that allows one running run per session.
const oneRunning = "runs_one_running_per_session"

// CreateWorkspace implements session.Ledger. CreatedAt is kept to the
// microsecond: w is updated in place to what GetWorkspace returns.
func (s *Store) CreateWorkspace(ctx context.Context, w *session.Workspace) error {
	if err := session.PrepareWorkspace(w, s.now()); err != nil {
		return err
	}
	w.CreatedAt = micro(w.CreatedAt)
	err := s.read(ctx, func(c *pgx.Conn) error {
		tag, err := c.Exec(ctx, `INSERT INTO workspaces (id, caller, kind, dir, name, created_at)
			VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (id) DO NOTHING`,
			w.ID, w.Caller, string(w.Kind), w.Dir, w.Name, w.CreatedAt)
		if err == nil && tag.RowsAffected() == 0 {
			err = session.ErrExists
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("workspace %s: create: %w", w.ID, err)
	}
	return nil
}

const workspaceColumns = `id, caller, kind, dir, name, created_at`

func scanWorkspace(row pgx.Row) (*session.Workspace, error) {
	var w session.Workspace
	if err := row.Scan(&w.ID, &w.Caller, &w.Kind, &w.Dir, &w.Name, &w.CreatedAt); err != nil {
		return nil, err
	}
	w.CreatedAt = w.CreatedAt.UTC()
	return &w, nil
}

// GetWorkspace implements session.Ledger.
func (s *Store) GetWorkspace(ctx context.Context, id string) (*session.Workspace, error) {
	if err := session.ValidID(id); err != nil {
		return nil, fmt.Errorf("workspace: get: %w", err)
	}
	var w *session.Workspace
	err := s.read(ctx, func(c *pgx.Conn) error {
		var err error
		w, err = scanWorkspace(c.QueryRow(ctx, `SELECT `+workspaceColumns+` FROM workspaces WHERE id = $1`, id))
		return err
	})
	if errors.Is(err, pgx.ErrNoRows) {
		err = session.ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("workspace %s: get: %w", id, err)
	}
	return w, nil
}

// ListWorkspaces implements session.Ledger.
func (s *Store) ListWorkspaces(ctx context.Context, caller string) ([]*session.Workspace, error) {
	if caller == "" {
		return nil, fmt.Errorf("workspaces: list: %w: empty caller", session.ErrInvalid)
	}
	var out []*session.Workspace
	err := s.read(ctx, func(c *pgx.Conn) error {
		rows, err := c.Query(ctx, `SELECT `+workspaceColumns+` FROM workspaces
			WHERE caller = $1 ORDER BY created_at DESC, id DESC`, caller)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			w, err := scanWorkspace(rows)
			if err != nil {
				return err
			}
			out = append(out, w)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("workspaces: list: %w", err)
	}
	return out, nil
}

// conflictRunning is the error for a second running run of a session.
func conflictRunning(sessionID string) error {
	return fmt.Errorf("%w: session %s already has a running run (runs of a session execute one at a time); "+
		"end that run first", session.ErrConflict, sessionID)
}

// CreateRun implements session.Ledger. The runs table's identity column
// is the run's Seq: it increases with every run and is never reused. A
// run created running while its session has a running run is refused
// with an error wrapping session.ErrConflict.
func (s *Store) CreateRun(ctx context.Context, r *session.Run) error {
	if err := session.PrepareRun(r, s.now()); err != nil {
		return err
	}
	data, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("run %s: create: %w: %v", r.ID, session.ErrInvalid, err)
	}
	var seq int64
	err = s.read(ctx, func(c *pgx.Conn) error {
		err := c.QueryRow(ctx, `INSERT INTO runs (id, session_id, caller, status, run)
			VALUES ($1, $2, $3, $4, $5) ON CONFLICT (id) DO NOTHING RETURNING seq`,
			r.ID, r.SessionID, r.Caller, string(r.Status), data).Scan(&seq)
		switch {
		case errors.Is(err, pgx.ErrNoRows):
			return session.ErrExists
		case isUnique(err, oneRunning):
			return conflictRunning(r.SessionID)
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("run %s: create: %w", r.ID, err)
	}
	r.Seq = seq
	return nil
}

// UpdateRun implements session.Ledger. Starting a run (status running)
// while another run of its session is running is refused with an error
// wrapping session.ErrConflict, and the run is left as it was. When ctx
// carries a fencing token for the run's session (as stored, whatever
// r.SessionID says), the session's fence is checked in the same
// transaction (session.ErrFenced), at no extra round trip.
func (s *Store) UpdateRun(ctx context.Context, r *session.Run) error {
	if err := session.CheckRunUpdate(r); err != nil {
		return err
	}
	err := s.write(ctx, func(tx pgx.Tx) error {
		stored, err := getRun(ctx, tx, r.ID, true)
		if err != nil {
			return err
		}
		data, err := json.Marshal(session.UpdatedRun(stored, r))
		if err != nil {
			return fmt.Errorf("%w: %v", session.ErrInvalid, err)
		}
		const update = `UPDATE runs SET status = $1, run = $2 WHERE id = $3`
		if fs := fencesOf(ctx, stored.SessionID); len(fs) > 0 {
			// The fence of the run's session, checked in the round
			// trip of the update (the run's row, locked above, is the
			// one lock a fenced UpdateRun takes before the fence: no
			// writer takes the two the other way round).
			b := &pgx.Batch{}
			queueFences(b, fs)
			b.Queue(update, string(r.Status), data, r.ID)
			err = tx.SendBatch(ctx, b).Close()
		} else {
			_, err = tx.Exec(ctx, update, string(r.Status), data, r.ID)
		}
		if isUnique(err, oneRunning) {
			return conflictRunning(stored.SessionID)
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("run %s: update: %w", r.ID, err)
	}
	return nil
}

// GetRun implements session.Ledger.
func (s *Store) GetRun(ctx context.Context, id string) (*session.Run, error) {
	if err := session.ValidID(id); err != nil {
		return nil, fmt.Errorf("run: get: %w", err)
	}
	var r *session.Run
	err := s.read(ctx, func(c *pgx.Conn) error {
		var err error
		r, err = getRun(ctx, c, id, false)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("run %s: get: %w", id, err)
	}
	return r, nil
}

// getRun reads run id, locking its row until the transaction ends when
// forUpdate is set.
func getRun(ctx context.Context, q querier, id string, forUpdate bool) (*session.Run, error) {
	query := `SELECT seq, run FROM runs WHERE id = $1`
	if forUpdate {
		query += ` FOR UPDATE`
	}
	r, err := scanRun(q.QueryRow(ctx, query, id))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, session.ErrNotFound
	}
	return r, err
}

// scanRun reads a row of seq and run; the column's seq is the run's.
func scanRun(row pgx.Row) (*session.Run, error) {
	var seq int64
	var data []byte
	if err := row.Scan(&seq, &data); err != nil {
		return nil, err
	}
	r := new(session.Run)
	if err := json.Unmarshal(data, r); err != nil {
		return nil, fmt.Errorf("stored run of seq %d: %w", seq, err)
	}
	r.Seq = seq
	return r, nil
}

// ListRuns implements session.Ledger.
func (s *Store) ListRuns(ctx context.Context, f session.RunFilter) ([]*session.Run, error) {
	var w conds
	w.add("seq > ?", f.AfterSeq)
	if f.SessionID != "" {
		w.add("session_id = ?", f.SessionID)
	}
	if f.Caller != "" {
		w.add("caller = ?", f.Caller)
	}
	if len(f.Statuses) > 0 {
		statuses := make([]string, len(f.Statuses))
		for i, st := range f.Statuses {
			statuses[i] = string(st)
		}
		w.add("status = ANY(?)", statuses)
	}
	query := `SELECT seq, run FROM runs` + w.clause() + ` ORDER BY seq LIMIT ` + w.arg(limitArg(f.Limit))
	var out []*session.Run
	err := s.read(ctx, func(c *pgx.Conn) error {
		rows, err := c.Query(ctx, query, w.args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			r, err := scanRun(rows)
			if err != nil {
				return err
			}
			out = append(out, r)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("runs: list: %w", err)
	}
	return out, nil
}
