package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"slices"
	"strings"

	"github.com/reinhq/rein/agent"
	"github.com/reinhq/rein/cli/tui"
	"github.com/reinhq/rein/command"
	"github.com/reinhq/rein/internal/suggest"
	"github.com/reinhq/rein/llm"
	"github.com/reinhq/rein/permission"
	"github.com/reinhq/rein/workspace"
)

// errUnknownCommand marks a prompt "/NAME …" naming no custom command.
var errUnknownCommand = errors.New("unknown slash command")

// slashPrompt expands prompt when it is a custom slash command "/NAME
// ARGS" (SPEC COMPAT-1, CLI-1): the command's model is switched to (for
// the run), its preludes run, its files are pasted; the expansion is
// returned, nil for a prompt that is no command. A name no command has is
// an error listing the near ones; so is a built-in command of the
// terminal UI, which `rein run` cannot run.
func (e *engine) slashPrompt(ctx context.Context, prompt string) (*command.Expansion, error) {
	return e.expandSlash(ctx, prompt, false)
}

// expandSlash is [engine.slashPrompt]; dry (rein run --dry-run) runs no
// prelude: each shows as a note of what would run.
func (e *engine) expandSlash(ctx context.Context, prompt string, dry bool) (*command.Expansion, error) {
	name, args, ok := command.Split(prompt)
	if !ok {
		return nil, nil
	}
	if slices.Contains(tui.BuiltinCommands(), strings.ToLower(name)) {
		return nil, usageErrorf("/%s is a command of the terminal UI (rein alone), not of rein run; to send it as text, begin the prompt with a space", name)
	}
	c, err := findCommand(e.cfg, name)
	if err != nil {
		return nil, err
	}
	if c.Model != "" {
		if err := e.commandModel(c); err != nil {
			return nil, err
		}
	}
	env := e.commandEnv()
	if dry && env.Shell != nil {
		env.Shell = func(_ context.Context, script string, _ []permission.Rule) (string, error) {
			return "[a dry run does not run the prelude: " + script + "]", nil
		}
	}
	x, err := command.Expand(ctx, c, args, env)
	if err != nil {
		return nil, fail(ExitError, "%v", err)
	}
	for _, n := range x.Notes {
		e.note("%s", n)
	}
	return x, nil
}

// commandModel switches to the model c names (an alias resolves as
// everywhere): Claude Code runs a command on its model for that turn.
func (e *engine) commandModel(c workspace.Command) error {
	if m := e.Model(); m != nil && m.Frame != nil {
		e.note("/%s asks for the model %s; a replayed cassette keeps its own", c.Name, c.Model)
		return nil
	}
	if err := e.UseModel(c.Model); err != nil {
		return fail(ExitError, "/%s: its model %s: %v; fix model: in %s", c.Name, c.Model, err, displayPath(e.cfg, c.Path))
	}
	return nil
}

// commandEnv is what an expansion may use here: the workspace's files
// (never a sensitive one, nor one a deny rule keeps from reading) and,
// in a trusted workspace, the bash tool for the preludes.
func (e *engine) commandEnv() command.Env {
	env := command.Env{Files: e.Setup().Attachments(), Readable: e.readable}
	if e.cfg.Trust.Trusted {
		env.Shell = e.RunPrelude
	} else {
		env.NoShell = "the workspace " + e.cfg.Workspace.Root + " is not trusted, and preludes run only in a trusted one: review it, then rein trust " + e.cfg.Workspace.Root
	}
	return env
}

// readable refuses a file a deny rule keeps the model from reading.
func (e *engine) readable(ctx context.Context, real string) error {
	input, _ := json.Marshal(map[string]string{"path": real})
	o, err := e.Policy().Decide(ctx, permission.Request{Tool: "read_file", Input: input, WorkDir: e.cfg.Workspace.Root})
	if err != nil {
		return err
	}
	if o.Decision == permission.DecisionDeny {
		return fmt.Errorf("not pasted: %s", o.Reason)
	}
	return nil
}

// findCommand returns the custom command typed as /name, or an error
// saying why there is none: no such name (with the near ones), a bare
// name several subdirectories have, a command of a workspace not trusted.
func findCommand(cfg *workspace.Loaded, name string) (workspace.Command, error) {
	defs := cfg.Definitions()
	c, ambiguous, ok := defs.Command(name)
	switch {
	case ok:
		return c, nil
	case len(ambiguous) > 0:
		return c, usageErrorf("/%s is ambiguous: it is /%s; type the whole name", name, strings.Join(ambiguous, " or /"))
	}
	if c, _, ok := cfg.AllDefinitions().Command(name); ok && c.Origin == workspace.OriginWorkspace {
		return c, usageErrorf("/%s is the workspace's command (%s), which is not trusted: review it, then rein trust %s",
			name, displayPath(cfg, c.Path), cfg.Workspace.Root)
	}
	var names []string
	for _, c := range defs.Commands {
		names = append(names, c.Name)
	}
	msg := fmt.Sprintf("%v /%s", errUnknownCommand, name)
	if near := nearNames(name, names); len(near) > 0 {
		msg += "; did you mean /" + strings.Join(near, ", /") + "?"
	}
	switch {
	case len(names) == 0:
		msg += "; there are no custom commands: add one as .claude/commands/NAME.md or .rein/commands/NAME.md"
	default:
		msg += fmt.Sprintf(" (rein doctor lists the %d commands); to send the prompt as text, begin it with a space", len(names))
	}
	return c, usageErrorf("%s", msg)
}

