package tui

import (
	"fmt"
	"strings"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/reinhq/rein/agent"
)

// styles are the looks of the session. Colours are downsampled to the
// terminal (none with NO_COLOR), so the styles themselves always have them.
type styles struct {
	dim, bold, accent, ok, bad, warn, user lipgloss.Style
	inputBox, askBox                       lipgloss.Style
}

// newStyles returns the session's styles.
func newStyles() styles {
	gray := lipgloss.Color("245")
	return styles{
		dim:      lipgloss.NewStyle().Foreground(gray).Faint(true),
		bold:     lipgloss.NewStyle().Bold(true),
		accent:   lipgloss.NewStyle().Foreground(lipgloss.Color("75")).Bold(true),
		ok:       lipgloss.NewStyle().Foreground(lipgloss.Color("42")),
		bad:      lipgloss.NewStyle().Foreground(lipgloss.Color("203")),
		warn:     lipgloss.NewStyle().Foreground(lipgloss.Color("214")),
		user:     lipgloss.NewStyle().Foreground(lipgloss.Color("252")).Bold(true),
		inputBox: lipgloss.NewStyle().Border(lipgloss.RoundedBorder()).BorderForeground(lipgloss.Color("240")),
		askBox:   lipgloss.NewStyle().Border(lipgloss.RoundedBorder()).BorderForeground(lipgloss.Color("214")).Padding(0, 1),
	}
}

// View draws the live part of a run, the input box (or the permission
// question), and the status line.
//
// The view only shrinks right after a print (see printedMsg): bubbletea's
// inline renderer leaves stale lines above a view that shrinks while the
// terminal's cursor is not at its top. In between, blank lines on top keep
// its height (frameMin), so the input box stays where it is.
func (m *model) View() tea.View {
	if m.exiting {
		return tea.NewView("")
	}
	var parts []string
	if live := m.liveView(); live != "" {
		parts = append(parts, live)
	}
	if a := m.currentAsk(); a != nil {
		parts = append(parts, m.askView(a))
	} else if q := m.currentQuestion(); q != nil {
		parts = append(parts, m.questionView(q))
	} else if m.picker != nil {
		parts = append(parts, m.pickerView())
	} else if m.rewind != nil {
		parts = append(parts, m.rewindView())
	} else {
		if pv := m.popupView(); pv != "" {
			parts = append(parts, pv)
		}
		box := m.st.inputBox
		if m.shellMode() {
			parts = append(parts, m.st.warn.Render(ansi.Truncate("! shell mode: enter runs the command under the bash tool's rules and sandbox", m.width, "…")))
			box = box.BorderForeground(lipgloss.Color("214"))
		}
		parts = append(parts, box.Width(m.width).Render(m.input.View()))
	}
	parts = append(parts, m.statusView())
	content := strings.Join(parts, "\n")
	if n := lineCount(content); n < m.frameMin {
		content = strings.Repeat("\n", m.frameMin-n) + content
	} else {
		m.frameMin = min(n, max(m.height, 1))
	}
	m.tallFrame = max(m.tallFrame, lineCount(content))
	return tea.NewView(content)
}

// header is printed when the session starts.
func (m *model) header() string {
	i := m.info
	var facts []string
	for _, s := range []string{i.Model, modeLabel(i.PermissionMode), i.WorkDir} {
		if s != "" {
			facts = append(facts, s)
		}
	}
	if i.SessionID != "" {
		facts = append(facts, "session "+i.SessionID)
	}
	title := m.st.accent.Render("✻ rein")
	if len(facts) > 0 {
		title += m.st.dim.Render(" · " + strings.Join(facts, " · "))
	}
	hint := "  /help for commands · Enter send · Alt+Enter new line · Ctrl+C interrupt · Ctrl+D exit"
	return title + "\n" + m.st.dim.Render(ansi.Truncate(hint, m.width, "…"))
}

// modeLabel names a permission mode for the header.
func modeLabel(mode string) string {
	if mode == "" {
		return ""
	}
	return mode + " mode"
}

// userEcho is a sent line as the scrollback shows it.
func (m *model) userEcho(text string) string {
	lines := strings.Split(strings.TrimRight(text, "\n"), "\n")
	for i, l := range lines {
		prefix := "  "
		if i == 0 {
			prefix = "> "
		}
		lines[i] = m.st.user.Render(prefix + l)
	}
	return strings.Join(lines, "\n")
}

// liveView is what a run or a command shows while it goes on.
func (m *model) liveView() string {
	var lines []string
	if r := m.run; r != nil {
		if t := strings.TrimSpace(r.thinking); t != "" {
			lines = append(lines, m.st.dim.Render(oneLine("✻ Thinking: "+lastRunes(t, 4*m.width), m.width)))
		}
		if r.rendered != "" {
			lines = append(lines, lastLines(r.rendered, m.liveRoom()))
		}
		for _, t := range r.tools {
			state := m.spin.View()
			if m.currentAsk() != nil {
				state = "waiting for permission"
			} else if m.currentQuestion() != nil {
				state = "waiting for your answer"
			}
			w := min(m.width-24, m.width-3-ansi.StringWidth(state))
			lines = append(lines, m.st.warn.Render("● ")+m.st.bold.Render(oneLine(t.summary, w))+" "+state)
		}
		if len(r.tools) == 0 && r.done == nil {
			lines = append(lines, m.spin.View()+" "+m.st.dim.Render(m.activity()))
		}
	}
	if c := m.cmd; c != nil {
		lines = append(lines, m.spin.View()+" "+m.st.dim.Render("/"+c.name+"…"))
	}
	if n := len(m.shellContext); n > 0 && m.run == nil {
		lines = append(lines, m.st.dim.Render(fmt.Sprintf("! %d shell output(s) go to the model with your next prompt", n)))
	}
	for _, q := range m.queue {
		lines = append(lines, m.st.dim.Render(oneLine("⏎ queued: "+q, m.width)))
	}
	if m.notice != "" {
		lines = append(lines, m.st.warn.Render(m.notice))
	}
	if len(lines) == 0 {
		return ""
	}
	return "\n" + strings.Join(lines, "\n")
}

