package tui

import (
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
)

// CustomCommand is a custom slash command the user may type (SPEC
// COMPAT-1: Claude Code's .claude/commands, rein's .rein/commands): the
// / menu and /help list them beside the built-in ones.
type CustomCommand struct {
	// Name is typed after the slash (review, frontend:test).
	Name string
	// ArgumentHint says what arguments it takes ([pr-number]).
	ArgumentHint string
	// Description says what it does, on one line.
	Description string
	// Source says where it is defined (project, user).
	Source string
}

// CustomCommander is what a [Backend] that runs custom slash commands
// implements: its Submit expands a prompt "/NAME ARGS" naming one of
// them.
type CustomCommander interface {
	// CustomCommands lists the custom commands, sorted by name; a name a
	// built-in command has is not among them (built-ins win).
	CustomCommands() []CustomCommand
}

// BuiltinCommands returns the names of the built-in slash commands and
// their aliases, sorted: a custom command of one of these names is
// shadowed.
func BuiltinCommands() []string {
	var out []string
	for _, c := range commands {
		out = append(out, c.name)
	}
	for a := range aliases {
		out = append(out, a)
	}
	sort.Strings(out)
	return slices.Compact(out)
}

// customName reads the name of a line "/NAME ARGS" as typed (its case
// kept; names may hold ":").
var customName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^/([A-Za-z0-9_][A-Za-z0-9_:-]*)(?:\s|$)`) })

// customCommands are the backend's custom commands, none when it has
// none.
func (m *model) customCommands() []CustomCommand {
	if cc, ok := m.backend.(CustomCommander); ok {
		return cc.CustomCommands()
	}
	return nil
}

// isCustom reports whether line invokes a custom command rather than a
// built-in one: its name is no built-in's and the backend has a command
// of that name (or, for one in a subdirectory, of that bare name). The
// line is then sent as a prompt, which the backend expands.
func (m *model) isCustom(line string) bool {
	sm := customName().FindStringSubmatch(strings.TrimSpace(line))
	if sm == nil {
		return false
	}
	name := sm[1]
	if slices.Contains(BuiltinCommands(), strings.ToLower(name)) {
		return false
	}
	for _, c := range m.customCommands() {
		if c.Name == name || (!strings.Contains(name, ":") && strings.HasSuffix(c.Name, ":"+name)) {
			return true
		}
	}
	return false
}
