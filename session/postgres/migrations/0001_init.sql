-- The first schema of the session store and the ledger, PostgreSQL's
-- version of session/sqlite's. Records keep their own JSON (entries,
-- session metadata, runs) beside the columns that are filtered and sorted
-- on. JSON is stored as json, not jsonb: json keeps the text as written
-- (a tool call's input keeps its key order) and accepts the \u0000
-- escape, which jsonb refuses and Go writes for a NUL character (a tool's
-- binary output). Times are timestamptz, to the microsecond. Ids sort in
-- byte order (COLLATE "C"), as in every store.

-- sessions: the metadata (a session.Session as JSON) and the columns that
-- List filters and orders by, kept equal to the JSON by every write.
CREATE TABLE sessions (
	id         text COLLATE "C" PRIMARY KEY,
	updated_at timestamptz NOT NULL,
	work_dir   text NOT NULL,
	caller     text NOT NULL,
	workspace  text NOT NULL,
	meta       json NOT NULL
);
CREATE INDEX sessions_by_time ON sessions (updated_at, id);
CREATE INDEX sessions_by_dir ON sessions (work_dir, updated_at, id);
CREATE INDEX sessions_by_caller ON sessions (caller, workspace, updated_at, id);
CREATE INDEX sessions_by_workspace ON sessions (workspace, updated_at, id);

-- session_seqs: the highest seq a session ever had; Append and Rewrite
-- lock its row (SELECT … FOR UPDATE) and number after it, so concurrent
-- appends to a session take their turns and a seq is never reused. It is
-- a table of its own so that appending does not rewrite the metadata row.
CREATE TABLE session_seqs (
	session_id text COLLATE "C" PRIMARY KEY REFERENCES sessions (id) ON DELETE CASCADE,
	last_seq   bigint NOT NULL
);

-- entries: the log, one session.Entry a row, as its JSON.
CREATE TABLE entries (
	session_id text COLLATE "C" NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
	seq        bigint NOT NULL,
	data       json NOT NULL,
	PRIMARY KEY (session_id, seq)
);

-- workspaces: what callers opened on the server.
CREATE TABLE workspaces (
	id         text COLLATE "C" PRIMARY KEY,
	caller     text NOT NULL,
	kind       text NOT NULL,
	dir        text NOT NULL,
	name       text NOT NULL,
	created_at timestamptz NOT NULL
);
CREATE INDEX workspaces_by_caller ON workspaces (caller, created_at, id);

-- runs: seq orders them by submission and is never reused; run is the
-- session.Run as JSON (its seq field is the column's).
CREATE TABLE runs (
	seq        bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	id         text COLLATE "C" NOT NULL UNIQUE,
	session_id text COLLATE "C" NOT NULL,
	caller     text NOT NULL,
	status     text NOT NULL,
	run        json NOT NULL
);
CREATE INDEX runs_by_session ON runs (session_id, seq);
CREATE INDEX runs_by_caller ON runs (caller, seq);
CREATE INDEX runs_by_status ON runs (status, seq);
-- SPEC API-3: runs of a session execute one at a time. The database itself
-- refuses a second running run of a session, whoever writes it.
CREATE UNIQUE INDEX runs_one_running_per_session ON runs (session_id) WHERE status = 'running';

-- events: the durable events of the sessions' streams; data is the
-- event's JSON (NULL when it had none).
CREATE TABLE events (
	session_id text COLLATE "C" NOT NULL,
	id         bigint NOT NULL,
	run_id     text NOT NULL,
	type       text NOT NULL,
	time       timestamptz NOT NULL,
	data       json,
	PRIMARY KEY (session_id, id)
);

-- audit: the audit trail; id orders it and is never reused.
CREATE TABLE audit (
	id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	time       timestamptz NOT NULL,
	caller     text NOT NULL,
	session_id text NOT NULL,
	run_id     text NOT NULL,
	kind       text NOT NULL,
	data       json
);
CREATE INDEX audit_by_caller ON audit (caller, id);
CREATE INDEX audit_by_session ON audit (session_id, id);
CREATE INDEX audit_by_run ON audit (run_id, id);
CREATE INDEX audit_by_time ON audit (time);
