package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"sync"
	"time"

	"github.com/reinhq/rein/internal/migration"
	"github.com/reinhq/rein/internal/sqlitedb"
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
	// pool holds search scratch (accumulators).
	pool sync.Pool
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
	sync := "NORMAL"
	if opts.Durable {
		sync = "FULL"
	}
	db, abs, err := sqlitedb.Open(context.Background(), path, sqlitedb.Config{
		Name:        "kb/sqlite",
		Synchronous: sync,
		PageSize:    8192,
		BusyTimeout: opts.BusyTimeout,
		MaxConns:    opts.MaxConns,
		SetUp: func(ctx context.Context, db *sql.DB) error {
			ms, err := migration.Load(migrationFiles, "migrations")
			if err != nil {
				return err
			}
			if _, err = migrate(ctx, db, ms, time.Now()); err != nil {
				return err
			}
			return buildPostings(ctx, db)
		},
	})
	if err != nil {
		return nil, err
	}
	return &Store{db: db, path: abs, writer: make(chan struct{}, 1)}, nil
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
