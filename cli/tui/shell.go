package tui

import (
	"context"
	"fmt"
	"strings"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
)

// ShellRunner is a [Backend] that runs the user's own commands, typed after
// a ! (SPEC CLI-6): under the same permission policy (deny rules hold) and
// sandbox as the model's bash tool. The user typing the command is its
// approval, so a rule or mode that would ask runs it.
type ShellRunner interface {
	Shell(ctx context.Context, command string) (ShellResult, error)
}

// ShellResult is what a ! command printed and how it ended.
type ShellResult struct {
	// Output is what the command printed, as the bash tool returns it to
	// the model (stdout and stderr, long output cut in the middle).
	Output string
	// Failed is set when the command failed (a non-zero exit, a timeout,
	// the sandbox refused it).
	Failed bool
}

// maxShellContext bounds the output of one ! command that goes to the
// model with the next prompt.
const maxShellContext = 30000

// shellPreviewLines is how many lines of a ! command's output are shown.
const shellPreviewLines = 12

// shellResultMsg carries a ! command's result.
type shellResultMsg struct {
	seq     int
	command string
	res     ShellResult
	err     error
}

// shellCommand returns the command of a ! line, and whether it is one.
func shellCommand(line string) (string, bool) {
	t := strings.TrimSpace(line)
	if !strings.HasPrefix(t, "!") {
		return "", false
	}
	return strings.TrimSpace(t[1:]), true
}

// shellMode reports whether the input box holds a ! command.
func (m *model) shellMode() bool {
	return strings.HasPrefix(strings.TrimSpace(m.input.Value()), "!")
}

// runShell runs a ! line in the backend.
func (m *model) runShell(command string) tea.Cmd {
	m.printBlock(m.st.warn.Render("! ") + m.st.user.Render(command))
	sh, ok := m.backend.(ShellRunner)
	switch {
	case command == "":
		m.print(m.st.dim.Render("  type a command after the !, e.g. !git status"))
		return nil
	case !ok:
		m.print(m.st.warn.Render("  this session cannot run shell commands"))
		return nil
	}
	m.seq++
	ctx, cancel := context.WithCancel(m.ctx)
	m.cmd = &cmdState{seq: m.seq, name: "!" + command, cancel: cancel}
	seq := m.seq
	run := func() tea.Msg {
		res, err := sh.Shell(ctx, command)
		return shellResultMsg{seq: seq, command: command, res: res, err: err}
	}
	return tea.Batch(run, m.spin.Tick)
}

// onShellResult shows a ! command's output and keeps it for the model,
// which gets it with the next prompt.
func (m *model) onShellResult(msg shellResultMsg) tea.Cmd {
	if m.cmd == nil || m.cmd.seq != msg.seq {
		return nil
	}
	m.cmd.cancel()
	m.cmd = nil
	if msg.err != nil {
		m.print(m.st.bad.Render("  ✗ " + msg.err.Error()))
		return m.next()
	}
	out := strings.TrimRight(msg.res.Output, "\n")
	lines, total := preview(out, shellPreviewLines)
	w := max(10, m.width-6)
	style := m.st.dim
	if msg.res.Failed {
		style = m.st.bad
	}
	if len(lines) == 0 {
		m.print(style.Render("  ⎿  (no output)"))
	}
	for i, l := range lines {
		prefix := "     "
		if i == 0 {
			prefix = "  ⎿  "
		}
		m.print(style.Render(prefix + ansi.Truncate(strings.ReplaceAll(ansi.Strip(l), "\t", "  "), w, "…")))
	}
	if total > len(lines) {
		m.print(m.st.dim.Render(fmt.Sprintf("     … +%d lines", total-len(lines))))
	}
	m.shellContext = append(m.shellContext, shellContextText(msg.command, out, msg.res.Failed))
	return m.next()
}

// shellContextText is a ! command and its output as the model reads them
// with the next prompt (Claude Code's bash-input/bash-stdout tags).
func shellContextText(command, output string, failed bool) string {
	if len(output) > maxShellContext {
		half := maxShellContext / 2
		output = output[:half] + fmt.Sprintf("\n… %d bytes left out …\n", len(output)-2*half) + output[len(output)-half:]
	}
	// The output must not close its own tag (a hostile file's content).
	output = strings.ReplaceAll(output, "</bash-stdout", "<\\/bash-stdout")
	status := ""
	if failed {
		status = ` failed="true"`
	}
	return fmt.Sprintf("<bash-input>%s</bash-input>\n<bash-stdout%s>%s</bash-stdout>", command, status, output)
}

// withShellContext puts the ! commands run since the last prompt before
// text, and forgets them.
func (m *model) withShellContext(text string) string {
	if len(m.shellContext) == 0 {
		return text
	}
	ctx := "The user ran these shell commands in the session (their output is below); take it into account.\n" +
		strings.Join(m.shellContext, "\n")
	m.shellContext = nil
	return ctx + "\n\n" + text
}
