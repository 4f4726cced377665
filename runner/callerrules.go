package runner

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"

	"github.com/reinhq/rein/permission"
	"github.com/reinhq/rein/session"
)

// callerRuleStore is the [permission.RuleStore] of a server's run (SPEC
// API-9): an "always" answer becomes a rule of the run's caller in the
// workspace's directory, kept in the ledger — never in the workspace's
// .rein/settings.local.yaml nor in the operator's trust file, which the
// CLI and every other caller read. Every process of a split service
// shares the ledger, so a worker sees the rules another one kept.
type callerRuleStore struct {
	ledger session.Ledger
	// caller and dir are the rules' key: dir is the workspace's root with
	// its symbolic links resolved, so the caller's workspaces on one
	// directory share their rules.
	caller, dir string
	// workspaceID is where the answers are given (for the record).
	workspaceID string
}

var _ permission.RuleStore = (*callerRuleStore)(nil)

// newCallerRuleStore returns the store of the caller's rules in root.
func newCallerRuleStore(l session.Ledger, caller, root, workspaceID string) (*callerRuleStore, error) {
	dir, err := filepath.EvalSymlinks(root)
	if err != nil {
		return nil, fmt.Errorf("the caller's permission rules: workspace directory: %w", err)
	}
	return &callerRuleStore{ledger: l, caller: caller, dir: dir, workspaceID: workspaceID}, nil
}

// Add keeps r as the caller's rule, in the canonical form of the
// permission parser (so the ledger keeps each rule once); a rule whose
// text does not parse back is refused. It is stored even when the run is
// being cancelled: the caller did answer.
func (s *callerRuleStore) Add(ctx context.Context, r permission.Rule) error {
	p, err := permission.ParseRule(r.Action, r.String())
	if err != nil {
		return fmt.Errorf("the caller's permission rules: keep %s %s: %w", r.Action, r, err)
	}
	return s.ledger.AddCallerRule(context.WithoutCancel(ctx), &session.CallerRule{Caller: s.caller, Dir: s.dir,
		Action: string(p.Action), Rule: p.String(), WorkspaceID: s.workspaceID})
}

// load returns the rules the caller kept in the directory, as policy
// rules of Source caller. A stored allow rule this rein no longer parses
// is left out with a note (leaving it out only narrows); an ask or deny
// rule that does not parse fails the run, as leaving it out would widen.
func (s *callerRuleStore) load(ctx context.Context, note func(format string, args ...any)) ([]permission.Rule, error) {
	kept, err := s.ledger.ListCallerRules(ctx, s.caller, s.dir)
	if err != nil {
		return nil, fmt.Errorf("the caller's permission rules: %w", err)
	}
	out := make([]permission.Rule, 0, len(kept))
	for _, k := range kept {
		r, err := permission.ParseRule(permission.Decision(k.Action), k.Rule)
		switch {
		case err == nil:
			r.Source = permission.SourceCaller
			out = append(out, r)
		case k.Action == string(permission.DecisionAllow):
			note("the caller's kept rule allow %s no longer parses and is left out (%v); the caller's next always answer keeps a new one", k.Rule, err)
		default:
			return nil, fmt.Errorf("the caller's permission rules: kept rule %s %s: %w", k.Action, k.Rule, err)
		}
	}
	return out, nil
}

// callerRules returns the store of the run caller's rules in the
// workspace's root and the rules kept there (SPEC API-9): a server's
// "always" answers never go to the workspace's files or the operator's
// configuration. A run without a caller (a library's) keeps them under
// the caller "local", as the server names a loopback client.
func (s *Service) callerRules(ctx context.Context, run *session.Run, ws *session.Workspace, root string, log *slog.Logger) (*callerRuleStore, []permission.Rule, error) {
	caller, wsID := run.Caller, ""
	if caller == "" {
		caller = "local"
	}
	if ws != nil {
		wsID = ws.ID
	}
	store, err := newCallerRuleStore(s.cfg.Ledger, caller, root, wsID)
	if err != nil {
		return nil, nil, err
	}
	kept, err := store.load(ctx, func(format string, args ...any) { log.Warn(fmt.Sprintf(format, args...)) })
	if err != nil {
		return nil, nil, err
	}
	return store, kept, nil
}
