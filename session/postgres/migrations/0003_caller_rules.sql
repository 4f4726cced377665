-- caller_rules: the permission rules a server's caller kept with an
-- "always" answer (SPEC API-9). They are that caller's, in that directory
-- (the workspace's root, symbolic links resolved): a later run of the same
-- caller there loads them, no other caller's nor the CLI's does. Every
-- process of a split service (rein serve, rein worker) reads and writes
-- them here. rule is the rule without its action, in the canonical form
-- permission's parser gives it, so a rule is kept once. workspace_id
-- records where the answer was given.
CREATE TABLE caller_rules (
	caller       text COLLATE "C" NOT NULL,
	dir          text COLLATE "C" NOT NULL,
	action       text COLLATE "C" NOT NULL,
	rule         text COLLATE "C" NOT NULL,
	workspace_id text NOT NULL,
	created_at   timestamptz NOT NULL,
	PRIMARY KEY (caller, dir, action, rule)
);
