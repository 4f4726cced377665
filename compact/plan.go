package compact

import (
	"strings"

	"github.com/reinhq/rein/agent"
)

// PlanHeader opens the plan a summary carries verbatim (SPEC PERM-7).
const PlanHeader = "The plan presented with exit_plan_mode (newest; kept verbatim by the harness):"

// withPlan appends the task's plan to a summary, word for word: a model's
// summary may shorten it, and the plan is what the rest of the session
// carries out. A summary already holding it is left as it is.
func withPlan(summary string, f *agent.Focus) string {
	if f == nil || strings.TrimSpace(f.Plan) == "" || strings.Contains(summary, f.Plan) {
		return summary
	}
	return summary + "\n\n" + PlanHeader + "\n\n" + f.Plan
}
