package postgres

import (
	"context"
	"crypto/sha256"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/reinhq/rein/session"
)

// AddCallerRule implements session.Ledger: one INSERT that keeps a rule
// already stored as it was (its first created_at). CreatedAt is kept to
// the microsecond. The rule is not fenced: it is the caller's, not a write
// of the run's session, and a worker that lost its lease may still record
// what the caller answered.
func (s *Store) AddCallerRule(ctx context.Context, r *session.CallerRule) error {
	if err := session.PrepareCallerRule(r, s.now()); err != nil {
		return err
	}
	r.CreatedAt = micro(r.CreatedAt)
	err := s.read(ctx, func(c *pgx.Conn) error {
		_, err := c.Exec(ctx, `INSERT INTO caller_rules (key, owner, caller, dir, action, rule, workspace_id, created_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT (key) DO NOTHING`,
			digest(r.Caller, r.Dir, r.Action, r.Rule), digest(r.Caller, r.Dir),
			r.Caller, r.Dir, r.Action, r.Rule, r.WorkspaceID, r.CreatedAt)
		return err
	})
	if err != nil {
		return fmt.Errorf("caller rule %s %s: add: %w", r.Action, r.Rule, err)
	}
	return nil
}

// ListCallerRules implements session.Ledger: a range of the index of
// owners (the caller's directory's digest).
func (s *Store) ListCallerRules(ctx context.Context, caller, dir string) ([]session.CallerRule, error) {
	if err := session.CheckCallerDir(caller, dir); err != nil {
		return nil, fmt.Errorf("caller rules: list: %w", err)
	}
	var out []session.CallerRule
	err := s.read(ctx, func(c *pgx.Conn) error {
		rows, err := c.Query(ctx, `SELECT action, rule, workspace_id, created_at FROM caller_rules
			WHERE owner = $1 AND caller = $2 AND dir = $3 ORDER BY created_at, action, rule`, digest(caller, dir), caller, dir)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			r := session.CallerRule{Caller: caller, Dir: dir}
			if err := rows.Scan(&r.Action, &r.Rule, &r.WorkspaceID, &r.CreatedAt); err != nil {
				return err
			}
			r.CreatedAt = r.CreatedAt.UTC()
			out = append(out, r)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("caller rules: list: %w", err)
	}
	return out, nil
}

// digest is the SHA-256 of the fields joined by NUL, which none holds
// (session.PrepareCallerRule refuses control characters): a key of
// caller_rules short enough for any index.
func digest(fields ...string) []byte {
	sum := sha256.Sum256([]byte(strings.Join(fields, "\x00")))
	return sum[:]
}
