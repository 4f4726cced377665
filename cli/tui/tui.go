// Package tui is rein's interactive terminal session (SPEC CLI-2, CLI-4, CLI-6).
//
// [Run] puts an input box at the bottom of the terminal and drives a
// [Backend]: the user's prompts start runs whose events (docs/events.md) are
// shown as they stream — assistant text as markdown re-rendered while it
// grows, thinking dimmed on one line, tool calls with a spinner while they run
// and a ✓/✗ line with an output preview when they end, retries, compactions,
// usage and cost in the status line. Permission questions of a run
// (SPEC PERM-3) are asked in place, with a countdown to the automatic deny.
// Slash commands (/help, /exit, and the session commands the backend runs)
// are typed in the same box, with a fuzzy / menu of commands, skills and
// custom commands (menu.go); @ opens a file picker over a [fileindex.Index]
// (files.go), ! runs a shell command through the backend (shell.go). The
// optional interfaces a backend may implement add the rest (SPEC CLI-6):
// [ContextReporter] (the status line), [Transcripter] and [SessionPicker]
// (resume.go, transcript.go), [Checkpointer] (rewind.go), [PanelSource]
// (/permissions, /doctor, …), [ExcerptReader] (@file#20-45).
//
// Finished output (answers, tool results, notices) is printed above the input
// area, into the terminal's own scrollback, so scrolling, searching and
// copying work as in any shell; only the live part of a run and the input box
// are redrawn. Ctrl-C cancels the run in progress, not the program; at an
// idle prompt it clears the input, and twice in a row on an empty prompt (or
// Ctrl-D) it exits.
//
// Colours are used on a terminal only, and never when NO_COLOR is set or
// [Options.NoColor] asks so.
package tui

import (
	"context"
	"errors"
	"io"
	"iter"
	"os"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/term"

	"github.com/reinhq/rein/agent"
	"github.com/reinhq/rein/fileindex"
	"github.com/reinhq/rein/permission"
)

// Backend is what the TUI drives; package cli implements it over agent + session.
type Backend interface {
	// Submit starts a run for prompt (its text and attached image files);
	// approver answers its permission questions.
	Submit(ctx context.Context, prompt Prompt, approver permission.Approver) iter.Seq2[agent.Event, error]
	// Command runs a slash command other than /help and /exit: compact, clear, model, resume, cost, memory, sessions;
	// args is the rest of the line. It returns text to show (markdown ok).
	Command(ctx context.Context, name, args string) (string, error)
	// Info describes the session for the header/status line.
	Info() Info
}

// Info describes the session for the header and the status line. The TUI
// asks for it at start, after every run and after every slash command, so
// /model or /resume show at once.
type Info struct {
	Model, SessionID, WorkDir, PermissionMode string
	// CostUSD and Tokens are the session's totals so far (tokens: prompt
	// tokens, cached ones included, plus output tokens); during a run the
	// status line adds the run's usage events to them.
	CostUSD float64
	Tokens  int64
}

// Options configure [Run].
type Options struct {
	// Backend runs prompts and slash commands. Required.
	Backend Backend
	// In and Out are the terminal; nil means os.Stdin and os.Stdout.
	In  io.Reader
	Out io.Writer
	// NoColor turns colours off (the caller's --no-color, or NO_COLOR; the
	// environment is checked here as well).
	NoColor bool
	// AskTimeout is how long a permission question waits before the answer
	// is deny; zero means [permission.DefaultAskTimeout]. A shorter
	// [permission.Prompt.Timeout] wins.
	AskTimeout time.Duration
	// History is the prompt history, oldest first, walked with the up and
	// down arrows.
	History []string
	// OnSubmit, when set, is called with every line the user sends (prompts
	// and slash commands) so the caller can keep the history. It is called
	// from the UI goroutine and must not block.
	OnSubmit func(line string)
	// Files is the workspace's file index, for the @ picker; nil turns the
	// picker off. The UI refreshes it when the picker opens.
	Files *fileindex.Index
}

// shutdownGrace is how long Run waits, after the UI ends, for a cancelled
// run to deliver its last events to the backend's session store.
const shutdownGrace = 3 * time.Second

// Run runs the interactive session until the user exits or ctx ends. It
// returns nil on a normal exit (/exit, Ctrl-D, Ctrl-C twice) and ctx's error
// when ctx ended it. A run still in progress is cancelled before Run returns.
func Run(ctx context.Context, opts Options) error {
	if opts.Backend == nil {
		return errors.New("tui: no backend")
	}
	if opts.AskTimeout <= 0 {
		opts.AskTimeout = permission.DefaultAskTimeout
	}
	if opts.In == nil {
		opts.In = os.Stdin
	}
	if opts.Out == nil {
		opts.Out = os.Stdout
	}
	noColor := opts.NoColor || os.Getenv("NO_COLOR") != ""
	m := newModel(ctx, opts, noColor)
	m.printFn = func(s string) tea.Cmd {
		return tea.Sequence(tea.Println(s), func() tea.Msg { return printedMsg{} })
	}
	popts := []tea.ProgramOption{tea.WithContext(ctx), tea.WithInput(opts.In), tea.WithOutput(opts.Out)}
	if noColor {
		popts = append(popts, tea.WithColorProfile(colorprofile.ASCII))
	}
	if !isTerminal(opts.Out) {
		// Not a terminal: no size to ask for; draw as on a common one.
		popts = append(popts, tea.WithWindowSize(80, 24))
	}
	_, err := tea.NewProgram(m, popts...).Run()
	m.shutdown(shutdownGrace)
	switch {
	case ctx.Err() != nil:
		return ctx.Err()
	case errors.Is(err, tea.ErrInterrupted):
		return nil
	}
	return err
}

// isTerminal reports whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(interface{ Fd() uintptr })
	return ok && term.IsTerminal(f.Fd())
}
