package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"slices"

	"github.com/jackc/pgx/v5"

	"github.com/reinhq/rein/session"
)

// Append implements session.Store: the batch is one transaction, stored
// whole or not at all. It locks the session's seq counter, so concurrent
// appends to one session take turns and get consecutive seqs, while
// appends to different sessions run in parallel. An append of entries
// made with a fencing token for id (session.WithFence) is checked against
// the session's fence in the same transaction; appending nothing is a
// read and is not checked.
func (s *Store) Append(ctx context.Context, id string, entries ...session.Entry) (int64, error) {
	if err := session.ValidID(id); err != nil {
		return 0, opErr("", "append", err)
	}
	if len(entries) == 0 {
		var last int64
		err := s.read(ctx, func(c *pgx.Conn) error {
			var err error
			last, err = lastSeq(ctx, c, id, "")
			return err
		})
		return last, opErr(id, "append", err)
	}
	entries = slices.Clone(entries)
	// Check the batch (and stamp its times) before taking the lock.
	if _, err := session.PrepareAppend(entries, 1, s.now()); err != nil {
		return 0, opErr(id, "append", err)
	}
	var last int64
	err := s.write(ctx, func(tx pgx.Tx) error {
		prev, err := lockSeq(ctx, tx, id, "")
		if err != nil {
			return err
		}
		if last, err = session.PrepareAppend(entries, prev+1, s.now()); err != nil {
			return err
		}
		return insertEntries(ctx, tx, id, entries, nil, last)
	})
	if err != nil {
		return 0, opErr(id, "append", err)
	}
	return last, nil
}

// lastSeq returns the highest seq session id ever had, or ErrNotFound;
// lock, when set, is the row lock to take ("FOR UPDATE", "FOR SHARE").
func lastSeq(ctx context.Context, q querier, id, lock string) (int64, error) {
	var last int64
	err := scanLastSeq(q.QueryRow(ctx, `SELECT last_seq FROM session_seqs WHERE session_id = $1 `+lock, id), &last)
	return last, err
}

// scanLastSeq reads a row of last_seq: ErrNotFound when there is none.
func scanLastSeq(row pgx.Row, last *int64) error {
	err := row.Scan(last)
	if errors.Is(err, pgx.ErrNoRows) {
		return session.ErrNotFound
	}
	return err
}

// lockSeq is lastSeq(…, "FOR UPDATE") for a write of session id (Append,
// Rewrite, Delete). When ctx carries a fencing token for id, it first
// raises the session's fence, in the same round trip, and fails with an
// error wrapping session.ErrFenced when the token is below it (see
// session.WithFence); when it carries none, unfenced (if not empty) is
// the statement it runs first instead, taking $1 (the session id).
func lockSeq(ctx context.Context, tx pgx.Tx, id, unfenced string) (int64, error) {
	fs := fencesOf(ctx, id)
	if len(fs) == 0 && unfenced == "" {
		return lastSeq(ctx, tx, id, "FOR UPDATE")
	}
	b := &pgx.Batch{}
	if len(fs) > 0 {
		queueFences(b, fs)
	} else {
		b.Queue(unfenced, id)
	}
	var last int64
	b.Queue(`SELECT last_seq FROM session_seqs WHERE session_id = $1 FOR UPDATE`, id).QueryRow(func(row pgx.Row) error {
		return scanLastSeq(row, &last)
	})
	return last, tx.SendBatch(ctx, b).Close()
}

// insertEntries stores entries in the log of id and, when setLast > 0,
// sets the session's last seq to it, in one round trip; raw, when given,
// holds the entries' JSON, else they are encoded here.
func insertEntries(ctx context.Context, tx pgx.Tx, id string, entries []session.Entry, raw [][]byte, setLast int64) error {
	b := &pgx.Batch{}
	for i := range entries {
		var data []byte
		if raw != nil {
			data = raw[i]
		} else {
			var err error
			if data, err = json.Marshal(&entries[i]); err != nil {
				return fmt.Errorf("%w: entry %d: %v", session.ErrInvalid, i, err)
			}
		}
		b.Queue(`INSERT INTO entries (session_id, seq, data) VALUES ($1, $2, $3)`, id, entries[i].Seq, data)
	}
	if setLast > 0 {
		b.Queue(`UPDATE session_seqs SET last_seq = $1 WHERE session_id = $2`, setLast, id)
	}
	if b.Len() == 0 {
		return nil
	}
	return tx.SendBatch(ctx, b).Close()
}

