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

// checkSession validates the argument of Create and Update, as every store
// does.
func checkSession(s *session.Session, create bool) error {
	if s == nil {
		return fmt.Errorf("%w: nil session", session.ErrInvalid)
	}
	if create && s.ID == "" {
		return nil
	}
	return session.ValidID(s.ID)
}

// Create implements session.Store.
func (s *Store) Create(ctx context.Context, ss *session.Session) error {
	if err := checkSession(ss, true); err != nil {
		return opErr("", "create", err)
	}
	if ss.ID == "" {
		ss.ID = session.NewID()
	}
	if ss.CreatedAt.IsZero() {
		ss.CreatedAt = s.now()
	}
	if ss.UpdatedAt.IsZero() {
		ss.UpdatedAt = ss.CreatedAt
	}
	err := s.write(ctx, func(ctx context.Context, tx *txn) error { return insertSession(ctx, tx, ss, 0) })
	return opErr(ss.ID, "create", err)
}

// insertSession stores a new session whose log's seqs start after lastSeq.
func insertSession(ctx context.Context, tx *txn, ss *session.Session, lastSeq int64) error {
	meta, err := json.Marshal(ss)
	if err != nil {
		return fmt.Errorf("%w: %v", session.ErrInvalid, err)
	}
	res, err := tx.ExecContext(ctx, `INSERT INTO sessions (id, updated_at, work_dir, caller, workspace, meta)
		VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING`,
		ss.ID, ss.UpdatedAt.UnixNano(), ss.WorkDir, ss.Caller, ss.Workspace, string(meta))
	if err != nil {
		return err
	}
	if n, err := res.RowsAffected(); err != nil || n == 0 {
		return errOr(err, session.ErrExists)
	}
	_, err = tx.ExecContext(ctx, `INSERT INTO session_seqs (session_id, last_seq) VALUES (?, ?)`, ss.ID, lastSeq)
	return err
}

// errOr returns err, or cond when err is nil.
func errOr(err, cond error) error {
	if err != nil {
		return err
	}
	return cond
}

// Get implements session.Store.
func (s *Store) Get(ctx context.Context, id string) (*session.Session, error) {
	if err := session.ValidID(id); err != nil {
		return nil, opErr("", "get", err)
	}
	ss, err := getSession(ctx, s.read(), id)
	if err != nil {
		return nil, opErr(id, "get", err)
	}
	return ss, nil
}

func getSession(ctx context.Context, q querier, id string) (*session.Session, error) {
	var meta []byte
	err := q.QueryRowContext(ctx, `SELECT meta FROM sessions WHERE id = ?`, id).Scan(&meta)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, session.ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	var ss session.Session
	if err := json.Unmarshal(meta, &ss); err != nil {
		return nil, fmt.Errorf("stored metadata: %w", err)
	}
	return &ss, nil
}

// List implements session.Store: the filters and the order are the
// indexed columns', so a page costs what it holds, not the whole table.
func (s *Store) List(ctx context.Context, opts session.ListOptions) ([]*session.Session, string, error) {
	var where []string
	var args []any
	for _, f := range []struct{ col, val string }{{"work_dir", opts.WorkDir}, {"caller", opts.Caller}, {"workspace", opts.Workspace}} {
		if f.val != "" {
			where = append(where, f.col+" = ?")
			args = append(args, f.val)
		}
	}
	if opts.Cursor != "" {
		c, err := decodeCursor(opts.Cursor)
		if err != nil {
			return nil, "", opErr("", "list", err)
		}
		where = append(where, "(updated_at, id) < (?, ?)")
		args = append(args, c.updated, c.id)
	}
	limit := opts.Limit
	if limit <= 0 {
		limit = session.DefaultListLimit
	}
	query := "SELECT updated_at, id, meta FROM sessions"
	if len(where) > 0 {
		query += " WHERE " + strings.Join(where, " AND ")
	}
	query += " ORDER BY updated_at DESC, id DESC LIMIT ?"
	args = append(args, limit+1)
	page, last, err := listSessions(ctx, s.db, query, args...)
	if err != nil {
		return nil, "", opErr("", "list", err)
	}
	if len(page) <= limit {
		return page, "", nil
	}
	return page[:limit], last[limit-1].encode(), nil
}

