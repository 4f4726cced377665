-- session_fences: the fence of each session written with a fencing token
-- (SPEC API-5, runner/queue): the highest token a write of the session
-- carried. A write carrying a token raises it in its own transaction
-- (INSERT … ON CONFLICT DO UPDATE, which locks the row until the
-- transaction ends) and is refused when its token is below it, so a worker
-- whose lease ran out can no longer write. No foreign key: runs, events and
-- audit records of a session are fenced too, and the ledger does not
-- require the session's row. Delete drops the session's row here.
CREATE TABLE session_fences (
	session_id text COLLATE "C" PRIMARY KEY,
	token      bigint NOT NULL
);
