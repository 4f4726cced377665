package postgres

import (
	"cmp"
	"context"
	"fmt"
	"hash/fnv"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/reinhq/rein/session"
)

// eventsLock is the first key ("evnt") of the advisory locks AppendEvents
// takes, the second being a hash of the session id: writers of one
// session's events take turns, so the check that ids increase and the
// insert are one step.
const eventsLock = 0x65766e74

// eventsKey is the second key of the session's events lock.
func eventsKey(sessionID string) int32 {
	h := fnv.New32a()
	h.Write([]byte(sessionID))
	return int32(h.Sum32())
}

// AppendEvents implements session.Ledger: the batch is one transaction,
// checked against the stored ids inside it while holding the sessions'
// events locks, so it is stored whole or not at all. The fence of each
// of its sessions that ctx carries a token for is checked in the same
// transaction (session.ErrFenced), at no extra round trip.
func (s *Store) AppendEvents(ctx context.Context, evs ...session.Event) error {
	if len(evs) == 0 {
		return nil
	}
	evs = slices.Clone(evs)
	// Check the batch on its own before taking any lock.
	none := func(string) (int64, error) { return 0, nil }
	if err := session.PrepareEvents(evs, s.now(), none); err != nil {
		return err
	}
	return s.write(ctx, func(tx pgx.Tx) error {
		last, err := lockEvents(ctx, tx, evs)
		if err != nil {
			return fmt.Errorf("events: append: %w", err)
		}
		if err := session.PrepareEvents(evs, s.now(), func(id string) (int64, error) { return last[id], nil }); err != nil {
			return err
		}
		b := &pgx.Batch{}
		for _, e := range evs {
			b.Queue(`INSERT INTO events (session_id, id, run_id, type, time, data) VALUES ($1, $2, $3, $4, $5, $6)`,
				e.SessionID, e.ID, e.RunID, e.Type, micro(e.Time), nullable(e.Data))
		}
		if err := tx.SendBatch(ctx, b).Close(); err != nil {
			return fmt.Errorf("events: append: %w", err)
		}
		return nil
	})
}

// lockEvents takes the events locks of the sessions of evs, in an order
// every writer follows (so two never wait for each other), and returns
// each session's last stored event id, in one round trip; before the
// locks, it raises the fences ctx carries for those sessions (see
// queueFences).
func lockEvents(ctx context.Context, tx pgx.Tx, evs []session.Event) (map[string]int64, error) {
	type sess struct {
		id  string
		key int32
	}
	var list []sess
	for _, e := range evs {
		if !slices.ContainsFunc(list, func(x sess) bool { return x.id == e.SessionID }) {
			list = append(list, sess{e.SessionID, eventsKey(e.SessionID)})
		}
	}
	slices.SortFunc(list, func(a, b sess) int { return cmp.Or(cmp.Compare(a.key, b.key), cmp.Compare(a.id, b.id)) })
	last := make(map[string]int64, len(list))
	b := &pgx.Batch{}
	ids := make([]string, len(list))
	for i, x := range list {
		ids[i] = x.id
	}
	queueFences(b, fencesOf(ctx, ids...))
	for _, x := range list {
		b.Queue(`SELECT pg_advisory_xact_lock($1, $2)`, int32(eventsLock), x.key)
		b.Queue(`SELECT COALESCE(MAX(id), 0) FROM events WHERE session_id = $1`, x.id).QueryRow(func(row pgx.Row) error {
			var n int64
			err := row.Scan(&n)
			last[x.id] = n
			return err
		})
	}
	return last, tx.SendBatch(ctx, b).Close()
}

func lastEventID(ctx context.Context, q querier, sessionID string) (int64, error) {
	var last int64
	err := q.QueryRow(ctx, `SELECT COALESCE(MAX(id), 0) FROM events WHERE session_id = $1`, sessionID).Scan(&last)
	return last, err
}