// activity says what the run is doing, for the spinner line.
func (m *model) activity() string {
	r := m.run
	switch {
	case r.cancelled:
		return "Cancelling…"
	case m.currentQuestion() != nil:
		return "Waiting for your answer… (esc declines)"
	case r.retry != "":
		return strings.ToUpper(r.retry[:1]) + r.retry[1:] + "…"
	case r.thinking != "":
		return "Thinking… (ctrl+c to interrupt)"
	}
	return "Working… (ctrl+c to interrupt)"
}

// liveRoom is how many lines of streamed text fit on screen above the input.
func (m *model) liveRoom() int {
	used := m.input.Height() + 2 + 1 + 3
	if m.run != nil {
		used += len(m.run.tools)
	}
	return max(3, m.height-used)
}

// askView is the permission question: the tool, its input, the reason, the
// keys and the time left.
func (m *model) askView(a *ask) string {
	if isPlanAsk(a) {
		return m.planAskView(a)
	}
	p := a.prompt
	w := max(20, m.width-4)
	var b strings.Builder
	b.WriteString(m.st.warn.Render("Permission required") + " " + m.st.bold.Render(p.Request.Tool))
	if p.Request.Agent != "" {
		b.WriteString(m.st.dim.Render(" (agent " + p.Request.Agent + ")"))
	}
	if d := editDiff(p.Request.Tool, p.Request.Input); d != nil {
		b.WriteString("\n  " + m.st.bold.Render(PrimaryArg(p.Request.Input)) + "\n" + m.diffView(d, "  ", w-2))
	} else {
		for _, l := range inputLines(p.Request.Input, 6) {
			b.WriteString("\n  " + ansi.Truncate(l, w-2, "…"))
		}
	}
	if p.Reason != "" {
		b.WriteString("\n" + m.st.dim.Render(ansi.Truncate("reason: "+p.Reason, w, "…")))
	}
	if rules := ruleList(p.Suggested); rules != "" {
		b.WriteString("\n" + m.st.dim.Render(ansi.Truncate("always would allow: "+rules, w, "…")))
	}
	left := max(0, a.deadline.Sub(m.now()))
	choices := m.st.bold.Render("allow once (y) / always (a) / deny (n)")
	b.WriteString("\n\n" + choices + m.st.dim.Render(fmt.Sprintf("  · denies in %s", fmtDelay(left.Round(1e9)))))
	return m.st.askBox.Width(m.width).Render(b.String())
}

// toolEndView is a finished tool call: ✓ or ✗, the call, its duration or
// outcome, and a preview of its output.
func (m *model) toolEndView(run *toolRun, t *agent.ToolEvent) string {
	failed := t.IsError || (t.Outcome != "" && t.Outcome != "ok")
	mark := m.st.ok.Render("✓")
	if failed {
		mark = m.st.bad.Render("✗")
	}
	var facts []string
	if run.answer != "" {
		facts = append(facts, run.answer)
	}
	if t.Outcome != "" && t.Outcome != "ok" && t.Outcome != "error" && string(t.Outcome) != run.answer {
		facts = append(facts, string(t.Outcome))
	}
	if t.DurationMS > 0 {
		facts = append(facts, fmtDuration(t.DurationMS))
	}
	line := mark + " " + m.st.bold.Render(oneLine(run.summary, m.width-20))
	if len(facts) > 0 {
		line += m.st.dim.Render(" · " + strings.Join(facts, " · "))
	}
	input := t.Input
	if len(input) == 0 {
		input = run.input
	}
	if d := editDiff(t.Name, input); d != nil && !failed {
		return line + "\n" + m.diffView(d, "     ", max(10, m.width-6))
	}
	out := t.Output
	if t.Images > 0 {
		out = strings.TrimSpace(out + fmt.Sprintf("\n[%d image(s)]", t.Images))
	}
	lines, total := preview(out, 2)
	if len(lines) == 0 {
		if !failed {
			return line + "\n" + m.st.dim.Render("  ⎿  (no output)")
		}
		return line
	}
	w := max(10, m.width-6)
	for i, l := range lines {
		prefix := "     "
		if i == 0 {
			prefix = "  ⎿  "
		}
		line += "\n" + m.st.dim.Render(prefix+ansi.Truncate(strings.ReplaceAll(ansi.Strip(l), "\t", "  "), w, "…"))
	}
	if total > len(lines) {
		line += "\n" + m.st.dim.Render(fmt.Sprintf("     … +%d lines", total-len(lines)))
	}
	return line
}

// lastRunes returns the end of s, at most n runes.
func lastRunes(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[len(r)-n:])
}
