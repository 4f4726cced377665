package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

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

// Create implements session.Store. Its times are kept to the microsecond:
// ss is updated in place to what Get returns.
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
	ss.CreatedAt, ss.UpdatedAt = micro(ss.CreatedAt), micro(ss.UpdatedAt)
	err := s.read(ctx, func(c *pgx.Conn) error { return insertSession(ctx, c, ss, 0) })
	return opErr(ss.ID, "create", err)
}

// insertSession stores a new session whose log's seqs start after lastSeq,
// in one statement.
func insertSession(ctx context.Context, q querier, ss *session.Session, lastSeq int64) error {
	meta, err := json.Marshal(ss)
	if err != nil {
		return fmt.Errorf("%w: %v", session.ErrInvalid, err)
	}
	tag, err := q.Exec(ctx, `WITH s AS (
			INSERT INTO sessions (id, updated_at, work_dir, caller, workspace, meta)
			VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (id) DO NOTHING RETURNING id)
		INSERT INTO session_seqs (session_id, last_seq) SELECT id, $7 FROM s`,
		ss.ID, micro(ss.UpdatedAt), ss.WorkDir, ss.Caller, ss.Workspace, meta, lastSeq)
	if err != nil {
		return err
	}
	if tag.RowsAffected() == 0 {
		return session.ErrExists
	}
	return nil
}

// Get implements session.Store.
func (s *Store) Get(ctx context.Context, id string) (*session.Session, error) {
	if err := session.ValidID(id); err != nil {
		return nil, opErr("", "get", err)
	}
	var ss *session.Session
	err := s.read(ctx, func(c *pgx.Conn) error {
		var err error
		ss, err = getSession(ctx, c, id, false)
		return err
	})
	if err != nil {
		return nil, opErr(id, "get", err)
	}
	return ss, nil
}

// getSession reads the metadata of id, locking its row against other
// updates until the transaction ends when lock is set (FOR NO KEY
// UPDATE: appends, whose entries reference the row, go on meanwhile).
func getSession(ctx context.Context, q querier, id string, lock bool) (*session.Session, error) {
	query := sessionQuery
	if lock {
		query += forUpdate
	}
	return scanSession(q.QueryRow(ctx, query, id))
}

const (
	sessionQuery = `SELECT meta FROM sessions WHERE id = $1`
	forUpdate    = ` FOR NO KEY UPDATE`
)

// scanSession reads a row of meta: ErrNotFound when there is none.
func scanSession(row pgx.Row) (*session.Session, error) {
	var meta []byte
	err := row.Scan(&meta)
	if errors.Is(err, pgx.ErrNoRows) {
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
	var w conds
	for _, f := range []struct{ col, val string }{{"work_dir", opts.WorkDir}, {"caller", opts.Caller}, {"workspace", opts.Workspace}} {
		if f.val != "" {
			w.add(f.col+" = ?", f.val)
		}
	}
	if opts.Cursor != "" {
		n, id, err := session.DecodeCursor(opts.Cursor)
		if err != nil {
			return nil, "", opErr("", "list", err)
		}
		w.where = append(w.where, "(updated_at, id) < ("+w.arg(time.Unix(0, n).UTC())+", "+w.arg(id)+")")
	}
	limit := opts.Limit
	if limit <= 0 {
		limit = session.DefaultListLimit
	}
	query := "SELECT updated_at, id, meta FROM sessions" + w.clause() +
		" ORDER BY updated_at DESC, id DESC LIMIT " + w.arg(limit+1)
	var page []*session.Session
	var last []cursor
	err := s.read(ctx, func(c *pgx.Conn) error {
		var err error
		page, last, err = listSessions(ctx, c, query, w.args...)
		return err
	})
	if err != nil {
		return nil, "", opErr("", "list", err)
	}
	if len(page) <= limit {
		return page, "", nil
	}
	return page[:limit], last[limit-1].encode(), nil
}

// listSessions runs a query of updated_at, id and meta.
func listSessions(ctx context.Context, q querier, query string, args ...any) ([]*session.Session, []cursor, error) {
	rows, err := q.Query(ctx, query, args...)
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

// Update implements session.Store. Its times are kept to the microsecond.
// When ctx carries a fencing token for the session (session.WithFence),
// the session's fence is checked first, in the same round trip as the
// read of the metadata.
func (s *Store) Update(ctx context.Context, ss *session.Session) error {
	if err := checkSession(ss, false); err != nil {
		return opErr("", "update", err)
	}
	c := *ss
	err := s.write(ctx, func(tx pgx.Tx) error {
		old, err := lockSession(ctx, tx, c.ID)
		if err != nil {
			return err
		}
		c.CreatedAt = old.CreatedAt
		if c.UpdatedAt.IsZero() {
			c.UpdatedAt = s.now()
		}
		c.UpdatedAt = micro(c.UpdatedAt)
		meta, err := json.Marshal(&c)
		if err != nil {
			return fmt.Errorf("%w: %v", session.ErrInvalid, err)
		}
		_, err = tx.Exec(ctx, `UPDATE sessions SET updated_at = $1, work_dir = $2, caller = $3, workspace = $4, meta = $5 WHERE id = $6`,
			c.UpdatedAt, c.WorkDir, c.Caller, c.Workspace, meta, c.ID)
		return err
	})
	return opErr(c.ID, "update", err)
}

// lockSession is getSession(…, true) for a write of session id: when ctx
// carries a fencing token for id, it raises the session's fence first, in
// the same round trip (see queueFences).
func lockSession(ctx context.Context, tx pgx.Tx, id string) (*session.Session, error) {
	fs := fencesOf(ctx, id)
	if len(fs) == 0 {
		return getSession(ctx, tx, id, true)
	}
	b := &pgx.Batch{}
	queueFences(b, fs)
	var ss *session.Session
	b.Queue(sessionQuery+forUpdate, id).QueryRow(func(row pgx.Row) error {
		var err error
		ss, err = scanSession(row)
		return err
	})
	if err := tx.SendBatch(ctx, b).Close(); err != nil {
		return nil, err
	}
	return ss, nil
}

// Delete implements session.Store: the session and its log go, and its
// fence; its runs, events and audit records are the ledger's (see
// DeleteEvents). When ctx carries a fencing token for the session, the
// fence is checked first.
func (s *Store) Delete(ctx context.Context, id string) error {
	if err := session.ValidID(id); err != nil {
		return opErr("", "delete", err)
	}
	err := s.write(ctx, func(tx pgx.Tx) error {
		// The fence first (raised, or dropped when ctx carries no
		// token: either way its row is locked first, as every fenced
		// write locks it), then the seq counter, as Append and Rewrite
		// lock it: a concurrent append waits, then finds the session
		// gone, rather than the two deadlocking.
		if _, err := lockSeq(ctx, tx, id, `DELETE FROM session_fences WHERE session_id = $1`); err != nil {
			return err
		}
		// The log and the seq counter go with it (ON DELETE CASCADE).
		b := &pgx.Batch{}
		b.Queue(`DELETE FROM sessions WHERE id = $1`, id)
		b.Queue(`DELETE FROM session_fences WHERE session_id = $1`, id)
		return tx.SendBatch(ctx, b).Close()
	})
	return opErr(id, "delete", err)
}

// cursor is the position of a listing's last session: its updated_at and
// id. Its text form is session.Page's, so a cursor reads the same
// whichever store made it.
type cursor struct {
	updated time.Time
	id      string
}

func (c cursor) encode() string { return session.EncodeCursor(c.updated.UnixNano(), c.id) }
