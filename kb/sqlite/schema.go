package sqlite

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"time"

	"github.com/reinhq/rein/internal/migration"
	"github.com/reinhq/rein/internal/sqlitedb"
)

// ErrNewerSchema: the database was written by a newer rein, whose schema
// this one does not know. Opening it is refused rather than risking
// writes that the newer schema does not expect.
var ErrNewerSchema = errors.New("kb/sqlite: the database has a newer schema than this rein knows")

//go:embed migrations/*.sql
var migrationFiles embed.FS

// migrate brings the schema of db up to the last of ms (see
// sqlitedb.Migrate) and returns the version the database is at. A database
// at a version above the last of ms is refused with ErrNewerSchema.
func migrate(ctx context.Context, db *sql.DB, ms []migration.Migration, now time.Time) (int, error) {
	return sqlitedb.Migrate(ctx, db, ms, now, sqlitedb.Newer{Err: ErrNewerSchema,
		Remedy: "delete the file and index again (it holds only an index of your files)"})
}
