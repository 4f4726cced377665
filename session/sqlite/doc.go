// Package sqlite is the embedded server store (SPEC API-5: `rein serve`
// keeps everything in one SQLite file under its data directory): a
// session.Store and a session.Ledger over modernc.org/sqlite, pure Go.
//
// One database file holds the sessions (metadata as JSON, with the columns
// listings filter and sort on), their logs (one row an entry, the entry's
// JSON exactly as the JSONL store writes a line), the highest seq each
// session ever had (so Rewrite never reuses one), and the ledger:
// workspaces, runs, the durable events SSE clients replay, and the audit
// trail. The schema is a list of embedded SQL migrations (migrations/), the
// pending ones applied in order in one transaction and recorded in
// schema_version, so an upgrade is whole or not at all; a database written
// by a newer rein, with migrations this one does not know, is refused
// ([ErrNewerSchema]).
//
// Durability: the database runs in WAL mode with synchronous=FULL, so every
// write is fsynced before the method returns and survives a crash of the
// process or of the machine. [SyncNormal] trades that for speed (see
// [Options]). Every write is one transaction: a batch of entries, a fork, a
// rewrite, a batch of events is stored whole or not at all.
//
// Concurrency: SQLite has one writer at a time. The store commits the
// writes of concurrent callers together (group commit): a write made
// while no commit is in progress is committed at once by its caller; the
// writes waiting when a commit ends, up to 64, go into one BEGIN
// IMMEDIATE transaction, committed by the first waiting write's caller,
// each in a savepoint of its own, and each caller is answered once that
// transaction is committed — under
// synchronous=FULL, once it is fsynced. One fsync then serves the writes
// of many sessions instead of each waiting for its own in turn, and the
// durability of an acknowledged write is what it was with a transaction
// each (SPEC SESS-1). A write that fails (a duplicate id, an unknown
// session) is rolled back to its savepoint and fails alone; a batch whose
// transaction fails (its COMMIT, or SQLite abandoning it) fails every
// write in it, none stored. A caller whose context ends while its write
// waits for its turn withdraws it; once its batch took it, the caller
// gets the batch's outcome. Close commits what waits, then refuses
// writes. Another process writing the same file is waited for up to
// Options.BusyTimeout. Reads run in parallel on a small pool of
// connections and see a consistent snapshot: Entries streams a session's
// log row by row without loading it whole.
//
// Damage: a row whose JSON does not decode (or does not match its seq and
// kind) is skipped and reported as a heal entry with Seq 0 (its
// Damage.Line is the row's seq), as the session.Store contract asks, never
// as a fatal error.
package sqlite
