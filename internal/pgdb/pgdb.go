// Package pgdb opens the PostgreSQL connection pools of rein's stores
// (session/postgres, kb/postgres): it parses the URL, connects, and sets
// up the schema on the first connection, and explains a failure — naming
// the host and port and what to check — without ever quoting the
// password.
package pgdb

import (
	"context"
	"errors"
	"fmt"
	"net"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Config configures [Open].
type Config struct {
	// Name begins the messages of Open's errors ("postgres",
	// "kb/postgres").
	Name string
	// MaxConns caps the connections in use at once; 0 means the number of
	// CPUs, at least 4, and fewer than 2 is raised to 2.
	MaxConns int
	// ConnectTimeout bounds each attempt to connect, when the URL sets no
	// connect_timeout; 0 means 10 seconds.
	ConnectTimeout time.Duration
	// QuietDeadline reports a first connection that fails on an expired
	// deadline as a cancelled one is, without a hint; otherwise it is
	// explained as an unreachable server.
	QuietDeadline bool
	// SetUp, when not nil, brings the schema up to date on the first
	// connection; its error is reported with what to check.
	SetUp func(ctx context.Context, c *pgx.Conn) error
}

// Open connects to the database at url (a postgres:// URL or key=value
// settings, as libpq takes) and runs c.SetUp on a first connection; it
// returns the pool and the server's host:port. It fails at once when the
// server is unreachable, refuses the credentials or lacks the database.
// Its errors begin "<c.Name>: open" and never quote the password; they
// unwrap to their cause. ctx bounds the connection and the set-up, not
// the pool's life.
func Open(ctx context.Context, url string, c Config) (*pgxpool.Pool, string, error) {
	pcfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		// The parser's message may quote the URL, password included.
		return nil, "", &openError{msg: c.Name + ": open: the connection URL does not parse; " +
			"want postgres://user:password@host:port/database?sslmode=disable (or key=value settings)"}
	}
	cfg := pcfg.ConnConfig
	if cfg.ConnectTimeout == 0 {
		cfg.ConnectTimeout = c.ConnectTimeout
		if cfg.ConnectTimeout <= 0 {
			cfg.ConnectTimeout = 10 * time.Second
		}
	}
	conns := c.MaxConns
	if conns == 0 {
		conns = max(runtime.NumCPU(), 4)
	}
	pcfg.MaxConns = int32(max(conns, 2))
	where := net.JoinHostPort(cfg.Host, strconv.Itoa(int(cfg.Port)))
	p, err := pgxpool.NewWithConfig(context.WithoutCancel(ctx), pcfg)
	if err != nil {
		return nil, "", c.connectError(cfg, where, err)
	}
	conn, err := p.Acquire(ctx)
	if err != nil {
		p.Close()
		return nil, "", c.connectError(cfg, where, err)
	}
	if c.SetUp != nil {
		err = c.SetUp(ctx, conn.Conn())
	}
	conn.Release()
	if err != nil {
		p.Close()
		return nil, "", &openError{msg: scrub(fmt.Sprintf("%s: open %s: %v%s", c.Name, where, err, schemaHint(err)), cfg.Password), err: err}
	}
	return p, where, nil
}

// schemaHint says what to check when the schema cannot be set up.
func schemaHint(err error) string {
	var pgErr *pgconn.PgError
	switch {
	case !errors.As(err, &pgErr):
		return ""
	case pgErr.Code == "3F000":
		return "; the URL's search_path names no schema that exists: create it (CREATE SCHEMA …) or fix the URL"
	case pgErr.Code == "42501":
		return "; the user may not create tables there: grant it CREATE on the schema, or run rein once as its owner"
	}
	return ""
}

// openError is an error of Open: its message is safe to print (no
// password), while Unwrap keeps the cause for errors.Is and errors.As.
type openError struct {
	msg string
	err error
}

func (e *openError) Error() string { return e.msg }
func (e *openError) Unwrap() error { return e.err }

// connectError explains a failed first connection: what went wrong, where,
// and what to check.
func (c Config) connectError(cfg *pgx.ConnConfig, where string, err error) error {
	var hint string
	var pgErr *pgconn.PgError
	switch {
	case errors.Is(err, context.Canceled) || c.QuietDeadline && errors.Is(err, context.DeadlineExceeded):
		return &openError{msg: fmt.Sprintf("%s: open %s: %v", c.Name, where, err), err: err}
	case errors.As(err, &pgErr) && (pgErr.Code == "28P01" || pgErr.Code == "28000"):
		hint = fmt.Sprintf("the server refused user %q: check the user and password in the URL (or PGPASSWORD, ~/.pgpass) "+
			"and that pg_hba.conf lets this user in from here", cfg.User)
	case errors.As(err, &pgErr) && pgErr.Code == "3D000":
		hint = fmt.Sprintf("database %q does not exist: create it (createdb %s) or fix the URL", cfg.Database, cfg.Database)
	case errors.As(err, &pgErr):
		hint = "the server refused the connection: check the URL's user, database and sslmode"
	default:
		hint = "cannot reach the server: check that PostgreSQL runs there and accepts TCP connections " +
			"(listen_addresses, firewall), and the host, port and sslmode of the URL"
	}
	msg := fmt.Sprintf("%s: open %s (user %s, database %s): %s (%v)", c.Name, where, cfg.User, cfg.Database, hint, err)
	return &openError{msg: scrub(msg, cfg.Password), err: err}
}

// scrub blanks out password in msg, should a message ever quote it.
func scrub(msg, password string) string {
	if password == "" {
		return msg
	}
	return strings.ReplaceAll(msg, password, "xxxxx")
}
