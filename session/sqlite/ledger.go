package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/reinhq/rein/session"
)

// CreateWorkspace implements session.Ledger.
func (s *Store) CreateWorkspace(ctx context.Context, w *session.Workspace) error {
	if err := session.PrepareWorkspace(w, s.now()); err != nil {
		return err
	}
	err := s.write(ctx, func(ctx context.Context, tx *txn) error {
		res, err := tx.ExecContext(ctx, `INSERT INTO workspaces (id, caller, kind, dir, name, created_at)
			VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING`,
			w.ID, w.Caller, string(w.Kind), w.Dir, w.Name, w.CreatedAt.UnixNano())
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil || n == 0 {
			return errOr(err, session.ErrExists)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("workspace %s: create: %w", w.ID, err)
	}
	return nil
}

const workspaceColumns = `id, caller, kind, dir, name, created_at`

func scanWorkspace(row interface{ Scan(...any) error }) (*session.Workspace, error) {
	var w session.Workspace
	var created int64
	if err := row.Scan(&w.ID, &w.Caller, &w.Kind, &w.Dir, &w.Name, &created); err != nil {
		return nil, err
	}
	w.CreatedAt = fromNanos(created)
	return &w, nil
}

// GetWorkspace implements session.Ledger.
func (s *Store) GetWorkspace(ctx context.Context, id string) (*session.Workspace, error) {
	if err := session.ValidID(id); err != nil {
		return nil, fmt.Errorf("workspace: get: %w", err)
	}
	w, err := scanWorkspace(s.read().QueryRowContext(ctx, `SELECT `+workspaceColumns+` FROM workspaces WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
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
	rows, err := s.read().QueryContext(ctx, `SELECT `+workspaceColumns+` FROM workspaces
		WHERE caller = ? ORDER BY created_at DESC, id DESC`, caller)
	if err != nil {
		return nil, fmt.Errorf("workspaces: list: %w", err)
	}
	defer rows.Close()
	var out []*session.Workspace
	for rows.Next() {
		w, err := scanWorkspace(rows)
		if err != nil {
			return nil, fmt.Errorf("workspaces: list: %w", err)
		}
		out = append(out, w)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("workspaces: list: %w", err)
	}
	return out, nil
}

// CreateRun implements session.Ledger. The runs table's AUTOINCREMENT key
// is the run's Seq: it increases with every run and is never reused.
func (s *Store) CreateRun(ctx context.Context, r *session.Run) error {
	if err := session.PrepareRun(r, s.now()); err != nil {
		return err
	}
	data, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("run %s: create: %w: %v", r.ID, session.ErrInvalid, err)
	}
	var seq int64
	err = s.write(ctx, func(ctx context.Context, tx *txn) error {
		res, err := tx.ExecContext(ctx, `INSERT INTO runs (id, session_id, caller, status, run)
			VALUES (?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING`, r.ID, r.SessionID, r.Caller, string(r.Status), string(data))
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil || n == 0 {
			return errOr(err, session.ErrExists)
		}
		seq, err = res.LastInsertId()
		return err
	})
	if err != nil {
		return fmt.Errorf("run %s: create: %w", r.ID, err)
	}
	r.Seq = seq
	return nil
}

// UpdateRun implements session.Ledger.
func (s *Store) UpdateRun(ctx context.Context, r *session.Run) error {
	if err := session.CheckRunUpdate(r); err != nil {
		return err
	}
	err := s.write(ctx, func(ctx context.Context, tx *txn) error { return updateRun(ctx, tx, r) })
	if err != nil {
		return fmt.Errorf("run %s: update: %w", r.ID, err)
	}
	return nil
}

// updateRun stores the state of the checked run r in tx.
func updateRun(ctx context.Context, tx *txn, r *session.Run) error {
	stored, err := getRun(ctx, tx, r.ID)
	if err != nil {
		return err
	}
	data, err := json.Marshal(session.UpdatedRun(stored, r))
	if err != nil {
		return fmt.Errorf("%w: %v", session.ErrInvalid, err)
	}
	_, err = tx.ExecContext(ctx, `UPDATE runs SET status = ?, run = ? WHERE id = ?`, string(r.Status), string(data), r.ID)
	return err
}

// GetRun implements session.Ledger.
func (s *Store) GetRun(ctx context.Context, id string) (*session.Run, error) {
	if err := session.ValidID(id); err != nil {
		return nil, fmt.Errorf("run: get: %w", err)
	}
	r, err := getRun(ctx, s.read(), id)
	if err != nil {
		return nil, fmt.Errorf("run %s: get: %w", id, err)
	}
	return r, nil
}

func getRun(ctx context.Context, q querier, id string) (*session.Run, error) {
	r, err := scanRun(q.QueryRowContext(ctx, `SELECT seq, run FROM runs WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, session.ErrNotFound
	}
	return r, err
}

// scanRun reads a row of seq and run; the column's seq is the run's.
func scanRun(row interface{ Scan(...any) error }) (*session.Run, error) {
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
	where := []string{"seq > ?"}
	args := []any{f.AfterSeq}
	if f.SessionID != "" {
		where = append(where, "session_id = ?")
		args = append(args, f.SessionID)
	}
	if f.Caller != "" {
		where = append(where, "caller = ?")
		args = append(args, f.Caller)
	}
	if len(f.Statuses) > 0 {
		where = append(where, "status IN (?"+strings.Repeat(", ?", len(f.Statuses)-1)+")")
		for _, st := range f.Statuses {
			args = append(args, string(st))
		}
	}
	query := `SELECT seq, run FROM runs WHERE ` + strings.Join(where, " AND ") + ` ORDER BY seq` + limitClause(f.Limit, &args)
	rows, err := s.db.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("runs: list: %w", err)
	}
	defer rows.Close()
	var out []*session.Run
	for rows.Next() {
		r, err := scanRun(rows)
		if err != nil {
			return nil, fmt.Errorf("runs: list: %w", err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("runs: list: %w", err)
	}
	return out, nil
}

// limitClause returns " LIMIT ?" with limit added to args, or "" for no
// limit (0 or less).
func limitClause(limit int, args *[]any) string {
	if limit <= 0 {
		return ""
	}
	*args = append(*args, limit)
	return " LIMIT ?"
}
