package tool

import (
	"net/netip"
	"strings"
)

// LocalAddr reports an address of this machine or a private network:
// loopback, private, link-local (cloud metadata services), unspecified,
// the shared address space, and any of these behind the NAT64 prefix.
func LocalAddr(a netip.Addr) bool {
	a = a.Unmap()
	if nat64.Contains(a) {
		// A NAT64 gateway takes the IPv4 address in the last 32 bits to
		// the IPv4 network: judge that one.
		b := a.As16()
		a = netip.AddrFrom4([4]byte(b[12:]))
	}
	return a.IsLoopback() || a.IsPrivate() || a.IsLinkLocalUnicast() || a.IsLinkLocalMulticast() || a.IsUnspecified() ||
		sharedSpace.Contains(a)
}

var (
	// sharedSpace is RFC 6598's 100.64.0.0/10: carrier-grade NAT, the
	// addresses of Tailscale's peers, and Alibaba Cloud's metadata service
	// (100.100.100.200), which serves the instance's credentials.
	sharedSpace = netip.MustParsePrefix("100.64.0.0/10")
	// nat64 is RFC 6052's well-known prefix, 64:ff9b::/96.
	nat64 = netip.MustParsePrefix("64:ff9b::/96")
)

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
