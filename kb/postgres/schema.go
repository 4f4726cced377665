package postgres

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/reinhq/rein/internal/migration"
	"github.com/reinhq/rein/internal/migration/pgmigrate"
)

// ErrNewerSchema: the database was written by a newer rein, whose
// knowledge-base schema this one does not know. Opening it is refused
// rather than risking writes the newer schema does not expect.
var ErrNewerSchema = errors.New("kb/postgres: the database has a newer knowledge-base schema than this rein knows")

// newerSchemaError is the ErrNewerSchema that says which versions.
type newerSchemaError struct{ database, known int }

func (e *newerSchemaError) Error() string {
	return fmt.Sprintf("knowledge-base schema version %d is newer than this rein (%d); upgrade rein "+
		"(or restore a backup made by this version)", e.database, e.known)
}

// Is makes errors.Is(err, ErrNewerSchema) hold.
func (e *newerSchemaError) Is(target error) bool { return target == ErrNewerSchema }

//go:embed migrations/*.sql
var migrationFiles embed.FS

// plan records the knowledge base's migrations apart from the session
// store's ("reinkb" in ASCII is the lock's key).
var plan = pgmigrate.Plan{Table: "rein_kb_migrations", Lock: 0x7265696e6b62}

// migrate brings the schema up to date (see package pgmigrate).
func migrate(ctx context.Context, c *pgx.Conn, now time.Time) error {
	ms, err := migration.Load(migrationFiles, "migrations")
	if err != nil {
		return err
	}
	_, err = pgmigrate.Apply(ctx, c, plan, ms, now)
	if newer, ok := errors.AsType[*pgmigrate.NewerError](err); ok {
		return &newerSchemaError{database: newer.Database, known: newer.Known}
	}
	return err
}
