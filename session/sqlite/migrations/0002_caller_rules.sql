-- caller_rules: the permission rules a server's caller kept with an
-- "always" answer (SPEC API-9). They are that caller's, in that directory
-- (the workspace's root, symbolic links resolved): a later run of the same
-- caller there loads them, no other caller's nor the CLI's does. rule is
-- the rule without its action, in the canonical form permission's parser
-- gives it, so a rule is kept once. workspace_id records where the answer
-- was given; created_at is Unix nanoseconds.
CREATE TABLE caller_rules (
	caller       TEXT NOT NULL,
	dir          TEXT NOT NULL,
	action       TEXT NOT NULL,
	rule         TEXT NOT NULL,
	workspace_id TEXT NOT NULL,
	created_at   INTEGER NOT NULL,
	PRIMARY KEY (caller, dir, action, rule)
) STRICT;
