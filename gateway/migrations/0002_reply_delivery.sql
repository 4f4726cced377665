-- How far a run's reply got to its chat (SPEC GW-2: a reply is sent once),
-- so that a restart finishes a reply instead of sending it again:
-- reply_message is the platform's id of the message that shows the run's
-- progress (the reply's first part is an edit of it, which a restart can
-- repeat harmlessly); reply_parts counts the parts of the reply (and then
-- its reply.md file) the platform took, which a restart skips.
ALTER TABLE inbox ADD COLUMN reply_message TEXT NOT NULL DEFAULT '';
ALTER TABLE inbox ADD COLUMN reply_parts INTEGER NOT NULL DEFAULT 0;
CREATE INDEX inbox_run ON inbox (run_id) WHERE run_id != '';
