package permission

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// PERM-2, API-9: a rule's source never makes a deny weaker. An allow rule
// from any layer — a server caller's kept rules (SourceCaller) included —
// loses to a deny rule of any layer and to the built-in protections.
func TestSourceNeverWeakensDeny_API9(t *testing.T) {
	ws := t.TempDir()
	if err := os.WriteFile(filepath.Join(ws, ".env"), []byte("KEY=x\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	sources := []Source{SourceUser, SourceWorkspace, SourceRun, SourceSession, SourceCaller}
	for _, allowFrom := range sources {
		for _, denyFrom := range sources {
			rules := slices.Concat(mustRules(t, allowFrom, "allow bash(rm:*)", "allow read_file(.env)", "allow bash(echo:*)"),
				mustRules(t, denyFrom, "deny bash(rm:*)"))
			s := Settings{Rules: rules}
			if o := decide(t, s, bashReq(ws, "rm -rf build")); o.Decision != DecisionDeny {
				t.Errorf("allow from %s, deny from %s: rm is %s (%s), want deny", allowFrom, denyFrom, o.Decision, o.Reason)
			}
			if o := decide(t, s, readReq(ws, ".env")); o.Decision != DecisionDeny {
				t.Errorf("allow read_file(.env) from %s: %s (%s), want the sensitive-file deny", allowFrom, o.Decision, o.Reason)
			}
			if o := decide(t, s, bashReq(ws, "echo x > /etc/x")); o.Decision == DecisionAllow {
				t.Errorf("allow bash(echo:*) from %s: a redirect outside the workspace is %s (%s), want it asked", allowFrom, o.Decision, o.Reason)
			}
		}
	}
	// The deciding rule's source is named: a caller's rule says so.
	o := decide(t, Settings{Rules: mustRules(t, SourceCaller, "allow bash(make:*)")}, bashReq(ws, "make test"))
	if o.Decision != DecisionAllow || !strings.Contains(o.Reason, "by the caller rule bash(make:*)") {
		t.Errorf("make test: %s (%q), want allowed by the caller rule", o.Decision, o.Reason)
	}
}