// listSessions runs a query of updated_at, id and meta.
func listSessions(ctx context.Context, db querier, query string, args ...any) ([]*session.Session, []cursor, error) {
	rows, err := db.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, nil, err
	}
	defer rows.Close()
	var page []*session.Session
	var pos []cursor
	for rows.Next() {
		var c cursor
		var meta []byte
		if err := rows.Scan(&c.updated, &c.id, &meta); err != nil {
			return nil, nil, err
		}
		ss := new(session.Session)
		if err := json.Unmarshal(meta, ss); err != nil {
			return nil, nil, fmt.Errorf("session %s: stored metadata: %w", c.id, err)
		}
		page = append(page, ss)
		pos = append(pos, c)
	}
	return page, pos, rows.Err()
}

// Update implements session.Store.
func (s *Store) Update(ctx context.Context, ss *session.Session) error {
	if err := checkSession(ss, false); err != nil {
		return opErr("", "update", err)
	}
	c := *ss
	err := s.write(ctx, func(ctx context.Context, tx *txn) error { return s.updateSession(ctx, tx, &c) })
	return opErr(c.ID, "update", err)
}

// updateSession stores the checked record c of a session in tx, keeping
// its creation time.
func (s *Store) updateSession(ctx context.Context, tx *txn, c *session.Session) error {
	old, err := getSession(ctx, tx, c.ID)
	if err != nil {
		return err
	}
	return s.storeSession(ctx, tx, old, c)
}

// storeSession stores c, the checked new record of the session whose
// stored record is old, in tx, keeping old's creation time. Only the
// columns whose value changed are SET beside meta: SQLite rewrites an
// index entry for every indexed column a statement sets, changed or not,
// and each page it touches is written to the log and fsynced at the
// commit (a preview or a run's totals change meta alone, or meta and
// updated_at).
func (s *Store) storeSession(ctx context.Context, tx *txn, old, c *session.Session) error {
	c.CreatedAt = old.CreatedAt
	if c.UpdatedAt.IsZero() {
		c.UpdatedAt = s.now()
	}
	meta, err := json.Marshal(c)
	if err != nil {
		return fmt.Errorf("%w: %v", session.ErrInvalid, err)
	}
	set, args := "", make([]any, 0, 6)
	for _, col := range [...]struct {
		name     string
		old, new any
	}{
		{"updated_at", old.UpdatedAt.UnixNano(), c.UpdatedAt.UnixNano()},
		{"work_dir", old.WorkDir, c.WorkDir},
		{"caller", old.Caller, c.Caller},
		{"workspace", old.Workspace, c.Workspace},
	} {
		if col.old != col.new {
			set += col.name + " = ?, "
			args = append(args, col.new)
		}
	}
	args = append(args, string(meta), c.ID)
	// At most 16 texts, each prepared once (see stmts).
	_, err = tx.ExecContext(ctx, `UPDATE sessions SET `+set+`meta = ? WHERE id = ?`, args...)
	return err
}

// Delete implements session.Store: the session and its log go; its runs,
// events and audit records are the ledger's (see DeleteEvents).
func (s *Store) Delete(ctx context.Context, id string) error {
	if err := session.ValidID(id); err != nil {
		return opErr("", "delete", err)
	}
	err := s.write(ctx, func(ctx context.Context, tx *txn) error {
		// The log and the seq counter go with it (ON DELETE CASCADE).
		res, err := tx.ExecContext(ctx, `DELETE FROM sessions WHERE id = ?`, id)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil || n == 0 {
			return errOr(err, session.ErrNotFound)
		}
		return nil
	})
	return opErr(id, "delete", err)
}

// cursor is the position of a listing's last session: its updated_at (Unix
// nanoseconds) and id. Its text form is session.Page's, so a cursor reads
// the same whichever store made it.
type cursor struct {
	updated int64
	id      string
}

func (c cursor) encode() string { return session.EncodeCursor(c.updated, c.id) }

func decodeCursor(text string) (cursor, error) {
	n, id, err := session.DecodeCursor(text)
	return cursor{updated: n, id: id}, err
}
