package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"slices"

	"github.com/reinhq/rein/session"
)

// Append implements session.Store: the batch is one transaction, stored
// whole or not at all.
func (s *Store) Append(ctx context.Context, id string, entries ...session.Entry) (int64, error) {
	if err := session.ValidID(id); err != nil {
		return 0, opErr("", "append", err)
	}
	if len(entries) == 0 {
		last, err := lastSeq(ctx, s.read(), id)
		return last, opErr(id, "append", err)
	}
	entries = slices.Clone(entries)
	var last int64
	err := s.write(ctx, func(ctx context.Context, tx *txn) (err error) {
		last, err = s.appendEntries(ctx, tx, id, entries)
		return err
	})
	if err != nil {
		return 0, opErr(id, "append", err)
	}
	return last, nil
}

// appendEntries numbers entries after the log's last seq and stores them
// in tx; it returns the new last seq. The session's counter is moved
// past them first, in the one statement that also reads it.
func (s *Store) appendEntries(ctx context.Context, tx *txn, id string, entries []session.Entry) (int64, error) {
	var last int64
	err := tx.QueryRowContext(ctx, `UPDATE session_seqs SET last_seq = last_seq + ? WHERE session_id = ? RETURNING last_seq`,
		len(entries), id).Scan(&last)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, session.ErrNotFound
	}
	if err != nil {
		return 0, err
	}
	first := last - int64(len(entries)) + 1
	if got, err := session.PrepareAppend(entries, first, s.now()); err != nil {
		return 0, err
	} else if got != last {
		return 0, fmt.Errorf("numbering %d entries from %d ended at %d, want %d", len(entries), first, got, last)
	}
	if err := insertEntries(ctx, tx, id, entries, nil); err != nil {
		return 0, err
	}
	return last, nil
}

// AppendUpdate implements session.LogWriter: the entries and the record's
// change in one transaction.
func (s *Store) AppendUpdate(ctx context.Context, id string, entries []session.Entry, change func(*session.Session) bool) (int64, error) {
	if err := session.ValidID(id); err != nil {
		return 0, opErr("", "append", err)
	}
	entries = slices.Clone(entries)
	var last int64
	err := s.write(ctx, func(ctx context.Context, tx *txn) (err error) {
		last, err = s.appendUpdate(ctx, tx, id, entries, change)
		return err
	})
	if err != nil {
		return 0, opErr(id, "append", err)
	}
	return last, nil
}

// appendUpdate appends entries to the log of id in tx and, when change
// is set, gives it the session's record, stored when it returns true.
// It returns the log's last seq.
func (s *Store) appendUpdate(ctx context.Context, tx *txn, id string, entries []session.Entry, change func(*session.Session) bool) (int64, error) {
	var last int64
	var err error
	if len(entries) > 0 {
		last, err = s.appendEntries(ctx, tx, id, entries)
	} else {
		last, err = lastSeq(ctx, tx, id)
	}
	if err != nil || change == nil {
		return last, err
	}
	ss, err := getSession(ctx, tx, id)
	if err != nil {
		return 0, err
	}
	old := *ss // change may change what ss points to; the columns are compared by value
	if !change(ss) {
		return last, nil
	}
	ss.ID = id
	if err := checkSession(ss, false); err != nil {
		return 0, err
	}
	return last, s.storeSession(ctx, tx, &old, ss)
}

// lastSeq returns the highest seq session id ever had, or ErrNotFound.
func lastSeq(ctx context.Context, q querier, id string) (int64, error) {
	var last int64
	err := q.QueryRowContext(ctx, `SELECT last_seq FROM session_seqs WHERE session_id = ?`, id).Scan(&last)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, session.ErrNotFound
	}
	return last, err
}

func setLastSeq(ctx context.Context, tx *txn, id string, last int64) error {
	_, err := tx.ExecContext(ctx, `UPDATE session_seqs SET last_seq = ? WHERE session_id = ?`, last, id)
	return err
}