// Entries implements session.Store. It streams the rows of one query, a
// consistent snapshot of the log, decoding one entry at a time; the
// iteration holds a connection until it ends. A row that does not hold a
// valid entry of its seq is yielded as a heal entry (Seq 0) reporting the
// damage.
func (s *Store) Entries(ctx context.Context, id string, afterSeq int64) iter.Seq2[session.Entry, error] {
	return func(yield func(session.Entry, error) bool) {
		if err := session.ValidID(id); err != nil {
			yield(session.Entry{}, opErr("", "entries", err))
			return
		}
		c, err := s.pool.Acquire(ctx)
		if err != nil {
			yield(session.Entry{}, opErr(id, "entries", s.unreachable(err)))
			return
		}
		defer c.Release()
		// The join yields one row of NULLs for a session with no entry
		// after afterSeq, and none for an unknown session.
		rows, err := c.Query(ctx, `SELECT e.seq, e.data FROM sessions s
			LEFT JOIN entries e ON e.session_id = s.id AND e.seq > $1
			WHERE s.id = $2 ORDER BY e.seq`, afterSeq, id)
		if err != nil {
			yield(session.Entry{}, opErr(id, "entries", s.unreachable(err)))
			return
		}
		defer rows.Close()
		found := false
		for rows.Next() {
			found = true
			var seq *int64
			var data []byte
			if err := rows.Scan(&seq, &data); err != nil {
				yield(session.Entry{}, opErr(id, "entries", err))
				return
			}
			if seq != nil && !yield(session.DecodeRow(*seq, data), nil) {
				return
			}
		}
		switch {
		case rows.Err() != nil:
			yield(session.Entry{}, opErr(id, "entries", s.unreachable(rows.Err())))
		case !found:
			yield(session.Entry{}, opErr(id, "entries", session.ErrNotFound))
		}
	}
}

// Fork implements session.Store, in one transaction. It holds the
// parent's seq counter (FOR SHARE) while it copies, so no append or
// rewrite of the parent changes the log under it.
func (s *Store) Fork(ctx context.Context, id string, atSeq int64) (*session.Session, error) {
	if err := session.ValidID(id); err != nil {
		return nil, opErr("", "fork", err)
	}
	var child *session.Session
	err := s.write(ctx, func(tx pgx.Tx) error {
		if _, err := lastSeq(ctx, tx, id, "FOR SHARE"); err != nil {
			return err
		}
		parent, err := getSession(ctx, tx, id, false)
		if err != nil {
			return err
		}
		all, raw, err := readLog(ctx, tx, id)
		if err != nil {
			return err
		}
		kept := session.ForkEntries(all, atSeq)
		child = session.ForkSession(parent, kept, s.now())
		child.CreatedAt, child.UpdatedAt = micro(child.CreatedAt), micro(child.UpdatedAt)
		if err := insertSession(ctx, tx, child, child.ForkSeq); err != nil {
			return err
		}
		return insertEntries(ctx, tx, child.ID, kept, raw[:len(kept)], 0)
	})
	if err != nil {
		return nil, opErr(id, "fork", err)
	}
	return child, nil
}

// readLog returns the good entries of id's log and, beside each, the JSON
// it was stored as; damaged rows are left out.
func readLog(ctx context.Context, q querier, id string) ([]session.Entry, [][]byte, error) {
	rows, err := q.Query(ctx, `SELECT seq, data FROM entries WHERE session_id = $1 ORDER BY seq`, id)
	if err != nil {
		return nil, nil, err
	}
	defer rows.Close()
	var all []session.Entry
	var raw [][]byte
	for rows.Next() {
		var seq int64
		var data []byte
		if err := rows.Scan(&seq, &data); err != nil {
			return nil, nil, err
		}
		if e := session.DecodeRow(seq, data); e.Seq != 0 {
			all = append(all, e)
			raw = append(raw, data)
		}
	}
	return all, raw, rows.Err()
}

// Rewrite implements session.Store, in one transaction, checked against
// the session's fence when ctx carries a token for id.
func (s *Store) Rewrite(ctx context.Context, id string, entries []session.Entry) error {
	if err := session.ValidID(id); err != nil {
		return opErr("", "rewrite", err)
	}
	entries = slices.Clone(entries)
	if _, err := session.PrepareAppend(entries, 1, s.now()); err != nil {
		return opErr(id, "rewrite", err)
	}
	err := s.write(ctx, func(tx pgx.Tx) error {
		prev, err := lockSeq(ctx, tx, id, "")
		if err != nil {
			return err
		}
		last, err := session.PrepareAppend(entries, prev+1, s.now())
		if err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `DELETE FROM entries WHERE session_id = $1`, id); err != nil {
			return err
		}
		if len(entries) == 0 {
			return nil
		}
		return insertEntries(ctx, tx, id, entries, nil, last)
	})
	return opErr(id, "rewrite", err)
}
