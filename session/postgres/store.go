package postgres

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/reinhq/rein/internal/pgdb"
	"github.com/reinhq/rein/session"
)

// Options configures [Open]; the zero value is the defaults.
type Options struct {
	// MaxConns caps the connections to the database in use at once (an
	// iteration of Entries holds one until it ends); 0 means the number of
	// CPUs, at least 4, and fewer than 2 is raised to 2.
	MaxConns int
	// ConnectTimeout bounds each attempt to connect, when the URL sets no
	// connect_timeout; 0 means 10 seconds. Open fails after it rather than
	// hang on an unreachable host.
	ConnectTimeout time.Duration
	// Now is the clock stamping new records; nil means time.Now.
	Now func() time.Time
}

// Store is a session.Store and a session.Ledger in one PostgreSQL
// database; see the package documentation. It is safe for concurrent use.
type Store struct {
	pool   *pgxpool.Pool
	now    func() time.Time
	target string // host:port, for messages
}

var (
	_ session.Store  = (*Store)(nil)
	_ session.Ledger = (*Store)(nil)
)

// Open connects to the database at url (a postgres:// URL or a key=value
// connection string, as libpq takes; a search_path parameter chooses the
// schema) and brings its schema up to date. It fails at once, with an
// error naming the host and port and what to check, when the server is
// unreachable, refuses the credentials or lacks the database; the
// password never appears in an error. A database written by a newer rein
// is refused with [ErrNewerSchema]. ctx bounds the connection and the
// migration, not the store's life.
func Open(ctx context.Context, url string, opts Options) (*Store, error) {
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	p, target, err := pgdb.Open(ctx, url, pgdb.Config{
		Name:           "postgres",
		MaxConns:       opts.MaxConns,
		ConnectTimeout: opts.ConnectTimeout,
		SetUp: func(ctx context.Context, c *pgx.Conn) error {
			ms, err := loadMigrations(migrationFiles, "migrations")
			if err == nil {
				_, err = migrate(ctx, c, ms, now())
			}
			return err
		},
	})
	if err != nil {
		return nil, err
	}
	return &Store{pool: p, now: now, target: target}, nil
}

// Close closes the connections; the store cannot be used afterwards.
// Connections in use (an iteration of Entries not finished) are closed
// as they are given back.
func (s *Store) Close() error {
	s.pool.Close()
	return nil
}

// Target returns the host:port the store connects to.
func (s *Store) Target() string { return s.target }

// querier is what reads and writes need of a *pgx.Conn or a pgx.Tx.
type querier interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// read runs fn on a connection of the pool.
func (s *Store) read(ctx context.Context, fn func(c *pgx.Conn) error) error {
	c, err := s.pool.Acquire(ctx)
	if err != nil {
		return s.unreachable(err)
	}
	defer c.Release()
	return s.unreachable(badText(fn(c.Conn())))
}

// write runs fn in a transaction (READ COMMITTED) and commits it when fn
// returns nil; the commit is durable when write returns.
func (s *Store) write(ctx context.Context, fn func(tx pgx.Tx) error) error {
	c, err := s.pool.Acquire(ctx)
	if err != nil {
		return s.unreachable(err)
	}
	defer c.Release()
	tx, err := c.Begin(ctx)
	if err != nil {
		return s.unreachable(err)
	}
	if err := fn(tx); err != nil {
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		_ = tx.Rollback(rctx) // a connection left in a transaction is destroyed on release
		return s.unreachable(badText(err))
	}
	return s.unreachable(tx.Commit(ctx))
}

// Ping checks that the database answers (readiness).
func (s *Store) Ping(ctx context.Context) error {
	return s.read(ctx, func(c *pgx.Conn) error { return c.Ping(ctx) })
}

// unreachable wraps an error of reaching the database — refused or
// broken connections, a server shutting down, the pool's dial timing
// out — with session.ErrUnavailable, so callers answer "try again later"
// (the server's 503) rather than "failed". Other errors pass unchanged.
func (s *Store) unreachable(err error) error {
	if err == nil || errors.Is(err, context.Canceled) {
		return err
	}
	var (
		connErr *pgconn.ConnectError
		netErr  net.Error
		pgErr   *pgconn.PgError
	)
	down := errors.As(err, &connErr) || errors.As(err, &netErr) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) ||
		pgconn.SafeToRetry(err) ||
		errors.As(err, &pgErr) && (strings.HasPrefix(pgErr.Code, "08") || pgErr.Code == "57P01" || pgErr.Code == "57P02" || pgErr.Code == "57P03")
	if !down {
		return err
	}
	return fmt.Errorf("%w: postgres at %s: %v", session.ErrUnavailable, s.target, err)
}

// badText makes the server's refusal of a string a text column cannot
// hold (a NUL character, bytes that are not UTF-8) an error wrapping
// session.ErrInvalid. Strings inside JSON never meet it: encoding/json
// escapes the one and replaces the other.
func badText(err error) error {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && (pgErr.Code == "22021" || pgErr.Code == "22P05") {
		return fmt.Errorf("%w: %s (PostgreSQL text holds no NUL character and only UTF-8)", session.ErrInvalid, pgErr.Message)
	}
	return err
}

// isUnique reports whether err is a unique violation of the constraint or
// index named (any, when name is empty).
func isUnique(err error, name string) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == "23505" && (name == "" || pgErr.ConstraintName == name)
}

// micro truncates t to the microsecond, as timestamptz keeps it, and drops
// its monotonic reading; times the store keeps in columns go through it,
// so what is read back equals what was written.
func micro(t time.Time) time.Time { return t.Truncate(time.Microsecond) }

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

// nullable stores empty JSON as NULL.
func nullable(data []byte) any {
	if len(data) == 0 {
		return nil
	}
	return data
}

// limitArg is a LIMIT's argument: NULL (no limit) for 0 or less.
func limitArg(limit int) any {
	if limit <= 0 {
		return nil
	}
	return limit
}

// conds builds a WHERE clause: each condition holds one "?", numbered as
// the next argument.
type conds struct {
	where []string
	args  []any
}

func (c *conds) add(cond string, arg any) {
	c.args = append(c.args, arg)
	c.where = append(c.where, strings.Replace(cond, "?", "$"+strconv.Itoa(len(c.args)), 1))
}

// arg adds arg and returns its placeholder.
func (c *conds) arg(arg any) string {
	c.args = append(c.args, arg)
	return "$" + strconv.Itoa(len(c.args))
}

func (c *conds) clause() string {
	if len(c.where) == 0 {
		return ""
	}
	return " WHERE " + strings.Join(c.where, " AND ")
}
