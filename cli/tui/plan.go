package tui

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/x/ansi"

	"github.com/reinhq/rein/permission"
)

// maxPlanLines bounds the plan shown in the approval box; the whole plan
// is in the session's plan file once approved.
const maxPlanLines = 40

// planRejected is what the model reads when the user sends a plan back
// from the terminal: the feedback comes as the user's next message.
const planRejected = "the user wants to keep planning and will say what to change in their next message: end your turn now"

// isPlanAsk reports a question that is a plan to approve (SPEC PERM-7).
func isPlanAsk(a *ask) bool { return permission.IsPlanApproval(a.prompt.Request) }

// planAskView shows a plan to approve: the plan itself, rendered, and the
// three choices.
func (m *model) planAskView(a *ask) string {
	w := max(20, m.width-4)
	var b strings.Builder
	b.WriteString(m.st.warn.Render("Plan ready for your approval"))
	plan := strings.TrimSpace(permission.PlanOf(a.prompt.Request.Input))
	lines := strings.Split(strings.TrimRight(m.md.render(plan, w, m.dark), "\n"), "\n")
	if len(lines) > maxPlanLines {
		lines = append(lines[:maxPlanLines], m.st.dim.Render(fmt.Sprintf("… %d more lines", len(lines)-maxPlanLines)))
	}
	for _, l := range lines {
		b.WriteString("\n  " + ansi.Truncate(l, w-2, "…"))
	}
	left := max(0, a.deadline.Sub(m.now()))
	choices := m.st.bold.Render("approve, confirm each edit (y) / approve, accept edits (a) / keep planning (n)")
	b.WriteString("\n\n" + choices + m.st.dim.Render(fmt.Sprintf("  · stops in %s", fmtDelay(left.Round(1e9)))))
	return m.st.askBox.Width(m.width).Render(b.String())
}

// planVerdict is the answer to a plan by key: y approves into default
// mode, a into accept-edits, n (or Esc) sends it back.
func planVerdict(k string) (permission.Verdict, string, bool) {
	switch strings.ToLower(k) {
	case "y":
		return permission.Verdict{Answer: permission.AnswerOnce}, "plan approved: edits ask (default mode)", true
	case "a":
		return permission.Verdict{Answer: permission.AnswerAlways}, "plan approved: edits run (accept-edits mode)", true
	case "n", "esc":
		return permission.Verdict{Answer: permission.AnswerDeny, Message: planRejected}, "plan sent back: type what to change", true
	}
	return permission.Verdict{}, "", false
}
