package sqlite

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
)

// writeConn is the connection the store writes on: one of the pool's,
// taken at Open and kept, with its statements prepared once and reused
// for every write (issue 30). Writing through database/sql's Tx cost
// every transaction a goroutine and a context, and every statement a
// Stmt bound to the transaction, a map entry of the pool's dependencies
// and, for a query, one more goroutine watching the transaction's
// context; on a Conn of its own the writer runs BEGIN IMMEDIATE, its
// statements and COMMIT as plain prepared statements. Only the leader of
// the committer uses it, one commit at a time.
type writeConn struct {
	db    *sql.DB
	conn  *sql.Conn            // nil until taken, and after it broke
	byTxt map[string]*sql.Stmt // statements prepared on conn
}

// open takes a connection of the pool unless one is held.
func (w *writeConn) open(ctx context.Context) error {
	if w.conn != nil {
		return nil
	}
	conn, err := w.db.Conn(ctx)
	if err != nil {
		return err
	}
	w.conn, w.byTxt = conn, map[string]*sql.Stmt{}
	return nil
}

// begin starts a write transaction. IMMEDIATE takes SQLite's write lock
// now: a write that read first and then wrote would otherwise fail with
// SQLITE_BUSY, not wait, when another process writes the same file. A
// held connection found broken is replaced once: nothing was written.
func (w *writeConn) begin(ctx context.Context) error {
	for retried := false; ; retried = true {
		if err := w.open(ctx); err != nil {
			return err
		}
		err := w.check(w.exec(ctx, `BEGIN IMMEDIATE`))
		if err == nil || w.conn != nil || retried {
			return err
		}
	}
}

// stmt returns the statement of query prepared on the connection,
// preparing it the first time. SQLite prepares a statement again by
// itself when the schema changed.
func (w *writeConn) stmt(ctx context.Context, query string) (*sql.Stmt, error) {
	if st, ok := w.byTxt[query]; ok {
		return st, nil
	}
	if w.conn == nil {
		return nil, errNoConn
	}
	st, err := w.conn.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	w.byTxt[query] = st
	return st, nil
}

// errNoConn answers a statement of a transaction whose connection was
// dropped (it broke).
var errNoConn = errors.New("sqlite: the writing connection was lost")

// exec runs query on the connection, outside any write's own statements
// (BEGIN, COMMIT, savepoints).
func (w *writeConn) exec(ctx context.Context, query string) error {
	st, err := w.stmt(ctx, query)
	if err != nil {
		return err
	}
	_, err = st.ExecContext(ctx)
	return err
}

// check drops the connection when err says it broke, so the next commit
// takes another; it returns err.
func (w *writeConn) check(err error) error {
	if errors.Is(err, driver.ErrBadConn) || errors.Is(err, sql.ErrConnDone) {
		w.close()
	}
	return err
}

// close closes the statements and gives the connection back to the pool.
func (w *writeConn) close() {
	if w.conn == nil {
		return
	}
	for _, st := range w.byTxt {
		_ = st.Close()
	}
	_ = w.conn.Close()
	w.conn, w.byTxt = nil, nil
}

// txn is a write transaction on the writer's connection; its statements
// are the connection's prepared ones.
type txn struct{ w *writeConn }

// ExecContext runs query in the transaction.
func (t *txn) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	st, err := t.w.stmt(ctx, query)
	if err != nil {
		return nil, err
	}
	return st.ExecContext(ctx, args...)
}

// QueryContext runs query in the transaction.
func (t *txn) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	st, err := t.w.stmt(ctx, query)
	if err != nil {
		return nil, err
	}
	return st.QueryContext(ctx, args...)
}

// QueryRowContext runs query in the transaction; an error to prepare it
// comes out of the row's Scan.
func (t *txn) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	st, err := t.w.stmt(ctx, query)
	if err != nil { // fails alike on the connection, and says why from Scan
		return t.w.conn.QueryRowContext(ctx, query, args...)
	}
	return st.QueryRowContext(ctx, args...)
}
