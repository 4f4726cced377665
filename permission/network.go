package permission

import (
	"net/netip"
	"strings"
)

// localHost reports a host that names this machine or a private network:
// localhost, loopback, private, link-local (cloud metadata services) and
// unspecified addresses. Reaching one is a door to local services.
func localHost(host string) bool {
	h := strings.ToLower(strings.TrimSuffix(strings.Trim(host, "[]"), "."))
	if h == "localhost" || strings.HasSuffix(h, ".localhost") {
		return true
	}
	a, err := netip.ParseAddr(h)
	if err != nil {
		return false
	}
	a = a.Unmap()
	return a.IsLoopback() || a.IsPrivate() || a.IsLinkLocalUnicast() || a.IsLinkLocalMulticast() || a.IsUnspecified()
}

// networkAsk asks, in every mode, before a call reaches this machine or a
// private network, unless an allow rule names the host (SPEC PERM-2).
func (d *decider) networkAsk() (Outcome, bool) {
	if d.f.host == "" || !localHost(d.f.host) {
		return Outcome{}, false
	}
	if d.mode != ModeStrict {
		for i := range d.rules {
			c := &d.rules[i]
			if c.rule.Action == DecisionAllow && c.kind == kindDomain && c.matchTool(d.f.req.Tool) && c.matchDomain(d.f.host) {
				return Outcome{}, false
			}
		}
	}
	return ask("%s would reach %s, this machine or a private network, where local services answer; "+
		"that needs confirmation in every mode unless an allow rule names it (%s(domain:%s))", d.f.req.Tool, d.f.host, d.f.req.Tool, d.f.host), true
}
