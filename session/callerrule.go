package session

import (
	"cmp"
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"
	"unicode/utf8"
)

// CallerRules is the part of a [Ledger] that keeps the permission rules a
// server's caller made with an "always" answer (SPEC API-9, PERM-3): the
// caller's own, in the server's store, never in the workspace's files or
// the operator's configuration. A rule applies to later runs of the same
// caller in the same directory, and to no other caller nor the CLI.
//
// Rules are keyed by (caller, directory, action, rule): the directory is
// the workspace's root with its symbolic links resolved, so the same caller
// gets its rules back in every workspace it opens on that directory, and
// two callers on one directory never share one.
type CallerRules interface {
	// AddCallerRule keeps r. An action other than allow, ask or deny, an
	// empty or malformed Caller or Rule, or a Dir that is not absolute and
	// clean is an error wrapping [ErrInvalid] and nothing is stored. The
	// store keeps the rule's text as given: the runner parses it with
	// permission's parser and hands it over in canonical form, so that the
	// same rule is kept once. A rule already kept is no error and keeps its first
	// CreatedAt. A zero CreatedAt is set to now.
	AddCallerRule(ctx context.Context, r *CallerRule) error
	// ListCallerRules returns the rules the caller kept in dir, oldest first.
	ListCallerRules(ctx context.Context, caller, dir string) ([]CallerRule, error)
}

// CallerRule is a permission rule a caller kept with an "always" answer.
type CallerRule struct {
	Caller string `json:"caller"`
	// Dir is the workspace's root, absolute, its symbolic links resolved.
	Dir string `json:"dir"`
	// Action is the rule's decision: allow, ask or deny
	// (permission.Decision's values; session does not depend on permission).
	Action string `json:"action"`
	// Rule is the rule in the syntax of the settings' lists, without its
	// action: `bash(git status)`, `edit_file(src/**)`.
	Rule string `json:"rule"`
	// WorkspaceID is the workspace the answer was given in (for the
	// record: the rule applies in every workspace of the caller on Dir).
	WorkspaceID string    `json:"workspace_id,omitempty"`
	CreatedAt   time.Time `json:"created_at"`
}

// The bounds of a caller rule's fields, in bytes: a caller id is a
// token's subject, a directory a path, a rule one pattern; anything longer
// is refused with [ErrInvalid]. Every backend stores fields this long.
const (
	MaxCallerLen = 1024
	MaxDirLen    = 4096
	MaxRuleLen   = 8192
)

// PrepareCallerRule validates r for [CallerRules.AddCallerRule] and sets
// a zero CreatedAt to now. A nil r, an empty Caller, a Caller, Dir or Rule
// that is not UTF-8, holds a NUL or control character or is too long, a
// Dir that is not absolute and clean, an Action other than allow, ask or
// deny, or an unsafe WorkspaceID is an error wrapping [ErrInvalid]; r is
// then left as it was.
func PrepareCallerRule(r *CallerRule, now time.Time) error {
	if r == nil {
		return fmt.Errorf("caller rule: add: %w: nil rule", ErrInvalid)
	}
	if err := CheckCallerDir(r.Caller, r.Dir); err != nil {
		return fmt.Errorf("caller rule: add: %w", err)
	}
	bad := func(format string, a ...any) error {
		return fmt.Errorf("caller rule %s %q: add: %w: %s", r.Action, clip(r.Rule), ErrInvalid, fmt.Sprintf(format, a...))
	}
	if err := checkText("rule", r.Rule, MaxRuleLen); err != nil {
		return bad("%v", err)
	}
	if r.WorkspaceID != "" {
		if err := ValidID(r.WorkspaceID); err != nil {
			return fmt.Errorf("caller rule: add: workspace: %w", err)
		}
	}
	switch r.Action {
	case "allow", "ask", "deny":
	default:
		return bad("action %q: want allow, ask or deny", r.Action)
	}
	if r.CreatedAt.IsZero() {
		r.CreatedAt = now
	}
	return nil
}

// CheckCallerDir validates the key of a caller's rules: a non-empty caller
// and an absolute, clean directory, neither holding NUL or control
// characters nor too long. An error wraps [ErrInvalid].
func CheckCallerDir(caller, dir string) error {
	if caller == "" {
		return fmt.Errorf("%w: empty caller", ErrInvalid)
	}
	if err := checkText("caller", caller, MaxCallerLen); err != nil {
		return fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	if err := checkText("directory", dir, MaxDirLen); err != nil {
		return fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	if !filepath.IsAbs(dir) || filepath.Clean(dir) != dir {
		return fmt.Errorf("%w: directory %q: want an absolute, clean path (the workspace's root, symbolic links resolved)", ErrInvalid, dir)
	}
	return nil
}

// checkText refuses text that is empty, not UTF-8, longer than max bytes,
// or holds a control character (NUL included: PostgreSQL cannot store it).
func checkText(what, s string, max int) error {
	switch {
	case s == "":
		return fmt.Errorf("empty %s", what)
	case len(s) > max:
		return fmt.Errorf("%s of %d bytes (at most %d)", what, len(s), max)
	case !utf8.ValidString(s):
		return fmt.Errorf("%s %q is not UTF-8", what, clip(s))
	}
	if i := strings.IndexFunc(s, func(c rune) bool { return c < 0x20 || c == 0x7f }); i >= 0 {
		return fmt.Errorf("%s %q holds the control character %q at byte %d", what, clip(s), s[i], i)
	}
	return nil
}

// clip cuts s to 100 bytes for an error message, marking the cut.
func clip(s string) string {
	if len(s) <= 100 {
		return s
	}
	return s[:100] + "…"
}

// SortCallerRules orders rules oldest first, then by action and rule, as
// [CallerRules.ListCallerRules] returns them.
func SortCallerRules(rules []CallerRule) {
	slices.SortFunc(rules, func(a, b CallerRule) int {
		if c := a.CreatedAt.Compare(b.CreatedAt); c != 0 {
			return c
		}
		return cmp.Or(cmp.Compare(a.Action, b.Action), cmp.Compare(a.Rule, b.Rule))
	})
}
