package permission

import "github.com/reinhq/rein/tool"

// networkAsk asks, in every mode, before a call reaches this machine or a
// private network, unless an allow rule names the host (SPEC PERM-2). In
// a server caller's run it denies instead, unless an allow rule of the
// operator names the host (SPEC API-9): the caller would otherwise answer
// its own question and reach the server's local services (the database,
// the cloud's metadata address).
func (d *decider) networkAsk() (Outcome, bool) {
	if d.f.host == "" || !tool.LocalHost(d.f.host) {
		return Outcome{}, false
	}
	if d.mode != ModeStrict {
		for i := range d.rules {
			c := &d.rules[i]
			if c.rule.Action == DecisionAllow && c.kind == kindDomain && c.matchTool(d.f.req) && c.matchDomain(d.f.host) &&
				(!d.tenant || operatorSource(c.rule.Source)) {
				return Outcome{}, false
			}
		}
	}
	if d.tenant {
		return deny("%s would reach %s, the server's machine or a private network: a caller's run may not; "+
			"the operator can allow the host with an allow rule in the server's settings (%s(domain:%s))", d.f.req.Tool, d.f.host, d.f.req.Tool, d.f.host), true
	}
	return ask("%s would reach %s, this machine or a private network, where local services answer; "+
		"that needs confirmation in every mode unless an allow rule names it (%s(domain:%s))", d.f.req.Tool, d.f.host, d.f.req.Tool, d.f.host), true
}

// operatorSource reports whether a rule is the operator's own — the
// user's settings, or a workspace's the operator trusted — rather than a
// caller's (its answers, the run's options, the session's).
func operatorSource(s Source) bool {
	return s == SourceUser || s == SourceWorkspace
}
