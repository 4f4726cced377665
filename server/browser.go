package server

import (
	"fmt"
	"mime"
	"net/http"
	"strings"
)

// screen runs the checks that keep a web page from driving the server
// (SPEC API-8), before routing, authentication and rate limiting, cheapest
// first:
//
//  1. Host: a name the server does not answer to (DNS rebinding) → 421.
//  2. CORS: a listed Origin gets its headers; a preflight is answered here.
//  3. Origin: a state-changing request or an event stream from a foreign
//     origin, "null", or a browser that says cross-site → 403.
//  4. Content-Type: a body that is not declared JSON → 415, so that a
//     "simple" cross-origin request (text/plain, a form, a no-cors Blob)
//     is refused even where a browser sent no Origin.
//
// It reports whether the request may go on; when not, it has answered.
func (s *Server) screen(w http.ResponseWriter, r *http.Request) bool {
	h := w.Header()
	h.Add("Vary", "Origin")
	if !s.hosts.allowed(r) {
		writeProblem(w, http.StatusMisdirectedRequest, fmt.Sprintf(
			"this server does not answer to the host %q (a page reached through DNS rebinding sends its own name): "+
				"call it as localhost or by its address, or have the operator allow the name with --allowed-host", r.Host))
		return false
	}
	// The Origin is normalised once; norm is "" when there is none or it is
	// not an http(s) origin.
	origins := r.Header.Values("Origin")
	var origin, norm string
	if len(origins) > 0 {
		origin = origins[0]
		norm, _ = normalizeOrigin(origin)
	}
	listed := s.origins.listed(norm)
	if listed {
		s.origins.allowHeaders(h, origin)
	}
	if r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != "" {
		preflight(w, r, origin, listed)
		return false
	}
	if guarded(r) {
		// A page may send no Origin, its own or a listed one: an empty
		// Origin, or two, is no answer.
		if len(origins) > 0 && (origin == "" || len(origins) > 1 || !listed && !sameOrigin(r, norm)) {
			writeProblem(w, http.StatusForbidden, fmt.Sprintf(
				"a page on the origin %q may not %s: only this server's own origin and the origins the operator lists (--allowed-origin) may; other clients send no Origin header",
				origin, guardedWhat(r)))
			return false
		}
		if site := r.Header.Get("Sec-Fetch-Site"); (site == "cross-site" || site == "same-site") && !listed {
			writeProblem(w, http.StatusForbidden, fmt.Sprintf(
				"the browser says this request comes from another site (Sec-Fetch-Site: %s) and its origin is not listed: a page may %s only from an origin the operator lists (--allowed-origin)",
				site, guardedWhat(r)))
			return false
		}
		if detail := bodyTypeProblem(r); detail != "" {
			if r.Method == http.MethodPost {
				h.Set("Accept-Post", "application/json")
			}
			writeProblem(w, http.StatusUnsupportedMediaType, detail)
			return false
		}
	}
	return true
}

// guarded reports whether r changes state (any method but GET, HEAD and
// OPTIONS) or opens an event stream: the requests the Origin check covers.
func guarded(r *http.Request) bool {
	switch r.Method {
	case http.MethodGet, http.MethodHead:
		return isEventStream(r.URL.Path)
	case http.MethodOptions:
		return false
	}
	return true
}

// isEventStream reports whether path is an SSE endpoint.
func isEventStream(path string) bool {
	return strings.HasSuffix(path, "/events")
}

// guardedWhat names what a guarded request does, for a refusal.
func guardedWhat(r *http.Request) string {
	if r.Method == http.MethodGet || r.Method == http.MethodHead {
		return "read event streams"
	}
	return "send " + r.Method + " requests"
}

// bodyTypeProblem says what is wrong with the declared type of r's body,
// "" when nothing: a body must be declared application/json (parameters
// such as charset allowed). A request without a body (Content-Length: 0,
// e.g. a cancel) needs no Content-Type, but one that declares another type
// is refused all the same.
func bodyTypeProblem(r *http.Request) string {
	ct := r.Header.Get("Content-Type")
	if ct == "application/json" {
		return "" // what curl --json and the clients send: no parsing
	}
	if ct == "" {
		if r.ContentLength == 0 {
			return ""
		}
		return "the request has a body but no Content-Type: this API takes JSON only; send Content-Type: application/json"
	}
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		return fmt.Sprintf("Content-Type %q cannot be parsed (%v): send Content-Type: application/json", ct, err)
	}
	if mt != "application/json" {
		return fmt.Sprintf("Content-Type %q: this API takes JSON only; send the body as JSON with Content-Type: application/json", ct)
	}
	return ""
}
