package cli

import (
	"bytes"
	"context"
	"fmt"
	"strings"

	"github.com/reinhq/rein/cli/tui"
	"github.com/reinhq/rein/permission"
)

// The terminal UI's panels (SPEC CLI-6): /permissions, /agents, /mcp,
// /doctor and /init, shown inside the session. Those that a rein command
// prints already (doctor, agents list, mcp list, init) run that command
// in-process, so the two never differ.

var _ tui.PanelSource = (*engine)(nil)

// Panel implements tui.PanelSource: it runs a panel command and returns
// its text (markdown).
func (e *engine) Panel(ctx context.Context, name, args string) (string, error) {
	root := e.Workspace().Root
	switch name {
	case "permissions":
		return e.permissionsPanel(ctx, args)
	case "agents":
		return e.subcommand(ctx, "agents", "list", "--cwd", root)
	case "mcp":
		return e.subcommand(ctx, "mcp", "list", "--cwd", root)
	case "doctor":
		return e.subcommand(ctx, "doctor", "--cwd", root)
	case "init":
		kind := "project"
		switch strings.TrimSpace(args) {
		case "", "project":
		case "chat":
			kind = "chat"
		default:
			return "", fmt.Errorf("/init %s: want /init or /init chat", args)
		}
		out, err := e.subcommand(ctx, "init", "--cwd", root, "--kind", kind)
		if err != nil {
			return "", err
		}
		return out + "\nThe new settings apply to the next session: leave (Ctrl-D) and start rein again.", nil
	}
	return "", fmt.Errorf("unknown command /%s; /help lists the commands", name)
}

// subcommand runs rein with args in-process and returns what it printed,
// as a code block; a failing command's output is the error.
func (e *engine) subcommand(ctx context.Context, args ...string) (string, error) {
	var out bytes.Buffer
	sub := *e.app
	sub.Stdin, sub.Stdout, sub.Stderr = strings.NewReader(""), &out, &out
	sub.StdinTTY, sub.StdoutTTY, sub.StderrTTY = false, false, false
	code := sub.Run(ctx, args)
	text := strings.TrimRight(out.String(), "\n")
	block := "```text\n" + strings.ReplaceAll(text, "```", "'''") + "\n```"
	if code != ExitOK && !(args[0] == "doctor" && text != "") {
		return "", fmt.Errorf("rein %s: %s", strings.Join(args[:1], " "), strings.TrimSpace(text))
	}
	return block, nil
}

// permissionsPanel is /permissions: the mode, the rules by action and
// source; "allow|ask|deny RULE" adds a rule, kept as an "always" answer is.
func (e *engine) permissionsPanel(ctx context.Context, args string) (string, error) {
	p := e.Policy()
	if verb, rest, _ := strings.Cut(strings.TrimSpace(args), " "); verb != "" {
		action := permission.Decision(strings.ToLower(verb))
		if action != permission.DecisionAllow && action != permission.DecisionAsk && action != permission.DecisionDeny {
			return "", fmt.Errorf("/permissions %s: want allow, ask or deny and a rule, e.g. /permissions allow bash(go test:*)", verb)
		}
		r, err := permission.ParseRule(action, rest)
		if err != nil {
			return "", err
		}
		r.Source = permission.SourceSession
		if err := p.Add(ctx, r); err != nil {
			return "", err
		}
		return fmt.Sprintf("Added the rule %s %s.", action, r), nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "**Permission mode:** %s (Shift+Tab cycles default → accept-edits → plan)\n", p.Mode())
	rules := p.Rules()
	for _, action := range []permission.Decision{permission.DecisionDeny, permission.DecisionAsk, permission.DecisionAllow} {
		var lines []string
		for _, r := range rules {
			if r.Action == action {
				src := string(r.Source)
				if src == "" {
					src = "built-in"
				}
				lines = append(lines, fmt.Sprintf("- `%s` (%s)", r, src))
			}
		}
		if len(lines) > 0 {
			fmt.Fprintf(&b, "\n**%s rules**\n\n%s\n", strings.ToUpper(string(action[:1]))+string(action[1:]), strings.Join(lines, "\n"))
		}
	}
	if len(rules) == 0 {
		b.WriteString("\nNo rules: the mode decides.\n")
	}
	b.WriteString("\nAdd one with `/permissions allow|ask|deny RULE`, e.g. `/permissions allow bash(go test:*)`; rules are matched deny first, then ask, then allow.")
	return b.String(), nil
}
