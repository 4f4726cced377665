package permission

import "github.com/reinhq/rein/tool"

// networkAsk asks, in every mode, before a call reaches this machine or a
// private network, unless an allow rule names the host (SPEC PERM-2).
func (d *decider) networkAsk() (Outcome, bool) {
	if d.f.host == "" || !tool.LocalHost(d.f.host) {
		return Outcome{}, false
	}
	if d.mode != ModeStrict {
		for i := range d.rules {
			c := &d.rules[i]
			if c.rule.Action == DecisionAllow && c.kind == kindDomain && c.matchTool(d.f.req) && c.matchDomain(d.f.host) {
				return Outcome{}, false
			}
		}
	}
	return ask("%s would reach %s, this machine or a private network, where local services answer; "+
		"that needs confirmation in every mode unless an allow rule names it (%s(domain:%s))", d.f.req.Tool, d.f.host, d.f.req.Tool, d.f.host), true
}
