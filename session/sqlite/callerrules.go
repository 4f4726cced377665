package sqlite

import (
	"context"
	"fmt"

	"github.com/reinhq/rein/session"
)

// AddCallerRule implements session.Ledger: one INSERT that keeps a rule
// already stored as it was (its first created_at).
func (s *Store) AddCallerRule(ctx context.Context, r *session.CallerRule) error {
	if err := session.PrepareCallerRule(r, s.now()); err != nil {
		return err
	}
	err := s.write(ctx, func(ctx context.Context, tx *txn) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO caller_rules (caller, dir, action, rule, workspace_id, created_at)
			VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (caller, dir, action, rule) DO NOTHING`,
			r.Caller, r.Dir, r.Action, r.Rule, r.WorkspaceID, r.CreatedAt.UnixNano())
		return err
	})
	if err != nil {
		return fmt.Errorf("caller rule %s %s: add: %w", r.Action, r.Rule, err)
	}
	return nil
}

// ListCallerRules implements session.Ledger: a range of the table's
// primary key.
func (s *Store) ListCallerRules(ctx context.Context, caller, dir string) ([]session.CallerRule, error) {
	if err := session.CheckCallerDir(caller, dir); err != nil {
		return nil, fmt.Errorf("caller rules: list: %w", err)
	}
	rows, err := s.read().QueryContext(ctx, `SELECT action, rule, workspace_id, created_at FROM caller_rules
		WHERE caller = ? AND dir = ? ORDER BY created_at, action, rule`, caller, dir)
	if err != nil {
		return nil, fmt.Errorf("caller rules: list: %w", err)
	}
	defer rows.Close()
	var out []session.CallerRule
	for rows.Next() {
		r := session.CallerRule{Caller: caller, Dir: dir}
		var created int64
		if err := rows.Scan(&r.Action, &r.Rule, &r.WorkspaceID, &created); err != nil {
			return nil, fmt.Errorf("caller rules: list: %w", err)
		}
		r.CreatedAt = fromNanos(created)
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("caller rules: list: %w", err)
	}
	return out, nil
}
