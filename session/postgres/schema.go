package postgres

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strconv"
	"strings"
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

// migration is one step of the schema: migrations/NNNN_name.sql.
type migration struct {
	version int
	name    string
	sql     string
}

// loadMigrations reads the migrations of dir in fsys, in version order;
// versions must run 1, 2, 3, … without a gap.
func loadMigrations(fsys fs.FS, dir string) ([]migration, error) {
	names, err := fs.Glob(fsys, path.Join(dir, "*.sql"))
	if err != nil {
		return nil, err
	}
	var out []migration
	for _, name := range names { // fs.Glob sorts them
		base := path.Base(name)
		num, _, ok := strings.Cut(base, "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil || v != len(out)+1 {
			return nil, fmt.Errorf("migration %s: want the name NNNN_name.sql with version %d", base, len(out)+1)
		}
		text, err := fs.ReadFile(fsys, name)
		if err != nil {
			return nil, err
		}
		out = append(out, migration{version: v, name: strings.TrimSuffix(base, ".sql"), sql: string(text)})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no migration in %s", dir)
	}
	return out, nil
}

// migrate brings the schema up to the last of ms in one transaction that
// holds an advisory lock, recording each step in rein_schema_migrations,
// and returns the version the database is at. A database at a version
// above the last of ms is refused with ErrNewerSchema.
func migrate(ctx context.Context, c *pgx.Conn, ms []migration, now time.Time) (int, error) {
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
	latest := ms[len(ms)-1].version
	if current > latest {
		return current, &newerSchemaError{database: current, known: latest}
	}
	for _, m := range ms[current:] {
		// No arguments: the simple protocol, which runs a file of
		// several statements.
		if _, err := tx.Exec(ctx, m.sql); err != nil {
			return current, fmt.Errorf("migration %s: %w", m.name, err)
		}
		if _, err := tx.Exec(ctx, `INSERT INTO rein_schema_migrations (version, name, applied_at) VALUES ($1, $2, $3)`,
			m.version, m.name, micro(now)); err != nil {
			return current, fmt.Errorf("migration %s: %w", m.name, err)
		}
	}
	if err := tx.Commit(ctx); err != nil {
		return current, err
	}
	return latest, nil
}
