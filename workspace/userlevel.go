package workspace

import (
	"os"
	"slices"
)

// UserFiles lists the files of the user's level this load applied, each
// once: rein's settings and hooks files and Claude Code's user settings
// when they exist, and the file of every user-level agent, skill, action
// and MCP server. It is empty under [Options.WithoutUser]. A recording
// notes whether it is empty (a cassette recorded without the user's
// configuration is replayed without it, SPEC CLI-1).
func (l *Loaded) UserFiles() []string {
	if l.withoutUser {
		return nil
	}
	var out []string
	add := func(p string) {
		if p != "" && !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	for _, p := range []string{l.Paths.UserSettings(), l.Paths.UserHooks(), l.Paths.ClaudeUserSettings()} {
		if isFile(p) {
			add(p)
		}
	}
	d := l.AllDefinitions()
	addUser(d.Agents, func(a Agent) (string, Origin) { return a.Path, a.Origin }, add)
	addUser(d.Skills, func(s Skill) (string, Origin) { return s.Path, s.Origin }, add)
	addUser(d.Actions, func(a Action) (string, Origin) { return a.Path, a.Origin }, add)
	addUser(d.MCP, func(m MCPServer) (string, Origin) { return m.Path, m.Origin }, add)
	return out
}

// addUser adds the file of each user-level definition of defs.
func addUser[T any](defs []T, of func(T) (string, Origin), add func(string)) {
	for _, d := range defs {
		if path, origin := of(d); origin == OriginUser {
			add(path)
		}
	}
}

// isFile reports a regular file (or a link to one) at p.
func isFile(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular()
}
