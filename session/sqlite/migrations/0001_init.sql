-- The first schema of the session store and the ledger. Times are Unix
-- nanoseconds (INTEGER), so they sort and compare as numbers; records keep
-- their own JSON (entries, session metadata, runs) beside the columns that
-- are filtered and sorted on.

-- sessions: the metadata (a session.Session as JSON) and the columns that
-- List filters and orders by, kept equal to the JSON by every write.
CREATE TABLE sessions (
	id         TEXT PRIMARY KEY,
	updated_at INTEGER NOT NULL,
	work_dir   TEXT NOT NULL,
	caller     TEXT NOT NULL,
	workspace  TEXT NOT NULL,
	meta       TEXT NOT NULL
) STRICT;
CREATE INDEX sessions_by_time ON sessions (updated_at, id);
CREATE INDEX sessions_by_dir ON sessions (work_dir, updated_at, id);
CREATE INDEX sessions_by_caller ON sessions (caller, workspace, updated_at, id);
CREATE INDEX sessions_by_workspace ON sessions (workspace, updated_at, id);

-- session_seqs: the highest seq a session ever had; Append and Rewrite
-- number after it, so a seq is never reused.
CREATE TABLE session_seqs (
	session_id TEXT PRIMARY KEY REFERENCES sessions (id) ON DELETE CASCADE,
	last_seq   INTEGER NOT NULL
) STRICT;

-- entries: the log, one session.Entry a row, as its JSON.
CREATE TABLE entries (
	session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
	seq        INTEGER NOT NULL,
	data       TEXT NOT NULL,
	PRIMARY KEY (session_id, seq)
) STRICT;

-- workspaces: what callers opened on the server.
CREATE TABLE workspaces (
	id         TEXT PRIMARY KEY,
	caller     TEXT NOT NULL,
	kind       TEXT NOT NULL,
	dir        TEXT NOT NULL,
	name       TEXT NOT NULL,
	created_at INTEGER NOT NULL
) STRICT;
CREATE INDEX workspaces_by_caller ON workspaces (caller, created_at, id);

-- runs: seq orders them by submission and is never reused; run is the
-- session.Run as JSON (its seq field is the column's).
CREATE TABLE runs (
	seq        INTEGER PRIMARY KEY AUTOINCREMENT,
	id         TEXT NOT NULL UNIQUE,
	session_id TEXT NOT NULL,
	caller     TEXT NOT NULL,
	status     TEXT NOT NULL,
	run        TEXT NOT NULL
) STRICT;
CREATE INDEX runs_by_session ON runs (session_id, seq);
CREATE INDEX runs_by_caller ON runs (caller, seq);
CREATE INDEX runs_by_status ON runs (status, seq);

-- events: the durable events of the sessions' streams; data is the
-- event's JSON (NULL when it had none).
CREATE TABLE events (
	session_id TEXT NOT NULL,
	id         INTEGER NOT NULL,
	run_id     TEXT NOT NULL,
	type       TEXT NOT NULL,
	time       INTEGER NOT NULL,
	data       TEXT,
	PRIMARY KEY (session_id, id)
) STRICT;

-- audit: the audit trail; id orders it and is never reused.
CREATE TABLE audit (
	id         INTEGER PRIMARY KEY AUTOINCREMENT,
	time       INTEGER NOT NULL,
	caller     TEXT NOT NULL,
	session_id TEXT NOT NULL,
	run_id     TEXT NOT NULL,
	kind       TEXT NOT NULL,
	data       TEXT
) STRICT;
CREATE INDEX audit_by_caller ON audit (caller, id);
CREATE INDEX audit_by_session ON audit (session_id, id);
CREATE INDEX audit_by_run ON audit (run_id, id);
CREATE INDEX audit_by_time ON audit (time);
