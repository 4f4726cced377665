// Package egress is the sandbox's way out to the network (SPEC TOOL-7): an
// HTTP forward proxy (CONNECT for TLS and any TCP, absolute-form requests
// for plain HTTP) that lets a sandboxed command reach only the hosts of an
// allow-list. The sandbox has no network of its own (a private network
// namespace with only loopback); rein serves a [Gate] on a unix socket
// bound into it, and a forwarder inside turns that socket into the
// HTTP_PROXY the command's tools use. See docs/security.md, "Sandbox
// profiles and egress".
package egress

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"slices"
	"strconv"
	"strings"
)

// Registries is the ready-made allow-list entry that stands for the common
// package registries ([RegistryHosts]).
const Registries = "registries"

// RegistryHosts are the hosts [Registries] allows, on ports 80 and 443:
// Go's module proxy and checksum database, npm, Yarn, PyPI, crates.io,
// Maven Central, Gradle's plugin portal and distributions, RubyGems and
// GitHub (where Go modules and git dependencies come from).
var RegistryHosts = []string{
	"proxy.golang.org", "sum.golang.org", "storage.googleapis.com",
	"registry.npmjs.org", "registry.yarnpkg.com", "repo.yarnpkg.com",
	"pypi.org", "files.pythonhosted.org",
	"crates.io", "index.crates.io", "static.crates.io",
	"repo.maven.apache.org", "repo1.maven.org", "plugins.gradle.org", "services.gradle.org", "downloads.gradle.org",
	"rubygems.org", "index.rubygems.org",
	"github.com", "codeload.github.com", "objects.githubusercontent.com",
}

// DefaultPorts are the ports an entry without a port allows.
var DefaultPorts = []int{80, 443}

// rule is one allow-list entry: a host name, a wildcard suffix (*.example.com
// matches its subdomains, not itself) or an address, and a port (0: the
// DefaultPorts).
type rule struct {
	name   string // lower case, no trailing dot; "" for an address
	suffix bool   // name is a suffix: *.name
	addr   netip.Addr
	port   int
}

// List is a parsed allow-list. The zero List allows nothing.
type List struct {
	rules   []rule
	entries []string
}

// ParseList reads allow-list entries: "registry.npmjs.org",
// "registry.npmjs.org:8443", "*.example.com", "127.0.0.1:4873",
// "[::1]:8080", "localhost:3000", or [Registries]. An entry without a port
// allows ports 80 and 443. An address or localhost is reached only when it
// is listed itself: a name that resolves to a loopback or link-local
// address is refused (see [Gate]). A bad entry is an error that says how to
// write it.
func ParseList(entries []string) (List, error) {
	var l List
	for _, raw := range entries {
		e := strings.TrimSpace(raw)
		if e == "" {
			continue
		}
		if strings.EqualFold(e, Registries) {
			for _, h := range RegistryHosts {
				l.rules = append(l.rules, rule{name: h})
			}
			l.entries = append(l.entries, Registries)
			continue
		}
		r, err := parseRule(e)
		if err != nil {
			return List{}, err
		}
		l.rules = append(l.rules, r)
		l.entries = append(l.entries, e)
	}
	return l, nil
}

// Entries returns the entries as given (trimmed, empty ones left out).
func (l List) Entries() []string { return slices.Clone(l.entries) }

// Empty reports whether the list allows nothing.
func (l List) Empty() bool { return len(l.rules) == 0 }

func parseRule(e string) (rule, error) {
	hint := fmt.Sprintf("sandbox.allow_hosts: %q is not a host: write a host name, *.domain, an address, each with an optional :port (registry.npmjs.org, *.example.com, 127.0.0.1:4873, [::1]:8080), or %q for the package registries", e, Registries)
	if strings.Contains(e, "://") || strings.ContainsAny(e, "/@?#% \t") {
		return rule{}, errors.New(hint + "; give the host alone, without scheme, path or user")
	}
	host, port := e, 0
	if h, p, err := net.SplitHostPort(e); err == nil {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 || n > 65535 {
			return rule{}, fmt.Errorf("%s; the port must be 1 to 65535", hint)
		}
		host, port = h, n
	} else if strings.HasPrefix(e, "[") || strings.Count(e, ":") == 1 {
		return rule{}, errors.New(hint)
	}
	if a, err := netip.ParseAddr(strings.Trim(host, "[]")); err == nil {
		if a.Zone() != "" {
			return rule{}, errors.New(hint + "; zones are not allowed")
		}
		return rule{addr: a.Unmap(), port: port}, nil
	}
	suffix := false
	if rest, ok := strings.CutPrefix(host, "*."); ok {
		suffix, host = true, rest
	}
	name, ok := normalName(host)
	if !ok {
		return rule{}, errors.New(hint)
	}
	if suffix && !strings.Contains(name, ".") {
		return rule{}, fmt.Errorf("%s; *.%s would match a whole top-level domain", hint, name)
	}
	return rule{name: name, suffix: suffix, port: port}, nil
}

