package workspace

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/reinhq/rein/hook"
)

// CLI-1: WithoutUser loads nothing of the user's level — no settings,
// hooks, agents, skills or MCP servers of rein's or Claude Code's — while
// the trust store stays the user's; UserFiles lists what a normal load
// applied.
func TestLoadWithoutUser_CLI1(t *testing.T) {
	home := t.TempDir()
	if err := os.CopyFS(home, os.DirFS(filepath.Join("..", "cli", "testdata", "userhome"))); err != nil {
		t.Fatal(err)
	}
	ws := t.TempDir()
	env := map[string]string{"HOME": home}
	getenv := func(k string) string { return env[k] }
	opts := Options{WorkDir: ws, Getenv: getenv, ClaudeManagedDir: t.TempDir()}

	full, err := Load(opts)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(full.UserFiles()); n < 8 {
		t.Errorf("a normal load applied %d user files, want the fixture's 9: %v", n, full.UserFiles())
	}
	if full.Effective.String(Model) == "" || len(hooksOf(t, full)) == 0 {
		t.Errorf("a normal load missed the user's model or hooks")
	}

	opts.WithoutUser = true
	bare, err := Load(opts)
	if err != nil {
		t.Fatal(err)
	}
	if files := bare.UserFiles(); len(files) != 0 {
		t.Errorf("WithoutUser applied %v", files)
	}
	d := bare.Definitions()
	for _, a := range d.Agents {
		if a.Origin == OriginUser {
			t.Errorf("WithoutUser loaded the user's agent %s", a.Name)
		}
	}
	if len(d.Skills)+len(d.Actions)+len(d.MCP) != 0 {
		t.Errorf("WithoutUser loaded skills %v, actions %v, servers %v", d.Skills, d.Actions, d.MCP)
	}
	if m := bare.Effective.String(Model); m == "anthropic/claude-sonnet-4-5" {
		t.Errorf("WithoutUser took the user's model %q", m)
	}
	if len(hooksOf(t, bare)) != 0 {
		t.Errorf("WithoutUser loaded hooks %v", hooksOf(t, bare))
	}
	for _, f := range bare.Claude {
		if f.Scope == ClaudeUser {
			t.Errorf("WithoutUser read Claude Code's user settings %s", f.Path)
		}
	}
}

func hooksOf(t *testing.T, l *Loaded) []hook.Spec {
	t.Helper()
	specs, err := l.Hooks()
	if err != nil {
		t.Fatal(err)
	}
	return specs
}
