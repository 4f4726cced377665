package runner

import (
	"github.com/reinhq/rein/permission"
	"github.com/reinhq/rein/tool"
	"github.com/reinhq/rein/tool/builtin"
)

// exitPlanMode is the session's exit_plan_mode tool (SPEC PERM-7). The
// policy asks the user about each call in plan mode and denies it in every
// other; the answer switches the setup's policy out of plan mode for the
// rest of the session (permission.Engine.ApprovePlan), and the tool, run
// once approved, tells the model the mode it now works in and keeps the
// plan in the session's plan file (permission.PlanFile).
func (c *Conversation) exitPlanMode() tool.Tool {
	return builtin.NewExitPlanMode(builtin.PlanOptions{Mode: func() string { return string(c.s.policy.Mode()) }})
}

// PlanFile returns the bound session's plan file, "" before a session is
// bound: where exit_plan_mode keeps the newest approved plan, and the one
// file plan mode lets the model write.
func (c *Conversation) PlanFile() string { return permission.PlanFile(c.sessDir) }
