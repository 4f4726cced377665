package sqlite

import (
	"context"
	"database/sql"
	"sync"
)

// stmts is the store's statement cache: each query text is prepared once
// on the database and kept until Close, so SQLite does not parse it again
// at every call (issue 30: parsing was ~30 % of a write's CPU). A
// statement of the database is prepared once per connection by
// database/sql and reused there, inside a transaction too (Tx.StmtContext
// finds the connection's own); a statement prepared on a Tx or a Conn
// would be prepared again in every transaction. SQLite re-prepares a
// statement by itself when the schema changed.
type stmts struct {
	db *sql.DB

	mu     sync.Mutex
	byText map[string]*sql.Stmt
	closed bool
}

// get returns the statement of query, preparing it the first time. A
// query that fails to prepare is not kept: the error is the caller's.
func (c *stmts) get(ctx context.Context, query string) (*sql.Stmt, error) {
	c.mu.Lock()
	st, ok := c.byText[query]
	c.mu.Unlock()
	if ok {
		return st, nil
	}
	st, err := c.db.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if prev, ok := c.byText[query]; ok || c.closed { // another caller prepared it meanwhile, or Close ran
		_ = st.Close()
		if ok {
			return prev, nil
		}
		return nil, errClosed
	}
	if c.byText == nil {
		c.byText = map[string]*sql.Stmt{}
	}
	c.byText[query] = st
	return st, nil
}

// close closes every statement; get fails afterwards.
func (c *stmts) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, st := range c.byText {
		_ = st.Close()
	}
	c.byText, c.closed = nil, true
}

// txn is a write transaction whose statements come from the cache.
type txn struct {
	tx    *sql.Tx
	cache *stmts
}

// stmt returns the cached statement of query bound to the transaction;
// the transaction's end releases it (the prepared statement stays).
func (t *txn) stmt(ctx context.Context, query string) (*sql.Stmt, error) {
	st, err := t.cache.get(ctx, query)
	if err != nil {
		return nil, err
	}
	return t.tx.StmtContext(ctx, st), nil
}

// ExecContext runs query in the transaction.
func (t *txn) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	st, err := t.stmt(ctx, query)
	if err != nil {
		return nil, err
	}
	return st.ExecContext(ctx, args...)
}

// QueryContext runs query in the transaction.
func (t *txn) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	st, err := t.stmt(ctx, query)
	if err != nil {
		return nil, err
	}
	return st.QueryContext(ctx, args...)
}

// QueryRowContext runs query in the transaction; an error to prepare it
// comes out of the row's Scan.
func (t *txn) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	st, err := t.stmt(ctx, query)
	if err != nil {
		return t.tx.QueryRowContext(ctx, query, args...) // fails alike, and says why from Scan
	}
	return st.QueryRowContext(ctx, args...)
}

// PrepareContext returns the cached statement of query bound to the
// transaction; closing it keeps the prepared statement.
func (t *txn) PrepareContext(ctx context.Context, query string) (*sql.Stmt, error) {
	return t.stmt(ctx, query)
}

// reader runs reads outside a write transaction through the cache.
type reader struct{ cache *stmts }

// QueryContext runs query on a connection of the pool.
func (r reader) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	st, err := r.cache.get(ctx, query)
	if err != nil {
		return nil, err
	}
	return st.QueryContext(ctx, args...)
}

// QueryRowContext runs query on a connection of the pool; an error to
// prepare it comes out of the row's Scan.
func (r reader) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	st, err := r.cache.get(ctx, query)
	if err != nil {
		return r.cache.db.QueryRowContext(ctx, query, args...)
	}
	return st.QueryRowContext(ctx, args...)
}
