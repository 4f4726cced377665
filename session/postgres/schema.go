package postgres

import (
	"context"
	"embed"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/reinhq/rein/internal/migration"
	"github.com/reinhq/rein/internal/migration/pgmigrate"
)

// ErrNewerSchema: the database was written by a newer rein, whose schema
// this one does not know. Opening it is refused rather than risking
// writes that the newer schema does not expect.
var ErrNewerSchema = errors.New("postgres: the database has a newer schema than this rein knows")

//go:embed migrations/*.sql
var migrationFiles embed.FS

// migrationLock is the key of the advisory lock that migrations hold
// ("rein" in ASCII): processes starting at once take turns, so each
// migration is applied once.
const migrationLock = 0x7265696e

// loadMigrations reads the embedded migrations (see package migration).
var loadMigrations = migration.Load

// migrate brings the schema up to the last of ms in one transaction that
// holds an advisory lock, recording each step in rein_schema_migrations
// (see package pgmigrate), and returns the version the database is at. A
// database at a version above the last of ms is refused with
// ErrNewerSchema.
func migrate(ctx context.Context, c *pgx.Conn, ms []migration.Migration, now time.Time) (int, error) {
	return pgmigrate.Apply(ctx, c, pgmigrate.Plan{Table: "rein_schema_migrations", Lock: migrationLock, Newer: ErrNewerSchema}, ms, now)
}
