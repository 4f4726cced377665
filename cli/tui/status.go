package tui

import (
	"fmt"
	"strings"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"
)

// ContextReporter is a [Backend] that knows how full the model's context
// window is: used is the conversation's size in tokens (an estimate before
// the first reply), window the model's window; zero when unknown. The status
// line asks at start and after every slash command; during a run, the
// usage events say it exactly.
type ContextReporter interface {
	Context() (used, window int64)
}

// modeBadge is the permission mode as the status line shows it, always
// (SPEC CLI-6): a mark and the mode's name, in the mode's colour.
func (m *model) modeBadge(mode string) string {
	if mode == "" {
		return ""
	}
	mark, colour := "●", "245"
	switch mode {
	case "accept-edits":
		mark, colour = "⏵⏵", "141"
	case "plan":
		mark, colour = "⏸", "37"
	case "bypass":
		mark, colour = "⚠", "203"
	case "read-only", "strict":
		mark, colour = "◼", "214"
	}
	return lipgloss.NewStyle().Foreground(lipgloss.Color(colour)).Bold(true).Render(mark + " " + mode + " mode")
}

// contextText is the share of the context window used, "" when unknown.
func contextText(used, window int64) string {
	if used <= 0 || window <= 0 {
		return ""
	}
	pct := float64(used) * 100 / float64(window)
	switch {
	case pct < 1:
		return "<1% context"
	case pct > 999:
		return ">999% context"
	}
	return fmt.Sprintf("%.0f%% context", pct)
}

// refreshContext asks the backend how full the context is.
func (m *model) refreshContext() {
	if c, ok := m.backend.(ContextReporter); ok {
		m.ctxUsed, m.ctxWindow = c.Context()
	}
}

// statusView is the line under the input: the mode, the model, the
// context used, tokens and cost, and the keys that matter now.
func (m *model) statusView() string {
	i := m.info
	tokens, cost := i.Tokens, i.CostUSD
	if r := m.run; r != nil {
		tokens, cost = r.base.Tokens+r.tokens, r.base.CostUSD+r.cost
	}
	var left []string
	if i.Model != "" {
		left = append(left, i.Model)
	}
	if c := contextText(m.ctxUsed, m.ctxWindow); c != "" {
		left = append(left, c)
	}
	if tokens > 0 {
		left = append(left, fmtTokens(tokens)+" tokens")
	}
	if cost > 0 {
		left = append(left, fmtCost(cost))
	}
	hint := "/ commands · @ files · ! shell · shift+tab mode"
	switch {
	case m.currentAsk() != nil:
		hint = "y allow · a always · n deny · ctrl+c interrupt"
	case m.currentQuestion() != nil:
		hint = "enter answer · esc decline · ctrl+c interrupt"
		if q := m.currentQuestion(); q.typing && len(q.options) > 0 {
			hint = "enter send · esc back · ctrl+c interrupt"
		}
	case m.busy():
		hint = "ctrl+c interrupt · enter queues"
	case m.popup.open():
		hint = "esc close"
	}
	badge := m.modeBadge(i.PermissionMode)
	l := m.st.dim.Render(strings.Join(left, " · "))
	if badge != "" {
		l = badge + m.st.dim.Render(" · ") + l
	}
	gap := m.width - ansi.StringWidth(l) - ansi.StringWidth(hint) - 2
	if gap < 1 {
		return " " + ansi.Truncate(l, max(0, m.width-2), "…")
	}
	return " " + l + strings.Repeat(" ", gap) + m.st.dim.Render(hint)
}