// insertEntries stores entries in the log of id; raw, when given, holds
// their JSON, else they are encoded here.
func insertEntries(ctx context.Context, tx *txn, id string, entries []session.Entry, raw [][]byte) error {
	if len(entries) == 0 {
		return nil
	}
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
		if _, err := tx.ExecContext(ctx, `INSERT INTO entries (session_id, seq, data) VALUES (?, ?, ?)`, id, entries[i].Seq, string(data)); err != nil {
			return err
		}
	}
	return nil
}

// Entries implements session.Store. It streams the rows of one query, a
// consistent snapshot of the log, decoding one entry at a time. A row that
// does not hold a valid entry of its seq is yielded as a heal entry (Seq 0)
// reporting the damage.
func (s *Store) Entries(ctx context.Context, id string, afterSeq int64) iter.Seq2[session.Entry, error] {
	return func(yield func(session.Entry, error) bool) {
		if err := session.ValidID(id); err != nil {
			yield(session.Entry{}, opErr("", "entries", err))
			return
		}
		// The join yields one row of NULLs for a session with no entry
		// after afterSeq, and none for an unknown session.
		rows, err := s.read().QueryContext(ctx, `SELECT e.seq, e.data FROM sessions s
			LEFT JOIN entries e ON e.session_id = s.id AND e.seq > ?
			WHERE s.id = ? ORDER BY e.seq`, afterSeq, id)
		if err != nil {
			yield(session.Entry{}, opErr(id, "entries", err))
			return
		}
		defer rows.Close()
		found := false
		for rows.Next() {
			found = true
			var seq sql.NullInt64
			var data sql.RawBytes
			if err := rows.Scan(&seq, &data); err != nil {
				yield(session.Entry{}, opErr(id, "entries", err))
				return
			}
			if seq.Valid && !yield(session.DecodeRow(seq.Int64, data), nil) {
				return
			}
		}
		switch {
		case rows.Err() != nil:
			yield(session.Entry{}, opErr(id, "entries", rows.Err()))
		case !found:
			yield(session.Entry{}, opErr(id, "entries", session.ErrNotFound))
		}
	}
}

// Fork implements session.Store, in one transaction.
func (s *Store) Fork(ctx context.Context, id string, atSeq int64) (*session.Session, error) {
	if err := session.ValidID(id); err != nil {
		return nil, opErr("", "fork", err)
	}
	var child *session.Session
	err := s.write(ctx, func(ctx context.Context, tx *txn) error {
		parent, err := getSession(ctx, tx, id)
		if err != nil {
			return err
		}
		all, raw, err := readLog(ctx, tx, id)
		if err != nil {
			return err
		}
		kept := session.ForkEntries(all, atSeq)
		child = session.ForkSession(parent, kept, s.now())
		if err := insertSession(ctx, tx, child, child.ForkSeq); err != nil {
			return err
		}
		return insertEntries(ctx, tx, child.ID, kept, raw[:len(kept)])
	})
	if err != nil {
		return nil, opErr(id, "fork", err)
	}
	return child, nil
}

// readLog returns the good entries of id's log and, beside each, the JSON
// it was stored as; damaged rows are left out.
func readLog(ctx context.Context, tx *txn, id string) ([]session.Entry, [][]byte, error) {
	rows, err := tx.QueryContext(ctx, `SELECT seq, data FROM entries WHERE session_id = ? ORDER BY seq`, id)
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

// Rewrite implements session.Store, in one transaction.
func (s *Store) Rewrite(ctx context.Context, id string, entries []session.Entry) error {
	if err := session.ValidID(id); err != nil {
		return opErr("", "rewrite", err)
	}
	entries = slices.Clone(entries)
	err := s.write(ctx, func(ctx context.Context, tx *txn) error {
		prev, err := lastSeq(ctx, tx, id)
		if err != nil {
			return err
		}
		last, err := session.PrepareAppend(entries, prev+1, s.now())
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM entries WHERE session_id = ?`, id); err != nil {
			return err
		}
		if err := insertEntries(ctx, tx, id, entries, nil); err != nil {
			return err
		}
		if len(entries) == 0 {
			return nil
		}
		return setLastSeq(ctx, tx, id, last)
	})
	return opErr(id, "rewrite", err)
}
