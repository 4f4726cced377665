package cli

import (
	"fmt"
	"slices"
	"strings"

	"github.com/reinhq/rein/cli/tui"
	"github.com/reinhq/rein/command"
	"github.com/reinhq/rein/workspace"
)

// maxDoctorCommands bounds the names the commands line lists.
const maxDoctorCommands = 40

// checkCommands lists the custom slash commands that apply (SPEC
// COMPAT-1) and what of them does not: a name a built-in command has
// (built-ins win), preludes that will not run in an untrusted workspace,
// allowed-tools rein has no tool for, a body counting its arguments from
// $1. What is malformed in their files is among the definitions'
// problems.
func checkCommands(r *report, l *workspace.Loaded) {
	d := l.Definitions()
	names := make([]string, 0, len(d.Commands))
	for _, c := range d.Commands {
		n := "/" + c.Name
		if c.ArgumentHint != "" {
			n += " " + c.ArgumentHint
		}
		names = append(names, n+" ("+commandSource(c)+")")
	}
	msg := fmt.Sprintf("%d custom slash command(s) apply", len(names))
	if len(names) > maxDoctorCommands {
		names = append(names[:maxDoctorCommands], fmt.Sprintf("and %d more", len(names)-maxDoctorCommands))
	}
	if len(names) > 0 {
		msg += ": " + strings.Join(names, ", ")
	}
	r.add("commands", statusOK, msg, "")
	builtin := tui.BuiltinCommands()
	for _, c := range d.Commands {
		at := displayPath(l, c.Path)
		if slices.Contains(builtin, strings.ToLower(c.Name)) {
			r.add("commands", statusWarning, fmt.Sprintf("/%s (%s) has the name of a built-in command, which wins: the file is never run", c.Name, at),
				"rename the file")
		}
		if p := command.Preludes(c.Body); len(p) > 0 && !l.Trust.Trusted {
			r.add("commands", statusWarning, fmt.Sprintf("/%s (%s) runs %s before sending, and preludes run only in a trusted workspace: the command stops there",
				c.Name, at, strings.Join(p, ", ")), "review the workspace, then rein trust "+l.Workspace.Root)
		}
		if _, notes, err := command.Grant(c); err != nil {
			r.add("commands", statusWarning, err.Error(), "fix allowed-tools: a tool name, or a rule Tool(pattern)")
		} else {
			for _, n := range notes {
				r.add("commands", statusWarning, n, "remove the entry from allowed-tools")
			}
		}
		if command.OneBased(c.Body) {
			r.add("commands", statusWarning, fmt.Sprintf("/%s (%s) uses $1 but not $0: rein counts arguments from $0, as Claude Code does since v2.1.19, so $1 is the second", c.Name, at),
				"write $0 for the first argument (or $ARGUMENTS for them all)")
		}
	}
}
