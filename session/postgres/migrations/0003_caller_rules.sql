-- caller_rules: the permission rules a server's caller kept with an
-- "always" answer (SPEC API-9). They are that caller's, in that directory
-- (the workspace's root, symbolic links resolved): a later run of the same
-- caller there loads them, no other caller's nor the CLI's does. Every
-- process of a split service (rein serve, rein worker) reads and writes
-- them here. rule is the rule without its action, in the canonical form
-- permission's parser gives it, so a rule is kept once. workspace_id
-- records where the answer was given.
--
-- The fields may be long (a caller id up to 1 KiB, a directory 4 KiB, a
-- rule 8 KiB) and a B-tree entry may not exceed about 2.7 KB, so the keys
-- are SHA-256 digests of the NUL-separated fields (which never hold a NUL):
-- key identifies a rule, owner a caller's directory, whose rules a run
-- lists.
CREATE TABLE caller_rules (
	key          bytea PRIMARY KEY,
	owner        bytea NOT NULL,
	caller       text NOT NULL,
	dir          text NOT NULL,
	action       text COLLATE "C" NOT NULL,
	rule         text COLLATE "C" NOT NULL,
	workspace_id text NOT NULL,
	created_at   timestamptz NOT NULL
);
CREATE INDEX caller_rules_by_owner ON caller_rules (owner, created_at);
