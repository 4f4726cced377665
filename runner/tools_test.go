package runner

import (
	"testing"

	"github.com/reinhq/rein/permission"
	"github.com/reinhq/rein/workspace"
)

// TOOL-5, PERM-5: the sandbox hides the default sensitive files, the
// user's additions and exceptions, and a workspace's additions — but a
// workspace cannot make an exception.
func TestSandboxHide_TOOL5_PERM5(t *testing.T) {
	e := &Setup{cfg: Config{Loaded: &workspace.Loaded{
		User:    workspace.Settings{Permissions: permission.Settings{SensitiveFiles: []string{"!.env.example", "secrets.yaml"}}},
		Project: workspace.Settings{Permissions: permission.Settings{SensitiveFiles: []string{"!.env", "deploy/*.json"}}},
		Local:   workspace.Settings{Permissions: permission.Settings{SensitiveFiles: []string{"!id_rsa"}}},
	}}}
	hide := e.sandboxHide()
	for path, want := range map[string]bool{
		"/w/.env": true, "/w/sub/.env.local": true, "/w/.env.example": false, "/w/secrets.yaml": true,
		"/w/deploy/prod.json": true, "/w/.ssh": true, "/w/id_rsa": true, "/w/main.go": false,
	} {
		if got := hide(path); got != want {
			t.Errorf("hide(%s) = %v, want %v", path, got, want)
		}
	}
}

// AGENT-1, PERM-5: an agent definition — a cloned repository's, once
// trusted — may tighten the permission mode, never loosen it.
func TestAgentModeOnlyTightens_AGENT1(t *testing.T) {
	for _, c := range []struct{ configured, agent, want string }{
		{"default", "", "default"},
		{"default", "bypass", "default"},
		{"default", "accept-edits", "default"},
		{"default", "read-only", "read-only"},
		{"strict", "read-only", "read-only"},
		{"read-only", "default", "read-only"},
		{"bypass", "accept-edits", "accept-edits"},
	} {
		if got := tighterMode(c.configured, c.agent); got != c.want {
			t.Errorf("configured %s, agent asks %q: %s, want %s", c.configured, c.agent, got, c.want)
		}
	}
}