// nearNames are up to three of names close to name: those it begins or
// ends, and those within a third of its length in edits.
func nearNames(name string, names []string) []string {
	var out []string
	for _, n := range suggest.Closest(name, names, 3) {
		bare := n[strings.LastIndexByte(n, ':')+1:]
		if strings.HasPrefix(n, name) || strings.HasPrefix(bare, name) || suggest.Distance(name, bare) <= max(2, len(name)/3) {
			out = append(out, n)
		}
	}
	return out
}

// submitPrompt runs a prompt of the terminal UI: a custom slash command is
// expanded first (see [engine.slashPrompt]), its allowed-tools granted for
// its run, and the model it asked for switched back after it.
func (e *engine) submitPrompt(ctx context.Context, text string, images []string, approver permission.Approver) iter.Seq2[agent.Event, error] {
	prev := e.Model()
	restore := func() {
		if prev != nil && e.Model() != prev {
			if err := e.UseModel(prev.Label); err != nil {
				e.note("could not switch back to %s after a slash command: %v", prev.Label, err)
			}
		}
	}
	x, err := e.slashPrompt(ctx, text)
	var msg *llm.Message
	if err == nil && x != nil {
		text = x.Prompt
	}
	if err == nil {
		msg, err = e.userMessage(text, images)
	}
	if err != nil {
		restore()
		return failedRun(e.SessionID(), err)
	}
	run := e.SubmitGranted(ctx, "", msg, approver, x.GrantOf())
	return func(yield func(agent.Event, error) bool) {
		defer restore()
		for ev, err := range run {
			if !yield(ev, err) {
				return
			}
		}
	}
}

// failedRun is a run that ends at once with err.
func failedRun(sessionID string, err error) iter.Seq2[agent.Event, error] {
	return func(yield func(agent.Event, error) bool) {
		yield(agent.Event{Type: agent.EventDone, SessionID: sessionID,
			Done: &agent.DoneEvent{Reason: agent.ReasonError, Error: err.Error()}}, err)
	}
}

// CustomCommands implements tui.CustomCommander: the custom commands that
// apply, but those a built-in command shadows.
func (e *engine) CustomCommands() []tui.CustomCommand {
	builtin := tui.BuiltinCommands()
	var out []tui.CustomCommand
	for _, c := range e.cfg.Definitions().Commands {
		if slices.Contains(builtin, strings.ToLower(c.Name)) {
			continue
		}
		out = append(out, tui.CustomCommand{Name: c.Name, ArgumentHint: c.ArgumentHint, Description: c.Description, Source: commandSource(c)})
	}
	return out
}

// commandSource names where a command is defined, as Claude Code's menu
// does: project or user, and the subdirectory.
func commandSource(c workspace.Command) string {
	src := "user"
	if c.Origin == workspace.OriginWorkspace {
		src = "project"
	}
	if i := strings.LastIndexByte(c.Name, ':'); i >= 0 {
		src += ":" + strings.ReplaceAll(c.Name[:i], ":", "/")
	}
	return src
}

// drySlash expands a custom slash command for rein run --dry-run: its
// preludes are not run (they may have side effects), each shown in the
// prompt as what would run; the report says what the command brings. A
// command that cannot be expanded blocks the run, as it would a real one.
func (e *engine) drySlash(ctx context.Context, rep *dryReport, prompt string) (string, error) {
	x, err := e.expandSlash(ctx, prompt, true)
	var ee *exitError
	switch {
	case errors.As(err, &ee) && ee.code == ExitUsage:
		return "", err
	case err != nil:
		rep.add("command", statusBlocked, err.Error(), "fix what the message names (docs/workspace.md, Slash commands)")
		return prompt, nil
	case x == nil:
		return prompt, nil
	}
	msg := fmt.Sprintf("/%s expanded: %d prelude(s) not run in a dry run, %d file(s) pasted", x.Command, x.Preludes, len(x.Files))
	if len(x.Grant) > 0 {
		rules := make([]string, len(x.Grant))
		for i, r := range x.Grant {
			rules[i] = r.String()
		}
		msg += "; allowed without asking in its run: " + strings.Join(rules, ", ")
	}
	rep.add("command", statusOK, msg, "")
	for _, n := range x.Notes {
		rep.add("command", statusWarning, n, "remove the entry from allowed-tools")
	}
	if x.Model != "" {
		rep.Model = modelView(e.Model())
		rep.add("model", statusOK, fmt.Sprintf("/%s runs on %s (its model: %s)", x.Command, e.Model().Label, x.Model), "")
	}
	return x.Prompt, nil
}

// remoteSlash refuses a custom slash command with --server: commands are
// expanded where their files are, and the server does not expand them,
// so "/NAME" would reach the model as text.
func remoteSlash(prompt string) error {
	if name, _, ok := command.Split(prompt); ok {
		return usageErrorf("/%s: custom slash commands run locally, not with --server (the server sends a prompt as it is); drop --server, or begin the prompt with a space to send it as text", name)
	}
	return nil
}
