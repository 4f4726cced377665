package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/reinhq/rein/internal/sqlitedb"
	"github.com/reinhq/rein/session"
)

// Sync says when a write reaches the disk.
type Sync int

const (
	// SyncFull, the default, is SQLite's synchronous=FULL: every write is
	// fsynced before the method returns, so an acknowledged write survives
	// a crash of the process and a power loss alike.
	SyncFull Sync = iota
	// SyncNormal is synchronous=NORMAL: in WAL mode the log is fsynced only
	// at checkpoints. An acknowledged write survives a crash of the process,
	// but the last writes before a power loss or an operating system crash
	// may be lost (the database stays consistent: they are rolled back
	// whole). Appends are several times faster; choose it only where losing
	// the last seconds of work on a power cut is acceptable.
	SyncNormal
)

func (s Sync) pragma() string {
	if s == SyncNormal {
		return "NORMAL"
	}
	return "FULL"
}

// Options configures [Open]; the zero value is the defaults.
type Options struct {
	// Sync chooses the durability of writes: [SyncFull] (the default) or
	// [SyncNormal].
	Sync Sync
	// BusyTimeout bounds how long a write waits for another process
	// writing the same database; 0 means 10 seconds. Writes of this
	// process never wait on each other through it: the store serialises
	// them.
	BusyTimeout time.Duration
	// MaxConns caps the connections to the database (one writes at a time,
	// the others read; an iteration of Entries holds one until it ends);
	// 0 means 4, and fewer than 2 is raised to 2.
	MaxConns int
	// Now is the clock stamping new records; nil means time.Now.
	Now func() time.Time
}

// Store is a session.Store and a session.Ledger in one SQLite database;
// see the package documentation. It is safe for concurrent use.
type Store struct {
	db   *sql.DB
	path string
	now  func() time.Time
	// writer is the process's one writer, as SQLite wants: it commits
	// the writes of concurrent callers together (see committer).
	writer *committer
	// stmts keeps the statements of fixed text prepared (see stmts).
	stmts *stmts
}

var (
	_ session.Store       = (*Store)(nil)
	_ session.Ledger      = (*Store)(nil)
	_ session.EventWriter = (*Store)(nil)
	_ session.LogWriter   = (*Store)(nil)
)

// Open opens the database at path, creating it (mode 0600, in a directory
// created with mode 0700 when missing) and bringing its schema up to date.
// A database written by a newer rein is refused with [ErrNewerSchema].
func Open(path string, opts Options) (*Store, error) {
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	c := config(opts)
	c.SetUp = func(ctx context.Context, db *sql.DB) error {
		ms, err := loadMigrations(migrationFiles, "migrations")
		if err != nil {
			return err
		}
		_, err = migrate(ctx, db, ms, now())
		return err
	}
	db, abs, err := sqlitedb.Open(context.Background(), path, c)
	if err != nil {
		return nil, err
	}
	writer, err := newCommitter(context.Background(), db)
	if err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("sqlite: open %s: %w", abs, err)
	}
	return &Store{db: db, path: abs, now: now, writer: writer, stmts: &stmts{db: db}}, nil
}

// config is the connection settings of opts (see package sqlitedb).
func config(opts Options) sqlitedb.Config {
	return sqlitedb.Config{Name: "sqlite", Synchronous: opts.Sync.pragma(), BusyTimeout: opts.BusyTimeout, MaxConns: opts.MaxConns}
}

// dsn is the driver's name for the database at path (see sqlitedb.DSN).
func dsn(path string, opts Options) string { return sqlitedb.DSN(path, config(opts)) }

// Ping checks that the database file answers (readiness).
func (s *Store) Ping(ctx context.Context) error { return s.db.PingContext(ctx) }

// Path returns the absolute path of the database file.
func (s *Store) Path() string { return s.path }

// Close commits the writes waiting for their turn and closes the
// database; the store cannot be used afterwards (a write fails).
func (s *Store) Close() error {
	s.writer.close()
	s.stmts.close()
	if err := s.db.Close(); err != nil {
		return fmt.Errorf("sqlite: close %s: %w", s.path, err)
	}
	return nil
}

// write runs fn in a write transaction and returns once that is
// committed, durable per Options.Sync. Writes of concurrent callers share
// a transaction (see committer), each in a savepoint: fn's error undoes
// fn's writes only. fn must use the ctx it is given, which the caller's
// cancellation does not interrupt.
func (s *Store) write(ctx context.Context, fn func(ctx context.Context, tx *txn) error) error {
	return s.writer.write(ctx, fn)
}

// read is the store's reads outside a write, through its statement
// cache; queries whose text varies with their filters go to s.db.
func (s *Store) read() reader { return reader{s.stmts} }

// querier is what reads need of a *sql.DB or a *sql.Tx.
type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// nullable stores empty JSON as NULL.
func nullable(data []byte) any {
	if len(data) == 0 {
		return nil
	}
	return string(data)
}

// fromNanos is the inverse of time.Time.UnixNano, in UTC.
func fromNanos(n int64) time.Time { return time.Unix(0, n).UTC() }

// opErr wraps err with the operation on a session, as stores report errors.
func opErr(id, op string, err error) error {
	if err == nil {
		return nil
	}
	if id == "" {
		return fmt.Errorf("session: %s: %w", op, err)
	}
	return fmt.Errorf("session %s: %s: %w", id, op, err)
}
