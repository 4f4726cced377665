package cli

import (
	"context"
	"fmt"
	"strings"

	"github.com/reinhq/rein/permission"
)

// modeCycle is the order Shift+Tab walks the permission modes in the
// terminal UI (SPEC CLI-6, PERM-7), as Claude Code and Gemini CLI do:
// default → accept-edits → plan → default. From a mode outside the cycle
// (strict, read-only, bypass) the next is default.
var modeCycle = []permission.Mode{permission.ModeDefault, permission.ModeAcceptEdits, permission.ModePlan}

// nextMode returns the mode after m in [modeCycle].
func nextMode(m permission.Mode) permission.Mode {
	for i, c := range modeCycle {
		if c == m {
			return modeCycle[(i+1)%len(modeCycle)]
		}
	}
	return permission.ModeDefault
}

// modeCommand is /permission-mode: no argument shows the mode, "next" cycles it
// (Shift+Tab), a name switches to it for the rest of the session. Bypass
// is not reachable from here: it is a flag the user passes on purpose.
func (e *engine) modeCommand(args string) (string, error) {
	p := e.Policy()
	cur := p.Mode()
	var to permission.Mode
	switch args = strings.TrimSpace(args); args {
	case "":
		return fmt.Sprintf("The permission mode is %s. /permission-mode NAME switches (default, accept-edits, plan, read-only, strict); Shift+Tab cycles %s.",
			cur, cycleText()), nil
	case "next":
		to = nextMode(cur)
	default:
		m, err := permission.ParseMode(args)
		if err != nil {
			return "", err
		}
		if m == permission.ModeBypass && cur != permission.ModeBypass {
			return "", fmt.Errorf("bypass runs every tool call without asking; start rein with --permission-mode bypass to use it")
		}
		to = m
	}
	if err := p.SetMode(to); err != nil {
		return "", err
	}
	msg := fmt.Sprintf("Permission mode: %s.", to)
	if to == permission.ModePlan {
		msg += " The model reads and plans; it may write only the plan file, then presents the plan for your approval" +
			" (y: approve into default, a: approve into accept-edits, n: keep planning with your feedback)."
	}
	return msg, nil
}

func cycleText() string {
	names := make([]string, len(modeCycle))
	for i, m := range modeCycle {
		names[i] = string(m)
	}
	return strings.Join(names, " → ")
}

// approvePlan asks about a plan on the terminal (rein run, SPEC PERM-7):
// the plan in full, then y approves it into default mode, a into
// accept-edits, anything else sends it back with the next line typed as
// the feedback.
func (a *lineApprover) approvePlan(ctx context.Context, p permission.Prompt) (permission.Verdict, error) {
	fmt.Fprintf(a.out, "\nThe plan:\n\n%s\n\n", strings.TrimSpace(permission.PlanOf(p.Request.Input)))
	fmt.Fprint(a.out, "Approve? [y]es, confirm each edit; [a]ccept edits; [N]o, keep planning: ")
	line, err := a.readLine(ctx)
	if err != nil {
		fmt.Fprintln(a.out)
		return permission.Verdict{Answer: permission.AnswerDeny}, err
	}
	switch strings.ToLower(line) {
	case "y", "yes":
		return permission.Verdict{Answer: permission.AnswerOnce}, nil
	case "a", "accept", "always":
		return permission.Verdict{Answer: permission.AnswerAlways}, nil
	}
	fmt.Fprint(a.out, "What should change? ")
	fb, err := a.readLine(ctx)
	if err != nil {
		fmt.Fprintln(a.out)
		return permission.Verdict{Answer: permission.AnswerDeny}, err
	}
	return permission.Verdict{Answer: permission.AnswerDeny, Message: fb}, nil
}
