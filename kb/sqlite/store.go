package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	_ "modernc.org/sqlite" // the "sqlite" database/sql driver

	"github.com/reinhq/rein/internal/migration"
	"github.com/reinhq/rein/kb"
)

// Options configures [Open]; the zero value is the defaults.
type Options struct {
	// Durable makes every write fsynced before it returns
	// (synchronous=FULL). The default, synchronous=NORMAL in WAL mode,
	// survives a crash of the process but may lose the last writes on a
	// power cut (the database stays consistent); the index is derived
	// from files a re-index rebuilds, so speed wins by default.
	Durable bool
	// BusyTimeout bounds how long a write waits for another process
	// writing the same database; 0 means 10 seconds.
	BusyTimeout time.Duration
	// MaxConns caps the connections to the database (one writes at a time,
	// the others read); 0 means 4, and fewer than 2 is raised to 2.
	MaxConns int
}

// Store is a kb.Backend and a kb.Batcher in one SQLite database; see the
// package documentation. It is safe for concurrent use.
type Store struct {
	db   *sql.DB
	path string
	// writer is a token: the write transaction in progress holds it, so
	// the process has one writer at a time, as SQLite wants.
	writer chan struct{}
	// vmu guards vectors: Vector reads under the read lock, loads and
	// writes' updates take the write lock (a write holds it across its
	// commit, so a query never sees the database and the cache at
	// different generations because of this process).
	vmu     sync.RWMutex
	vectors *vectorCache
	dfState
}

var (
	_ kb.Backend = (*Store)(nil)
	_ kb.Batcher = (*Store)(nil)
)

// Open opens the knowledge base at path, creating it (mode 0600, in a
// directory created with mode 0700 when missing) and bringing its schema
// up to date. A database written by a newer rein is refused with
// [ErrNewerSchema].
func Open(path string, opts Options) (*Store, error) {
	ctx := context.Background()
	if path == "" {
		return nil, errors.New("kb/sqlite: open: empty path")
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("kb/sqlite: open %s: %w", path, err)
	}
	if err := createFile(abs); err != nil {
		return nil, fmt.Errorf("kb/sqlite: open %s: %w", abs, err)
	}
	db, err := sql.Open("sqlite", dsn(abs, opts))
	if err != nil {
		return nil, fmt.Errorf("kb/sqlite: open %s: %w", abs, err)
	}
	conns := opts.MaxConns
	if conns == 0 {
		conns = 4
	}
	conns = max(conns, 2)
	db.SetMaxOpenConns(conns)
	db.SetMaxIdleConns(conns)
	s := &Store{db: db, path: abs, writer: make(chan struct{}, 1)}
	if err := s.setUp(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("kb/sqlite: open %s: %w", abs, err)
	}
	return s, nil
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

// dsn is the driver's name for the database at path: every connection
// waits for other processes' locks, runs in WAL mode, enforces foreign
// keys, and begins its write transactions IMMEDIATE.
func dsn(path string, opts Options) string {
	busy := opts.BusyTimeout
	if busy <= 0 {
		busy = 10 * time.Second
	}
	sync := "NORMAL"
	if opts.Durable {
		sync = "FULL"
	}
	q := url.Values{}
	q.Add("_pragma", "page_size(8192)")
	q.Add("_pragma", "busy_timeout("+strconv.FormatInt(busy.Milliseconds(), 10)+")")
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "synchronous("+sync+")")
	q.Add("_pragma", "foreign_keys(1)")
	q.Set("_txlock", "immediate")
	return "file:" + (&url.URL{Path: path}).EscapedPath() + "?" + q.Encode()
}

// setUp checks the connection's settings and migrates the schema.
func (s *Store) setUp(ctx context.Context) error {
	var mode string
	if err := s.db.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode); err != nil {
		return err
	}
	if mode != "wal" {
		return fmt.Errorf("journal mode %q, want wal (does the file system support shared memory?)", mode)
	}
	ms, err := migration.Load(migrationFiles, "migrations")
	if err != nil {
		return err
	}
	_, err = migrate(ctx, s.db, ms, time.Now())
	return err
}

// Path returns the absolute path of the database file.
func (s *Store) Path() string { return s.path }

// Close closes the database; the store cannot be used afterwards.
func (s *Store) Close() error {
	if err := s.db.Close(); err != nil {
		return fmt.Errorf("kb/sqlite: close %s: %w", s.path, err)
	}
	return nil
}

// write runs fn in a write transaction, one at a time in the process, and
// commits it when fn returns nil; after returns, fn's after (when not nil)
// runs once the commit succeeded, still holding the cache's lock.
func (s *Store) write(ctx context.Context, fn func(tx *sql.Tx) (after func(), err error)) error {
	select {
	case s.writer <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	defer func() { <-s.writer }()
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	after, err := fn(tx)
	if err != nil {
		tx.Rollback()
		return err
	}
	s.vmu.Lock()
	defer s.vmu.Unlock()
	if err := tx.Commit(); err != nil {
		return err
	}
	if after != nil {
		after()
	}
	return nil
}
