// Package postgres is the production store (SPEC API-5: `rein serve --mode
// api` and `rein worker` keep their truth in PostgreSQL): a session.Store
// and a session.Ledger over github.com/jackc/pgx/v5, the twin of
// session/sqlite with the same tables and the same behaviour.
//
// One database (one schema of it: a search_path parameter in the URL picks
// it) holds the sessions (metadata as JSON, with the columns listings
// filter and sort on), their logs (one row an entry, the entry's JSON
// exactly as the JSONL store writes a line), the highest seq each session
// ever had (so Rewrite never reuses one), and the ledger: workspaces, runs,
// the durable events SSE clients replay, and the audit trail. JSON columns
// are json rather than jsonb, which keeps the text as written and takes
// the \u0000 escape that jsonb refuses. Times in columns are timestamptz,
// which keeps microseconds: the store truncates the times it keeps in
// columns to the microsecond, so what is read back is what was written
// (the JSON of entries and runs keeps nanoseconds).
//
// The schema is a list of embedded SQL migrations (migrations/), the
// pending ones applied at Open in one transaction that holds an advisory
// lock, so processes starting at once apply each migration once, and
// recorded in rein_schema_migrations; a database written by a newer rein,
// with migrations this one does not know, is refused ([ErrNewerSchema]).
//
// Durability: every write is one transaction, committed before the method
// returns; with the server's default synchronous_commit=on it survives a
// crash of the process, of the server or of the machine. A batch of
// entries, a fork, a rewrite, a batch of events or audit records is stored
// whole or not at all.
//
// Concurrency: any number of processes may share the database. Appends to
// one session lock its seq counter's row, so they take turns and get
// consecutive seqs without a gap; appends to different sessions run in
// parallel. Writers of a session's events take turns on an advisory lock,
// so the check that event ids increase holds across processes. A unique
// partial index allows one running run per session: the database itself
// refuses a second, whoever writes it, and CreateRun and UpdateRun report
// it as session.ErrConflict. Run seqs and audit ids come from identity
// columns: they increase in the order rows are inserted, but concurrent
// transactions may commit out of that order, so a reader paging at the
// tip (AfterSeq, AfterID) can, rarely, see a lower number appear after a
// higher one.
//
// Fencing (SPEC API-5; see Fencing in the documentation of package
// session): a write made with a fencing token (session.WithFence) raises
// the session's fence in session_fences, with an upsert that locks the
// fence's row, in the write's own transaction and in the round trip of
// its first statement, and is rolled back with session.ErrFenced when its
// token is below the fence. Fenced writes of a session thus take turns,
// and none with a lower token lands after one with a higher token. The
// fence row is the first lock a fenced write takes (UpdateRun excepted,
// which locks its run first), so fenced writers do not deadlock. A write
// without a token costs nothing more; a fenced AppendAudit costs one round
// trip more (it commits explicitly); Delete drops the session's fence.
//
// Connections: a pgxpool of Options.MaxConns connections; one left in a
// transaction is destroyed rather than reused, and one idle for more than
// a second is pinged before reuse, so one the server dropped
// meanwhile (a restart, a proxy's idle timeout) is replaced rather than
// failing the caller's statement. Entries streams a session's log row by
// row, holding a connection until the iteration ends. Statements are
// prepared once per connection; behind a pooler in transaction mode
// (PgBouncer), add default_query_exec_mode=exec to the URL.
//
// Damage: a row whose entry does not match its seq or kind (the json
// column keeps out text that is not JSON) is skipped and reported as a
// heal entry with Seq 0 (its Damage.Line is the row's seq), as the
// session.Store contract asks, never as a fatal error.
package postgres
