package sqlite

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/reinhq/rein/session"
)

// AppendEvents implements session.Ledger: the batch is one transaction,
// checked against the stored ids inside it, so it is stored whole or not
// at all.
func (s *Store) AppendEvents(ctx context.Context, evs ...session.Event) error {
	if len(evs) == 0 {
		return nil
	}
	evs = slices.Clone(evs)
	return s.write(ctx, func(ctx context.Context, tx *txn) error { return s.insertEvents(ctx, tx, evs) })
}

// insertEvents checks evs against the stored ids and stores them in tx.
func (s *Store) insertEvents(ctx context.Context, tx *txn, evs []session.Event) error {
	last := func(id string) (int64, error) { return lastEventID(ctx, tx, id) }
	if err := session.PrepareEvents(evs, s.now(), last); err != nil {
		return err
	}
	for _, e := range evs {
		if _, err := tx.ExecContext(ctx, `INSERT INTO events (session_id, id, run_id, type, time, data) VALUES (?, ?, ?, ?, ?, ?)`, e.SessionID, e.ID, e.RunID, e.Type, e.Time.UnixNano(), nullable(e.Data)); err != nil {
			return fmt.Errorf("events of session %s: append: %w", e.SessionID, err)
		}
	}
	return nil
}

// WriteEvent implements session.EventWriter: the event, its audit record
// and the run's state in one transaction.
func (s *Store) WriteEvent(ctx context.Context, w session.EventWrite) error {
	evs := []session.Event{w.Event}
	var recs []session.AuditRecord
	if w.Audit != nil {
		recs = []session.AuditRecord{*w.Audit}
		if err := session.PrepareAudit(recs, s.now()); err != nil {
			return err
		}
	}
	if w.Run != nil {
		if err := session.CheckRunUpdate(w.Run); err != nil {
			return err
		}
	}
	var entries []session.Entry
	if w.Log != nil {
		if err := session.ValidID(w.Event.SessionID); err != nil {
			return fmt.Errorf("events: append: %w", err)
		}
		entries = slices.Clone(w.Log.Entries)
	}
	return s.write(ctx, func(ctx context.Context, tx *txn) error {
		if w.Log != nil {
			if _, err := s.appendUpdate(ctx, tx, w.Event.SessionID, entries, w.Log.Change); err != nil {
				return opErr(w.Event.SessionID, "append", err)
			}
		}
		if err := s.insertEvents(ctx, tx, evs); err != nil {
			return err
		}
		if err := insertAudit(ctx, tx, recs); err != nil {
			return fmt.Errorf("audit: append: %w", err)
		}
		if w.Run != nil {
			if err := updateRun(ctx, tx, w.Run); err != nil {
				return fmt.Errorf("run %s: update: %w", w.Run.ID, err)
			}
		}
		return nil
	})
}

func lastEventID(ctx context.Context, q querier, sessionID string) (int64, error) {
	var last int64
	err := q.QueryRowContext(ctx, `SELECT COALESCE(MAX(id), 0) FROM events WHERE session_id = ?`, sessionID).Scan(&last)
	return last, err
}

// Events implements session.Ledger.
func (s *Store) Events(ctx context.Context, sessionID string, afterID int64, limit int) ([]session.Event, error) {
	if err := session.ValidID(sessionID); err != nil {
		return nil, fmt.Errorf("events: read: %w", err)
	}
	args := []any{sessionID, afterID}
	rows, err := s.read().QueryContext(ctx, `SELECT id, run_id, type, time, data FROM events
		WHERE session_id = ? AND id > ? ORDER BY id`+limitClause(limit, &args), args...)
	if err != nil {
		return nil, fmt.Errorf("events of session %s: read: %w", sessionID, err)
	}
	defer rows.Close()
	var out []session.Event
	for rows.Next() {
		e := session.Event{SessionID: sessionID}
		var t int64
		if err := rows.Scan(&e.ID, &e.RunID, &e.Type, &t, (*[]byte)(&e.Data)); err != nil {
			return nil, fmt.Errorf("events of session %s: read: %w", sessionID, err)
		}
		e.Time = fromNanos(t)
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("events of session %s: read: %w", sessionID, err)
	}
	return out, nil
}

