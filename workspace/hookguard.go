package workspace

import (
	"context"
	"fmt"

	"github.com/reinhq/rein/hook"
	"github.com/reinhq/rein/hook/httphook"
)

// This file re-checks the trust before each run of a workspace's hook
// (SPEC PERM-5; found by issue 22's second probes): trust is decided when
// rein starts, but a session lasts, and a file a trusted hook runs — a
// tools/lint.sh the model may edit like any project file — can change
// before the hook runs on the host, outside the sandbox. The fingerprint
// is taken again (about a millisecond for a small workspace) and a hook
// of a workspace whose trust no longer holds does not run.

// HookRegistrations returns the registrations of the hooks that apply
// ([Loaded.Hooks]), projectDir and getenv as for [hook.Registrations];
// each of a workspace's runs only while the workspace's trust still
// holds ([Loaded.TrustHolds]) and fails otherwise — skipped, or blocking
// when it is declared to fail closed.
func (l *Loaded) HookRegistrations(projectDir string, getenv func(string) string) ([]hook.Registration, error) {
	specs, fromWS, err := l.hookSpecs()
	if err != nil {
		return nil, err
	}
	regs := hook.Registrations(specs, projectDir, getenv, httphook.Client{})
	for i := range regs {
		if fromWS[i] {
			regs[i].Hook = trustedHook{h: regs[i].Hook, l: l, name: hookName(specs[i])}
		}
	}
	return regs, nil
}

// TrustHolds reports whether the workspace was trusted when it was
// loaded and its files still have the fingerprint the user trusted; the
// error says why not.
func (l *Loaded) TrustHolds() error {
	if !l.Trust.Trusted || l.trustStore == nil {
		return fmt.Errorf("the workspace %s is not trusted", l.Workspace.Root)
	}
	rec, err := l.trustStore.Get(l.Workspace.Root)
	if err != nil {
		return err
	}
	m, err := FingerprintFiles(l.Workspace.Root)
	if err != nil {
		return err
	}
	if !rec.Trusted(m.Digest) {
		return fmt.Errorf("workspace trust lost since rein started: %v", rec.Changes(m))
	}
	return nil
}

// trustedHook runs a workspace's hook only while the trust holds.
type trustedHook struct {
	h    hook.Hook
	l    *Loaded
	name string
}

// Run re-checks the trust, then runs the hook.
func (t trustedHook) Run(ctx context.Context, in hook.Input) (hook.Outcome, error) {
	if err := t.l.TrustHolds(); err != nil {
		return hook.Outcome{}, fmt.Errorf("workspace hook %s not run: %w; review the change and run rein trust again", t.name, err)
	}
	return t.h.Run(ctx, in)
}
