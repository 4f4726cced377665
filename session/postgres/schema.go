package postgres

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"github.com/reinhq/rein/session/internal/migration"
	"time"

	"github.com/jackc/pgx/v5"
)

// ErrNewerSchema: the database was written by a newer rein, whose schema
// this one does not know. Opening it is refused rather than risking
// writes that the newer schema does not expect.
var ErrNewerSchema = errors.New("postgres: the database has a newer schema than this rein knows")

// newerSchemaError is the ErrNewerSchema that says which versions.
type newerSchemaError struct{ database, known int }

func (e *newerSchemaError) Error() string {
	return fmt.Sprintf("database schema version %d is newer than this rein (%d); upgrade rein "+
		"(or restore a backup made by this version)", e.database, e.known)
}

// Is makes errors.Is(err, ErrNewerSchema) hold.
func (e *newerSchemaError) Is(target error) bool { return target == ErrNewerSchema }

//go:embed migrations/*.sql
var migrationFiles embed.FS

// migrationLock is the key of the advisory lock that migrations hold
// ("rein" in ASCII): processes starting at once take turns, so each
// migration is applied once.
const migrationLock = 0x7265696e

// loadMigrations reads the embedded migrations (see package migration).
var loadMigrations = migration.Load

// migrate brings the schema up to the last of ms in one transaction that
// holds an advisory lock, recording each step in rein_schema_migrations,
// and returns the version the database is at. A database at a version
// above the last of ms is refused with ErrNewerSchema.
func migrate(ctx context.Context, c *pgx.Conn, ms []migration.Migration, now time.Time) (int, error) {
	tx, err := c.Begin(ctx)
	if err != nil {
		return 0, err
	}
	defer tx.Rollback(context.WithoutCancel(ctx)) // a no-op after Commit
	// The lock is released when the transaction ends, committed or not.
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, int64(migrationLock)); err != nil {
		return 0, fmt.Errorf("migration lock: %w", err)
	}
	if _, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS rein_schema_migrations (
		version    integer PRIMARY KEY,
		name       text NOT NULL,
		applied_at timestamptz NOT NULL
	)`); err != nil {
		return 0, fmt.Errorf("rein_schema_migrations: %w", err)
	}
	var current int
	if err := tx.QueryRow(ctx, `SELECT COALESCE(MAX(version), 0) FROM rein_schema_migrations`).Scan(&current); err != nil {
		return 0, fmt.Errorf("rein_schema_migrations: %w", err)
	}
	latest := ms[len(ms)-1].Version
	if current > latest {
		return current, &newerSchemaError{database: current, known: latest}
	}
	for _, m := range ms[current:] {
		// No arguments: the simple protocol, which runs a file of
		// several statements.
		if _, err := tx.Exec(ctx, m.SQL); err != nil {
			return current, fmt.Errorf("migration %s: %w", m.Name, err)
		}
		if _, err := tx.Exec(ctx, `INSERT INTO rein_schema_migrations (version, name, applied_at) VALUES ($1, $2, $3)`,
			m.Version, m.Name, micro(now)); err != nil {
			return current, fmt.Errorf("migration %s: %w", m.Name, err)
		}
	}
	if err := tx.Commit(ctx); err != nil {
		return current, err
	}
	return latest, nil
}
