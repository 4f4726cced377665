// Package sqlitedb opens the SQLite databases of rein's stores
// (session/sqlite, kb/sqlite): a private file, connections in WAL mode
// that wait for other processes' locks and begin their writes IMMEDIATE,
// and a schema brought up to date by the migrations each store embeds
// (see package migration), versions recorded in a schema_version table.
package sqlitedb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"time"

	_ "modernc.org/sqlite" // the "sqlite" database/sql driver

	"github.com/reinhq/rein/internal/migration"
)

// Config configures [Open] and [DSN].
type Config struct {
	// Name begins the messages of Open's errors ("sqlite", "kb/sqlite").
	Name string
	// Synchronous is SQLite's synchronous level: "FULL" or "NORMAL".
	Synchronous string
	// PageSize, when not 0, is the page size of a new database.
	PageSize int
	// BusyTimeout bounds how long a write waits for another process
	// writing the same database; 0 means 10 seconds.
	BusyTimeout time.Duration
	// MaxConns caps the connections to the database; 0 means 4, and
	// fewer than 2 is raised to 2.
	MaxConns int
	// SetUp, when not nil, brings the schema up to date once the
	// connections are checked (see [Migrate]).
	SetUp func(ctx context.Context, db *sql.DB) error
}

// Open opens the database at path, creating it (mode 0600, in a directory
// created with mode 0700 when missing), checks that it runs in WAL mode
// and runs c.SetUp; it returns the database and its absolute path. Its
// errors begin "<c.Name>: open <path>:".
func Open(ctx context.Context, path string, c Config) (*sql.DB, string, error) {
	if path == "" {
		return nil, "", errors.New(c.Name + ": open: empty path")
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, "", fmt.Errorf("%s: open %s: %w", c.Name, path, err)
	}
	if err := createFile(abs); err != nil {
		return nil, "", fmt.Errorf("%s: open %s: %w", c.Name, abs, err)
	}
	db, err := sql.Open("sqlite", DSN(abs, c))
	if err != nil {
		return nil, "", fmt.Errorf("%s: open %s: %w", c.Name, abs, err)
	}
	conns := c.MaxConns
	if conns == 0 {
		conns = 4
	}
	conns = max(conns, 2)
	db.SetMaxOpenConns(conns)
	db.SetMaxIdleConns(conns)
	if err := setUp(ctx, db, c.SetUp); err != nil {
		db.Close()
		return nil, "", fmt.Errorf("%s: open %s: %w", c.Name, abs, err)
	}
	return db, abs, nil
}

// createFile creates the database file and its directory with modes that
// keep them private; an existing file is left as it is.
func createFile(path string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return err
	}
	return f.Close()
}

// DSN is the driver's name for the database at path: every connection it
// opens waits for other processes' locks, runs in WAL mode with the chosen
// synchronous level, enforces foreign keys, and begins its write
// transactions IMMEDIATE (taking the write lock at once, so a transaction
// never fails midway because another one wrote first).
func DSN(path string, c Config) string {
	busy := c.BusyTimeout
	if busy <= 0 {
		busy = 10 * time.Second
	}
	q := url.Values{}
	if c.PageSize != 0 {
		q.Add("_pragma", "page_size("+strconv.Itoa(c.PageSize)+")")
	}
	q.Add("_pragma", "busy_timeout("+strconv.FormatInt(busy.Milliseconds(), 10)+")")
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "synchronous("+c.Synchronous+")")
	q.Add("_pragma", "foreign_keys(1)")
	q.Set("_txlock", "immediate")
	return "file:" + (&url.URL{Path: path}).EscapedPath() + "?" + q.Encode()
}

// setUp checks the connection's settings and runs fn.
func setUp(ctx context.Context, db *sql.DB, fn func(ctx context.Context, db *sql.DB) error) error {
	var mode string
	if err := db.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode); err != nil {
		return err
	}
	if mode != "wal" {
		return fmt.Errorf("journal mode %q, want wal (does the file system support shared memory?)", mode)
	}
	if fn == nil {
		return nil
	}
	return fn(ctx, db)
}

// Newer says how [Migrate] refuses a database at a version above the last
// migration it knows: the error wraps Err and ends with Remedy (what to
// do besides running the rein that wrote it).
type Newer struct {
	Err    error
	Remedy string
}

// Migrate brings the schema of db up to the last of ms in one transaction
// (db's transactions begin IMMEDIATE, so one process migrates at a time),
// recording each step in schema_version, and returns the version the
// database is at. A database at a version above the last of ms is refused
// with an error wrapping newer.Err.
func Migrate(ctx context.Context, db *sql.DB, ms []migration.Migration, now time.Time, newer Newer) (int, error) {
	tx, err := db.BeginTx(ctx, nil)
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
			"run the rein that wrote it (or a newer one), or %s", newer.Err, current, latest, newer.Remedy)
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
