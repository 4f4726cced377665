package sqlite

import (
	"context"
	"database/sql"
	"sync"
)

// stmts is the store's statement cache for reads: each query text is
// prepared once on the database and kept until Close, so SQLite does not
// parse it again at every call (issue 30: parsing was ~30 % of a write's
// CPU). A statement of the database is prepared once per connection by
// database/sql and reused there. Writes have their own on the writer's
// connection (see writeConn). SQLite re-prepares a statement by itself
// when the schema changed.
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
