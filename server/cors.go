package server

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
)

// originPolicy decides which web origins may drive the server (SPEC API-8)
// and answers their CORS requests. A request without Origin (curl, the Go
// client, a same-origin GET) is not a browser's cross-origin request and is
// not its business; a request whose Origin is the server's own passes; any
// other Origin must be in the allow-list, which never holds "*" or "null".
type originPolicy struct {
	allowed     []string // normalised: scheme://host[:port], the port only when not the scheme's default
	credentials bool
}

// The CORS answer for allowed origins: the methods the API has, the
// request headers it reads, the response headers a script may read.
const (
	corsMethods       = "GET, POST, DELETE"
	corsHeaders       = "Authorization, Content-Type, Last-Event-ID"
	corsExposeHeaders = "Retry-After, X-Request-Id, WWW-Authenticate"
	corsMaxAge        = "600"
)

// newOriginPolicy checks and normalises the configured origins.
func newOriginPolicy(origins []string, credentials bool) (*originPolicy, error) {
	p := &originPolicy{credentials: credentials}
	for _, o := range origins {
		n, err := ParseAllowedOrigin(o)
		if err != nil {
			return nil, fmt.Errorf("server: config: AllowedOrigins: %w", err)
		}
		p.allowed = append(p.allowed, n)
	}
	return p, nil
}

// ParseAllowedOrigin checks an entry of the origin allow-list — an origin
// as browsers send it, scheme://host[:port] with the scheme http or https —
// and returns it normalised (lowercased, the scheme's default port
// dropped). "*" and "null" are refused: either would let any web page
// drive the server.
func ParseAllowedOrigin(entry string) (string, error) {
	switch entry {
	case "*":
		return "", errors.New(`origin "*": a wildcard would let every web page on the internet drive this server; list each origin (https://app.example.com)`)
	case "null":
		return "", errors.New(`origin "null": sandboxed frames and file:// pages all send it, so it names no one; list each origin (https://app.example.com)`)
	}
	n, ok := normalizeOrigin(entry)
	if !ok {
		return "", fmt.Errorf("origin %q: want scheme://host[:port] with the scheme http or https and nothing after the port (https://app.example.com:8443)", entry)
	}
	return n, nil
}

// normalizeOrigin returns an origin as scheme://host[:port], lowercased,
// without the scheme's default port; false when s is not an http(s)
// origin (a path, query, user or wildcard in it; "null").
func normalizeOrigin(s string) (string, bool) {
	u, err := url.Parse(s)
	if err != nil || u.Opaque != "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" ||
		strings.HasSuffix(s, "#") || strings.HasSuffix(s, "?") || (u.Path != "" && u.Path != "/") {
		return "", false
	}
	scheme := strings.ToLower(u.Scheme)
	if scheme != "http" && scheme != "https" {
		return "", false
	}
	host, port, ok := splitHost(u.Host)
	if !ok {
		return "", false
	}
	return joinOrigin(scheme, host, port), true
}

// joinOrigin renders an origin, dropping the scheme's default port; host
// has no brackets.
func joinOrigin(scheme, host, port string) string {
	if (scheme == "http" && port == "80") || (scheme == "https" && port == "443") {
		port = ""
	}
	if port != "" {
		return scheme + "://" + net.JoinHostPort(host, port)
	}
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	return scheme + "://" + host
}

// listed reports whether norm, an Origin as normalizeOrigin returns it
// ("" when it is not an http(s) origin), is allow-listed.
func (p *originPolicy) listed(norm string) bool {
	return norm != "" && slices.Contains(p.allowed, norm)
}

// sameOrigin reports whether norm, an Origin as normalizeOrigin returns
// it, is the origin r was sent to: its scheme (https when the connection is
// TLS) and its Host.
func sameOrigin(r *http.Request, norm string) bool {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	host, port, ok := splitHost(r.Host)
	return ok && norm != "" && norm == joinOrigin(scheme, host, port)
}

// allowHeaders sets the CORS headers of a response to a listed origin.
func (p *originPolicy) allowHeaders(h http.Header, origin string) {
	h.Set("Access-Control-Allow-Origin", origin)
	if p.credentials {
		h.Set("Access-Control-Allow-Credentials", "true")
	}
	h.Set("Access-Control-Expose-Headers", corsExposeHeaders)
}

// preflight answers a CORS preflight (OPTIONS with
// Access-Control-Request-Method): 204 with what the origin may send when it
// is listed and asks for a method and headers the API has; otherwise 403
// without any CORS header, which the browser reports as a failed preflight.
// The screen has set a listed origin's CORS headers already.
func preflight(w http.ResponseWriter, r *http.Request, origin string, listed bool) {
	if !listed {
		writeProblem(w, http.StatusForbidden, fmt.Sprintf("origin %q may not call this server from a browser: only the origins the operator lists (--allowed-origin) get CORS answers", origin))
		return
	}
	method := r.Header.Get("Access-Control-Request-Method")
	if !slices.Contains(strings.Split(corsMethods, ", "), method) {
		writeProblem(w, http.StatusForbidden, fmt.Sprintf("method %q is not one of this API's (%s)", method, corsMethods))
		return
	}
	readable := strings.Split(corsHeaders, ", ")
	for _, h := range strings.Split(r.Header.Get("Access-Control-Request-Headers"), ",") {
		h = strings.TrimSpace(h)
		if h != "" && !slices.ContainsFunc(readable, func(a string) bool { return strings.EqualFold(a, h) }) {
			writeProblem(w, http.StatusForbidden, fmt.Sprintf("request header %q is not one this API reads (%s)", h, corsHeaders))
			return
		}
	}
	hd := w.Header()
	hd.Set("Access-Control-Allow-Methods", corsMethods)
	hd.Set("Access-Control-Allow-Headers", corsHeaders)
	hd.Set("Access-Control-Max-Age", corsMaxAge)
	if r.Header.Get("Access-Control-Request-Private-Network") == "true" {
		// Chrome's Private Network Access: a listed public page may
		// reach this server on a private address.
		hd.Set("Access-Control-Allow-Private-Network", "true")
	}
	hd.Add("Vary", "Access-Control-Request-Method, Access-Control-Request-Headers")
	w.WriteHeader(http.StatusNoContent)
}
