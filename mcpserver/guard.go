package mcpserver

import (
	"net"
	"net/http"
	"net/netip"
	"strings"
)

// guard refuses the HTTP requests a web page could make, before the MCP
// handler sees them (docs/security.md, "rein mcp serve"):
//   - a Host that is not a loopback name or address: DNS rebinding points a
//     name the attacker owns at 127.0.0.1, and the browser then sends that
//     name;
//   - any Origin header, and a Sec-Fetch-Site other than "none": browsers
//     send them with a page's requests, MCP clients do not. A page on
//     another localhost port is refused too.
//
// The go-sdk's own localhost protection stays on behind it.
func guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !loopbackHost(r.Host) {
			http.Error(w, "rein mcp serve answers only to localhost and loopback addresses in Host (this request's Host is "+clipHeader(r.Host)+")", http.StatusForbidden)
			return
		}
		if o := r.Header.Get("Origin"); o != "" {
			http.Error(w, "rein mcp serve does not answer web pages: the request carries Origin "+clipHeader(o), http.StatusForbidden)
			return
		}
		if s := r.Header.Get("Sec-Fetch-Site"); s != "" && s != "none" {
			http.Error(w, "rein mcp serve does not answer web pages: the request's Sec-Fetch-Site is "+clipHeader(s), http.StatusForbidden)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// loopbackHost reports whether a Host header names this machine's loopback
// interface: "localhost" or a loopback IP address, with or without a port.
func loopbackHost(host string) bool {
	h := host
	if sh, port, err := net.SplitHostPort(host); err == nil {
		if port == "" || strings.TrimLeft(port, "0123456789") != "" || len(port) > 5 {
			return false
		}
		h = sh
	} else if strings.HasPrefix(host, "[") && strings.HasSuffix(host, "]") {
		h = host[1 : len(host)-1]
	} else if strings.Contains(host, ":") {
		return false // a bare IPv6 address, or a port without a host: no valid Host
	}
	if strings.EqualFold(h, "localhost") {
		return true
	}
	a, err := netip.ParseAddr(h)
	return err == nil && a.Zone() == "" && a.IsLoopback()
}

// clipHeader quotes a header value for an error message, cut short.
func clipHeader(s string) string {
	if len(s) > 80 {
		s = s[:80] + "…"
	}
	return `"` + strings.ToValidUTF8(s, "?") + `"`
}
