package postgres

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/reinhq/rein/kb"
)

// Options configures [Open]; the zero value is the defaults.
type Options struct {
	// Namespace names the knowledge base the Store serves (a workspace,
	// say) among those sharing the database; "" is a namespace too.
	Namespace string
	// MaxConns caps the connections in use at once; 0 means the number of
	// CPUs, at least 4, and fewer than 2 is raised to 2.
	MaxConns int
	// ConnectTimeout bounds each attempt to connect, when the URL sets no
	// connect_timeout; 0 means 10 seconds.
	ConnectTimeout time.Duration
	// Now stamps the migrations applied; nil means time.Now.
	Now func() time.Time
}

// maxNamespace bounds Options.Namespace, in bytes.
const maxNamespace = 256

// Store is a kb.Backend over one namespace of a PostgreSQL database; see
// the package documentation. It is safe for concurrent use.
type Store struct {
	pool   *pgxpool.Pool
	ns     string
	target string // host:port, for messages
	shared bool   // the pool is a DB's: Close leaves it open

	vmu     sync.Mutex // guards vectors, held while they load
	vectors *vectorCache
}

var (
	_ kb.Backend = (*Store)(nil)
	_ kb.Batcher = (*Store)(nil)
)

// Open connects to the database at url (a postgres:// URL or key=value
// settings, as libpq takes; a search_path parameter chooses the schema)
// and brings the knowledge-base schema up to date. It fails at once, with
// an error naming the host and port and what to check, when the server is
// unreachable, refuses the credentials or lacks the database; the password
// never appears in an error. A database written by a newer rein is refused
// with [ErrNewerSchema]. ctx bounds the connection and the migration, not
// the store's life.
func Open(ctx context.Context, url string, opts Options) (*Store, error) {
	if err := checkNamespace(opts.Namespace); err != nil {
		return nil, err
	}
	d, err := OpenDB(ctx, url, opts)
	if err != nil {
		return nil, err
	}
	return &Store{pool: d.pool, ns: opts.Namespace, target: d.target}, nil
}

// Close closes the connections (those of a [DB.Store] stay open, the
// DB's); the store cannot be used afterwards.
func (s *Store) Close() error {
	if !s.shared {
		s.pool.Close()
	}
	return nil
}

// Namespace returns the namespace the store serves.
func (s *Store) Namespace() string { return s.ns }

// write runs fn in a transaction (READ COMMITTED) and commits it when fn
// returns nil; a failure rolls everything back.
func (s *Store) write(ctx context.Context, fn func(tx pgx.Tx) error) error {
	return pgx.BeginTxFunc(ctx, s.pool, pgx.TxOptions{}, func(tx pgx.Tx) error { return badText(fn(tx)) })
}

// snapshot runs fn in a read-only transaction that sees one snapshot of
// the database (REPEATABLE READ), so what several queries read agrees.
func (s *Store) snapshot(ctx context.Context, fn func(tx pgx.Tx) error) error {
	opts := pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}
	return pgx.BeginTxFunc(ctx, s.pool, opts, fn)
}

// generation reads the namespace's row of kb_namespaces: zero values when
// nothing was ever written to it.
func (s *Store) generation(ctx context.Context, tx pgx.Tx) (gen, chunks, terms int64, err error) {
	err = tx.QueryRow(ctx, `SELECT generation, chunks, terms FROM kb_namespaces WHERE namespace = $1`, s.ns).
		Scan(&gen, &chunks, &terms)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, 0, 0, nil
	}
	return gen, chunks, terms, err
}

// errBadText: a text PostgreSQL cannot hold.
var errBadText = errors.New("PostgreSQL text holds no NUL character and only UTF-8")

// badText makes the server's refusal of a string a text column cannot
// hold (a NUL character, bytes that are not UTF-8) say so.
func badText(err error) error {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && (pgErr.Code == "22021" || pgErr.Code == "22P05") {
		return fmt.Errorf("%w: %s", errBadText, pgErr.Message)
	}
	return err
}
