package gateway

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"time"

	"github.com/reinhq/rein/internal/migration"
	"github.com/reinhq/rein/internal/sqlitedb"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// ErrNewerSchema: the gateway's database was written by a newer rein.
var ErrNewerSchema = errors.New("gateway: the database has a newer schema than this rein knows")

// The states of an update in the inbox.
const (
	stateReceived  = "received"
	stateSubmitted = "submitted"
	stateAnswered  = "answered"
)

// State is the gateway's own database (gateway.db beside the sessions):
// the session of every chat and the updates taken, so a restart resumes
// each chat where it was and never handles an update twice.
type State struct {
	db   *sql.DB
	path string
}

// OpenState opens (creating) the gateway's database at path.
func OpenState(path string) (*State, error) {
	db, abs, err := sqlitedb.Open(context.Background(), path, sqlitedb.Config{
		Name: "gateway", Synchronous: "FULL",
		SetUp: func(ctx context.Context, db *sql.DB) error {
			ms, err := migration.Load(migrationFiles, "migrations")
			if err != nil {
				return err
			}
			_, err = sqlitedb.Migrate(ctx, db, ms, time.Now(), sqlitedb.Newer{Err: ErrNewerSchema,
				Remedy: "run the rein that wrote it"})
			return err
		},
	})
	if err != nil {
		return nil, err
	}
	return &State{db: db, path: abs}, nil
}

// Path is the database file.
func (s *State) Path() string { return s.path }

// Close closes the database.
func (s *State) Close() error { return s.db.Close() }

// chatRow is a chat's routing.
type chatRow struct {
	SessionID, Model string
}

// chat returns the chat's session, or ok false for a chat never seen.
func (s *State) chat(ctx context.Context, key string) (row chatRow, ok bool, err error) {
	err = s.db.QueryRowContext(ctx, `SELECT session_id, model FROM chats WHERE key = ?`, key).Scan(&row.SessionID, &row.Model)
	if errors.Is(err, sql.ErrNoRows) {
		return row, false, nil
	}
	return row, err == nil, err
}

// setChat routes the chat to a session with a model override.
func (s *State) setChat(ctx context.Context, key string, row chatRow, now time.Time) error {
	_, err := s.db.ExecContext(ctx, `INSERT INTO chats (key, session_id, model, updated_at) VALUES (?, ?, ?, ?)
		ON CONFLICT (key) DO UPDATE SET session_id = excluded.session_id, model = excluded.model, updated_at = excluded.updated_at`,
		key, row.SessionID, row.Model, now.UnixNano())
	return err
}

// take records an update; false when it was taken before (a redelivery).
func (s *State) take(ctx context.Context, channel, updateID, chatKey, text, state string, now time.Time) (bool, error) {
	res, err := s.db.ExecContext(ctx, `INSERT INTO inbox (channel, update_id, chat_key, text, state, received_at)
		VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`, channel, updateID, chatKey, text, state, now.UnixNano())
	if err != nil {
		return false, fmt.Errorf("gateway: store the update: %w", err)
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

// submitted records the run an update became.
func (s *State) submitted(ctx context.Context, channel, updateID, runID string) error {
	_, err := s.db.ExecContext(ctx, `UPDATE inbox SET run_id = ?, state = ? WHERE channel = ? AND update_id = ?`,
		runID, stateSubmitted, channel, updateID)
	return err
}

// answered marks the update of a run handled: its reply is sent.
func (s *State) answered(ctx context.Context, runID string) error {
	_, err := s.db.ExecContext(ctx, `UPDATE inbox SET state = ? WHERE run_id = ?`, stateAnswered, runID)
	return err
}

// delivery is how far a run's reply got: the message showing its
// progress (its id on the platform, "" when none was sent) and how many
// parts of the reply the platform took.
type delivery struct {
	MessageID string
	Parts     int
}

// delivery returns how far the reply of a run got; the zero delivery for
// a run whose reply never started (or that no update became).
func (s *State) delivery(ctx context.Context, runID string) (delivery, error) {
	var d delivery
	err := s.db.QueryRowContext(ctx, `SELECT reply_message, reply_parts FROM inbox WHERE run_id = ? LIMIT 1`, runID).
		Scan(&d.MessageID, &d.Parts)
	if errors.Is(err, sql.ErrNoRows) {
		return delivery{}, nil
	}
	return d, err
}

// progressSent records the message showing a run's progress: the reply's
// first part will be an edit of it, after a restart too.
func (s *State) progressSent(ctx context.Context, runID, messageID string) error {
	_, err := s.db.ExecContext(ctx, `UPDATE inbox SET reply_message = ? WHERE run_id = ?`, messageID, runID)
	return err
}

// partsSent records that the platform took the first n parts of a run's
// reply: a restart does not send them again.
func (s *State) partsSent(ctx context.Context, runID string, n int) error {
	_, err := s.db.ExecContext(ctx, `UPDATE inbox SET reply_parts = ? WHERE run_id = ?`, n, runID)
	return err
}

// Unanswered counts the updates taken whose handling is not finished:
// stored but not yet a run, or a run whose reply has not gone out. A
// restart resumes them.
func (s *State) Unanswered(ctx context.Context) (int, error) {
	var n int
	err := s.db.QueryRowContext(ctx, `SELECT count(*) FROM inbox WHERE state != ?`, stateAnswered).Scan(&n)
	return n, err
}

// pending is an update not yet answered.
type pending struct {
	Channel, UpdateID, ChatKey, Text, RunID, State string
	Received                                       time.Time
}

// open returns the updates not yet answered, oldest first.
func (s *State) open(ctx context.Context) ([]pending, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT channel, update_id, chat_key, text, run_id, state, received_at
		FROM inbox WHERE state != ? ORDER BY received_at`, stateAnswered)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []pending
	for rows.Next() {
		var p pending
		var at int64
		if err := rows.Scan(&p.Channel, &p.UpdateID, &p.ChatKey, &p.Text, &p.RunID, &p.State, &at); err != nil {
			return nil, err
		}
		p.Received = time.Unix(0, at)
		out = append(out, p)
	}
	return out, rows.Err()
}

// answeredUpdate marks an update handled without a run.
func (s *State) answeredUpdate(ctx context.Context, channel, updateID string) error {
	_, err := s.db.ExecContext(ctx, `UPDATE inbox SET state = ? WHERE channel = ? AND update_id = ?`, stateAnswered, channel, updateID)
	return err
}

// prune forgets the updates answered before a time: a platform redelivers
// within minutes, not weeks.
func (s *State) prune(ctx context.Context, before time.Time) error {
	_, err := s.db.ExecContext(ctx, `DELETE FROM inbox WHERE state = ? AND received_at < ?`, stateAnswered, before.UnixNano())
	return err
}
