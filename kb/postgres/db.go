package postgres

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/reinhq/rein/internal/pgdb"
)

// DB is a database holding many knowledge bases, one a namespace, over
// one pool of connections: a server keeps each workspace's knowledge base
// in it (SPEC KB-3, API-9) and opens a [Store] per namespace with
// [DB.Store], which costs no connection. It is safe for concurrent use.
type DB struct {
	pool   *pgxpool.Pool
	target string // host:port, for messages
}

// OpenDB connects to the database at url and brings the knowledge-base
// schema up to date, as [Open] does; opts.Namespace is not used (each
// [DB.Store] names its own).
func OpenDB(ctx context.Context, url string, opts Options) (*DB, error) {
	now := time.Now
	if opts.Now != nil {
		now = opts.Now
	}
	p, where, err := pgdb.Open(ctx, url, pgdb.Config{
		Name:           "kb/postgres",
		MaxConns:       opts.MaxConns,
		ConnectTimeout: opts.ConnectTimeout,
		QuietDeadline:  true,
		SetUp:          func(ctx context.Context, c *pgx.Conn) error { return migrate(ctx, c, now()) },
	})
	if err != nil {
		return nil, err
	}
	return &DB{pool: p, target: where}, nil
}

// Store returns the knowledge base of namespace, over the database's
// connections: closing it leaves the database open. A namespace that is
// not UTF-8, holds a NUL character or is longer than 256 bytes is
// refused.
func (d *DB) Store(namespace string) (*Store, error) {
	if err := checkNamespace(namespace); err != nil {
		return nil, err
	}
	return &Store{pool: d.pool, ns: namespace, target: d.target, shared: true}, nil
}

// Target is the database server's host:port (never the password).
func (d *DB) Target() string { return d.target }

// Ping checks that the database answers.
func (d *DB) Ping(ctx context.Context) error { return d.pool.Ping(ctx) }

// Close closes the connections; its stores cannot be used afterwards.
func (d *DB) Close() error {
	d.pool.Close()
	return nil
}

// checkNamespace refuses a namespace PostgreSQL's text cannot hold or
// longer than maxNamespace.
func checkNamespace(ns string) error {
	if len(ns) > maxNamespace || strings.ContainsRune(ns, 0) || !utf8.ValidString(ns) {
		return fmt.Errorf("kb/postgres: open: namespace %q: want UTF-8 text of at most %d bytes, without NUL characters",
			ns, maxNamespace)
	}
	return nil
}

// Exists reports whether anything was ever written to the store's
// namespace (a document stored, even if removed since): a front end
// offers a search of a knowledge base only when one was made.
func (s *Store) Exists(ctx context.Context) (bool, error) {
	var one int
	err := s.pool.QueryRow(ctx, `SELECT 1 FROM kb_namespaces WHERE namespace = $1`, s.ns).Scan(&one)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("kb: namespace %q: %w", s.ns, err)
	}
	return true, nil
}
