package runner

import (
	"context"
	"iter"

	"github.com/reinhq/rein/llm"
	"github.com/reinhq/rein/permission"
)

// Claude Code's opusplan (SPEC PERM-7, COMPAT-1): a [Model] with a Plan
// model runs its calls on the plan model while the session's permission
// mode is plan, and on itself otherwise — a plan approved in the middle of
// a run moves the next call to the main model, as leaving plan mode with
// the mode cycle does. The mode is read at each call, from the policy
// plan mode's approval switches.

// planRouted is a provider that sends each request to the plan model
// while inPlan says so, naming that model in the request.
type planRouted struct {
	main, plan *Model
	inPlan     func() bool
}

// Stream implements llm.Provider.
func (p *planRouted) Stream(ctx context.Context, req *llm.Request) iter.Seq2[llm.Delta, error] {
	if !p.inPlan() {
		return p.main.Provider.Stream(ctx, req)
	}
	r := *req
	r.Model = p.plan.Name
	return p.plan.Provider.Stream(ctx, &r)
}

// price is the cost of a call's usage on the model the call ran on.
func (p *planRouted) price(u llm.Usage) float64 {
	if p.inPlan() {
		return p.plan.Caps.Price.Cost(u)
	}
	return p.main.Caps.Price.Cost(u)
}

// modelCalls returns the provider and the price of a run's model calls:
// m's own, or routed by the permission mode when m has a plan model.
func (c *Conversation) modelCalls(m *Model) (llm.Provider, func(llm.Usage) float64) {
	if m.Plan == nil || m.Frame != nil {
		return m.Provider, m.Caps.Price.Cost
	}
	p := &planRouted{main: m, plan: m.Plan, inPlan: func() bool { return c.s.policy.Mode() == permission.ModePlan }}
	return p, p.price
}
