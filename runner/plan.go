package runner

import (
	"fmt"
	"slices"

	"github.com/reinhq/rein/agent"
	"github.com/reinhq/rein/permission"
	"github.com/reinhq/rein/tool"
	"github.com/reinhq/rein/tool/builtin"
)

// withPlanTool returns the tools of a run started in plan mode (SPEC
// PERM-7): set with exit_plan_mode added at the end. Outside plan mode the
// set is returned as it is, so the tool list — and the prompt cache of
// every other session — does not change; entering or leaving plan mode
// changes it once. A tool set of no tools (a chat workspace) stays so, and
// a --disallowed-tools exit_plan_mode or an agent not allowing it leaves
// it out.
func (c *Conversation) withPlanTool(set *tool.Set) *tool.Set {
	if set == nil || c.s.policy.Mode() != permission.ModePlan || slices.Contains(c.s.cfg.Hidden, builtin.ExitPlanModeName) ||
		!allows(c.s.main, builtin.ExitPlanModeName) {
		return set
	}
	if _, has := set.Get(builtin.ExitPlanModeName); has {
		return set
	}
	withPlan := set.Filter(func(string, *tool.Entry) bool { return true })
	if err := withPlan.Add(tool.OriginBuiltin, c.exitPlanMode()); err != nil {
		c.s.logger.Warn("exit_plan_mode is left out", "err", err)
		return set
	}
	return withPlan
}

// exitPlanMode is the session's exit_plan_mode tool. The policy asks the
// user about each call in plan mode and denies it in every other; the
// answer switches the setup's policy out of plan mode for the rest of the
// session (permission.Engine.ApprovePlan), and the tool, run once
// approved, tells the model the mode it now works in and keeps the plan in
// the session's plan file (permission.PlanFile).
func (c *Conversation) exitPlanMode() tool.Tool {
	return builtin.NewExitPlanMode(builtin.PlanOptions{Mode: func() string { return string(c.s.policy.Mode()) }})
}

// PlanFile returns the bound session's plan file, "" before a session is
// bound: where exit_plan_mode keeps the newest approved plan, and the one
// file plan mode lets the model write.
func (c *Conversation) PlanFile() string { return permission.PlanFile(c.sessDir) }

// planReminder is the note each request of a plan-mode run carries (see
// agent.Config.Reminder): the model is told what plan mode lets it do and
// how to end it, while the policy enforces it. "" outside plan mode.
func (c *Conversation) planReminder() string {
	if c.s.policy.Mode() != permission.ModePlan {
		return ""
	}
	file := c.PlanFile()
	draft := ""
	if file != "" {
		draft = " You may draft the plan in " + file + ", the one file you may write."
	}
	return "<system-reminder>\n# Plan mode\nThe user wants a plan before any change. Read and search the code and run " +
		"commands that only read; do not try to change anything: edits, writes and other commands are refused until " +
		"the plan is approved." + draft + " When the plan is ready, call " + builtin.ExitPlanModeName + " with the full " +
		"plan (the steps, the files each changes, how the result will be checked); the user approves it or sends it " +
		"back with feedback.\n</system-reminder>"
}

// ApprovePlan implements agent.PlanApprover for an agent with tool rules:
// the answer to its plan switches the policy beneath the scope.
func (p *scopedPolicy) ApprovePlan(a permission.Answer) (permission.Mode, error) {
	pa, ok := p.base.(agent.PlanApprover)
	if !ok {
		return "", fmt.Errorf("the policy of agent %s has no plan mode to leave", p.agent)
	}
	return pa.ApprovePlan(a)
}

var (
	_ agent.PlanApprover = (*permission.Engine)(nil)
	_ agent.PlanApprover = (*scopedPolicy)(nil)
)
