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
	for _, a := range d.Agents {
		if a.Origin == OriginUser {
			add(a.Path)
		}
	}
	for _, s := range d.Skills {
		if s.Origin == OriginUser {
			add(s.Path)
		}
	}
	for _, a := range d.Actions {
		if a.Origin == OriginUser {
			add(a.Path)
		}
	}
	for _, m := range d.MCP {
		if m.Origin == OriginUser {
			add(m.Path)
		}
	}
	return out
}

// isFile reports a regular file (or a link to one) at p.
func isFile(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular()
}
