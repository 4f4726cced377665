package command

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/reinhq/rein/attachment"
	"github.com/reinhq/rein/permission"
	"github.com/reinhq/rein/tool"
	"github.com/reinhq/rein/workspace"
)

// Shell runs a prelude's script with the command's grant and returns its
// output, stdout and stderr merged. An error stops the command: the
// policy refused the script, or it failed (the error says how, with its
// output).
type Shell func(ctx context.Context, script string, grant []permission.Rule) (string, error)

// Env is what an expansion may use.
type Env struct {
	// Files resolves the body's @path mentions: relative to the
	// workspace, never outside it, never a sensitive file.
	Files attachment.Resolver
	// Readable, when set, asks the permission policy whether the file
	// (its real path) may be read without asking: a deny or ask rule on
	// reading it refuses the paste, as Claude Code applies its Read deny
	// rules to @ mentions.
	Readable func(ctx context.Context, real string) error
	// Shell runs the preludes; nil refuses them, saying NoShell.
	Shell Shell
	// NoShell says why preludes cannot run here (the workspace is not
	// trusted).
	NoShell string
}

// Expansion is a command expanded: the prompt to send and what applies to
// the run it starts.
type Expansion struct {
	// Command is the command's name.
	Command string
	// Prompt is the text sent as the user's message.
	Prompt string
	// Model is the command's model string or alias; "" the session's.
	Model string
	// Grant are the allow rules of the command's allowed-tools, for the
	// run it starts only (Source run).
	Grant []permission.Rule
	// Files are the files pasted, as mentioned; Preludes how many ran.
	Files    []string
	Preludes int
	// Notes say what of the command did not apply (a tool rein has none
	// of); show them to the user.
	Notes []string
}

// Limits of an expansion: the text pasted from files, in all.
const maxPasted = 1 << 20

// Expand expands the command c invoked with the argument string argStr
// (see the package doc). An error says what stopped it and how to fix it;
// nothing has been sent then.
func Expand(ctx context.Context, c workspace.Command, argStr string, env Env) (*Expansion, error) {
	x := &Expansion{Command: c.Name, Model: c.Model}
	grant, notes, err := Grant(c)
	if err != nil {
		return nil, err
	}
	x.Grant, x.Notes = grant, notes
	a := args{raw: strings.TrimSpace(argStr), argv: Arguments(argStr)}
	ps := parts(c.Body)
	if env.Shell == nil {
		for _, p := range ps {
			if p.prelude {
				return nil, fmt.Errorf("/%s: the prelude %s was not run: %s; nothing was sent", c.Name, p.pattern, env.NoShell)
			}
		}
	}
	var b strings.Builder
	used := false
	var text []string // the text parts, substituted: where mentions are looked for
	for _, p := range ps {
		s, u := a.substitute(p.text, p.prelude)
		used = used || u
		if !p.prelude {
			b.WriteString(s)
			text = append(text, s)
			continue
		}
		out, err := env.Shell(ctx, s, x.Grant)
		if err != nil {
			return nil, fmt.Errorf("/%s: the prelude %s: %w; nothing was sent", c.Name, p.pattern, err)
		}
		x.Preludes++
		b.WriteString(strings.TrimRight(out, "\n"))
	}
	prompt := strings.TrimSpace(b.String())
	if !used && a.raw != "" {
		prompt += "\n\nARGUMENTS: " + a.raw
		text = append(text, a.raw)
	}
	files, err := x.paste(ctx, env, strings.Join(text, "\n"))
	if err != nil {
		return nil, fmt.Errorf("/%s: %w; nothing was sent", c.Name, err)
	}
	x.Prompt = prompt + files
	return x, nil
}

// Grant returns the allow rules of c's allowed-tools (Source run): a tool
// rein has no equivalent of is left out with a note; an entry that is
// neither a tool nor a rule is an error.
func Grant(c workspace.Command) (rules []permission.Rule, notes []string, err error) {
	for _, entry := range c.AllowedTools {
		name, _, err := workspace.SplitToolEntry(entry)
		if err != nil {
			return nil, nil, fmt.Errorf("/%s: allowed-tools: %v; fix %s", c.Name, err, c.Path)
		}
		if slices.Contains(tool.ClaudeNoEquivalent, name) {
			notes = append(notes, fmt.Sprintf("/%s: allowed-tools: %s is a Claude Code tool rein has no equivalent of; left out", c.Name, name))
			continue
		}
		r, err := permission.ParseRule(permission.DecisionAllow, entry)
		if err != nil {
			return nil, nil, fmt.Errorf("/%s: allowed-tools: %v; fix %s", c.Name, strings.TrimPrefix(err.Error(), "permission: "), c.Path)
		}
		r.Source = permission.SourceRun
		rules = append(rules, r)
	}
	return rules, notes, nil
}

// paste returns the text files the mentions of text name, each once, in
// the order of their first mention, as blocks to follow the prompt.
func (x *Expansion) paste(ctx context.Context, env Env, text string) (string, error) {
	if env.Files.Root == "" {
		return "", nil
	}
	var b strings.Builder
	seen := map[string]bool{}
	total := 0
	for _, m := range attachment.Mentions(text) {
		if attachment.LooksLikeImage(m.Path) {
			continue // attached as an image by the prompt's own mentions
		}
		real, content, err := env.Files.Text(m.Path)
		switch {
		case errors.Is(err, attachment.ErrNoFile):
			continue // @team: prose, not a file
		case err != nil:
			return "", err
		case seen[real]:
			continue
		}
		if env.Readable != nil {
			if err := env.Readable(ctx, real); err != nil {
				return "", fmt.Errorf("@%s: %w", m.Path, err)
			}
		}
		if total += len(content); total > maxPasted {
			return "", fmt.Errorf("@%s: the files a command pastes pass %d MiB in all; let the model read the largest with read_file (write its path without @)", m.Path, maxPasted>>20)
		}
		seen[real] = true
		x.Files = append(x.Files, m.Path)
		fmt.Fprintf(&b, "\n\n<file path=%q>\n%s\n</file>", m.Path, strings.TrimRight(content, "\n"))
	}
	return b.String(), nil
}

// GrantOf returns the grant of x; nil for a nil x (a prompt that was no
// command).
func (x *Expansion) GrantOf() []permission.Rule {
	if x == nil {
		return nil
	}
	return x.Grant
}
