package tui

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/reinhq/rein/internal/suggest"
	"github.com/reinhq/rein/llm"
)

// SessionPicker is a [Backend] that lists its workspace's sessions for the
// /resume picker (SPEC CLI-6, SESS-3), newest first, and loads one's
// conversation for the preview.
type SessionPicker interface {
	SessionList(ctx context.Context) ([]SessionInfo, error)
	SessionPreview(ctx context.Context, id string) ([]llm.Message, error)
}

// SessionInfo is a session as the picker lists it.
type SessionInfo struct {
	ID, Title, Preview, Model string
	Updated                   time.Time
	CostUSD                   float64
}

// pickerRows is how many sessions the picker shows at once; previewLines
// how many lines the preview takes.
const (
	pickerRows   = 8
	previewLines = 10
)

// sessionPicker is the /resume picker: type to search, ↑↓ choose, Tab
// previews the chosen session's last messages, Enter resumes it, Esc
// closes.
type sessionPicker struct {
	all     []SessionInfo
	shown   []SessionInfo
	query   string
	sel     int
	err     error
	loading bool
	// preview is the chosen session's conversation, rendered, when Tab
	// asked for it; previewID says whose.
	previewID string
	preview   []string
}

// Messages of the picker.
type (
	sessionsMsg struct {
		list []SessionInfo
		err  error
	}
	previewMsg struct {
		id    string
		msgs  []llm.Message
		err   error
		width int
	}
)

// openPicker opens the /resume picker, loading the list.
func (m *model) openPicker(sp SessionPicker) tea.Cmd {
	m.picker = &sessionPicker{loading: true}
	ctx := m.ctx
	return func() tea.Msg {
		list, err := sp.SessionList(ctx)
		return sessionsMsg{list, err}
	}
}

// onSessions fills the picker.
func (m *model) onSessions(msg sessionsMsg) {
	p := m.picker
	if p == nil {
		return
	}
	p.loading, p.all, p.err = false, msg.list, msg.err
	p.filter()
}

// filter keeps the sessions matching the query, best first; an empty
// query keeps them all, newest first.
func (p *sessionPicker) filter() {
	type hit struct {
		s     SessionInfo
		score int
	}
	var hits []hit
	for _, s := range p.all {
		best, ok := -1, false
		for _, field := range []string{s.Title, s.Preview, s.ID} {
			if sc, match := suggest.Fuzzy(p.query, field); match && field != "" {
				best, ok = max(best, sc), true
			}
		}
		if ok || p.query == "" {
			hits = append(hits, hit{s, best})
		}
	}
	if p.query != "" {
		slices.SortStableFunc(hits, func(a, b hit) int { return cmp.Compare(b.score, a.score) })
	}
	p.shown = p.shown[:0]
	for _, h := range hits {
		p.shown = append(p.shown, h.s)
	}
	p.sel = min(p.sel, max(0, len(p.shown)-1))
}

// pickerKey handles a key while the picker is open.
func (m *model) pickerKey(msg tea.KeyPressMsg) tea.Cmd {
	p := m.picker
	switch k := msg.String(); k {
	case "esc":
		m.picker = nil
	case "up", "ctrl+p":
		if n := len(p.shown); n > 0 {
			p.sel = (p.sel + n - 1) % n
		}
	case "down", "ctrl+n":
		if n := len(p.shown); n > 0 {
			p.sel = (p.sel + 1) % n
		}
	case "tab":
		return m.togglePreview()
	case "enter":
		if len(p.shown) == 0 {
			return nil
		}
		s := p.shown[p.sel]
		m.picker = nil
		if s.ID == m.info.SessionID {
			return m.setNotice("That is the session you are in.")
		}
		return m.command("resume", s.ID)
	case "backspace":
		if p.query != "" {
			r := []rune(p.query)
			p.query = string(r[:len(r)-1])
			p.filter()
		}
	default:
		if msg.Text != "" {
			p.query += msg.Text
			p.filter()
		}
	}
	return nil
}

