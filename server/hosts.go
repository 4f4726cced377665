package server

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"slices"
	"strings"
)

// hostPolicy is the Host allow-list (SPEC API-8): the names a request may
// address this server by. DNS rebinding points a name the attacker owns at
// this machine, so the browser sends that name in Host; refusing every name
// the operator did not give closes it. Always allowed: the name localhost
// and any loopback address, and the address the request's connection
// arrived at (a client that dialled an IP address directly is not being
// rebound: no name was resolved). Anything else must be configured.
//
// Subdomains of localhost (app.localhost) are not allowed by default:
// browsers resolve them to loopback themselves, but other resolvers may ask
// DNS, where an attacker can answer. Trailing dots (localhost.) are a
// different name to the browser's origin and are refused unless configured.
type hostPolicy struct {
	// names are the configured names without a port (any port allowed),
	// lowercased; IPs hold configured addresses.
	names []string
	ips   []netip.Addr
	// withPort are configured "name:port" entries, lowercased: that port
	// only.
	withPort []string
}

// newHostPolicy checks and normalises the configured hosts.
func newHostPolicy(hosts []string) (*hostPolicy, error) {
	p := &hostPolicy{}
	for _, h := range hosts {
		name, port, err := ParseAllowedHost(h)
		if err != nil {
			return nil, fmt.Errorf("server: config: AllowedHosts: %w", err)
		}
		switch ip, ipErr := netip.ParseAddr(name); {
		case port != "":
			p.withPort = append(p.withPort, net.JoinHostPort(name, port))
		case ipErr == nil:
			p.ips = append(p.ips, ip.Unmap())
		default:
			p.names = append(p.names, name)
		}
	}
	return p, nil
}

// ParseAllowedHost checks an entry of the Host allow-list — a name or an IP
// address, optionally with a port ("rein.example.com",
// "rein.example.com:8443", "10.0.0.5", "[fd00::1]:7878") — and returns its
// host (lowercased, without brackets) and port ("" for any). Wildcards,
// schemes and paths are refused with what to write instead.
func ParseAllowedHost(entry string) (host, port string, err error) {
	switch {
	case entry == "":
		return "", "", errors.New("empty host: name one, e.g. rein.example.com")
	case strings.Contains(entry, "*"):
		return "", "", fmt.Errorf("host %q: wildcards are not allowed (any name could then be rebound to this server); list each name", entry)
	case strings.Contains(entry, "://") || strings.ContainsAny(entry, "/?#@"):
		return "", "", fmt.Errorf("host %q: want a bare host name or address with an optional port (rein.example.com:8443), not a URL", entry)
	}
	host, port, ok := splitHost(entry)
	if !ok {
		return "", "", fmt.Errorf("host %q: not a valid host name or address[:port]", entry)
	}
	return host, port, nil
}

// allowed reports whether r's Host is one this server answers to.
func (p *hostPolicy) allowed(r *http.Request) bool {
	host, port, ok := splitHost(r.Host)
	if !ok {
		return false
	}
	if port != "" && len(p.withPort) > 0 && slices.Contains(p.withPort, net.JoinHostPort(host, port)) {
		return true
	}
	if ip, err := netip.ParseAddr(host); err == nil {
		ip = ip.Unmap()
		return ip.IsLoopback() || slices.Contains(p.ips, ip) || ip == localIP(r)
	}
	return host == "localhost" || slices.Contains(p.names, host)
}

// localIP is the address the request's connection arrived at, the zero
// address when the server does not say (a handler called directly).
func localIP(r *http.Request) netip.Addr {
	a, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if !ok {
		return netip.Addr{}
	}
	ap, err := netip.ParseAddrPort(a.String())
	if err != nil {
		return netip.Addr{}
	}
	return ap.Addr().Unmap()
}

// splitHost splits a Host header value ("name", "name:port", "1.2.3.4:80",
// "[::1]:80", "[::1]") into its lowercased host, without brackets, and its
// port ("" when none). It reports false for anything else: an empty host,
// a bare IPv6 address, an IPv6 zone, a port that is not 1 to 5 digits, a
// character that no host name holds.
func splitHost(hostport string) (host, port string, ok bool) {
	if strings.HasPrefix(hostport, "[") {
		end := strings.IndexByte(hostport, ']')
		if end < 0 {
			return "", "", false
		}
		host, rest := hostport[1:end], hostport[end+1:]
		ip, err := netip.ParseAddr(host)
		if err != nil || !ip.Is6() || ip.Zone() != "" {
			return "", "", false
		}
		if rest != "" {
			if port, ok = strings.CutPrefix(rest, ":"); !ok || !validPort(port) {
				return "", "", false
			}
		}
		return strings.ToLower(host), port, true
	}
	host, port, hasPort := strings.Cut(hostport, ":")
	if hasPort && !validPort(port) {
		return "", "", false
	}
	if !validHostName(host) {
		return "", "", false
	}
	return strings.ToLower(host), port, true
}

// validPort reports whether s is 1 to 5 digits.
func validPort(s string) bool {
	if s == "" || len(s) > 5 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// validHostName reports whether s is a DNS name or an IPv4 address in
// characters: letters, digits, '-', '_' and '.', at most 253 of them.
func validHostName(s string) bool {
	if s == "" || len(s) > 253 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i] | 0x20 // ASCII lower case
		switch {
		case c >= 'a' && c <= 'z', s[i] >= '0' && s[i] <= '9', s[i] == '-', s[i] == '.', s[i] == '_':
		default:
			return false
		}
	}
	return true
}
