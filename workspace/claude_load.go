package workspace

import (
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	"github.com/reinhq/rein/permission"
)

// This file joins Claude Code's settings files ([ClaudeFile]) to rein's
// configuration: their rules to the permissions, their defaultMode to the
// layers of the mode, their env to the commands' environment, each
// workspace file's widening parts gated by the workspace's trust (SPEC
// PERM-5, COMPAT-1). See claude_settings.go for the precedence.

// loadClaude reads the managed, user, project and local files, in that
// order, into l.Claude, and lists what rein does not apply in
// l.ClaudeUnmapped. A file rein cannot read or parse is
// an error: the deny rules it holds could not be applied.
func (l *Loaded) loadClaude() error {
	home, root := l.Paths.Home, l.Workspace.Root
	read := func(path string, scope ClaudeScope, source string) error {
		l.trace.add(path)
		l.trace.lookup(root)
		f, err := readClaudeSettings(path, scope, ClaudeRuleBase{Root: root, Source: source, Home: home}, root)
		if err != nil {
			return err
		}
		l.Claude = append(l.Claude, f)
		return nil
	}
	for _, p := range l.claudeManagedFiles() {
		if err := read(p, ClaudeManaged, filepath.Dir(p)); err != nil {
			return err
		}
	}
	user := l.Paths.ClaudeUserSettings()
	if !l.withoutUser {
		if err := read(user, ClaudeUser, l.Paths.claudeDir()); err != nil {
			return err
		}
	}
	if p := l.Workspace.ClaudeSettings(); p != user { // a workspace at home: the file is the user's
		if err := read(p, ClaudeProject, root); err != nil {
			return err
		}
	}
	if err := read(l.Workspace.ClaudeLocalSettings(), ClaudeLocal, root); err != nil {
		return err
	}
	for _, f := range l.Claude {
		name := f.Path
		if f.Scope.workspace() {
			name = l.rel(f.Path)
		}
		for _, u := range f.Unmapped {
			l.ClaudeUnmapped = append(l.ClaudeUnmapped, fmt.Sprintf("Claude Code %s settings %s: %s", f.Scope, name, u))
		}
		for _, n := range f.Notes {
			l.ClaudeUnmapped = append(l.ClaudeUnmapped, fmt.Sprintf("Claude Code %s settings %s: %s", f.Scope, name, n))
		}
	}
	return nil
}

// claudeFiles returns the files of one level.
func (l *Loaded) claudeFiles(scope ClaudeScope) []ClaudeFile {
	var out []ClaudeFile
	for _, f := range l.Claude {
		if f.Scope == scope {
			out = append(out, f)
		}
	}
	return out
}

// claudePermissions returns the rules of one level that apply: a
// workspace's allow rules only once it is trusted.
func (l *Loaded) claudePermissions(scope ClaudeScope) permission.Settings {
	var s permission.Settings
	for _, f := range l.claudeFiles(scope) {
		for _, r := range f.Rules {
			if scope.workspace() && r.Action == permission.DecisionAllow && !l.Trust.Trusted {
				continue
			}
			s.Rules = append(s.Rules, r)
		}
	}
	return s
}

// claudeBypassDisabled reports a file that sets
// permissions.disableBypassPermissionsMode: "disable".
func (l *Loaded) claudeBypassDisabled() bool {
	return slices.ContainsFunc(l.Claude, func(f ClaudeFile) bool { return f.DisableBypass })
}

// claudeMode returns the settings of a level's defaultMode as rein's
// permissions.mode, the last file of the level that sets one winning; a
// bypassPermissions that another file disables is left out, with a
// warning.
func (l *Loaded) claudeMode(scope ClaudeScope) Settings {
	s := Settings{Values: map[string]string{}}
	for _, f := range l.claudeFiles(scope) {
		if f.Mode == "" {
			continue
		}
		if f.Mode == permission.ModeBypass && l.claudeBypassDisabled() {
			l.Warnings = append(l.Warnings, fmt.Sprintf("Claude Code settings %s: defaultMode bypassPermissions ignored: disableBypassPermissionsMode is set", l.rel(f.Path)))
			continue
		}
		s.Path, s.Values[PermissionMode] = f.Path, string(f.Mode)
	}
	return s
}

