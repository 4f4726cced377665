// Package pgmigrate applies the embedded schema migrations of a PostgreSQL
// store (session/postgres, kb/postgres): the pending ones in one
// transaction that holds an advisory lock, so processes starting at once
// take turns and apply each migration once, each step recorded in a
// version table of the store's own. A database at a version above the
// last migration known is refused with a *NewerError: it was written by a
// newer rein.
package pgmigrate

import (
	"context"
	"fmt"
	"regexp"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/reinhq/rein/internal/migration"
)

// Plan names where a store records its migrations.
type Plan struct {
	// Table is the version table (a plain lower-case identifier, e.g.
	// rein_schema_migrations), created when missing.
	Table string
	// Lock is the key of the transaction-scoped advisory lock that
	// migrations of this store hold.
	Lock int64
	// Schema and Newer fill the fields of the same names of a NewerError
	// Apply returns.
	Schema string
	Newer  error
}

// NewerError reports a database whose schema is newer than the migrations
// this rein knows.
type NewerError struct {
	// Database is the version the database is at; Known the last
	// migration this rein has.
	Database, Known int
	// Schema names the schema in the message ("knowledge-base"); ""
	// means "database".
	Schema string
	// Newer, when not nil, is the store's sentinel (its ErrNewerSchema):
	// errors.Is(e, Newer) holds.
	Newer error
}

func (e *NewerError) Error() string {
	schema := e.Schema
	if schema == "" {
		schema = "database"
	}
	return fmt.Sprintf("%s schema version %d is newer than this rein (%d); upgrade rein "+
		"(or restore a backup made by this version)", schema, e.Database, e.Known)
}

// Is makes errors.Is(e, e.Newer) hold.
func (e *NewerError) Is(target error) bool { return e.Newer != nil && target == e.Newer }

var identifier = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z_][a-z0-9_]{0,62}$`) })

// Apply brings the schema up to the last of ms (as migration.Load returns
// them) in one transaction that holds p.Lock, recording each step in
// p.Table, and returns the version the database is at. A failed step
// rolls back every step of the call. A database at a version above the
// last of ms is refused with a *NewerError.
func Apply(ctx context.Context, c *pgx.Conn, p Plan, ms []migration.Migration, now time.Time) (int, error) {
	if !identifier().MatchString(p.Table) {
		return 0, fmt.Errorf("migration table %q: want a lower-case SQL identifier", p.Table)
	}
	if len(ms) == 0 {
		return 0, fmt.Errorf("no migration to apply")
	}
	tx, err := c.Begin(ctx)
	if err != nil {
		return 0, err
	}
	defer tx.Rollback(context.WithoutCancel(ctx)) // a no-op after Commit
	// The lock is released when the transaction ends, committed or not.
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, p.Lock); err != nil {
		return 0, fmt.Errorf("migration lock: %w", err)
	}
	if _, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS `+p.Table+` (
		version    integer PRIMARY KEY,
		name       text NOT NULL,
		applied_at timestamptz NOT NULL
	)`); err != nil {
		return 0, fmt.Errorf("%s: %w", p.Table, err)
	}
	var current int
	if err := tx.QueryRow(ctx, `SELECT COALESCE(MAX(version), 0) FROM `+p.Table).Scan(&current); err != nil {
		return 0, fmt.Errorf("%s: %w", p.Table, err)
	}
	latest := ms[len(ms)-1].Version
	if current > latest {
		return current, &NewerError{Database: current, Known: latest, Schema: p.Schema, Newer: p.Newer}
	}
	for _, m := range ms[current:] {
		// No arguments: the simple protocol, which runs a file of
		// several statements.
		if _, err := tx.Exec(ctx, m.SQL); err != nil {
			return current, fmt.Errorf("migration %s: %w", m.Name, err)
		}
		if _, err := tx.Exec(ctx, `INSERT INTO `+p.Table+` (version, name, applied_at) VALUES ($1, $2, $3)`,
			m.Version, m.Name, now.Truncate(time.Microsecond)); err != nil {
			return current, fmt.Errorf("migration %s: %w", m.Name, err)
		}
	}
	if err := tx.Commit(ctx); err != nil {
		return current, err
	}
	return latest, nil
}