// togglePreview shows or hides the chosen session's last messages.
func (m *model) togglePreview() tea.Cmd {
	p := m.picker
	if len(p.shown) == 0 {
		return nil
	}
	id := p.shown[p.sel].ID
	if p.previewID == id {
		p.previewID, p.preview = "", nil
		return nil
	}
	p.previewID, p.preview = id, []string{m.st.dim.Render("loading…")}
	sp := m.backend.(SessionPicker)
	ctx, width := m.ctx, m.width
	return func() tea.Msg {
		msgs, err := sp.SessionPreview(ctx, id)
		return previewMsg{id: id, msgs: msgs, err: err, width: width}
	}
}

// onPreview shows a session's last messages in the picker.
func (m *model) onPreview(msg previewMsg) {
	p := m.picker
	if p == nil || p.previewID != msg.id {
		return
	}
	if msg.err != nil {
		p.preview = []string{m.st.bad.Render("✗ " + msg.err.Error())}
		return
	}
	var lines []string
	for _, s := range m.transcript(msg.msgs) {
		lines = append(lines, strings.Split(s, "\n")...)
	}
	if len(lines) > previewLines {
		lines = append([]string{m.st.dim.Render(fmt.Sprintf("… %d lines before", len(lines)-previewLines))}, lines[len(lines)-previewLines:]...)
	}
	if len(lines) == 0 {
		lines = []string{m.st.dim.Render("(no messages)")}
	}
	p.preview = lines
}

// pickerView draws the picker in place of the input box.
func (m *model) pickerView() string {
	p := m.picker
	w := max(20, m.width-4)
	var b strings.Builder
	b.WriteString(m.st.accent.Render("Resume a session") + m.st.dim.Render("  search: ") + m.st.user.Render(p.query+"▏"))
	switch {
	case p.loading:
		b.WriteString("\n" + m.st.dim.Render("loading the sessions…"))
	case p.err != nil:
		b.WriteString("\n" + m.st.bad.Render(ansi.Truncate("✗ "+p.err.Error(), w, "…")))
	case len(p.all) == 0:
		b.WriteString("\n" + m.st.dim.Render("No sessions in this workspace yet."))
	case len(p.shown) == 0:
		b.WriteString("\n" + m.st.dim.Render("No session matches."))
	}
	start := 0
	if p.sel >= pickerRows {
		start = p.sel - pickerRows + 1
	}
	for i := start; i < min(len(p.shown), start+pickerRows); i++ {
		s := p.shown[i]
		title := s.Title
		if title == "" {
			title = s.Preview
		}
		if title == "" {
			title = "(no prompt yet)"
		}
		facts := []string{fmtAge(m.now().Sub(s.Updated))}
		if s.CostUSD > 0 {
			facts = append(facts, fmtCost(s.CostUSD))
		}
		if s.ID == m.info.SessionID {
			facts = append(facts, "current")
		}
		right := " " + strings.Join(facts, " · ") + " · " + s.ID
		line := oneLine(title, max(10, w-ansi.StringWidth(right)-2))
		line += strings.Repeat(" ", max(1, w-ansi.StringWidth(line)-ansi.StringWidth(right)-2))
		if i == p.sel {
			b.WriteString("\n" + m.st.accent.Render("› "+line) + m.st.dim.Render(right))
		} else {
			b.WriteString("\n  " + line + m.st.dim.Render(right))
		}
	}
	if n := len(p.shown) - min(len(p.shown), start+pickerRows); n > 0 {
		b.WriteString("\n" + m.st.dim.Render(fmt.Sprintf("  … %d more", n)))
	}
	for _, l := range p.preview {
		b.WriteString("\n" + m.st.dim.Render("│ ") + ansi.Truncate(l, w-2, "…"))
	}
	b.WriteString("\n\n" + m.st.dim.Render("type to search · ↑↓ choose · tab preview · enter resume · esc close"))
	return m.st.askBox.Width(m.width).Render(b.String())
}

// fmtAge says how long ago, roughly.
func fmtAge(d time.Duration) string {
	switch {
	case d < time.Minute:
		return "just now"
	case d < time.Hour:
		return fmt.Sprintf("%dm ago", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh ago", int(d.Hours()))
	}
	return fmt.Sprintf("%dd ago", int(d.Hours()/24))
}