// normalName lower-cases a DNS name and drops a trailing dot; ok is false
// when it is not one (labels of letters, digits, - and _, 1 to 63 bytes,
// 253 in all; international names in their xn-- form).
func normalName(h string) (string, bool) {
	h = strings.TrimSuffix(strings.ToLower(h), ".")
	if h == "" || len(h) > 253 {
		return "", false
	}
	for _, label := range strings.Split(h, ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return "", false
		}
		for i := 0; i < len(label); i++ {
			c := label[i]
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
				return "", false
			}
		}
	}
	return h, true
}

// Target is a destination as a client asked for it: a normalised name or
// an address, and a port.
type Target struct {
	// Name is the host name, lower case without a trailing dot; "" when
	// the client gave an address.
	Name string
	// Addr is the address the client gave; invalid when it gave a name.
	Addr netip.Addr
	Port int
}

// String is host:port as a client would write it.
func (t Target) String() string {
	h := t.Name
	if h == "" {
		h = t.Addr.String()
	}
	return net.JoinHostPort(h, strconv.Itoa(t.Port))
}

// ParseTarget reads a host:port authority as a client sends it in CONNECT
// or in an absolute URL (defaultPort when it has none). Anything but a
// name or an address with a port in range is an error.
func ParseTarget(authority string, defaultPort int) (Target, error) {
	if authority == "" || strings.ContainsAny(authority, "@/?#% \t\r\n") {
		return Target{}, fmt.Errorf("%q is not a host and port", authority)
	}
	host, port := authority, defaultPort
	if h, p, err := net.SplitHostPort(authority); err == nil {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 || n > 65535 {
			return Target{}, fmt.Errorf("%q: the port must be 1 to 65535", authority)
		}
		host, port = h, n
	} else if strings.Count(authority, ":") > 0 && !strings.HasPrefix(authority, "[") {
		return Target{}, fmt.Errorf("%q is not a host and port", authority)
	}
	if port < 1 || port > 65535 {
		return Target{}, fmt.Errorf("%q has no port", authority)
	}
	if a, err := netip.ParseAddr(strings.Trim(host, "[]")); err == nil {
		if a.Zone() != "" {
			return Target{}, fmt.Errorf("%q: zones are not allowed", authority)
		}
		return Target{Addr: a.Unmap(), Port: port}, nil
	}
	name, ok := normalName(host)
	if !ok {
		return Target{}, fmt.Errorf("%q is not a host name", host)
	}
	return Target{Name: name, Port: port}, nil
}

// Allows reports whether the list lets a command reach t. An address
// matches only an entry that is that address; localhost only an entry
// that names it; a wildcard only proper subdomains.
func (l List) Allows(t Target) bool {
	for _, r := range l.rules {
		if r.port == 0 && !slices.Contains(DefaultPorts, t.Port) || r.port != 0 && r.port != t.Port {
			continue
		}
		switch {
		case r.name == "":
			if t.Name == "" && r.addr == t.Addr {
				return true
			}
		case t.Name == "":
		case r.suffix:
			if strings.HasSuffix(t.Name, "."+r.name) {
				return true
			}
		case r.name == t.Name:
			return true
		}
	}
	return false
}

// Loopback returns the entries that name a loopback address or localhost
// with a port: the host's own services a command may reach. Inside the
// sandbox, loopback is the sandbox's own, so these ports are mirrored
// there (see exec.Sandbox).
func (l List) Loopback() []Target {
	var out []Target
	for _, r := range l.rules {
		if r.port == 0 {
			continue
		}
		switch {
		case r.name == "localhost":
			out = append(out, Target{Name: "localhost", Port: r.port})
		case r.name == "" && r.addr.IsLoopback():
			out = append(out, Target{Addr: r.addr, Port: r.port})
		}
	}
	return out
}
