package sqlite

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"time"

	"github.com/reinhq/rein/internal/migration"
)

// ErrNewerSchema: the database was written by a newer rein, whose schema
// this one does not know. Opening it is refused rather than risking
// writes that the newer schema does not expect.
var ErrNewerSchema = errors.New("kb/sqlite: the database has a newer schema than this rein knows")

//go:embed migrations/*.sql
var migrationFiles embed.FS

// migrate brings the schema of db up to the last of ms in one transaction,
// recording each step in schema_version, and returns the version the
// database is at. A database at a version above the last of ms is refused
// with ErrNewerSchema.
func migrate(ctx context.Context, db *sql.DB, ms []migration.Migration, now time.Time) (int, error) {
	tx, err := db.BeginTx(ctx, nil) // BEGIN IMMEDIATE: one process migrates at a time
	if err != nil {
		return 0, err
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_version (
		version    INTEGER PRIMARY KEY,
		name       TEXT NOT NULL,
		applied_at INTEGER NOT NULL
	) STRICT`); err != nil {
		return 0, fmt.Errorf("schema_version: %w", err)
	}
	var current int
	if err := tx.QueryRowContext(ctx, `SELECT COALESCE(MAX(version), 0) FROM schema_version`).Scan(&current); err != nil {
		return 0, fmt.Errorf("schema_version: %w", err)
	}
	latest := ms[len(ms)-1].Version
	if current > latest {
		return current, fmt.Errorf("%w: the database is at schema version %d, this rein knows versions up to %d; "+
			"run the rein that wrote it (or a newer one), or delete the file and index again (it holds only an index of your files)",
			ErrNewerSchema, current, latest)
	}
	for _, m := range ms[current:] {
		if _, err := tx.ExecContext(ctx, m.SQL); err != nil {
			return current, fmt.Errorf("migration %s: %w", m.Name, err)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO schema_version (version, name, applied_at) VALUES (?, ?, ?)`,
			m.Version, m.Name, now.UnixNano()); err != nil {
			return current, fmt.Errorf("migration %s: %w", m.Name, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return current, err
	}
	return latest, nil
}