// Events implements session.Ledger.
func (s *Store) Events(ctx context.Context, sessionID string, afterID int64, limit int) ([]session.Event, error) {
	if err := session.ValidID(sessionID); err != nil {
		return nil, fmt.Errorf("events: read: %w", err)
	}
	var out []session.Event
	err := s.read(ctx, func(c *pgx.Conn) error {
		rows, err := c.Query(ctx, `SELECT id, run_id, type, time, data FROM events
			WHERE session_id = $1 AND id > $2 ORDER BY id LIMIT $3`, sessionID, afterID, limitArg(limit))
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			e := session.Event{SessionID: sessionID}
			var data []byte
			if err := rows.Scan(&e.ID, &e.RunID, &e.Type, &e.Time, &data); err != nil {
				return err
			}
			e.Time, e.Data = e.Time.UTC(), data
			out = append(out, e)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("events of session %s: read: %w", sessionID, err)
	}
	return out, nil
}

// LastEventID implements session.Ledger.
func (s *Store) LastEventID(ctx context.Context, sessionID string) (int64, error) {
	if err := session.ValidID(sessionID); err != nil {
		return 0, fmt.Errorf("events: last id: %w", err)
	}
	var last int64
	err := s.read(ctx, func(c *pgx.Conn) error {
		var err error
		last, err = lastEventID(ctx, c, sessionID)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("events of session %s: last id: %w", sessionID, err)
	}
	return last, nil
}

// DeleteEvents implements session.Ledger: the session's events and runs
// go in one transaction, which holds the session's events lock, so an
// append of events waits for it and then starts the stream afresh.
func (s *Store) DeleteEvents(ctx context.Context, sessionID string) error {
	if err := session.ValidID(sessionID); err != nil {
		return fmt.Errorf("events: delete: %w", err)
	}
	err := s.write(ctx, func(tx pgx.Tx) error {
		b := &pgx.Batch{}
		b.Queue(`SELECT pg_advisory_xact_lock($1, $2)`, int32(eventsLock), eventsKey(sessionID))
		b.Queue(`DELETE FROM events WHERE session_id = $1`, sessionID)
		b.Queue(`DELETE FROM runs WHERE session_id = $1`, sessionID)
		return tx.SendBatch(ctx, b).Close()
	})
	if err != nil {
		return fmt.Errorf("events of session %s: delete: %w", sessionID, err)
	}
	return nil
}

// AppendAudit implements session.Ledger. The audit table's identity
// column is the record's ID; the batch is one transaction (one round
// trip), stored whole or not at all. When ctx carries fencing tokens for
// sessions of the records, the batch opens the transaction itself, raises
// those fences first and is committed (or rolled back, refused with
// session.ErrFenced) in a second round trip.
func (s *Store) AppendAudit(ctx context.Context, recs ...session.AuditRecord) error {
	if len(recs) == 0 {
		return nil
	}
	recs = slices.Clone(recs)
	if err := session.PrepareAudit(recs, s.now()); err != nil {
		return err
	}
	ids := make([]string, len(recs))
	for i, r := range recs {
		ids[i] = r.SessionID
	}
	fs := fencesOf(ctx, ids...)
	err := s.read(ctx, func(c *pgx.Conn) error {
		// Without fences, a batch outside a transaction runs as one
		// implicit transaction. With them, the batch begins one, since a
		// refusal is known only once the batch has run.
		b := &pgx.Batch{}
		if len(fs) > 0 {
			b.Queue(`BEGIN`)
			queueFences(b, fs)
		}
		for _, r := range recs {
			b.Queue(`INSERT INTO audit (time, caller, session_id, run_id, kind, data) VALUES ($1, $2, $3, $4, $5, $6)`,
				micro(r.Time), r.Caller, r.SessionID, r.RunID, r.Kind, nullable(r.Data))
		}
		err := c.SendBatch(ctx, b).Close()
		if len(fs) == 0 {
			return err
		}
		if err != nil {
			rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
			defer cancel()
			_, _ = c.Exec(rctx, `ROLLBACK`) // a connection left in a transaction is destroyed on release
			return err
		}
		_, err = c.Exec(ctx, `COMMIT`)
		return err
	})
	if err != nil {
		return fmt.Errorf("audit: append: %w", err)
	}
	return nil
}

// Audit implements session.Ledger.
func (s *Store) Audit(ctx context.Context, f session.AuditFilter) ([]session.AuditRecord, error) {
	var w conds
	w.add("id > ?", f.AfterID)
	for _, c := range []struct{ col, val string }{{"caller", f.Caller}, {"session_id", f.SessionID}, {"run_id", f.RunID}, {"kind", string(f.Kind)}} {
		if c.val != "" {
			w.add(c.col+" = ?", c.val)
		}
	}
	if !f.Since.IsZero() {
		w.add("time >= ?", f.Since)
	}
	if !f.Until.IsZero() {
		w.add("time < ?", f.Until)
	}
	query := `SELECT id, time, caller, session_id, run_id, kind, data FROM audit` + w.clause() +
		` ORDER BY id LIMIT ` + w.arg(limitArg(f.Limit))
	var out []session.AuditRecord
	err := s.read(ctx, func(c *pgx.Conn) error {
		rows, err := c.Query(ctx, query, w.args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var r session.AuditRecord
			var data []byte
			if err := rows.Scan(&r.ID, &r.Time, &r.Caller, &r.SessionID, &r.RunID, &r.Kind, &data); err != nil {
				return err
			}
			r.Time, r.Data = r.Time.UTC(), data
			out = append(out, r)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("audit: read: %w", err)
	}
	return out, nil
}