// LastEventID implements session.Ledger.
func (s *Store) LastEventID(ctx context.Context, sessionID string) (int64, error) {
	if err := session.ValidID(sessionID); err != nil {
		return 0, fmt.Errorf("events: last id: %w", err)
	}
	last, err := lastEventID(ctx, s.read(), sessionID)
	if err != nil {
		return 0, fmt.Errorf("events of session %s: last id: %w", sessionID, err)
	}
	return last, nil
}

// DeleteEvents implements session.Ledger.
func (s *Store) DeleteEvents(ctx context.Context, sessionID string) error {
	if err := session.ValidID(sessionID); err != nil {
		return fmt.Errorf("events: delete: %w", err)
	}
	err := s.write(ctx, func(ctx context.Context, tx *txn) error {
		if _, err := tx.ExecContext(ctx, `DELETE FROM events WHERE session_id = ?`, sessionID); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `DELETE FROM runs WHERE session_id = ?`, sessionID)
		return err
	})
	if err != nil {
		return fmt.Errorf("events of session %s: delete: %w", sessionID, err)
	}
	return nil
}

// AppendAudit implements session.Ledger. The audit table's AUTOINCREMENT
// key is the record's ID.
func (s *Store) AppendAudit(ctx context.Context, recs ...session.AuditRecord) error {
	if len(recs) == 0 {
		return nil
	}
	recs = slices.Clone(recs)
	if err := session.PrepareAudit(recs, s.now()); err != nil {
		return err
	}
	err := s.write(ctx, func(ctx context.Context, tx *txn) error { return insertAudit(ctx, tx, recs) })
	if err != nil {
		return fmt.Errorf("audit: append: %w", err)
	}
	return nil
}

// insertAudit stores prepared audit records in tx.
func insertAudit(ctx context.Context, tx *txn, recs []session.AuditRecord) error {
	if len(recs) == 0 {
		return nil
	}
	for _, r := range recs {
		if _, err := tx.ExecContext(ctx, `INSERT INTO audit (time, caller, session_id, run_id, kind, data) VALUES (?, ?, ?, ?, ?, ?)`, r.Time.UnixNano(), r.Caller, r.SessionID, r.RunID, r.Kind, nullable(r.Data)); err != nil {
			return err
		}
	}
	return nil
}

// Audit implements session.Ledger.
func (s *Store) Audit(ctx context.Context, f session.AuditFilter) ([]session.AuditRecord, error) {
	where := []string{"id > ?"}
	args := []any{f.AfterID}
	for _, c := range []struct{ col, val string }{{"caller", f.Caller}, {"session_id", f.SessionID}, {"run_id", f.RunID}, {"kind", string(f.Kind)}} {
		if c.val != "" {
			where = append(where, c.col+" = ?")
			args = append(args, c.val)
		}
	}
	if !f.Since.IsZero() {
		where = append(where, "time >= ?")
		args = append(args, f.Since.UnixNano())
	}
	if !f.Until.IsZero() {
		where = append(where, "time < ?")
		args = append(args, f.Until.UnixNano())
	}
	query := `SELECT id, time, caller, session_id, run_id, kind, data FROM audit WHERE ` + strings.Join(where, " AND ") +
		` ORDER BY id` + limitClause(f.Limit, &args)
	rows, err := s.db.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("audit: read: %w", err)
	}
	defer rows.Close()
	var out []session.AuditRecord
	for rows.Next() {
		var r session.AuditRecord
		var t int64
		if err := rows.Scan(&r.ID, &t, &r.Caller, &r.SessionID, &r.RunID, &r.Kind, (*[]byte)(&r.Data)); err != nil {
			return nil, fmt.Errorf("audit: read: %w", err)
		}
		r.Time = fromNanos(t)
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("audit: read: %w", err)
	}
	return out, nil
}
