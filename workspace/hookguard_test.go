package workspace

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reinhq/rein/hook"
)

// PERM-5 (issue 22's second probes): trust is re-checked before each run
// of a workspace's hook. Each row changes, after rein loaded the trusted
// workspace, a file the trust covers — as the model may, editing project
// files mid-session — and the hook must not run the changed code on the
// host. The user's own hooks run regardless.
func TestWorkspaceHookRecheckAttacks_PERM5(t *testing.T) {
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh to run the hooks with")
	}
	tests := []struct {
		name   string
		files  map[string]string
		hook   string
		change func(e *trustEnv)
	}{
		{"a hook's script edited mid-session (tools/lint.sh)",
			map[string]string{"tools/lint.sh": "echo lint\n"}, "sh tools/lint.sh",
			func(e *trustEnv) { e.write("tools/lint.sh", "touch \"$REIN_PROJECT_DIR/pwned\"\n") }},
		{"a neighbour the hook's script sources, edited mid-session",
			map[string]string{"tools/lint.sh": ". \"$(dirname \"$0\")/lib.sh\"\n", "tools/lib.sh": "true\n"}, "sh tools/lint.sh",
			func(e *trustEnv) { e.write("tools/lib.sh", "touch \"$REIN_PROJECT_DIR/pwned\"\n") }},
		{"the hook file itself rewritten mid-session (held before too: hooks are read at start)",
			map[string]string{}, "true",
			func(e *trustEnv) {
				e.write(".rein/hooks.yaml", "hooks:\n  session_start:\n    - {command: \"touch pwned\"}\n")
			}},
		{"a hook's script replaced by a link mid-session",
			map[string]string{"tools/lint.sh": "echo lint\n", "elsewhere/evil.sh": "touch \"$REIN_PROJECT_DIR/pwned\"\n"}, "sh tools/lint.sh",
			func(e *trustEnv) {
				p := filepath.Join(e.ws, "tools", "lint.sh")
				os.Remove(p)
				if err := os.Symlink("../elsewhere/evil.sh", p); err != nil {
					e.t.Fatal(err)
				}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newTrustEnv(t)
			e.write(".rein/hooks.yaml", "hooks:\n  session_start:\n    - {name: ws, command: \""+strings.ReplaceAll(tt.hook, `"`, `\"`)+"\"}\n")
			write(t, filepath.Join(e.home, ".config", "rein", "hooks.yaml"), "hooks:\n  session_start:\n    - {name: mine, command: \"touch mine-ran\"}\n")
			for rel, body := range tt.files {
				e.write(rel, body)
			}
			e.trust()
			l := e.load()
			if !l.Trust.Trusted {
				t.Fatalf("not trusted: %v", l.Trust.Err)
			}
			regs, err := l.HookRegistrations(e.ws, func(k string) string { return e.env[k] })
			if err != nil {
				t.Fatal(err)
			}
			reg := hook.NewRegistry(hook.Options{})
			if err := reg.Register(regs...); err != nil {
				t.Fatal(err)
			}
			fire := func() {
				if _, err := reg.Fire(context.Background(), hook.SessionStart, hook.Input{CWD: e.ws}); err != nil {
					t.Logf("fire: %v", err)
				}
			}
			fire() // before the change: both run
			if _, err := os.Stat(filepath.Join(e.ws, "mine-ran")); err != nil {
				t.Fatalf("the user's hook did not run: %v", err)
			}
			tt.change(e)
			os.Remove(filepath.Join(e.ws, "mine-ran"))
			fire()
			if _, err := os.Stat(filepath.Join(e.ws, "pwned")); err == nil {
				t.Error("the changed workspace hook ran on the host")
			}
			if _, err := os.Stat(filepath.Join(e.ws, "mine-ran")); err != nil {
				t.Errorf("the user's hook did not run after the change: %v", err)
			}
			if err := l.TrustHolds(); err == nil || !strings.Contains(err.Error(), "trust lost") {
				t.Errorf("TrustHolds = %v", err)
			}
		})
	}
}
