package tool

import (
	"net/netip"
	"strings"
)

// LocalAddr reports an address of this machine or a private network:
// loopback, private, link-local (cloud metadata services), unspecified.
func LocalAddr(a netip.Addr) bool {
	a = a.Unmap()
	return a.IsLoopback() || a.IsPrivate() || a.IsLinkLocalUnicast() || a.IsLinkLocalMulticast() || a.IsUnspecified()
}

// LocalHost reports a URL host that names this machine or a private network
// itself: localhost, a name under .localhost, or an IP literal [LocalAddr]
// accepts. The permission policy asks before a tool reaches one, and
// web_fetch connects to a local address only when its URL names one (SPEC
// PERM-2).
func LocalHost(host string) bool {
	h := strings.ToLower(strings.TrimSuffix(strings.Trim(host, "[]"), "."))
	if h == "localhost" || strings.HasSuffix(h, ".localhost") {
		return true
	}
	a, err := netip.ParseAddr(h)
	return err == nil && LocalAddr(a)
}
