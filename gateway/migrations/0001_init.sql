-- The gateway's own state (SPEC GW-2): which session each chat talks to,
-- and every update it took, so that a redelivered update is handled once
-- and a reply is sent once, across restarts.
CREATE TABLE chats (
	key        TEXT PRIMARY KEY,          -- "<channel>:<chat id>"
	session_id TEXT NOT NULL,
	model      TEXT NOT NULL DEFAULT '',  -- set by /model; '' is the channel's
	updated_at INTEGER NOT NULL
) STRICT;

CREATE TABLE inbox (
	channel     TEXT NOT NULL,
	update_id   TEXT NOT NULL,
	chat_key    TEXT NOT NULL,
	text        TEXT NOT NULL DEFAULT '',
	run_id      TEXT NOT NULL DEFAULT '',
	-- received: stored, not yet a run; submitted: its run is queued or
	-- running; answered: handled (its reply sent, or a command's answer).
	state       TEXT NOT NULL,
	received_at INTEGER NOT NULL,
	PRIMARY KEY (channel, update_id)
) STRICT;

CREATE INDEX inbox_open ON inbox (state) WHERE state != 'answered';
