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

// ErrNewerSchema: the database was written by a newer rein, whose
// knowledge-base schema this one does not know. Opening it is refused
// rather than risking writes the newer schema does not expect.
var ErrNewerSchema = errors.New("kb/postgres: the database has a newer knowledge-base schema than this rein knows")

//go:embed migrations/*.sql
var migrationFiles embed.FS

// plan records the knowledge base's migrations apart from the session
// store's ("reinkb" in ASCII is the lock's key).
var plan = pgmigrate.Plan{Table: "rein_kb_migrations", Lock: 0x7265696e6b62,
	Schema: "knowledge-base", Newer: ErrNewerSchema}

// migrate brings the schema up to date (see package pgmigrate).
func migrate(ctx context.Context, c *pgx.Conn, now time.Time) error {
	ms, err := migration.Load(migrationFiles, "migrations")
	if err != nil {
		return err
	}
	_, err = pgmigrate.Apply(ctx, c, plan, ms, now)
	return err
}
