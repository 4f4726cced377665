package agent

import (
	"github.com/reinhq/rein/permission"
)

// Plan mode (SPEC PERM-7) in the loop: the policy asks about every
// exit_plan_mode call in plan mode; the loop reports the plan as a plan
// event before the question and again with the answer, keeps the newest
// plan in the task focus (so compaction keeps it, CTX-5), and ends a run
// whose plan nobody can approve (a headless run) with [ReasonPlanReady].
// Hooks may refuse a plan, never approve one: the approval is the user's.

// EventPlan reports a plan presented with exit_plan_mode: proposed (the
// question follows), then approved (with the mode the session switched
// to), rejected (with the user's feedback) or ready (the run ends with
// the plan, nobody could approve it in this run).
const EventPlan EventType = "plan"

// ReasonPlanReady ends a run that stopped at its plan: the model presented
// one with exit_plan_mode and no one could approve it in this run (a
// headless `rein run`). The plan is in done.plan; approve it by resuming
// the session in another mode.
const ReasonPlanReady Reason = "plan_ready"

// PlanStatus says where a plan stands.
type PlanStatus string

// The plan statuses.
const (
	PlanProposed PlanStatus = "proposed"
	PlanApproved PlanStatus = "approved"
	PlanRejected PlanStatus = "rejected"
	PlanReady    PlanStatus = "ready"
)

// PlanEvent is a plan presented for approval (SPEC PERM-7).
type PlanEvent struct {
	// CallID is the exit_plan_mode call; its permission_request carries
	// the same id, and answering it answers the plan.
	CallID string     `json:"call_id"`
	Status PlanStatus `json:"status"`
	// Plan is the plan's text (markdown).
	Plan string `json:"plan"`
	// Mode is the permission mode an approval switched the session to.
	Mode string `json:"mode,omitempty"`
	// Feedback is the user's message with a rejection.
	Feedback string `json:"feedback,omitempty"`
}

// isPlanCall reports an exit_plan_mode call of the built-in tool.
func isPlanCall(c Check) bool {
	return permission.IsPlanApproval(permission.Request{Tool: c.Call.Name, Origin: c.Origin})
}

// planAnswered is the plan event that follows the answer a.
func planAnswered(c Check, plan string, a Answer) *PlanEvent {
	pe := &PlanEvent{CallID: c.Call.ID, Plan: plan}
	switch {
	case a.Allow:
		pe.Status, pe.Mode = PlanApproved, a.Mode
	case a.End == ReasonPlanReady:
		pe.Status = PlanReady
	default:
		pe.Status, pe.Feedback = PlanRejected, a.Message
	}
	return pe
}