// firstOf merges layers into one, the first that sets a key winning: the
// user level (managed, rein's, Claude Code's) a workspace may only
// tighten.
func firstOf(layers ...Layer) Layer {
	out := Layer{Source: SourceUser, Values: map[string]string{}}
	for i := len(layers) - 1; i >= 0; i-- {
		maps.Copy(out.Values, layers[i].Values)
	}
	return out
}

// screenClaudeEnv computes the variables Claude Code's env adds to the
// commands the model runs (l.claudeEnv): the user's and managed files',
// and the workspace's once trusted, the higher level winning per name
// (managed, local, project, user). rein's credentials are refused from
// every file; a workspace's file may not set the variables that change
// what an ordinary command runs (PATH, LD_PRELOAD, …: the permission
// analysis judges commands as they read). Each refusal is a warning.
func (l *Loaded) screenClaudeEnv() {
	env := map[string]string{}
	for _, scope := range []ClaudeScope{ClaudeUser, ClaudeProject, ClaudeLocal, ClaudeManaged} {
		for _, f := range l.claudeFiles(scope) {
			for _, name := range slices.Sorted(maps.Keys(f.Env)) {
				why := ""
				switch {
				case l.Credential(name):
					why = refusedCredentials
				case scope.workspace() && riskyEnvName(name):
					why = "a workspace may not set a variable that changes what commands run (PATH, LD_*, DYLD_*, BASH_ENV, GIT_*, …)"
				case scope.workspace() && !l.Trust.Trusted:
					continue // listed with the workspace's extras
				}
				if why != "" {
					l.ClaudeUnmapped = append(l.ClaudeUnmapped, fmt.Sprintf("Claude Code %s settings %s: env %s refused: %s", scope, l.rel(f.Path), name, why))
					continue
				}
				env[name] = f.Env[name]
			}
		}
	}
	l.claudeEnv = nil
	for _, name := range slices.Sorted(maps.Keys(env)) {
		l.claudeEnv = append(l.claudeEnv, name+"="+env[name])
	}
}

// ClaudeEnv returns the NAME=value pairs Claude Code's settings add to the
// environment of the commands the model runs (its env key): the user's
// and managed files', and the workspace's once it is trusted, screened
// (see screenClaudeEnv). rein's own environment is never changed.
func (l *Loaded) ClaudeEnv() []string { return slices.Clone(l.claudeEnv) }

// riskyEnvName reports a variable that makes an ordinary command run other
// code, or read its configuration from elsewhere.
func riskyEnvName(name string) bool {
	n := strings.ToUpper(name)
	switch n {
	case "PATH", "BASH_ENV", "ENV", "PROMPT_COMMAND", "IFS", "SHELLOPTS", "BASHOPTS", "PS4", "CDPATH",
		"PAGER", "MANPAGER", "GIT_PAGER", "EDITOR", "VISUAL", "BROWSER", "SSH_ASKPASS", "LESSOPEN", "LESSCLOSE",
		"PYTHONSTARTUP", "PYTHONPATH", "PYTHONHOME", "NODE_OPTIONS", "NODE_PATH", "PERL5OPT", "PERL5LIB", "PERLLIB",
		"RUBYOPT", "RUBYLIB", "HOME", "XDG_CONFIG_HOME", "SHELL", "TMPDIR", "ZDOTDIR", "INPUTRC", "LD_PRELOAD":
		return true
	}
	return strings.HasPrefix(n, "LD_") || strings.HasPrefix(n, "DYLD_") || strings.HasPrefix(n, "GIT_") ||
		strings.HasPrefix(n, "BASH_FUNC_") || strings.HasPrefix(n, "REIN_") || strings.HasPrefix(n, "NPM_CONFIG_")
}

// claudeExtras lists what the workspace's Claude Code files bring that
// needs trust: their allow rules and their env.
func (l *Loaded) claudeExtras() []Extra {
	var out []Extra
	for _, f := range l.Claude {
		if !f.Scope.workspace() {
			continue
		}
		file := l.rel(f.Path)
		for _, r := range f.Rules {
			if r.Action == permission.DecisionAllow {
				out = append(out, Extra{Kind: ExtraAllow, What: r.String(), File: file})
			}
		}
		for _, name := range slices.Sorted(maps.Keys(f.Env)) {
			if !l.Credential(name) && !riskyEnvName(name) {
				out = append(out, Extra{Kind: ExtraSetting, What: "env " + name, File: file})
			}
		}
	}
	return out
}
