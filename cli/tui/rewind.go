package tui

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/reinhq/rein/agent"
	"github.com/reinhq/rein/checkpoint"
)

// Checkpointer is a [Backend] that keeps a checkpoint per prompt and
// rewinds to one (SPEC CLI-6): BeginPrompt is called before each prompt
// is submitted, Observe with each event of its run before the run goes on
// (a tool_start before its tool runs, so the file can be saved first).
type Checkpointer interface {
	BeginPrompt(ctx context.Context, text string) error
	Observe(ev agent.Event)
	Checkpoints(ctx context.Context) ([]checkpoint.Point, error)
	// Rewind restores the code (the files the file tools changed), the
	// conversation (to before the prompt), or both, and says what it did
	// and could not do.
	Rewind(ctx context.Context, seq int, code, conversation bool) (string, error)
}

// rewindPicker is the /rewind list: ↑↓ choose a prompt, Enter restores
// code and conversation, c the code only, v the conversation only, Esc
// closes.
type rewindPicker struct {
	points  []checkpoint.Point
	sel     int
	err     error
	loading bool
}

// pointsMsg carries the checkpoints.
type pointsMsg struct {
	points []checkpoint.Point
	err    error
}

// openRewind opens the /rewind picker.
func (m *model) openRewind(cp Checkpointer) tea.Cmd {
	m.rewind = &rewindPicker{loading: true}
	ctx := m.ctx
	return func() tea.Msg {
		pts, err := cp.Checkpoints(ctx)
		return pointsMsg{pts, err}
	}
}

// onPoints fills the picker, newest first chosen.
func (m *model) onPoints(msg pointsMsg) {
	if m.rewind == nil {
		return
	}
	m.rewind.loading, m.rewind.points, m.rewind.err = false, msg.points, msg.err
	m.rewind.sel = max(0, len(msg.points)-1)
}

// rewindKey handles a key while the picker is open.
func (m *model) rewindKey(k string) tea.Cmd {
	p := m.rewind
	n := len(p.points)
	switch k {
	case "esc", "q":
		m.rewind = nil
	case "up", "ctrl+p":
		if n > 0 {
			p.sel = (p.sel + n - 1) % n
		}
	case "down", "ctrl+n":
		if n > 0 {
			p.sel = (p.sel + 1) % n
		}
	case "enter", "c", "v":
		if n == 0 {
			return nil
		}
		pt := p.points[p.sel]
		code, conv := k != "v", k != "c"
		if len(pt.Files) == 0 && k == "c" {
			return m.setNotice("No file was changed by the file tools from this prompt on: there is no code to restore")
		}
		m.rewind = nil
		what := map[string]string{"enter": "code and conversation", "c": "code", "v": "conversation"}[k]
		cp := m.backend.(Checkpointer)
		seq := pt.Seq
		m.printBlock(m.userEcho(fmt.Sprintf("/rewind %d (%s)", seq, what)))
		return m.runCommand("rewind", func(ctx context.Context) (string, error) { return cp.Rewind(ctx, seq, code, conv) })
	}
	return nil
}

// rewindView draws the picker in place of the input box.
func (m *model) rewindView() string {
	p := m.rewind
	w := max(20, m.width-4)
	var b strings.Builder
	b.WriteString(m.st.accent.Render("Rewind to before a prompt"))
	switch {
	case p.loading:
		b.WriteString("\n" + m.st.dim.Render("loading…"))
	case p.err != nil:
		b.WriteString("\n" + m.st.bad.Render(ansi.Truncate("✗ "+p.err.Error(), w, "…")))
	case len(p.points) == 0:
		b.WriteString("\n" + m.st.dim.Render("No checkpoints yet: each prompt of this session makes one."))
	}
	start := max(0, p.sel-pickerRows+1)
	for i := start; i < min(len(p.points), start+pickerRows); i++ {
		pt := p.points[i]
		facts := strconv.Itoa(len(pt.Files)) + " file(s) changed"
		if len(pt.Shell) > 0 {
			facts += fmt.Sprintf(" · %d shell command(s)", len(pt.Shell))
		}
		facts += " · " + fmtAge(m.now().Sub(pt.Time))
		line := fmt.Sprintf("%d. %s", pt.Seq, oneLine(pt.Prompt, max(10, w-ansi.StringWidth(facts)-8)))
		pad := strings.Repeat(" ", max(1, w-ansi.StringWidth(line)-ansi.StringWidth(facts)-2))
		if i == p.sel {
			b.WriteString("\n" + m.st.accent.Render("› "+line) + pad + m.st.dim.Render(facts))
		} else {
			b.WriteString("\n  " + line + pad + m.st.dim.Render(facts))
		}
	}
	if len(p.points) > 0 {
		shell := 0
		for _, pt := range p.points[p.sel:] {
			shell += len(pt.Shell)
		}
		if shell > 0 {
			b.WriteString("\n" + m.st.warn.Render(ansi.Truncate(fmt.Sprintf("⚠ %d shell command(s) ran from this prompt on: their effects are not undone", shell), w, "…")))
		}
	}
	b.WriteString("\n\n" + m.st.dim.Render("↑↓ choose · enter restore code and conversation · c code only · v conversation only · esc never mind"))
	return m.st.askBox.Width(m.width).Render(b.String())
}
