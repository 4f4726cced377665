package server

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/reinhq/rein/console"
)

// registerConsole serves the web console (SPEC API-10) when one is
// configured: its files at / and /console/NAME, and its sign-in endpoints,
// which are not API operations (the OpenAPI document leaves them out):
//
//   - POST /console/login: a one-time login token ({"token": …}) or, on a
//     server with authentication, the caller's bearer token or proxy
//     header, turned into the sign-in cookie; answers the CSRF token.
//   - GET /console/session: who the cookie signs in, and its CSRF token.
//   - POST /console/links: a new one-time login link for the caller.
//   - POST /console/logout: ends the cookie's sign-in.
//
// Every one was screened like any request (Host, Origin, Content-Type).
func (s *Server) registerConsole() {
	if s.cfg.Console == nil {
		return
	}
	assets := console.NewAssets()
	s.mux.Handle("GET /{$}", s.consoleRoute("/", assets.ServeHTTP))
	s.mux.Handle("GET /console/{file}", s.consoleRoute("/console/{file}", assets.ServeHTTP))
	s.mux.Handle("POST /console/login", s.consoleRoute("/console/login", s.consoleLogin))
	s.mux.Handle("GET /console/session", s.consoleRoute("/console/session", s.consoleSession))
	s.mux.Handle("POST /console/links", s.consoleRoute("/console/links", s.consoleLinks))
	s.mux.Handle("POST /console/logout", s.consoleRoute("/console/logout", s.consoleLogout))
}

// consoleRoute names the route for the request log and rate limits the
// request by its client address.
func (s *Server) consoleRoute(route string, h http.HandlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		infoFrom(r.Context()).route = route
		if ok, wait := s.limits.allow("addr:"+addrKey(r), s.now()); !ok {
			secs := retryAfter(wait)
			w.Header().Set("Retry-After", strconv.Itoa(secs))
			writeProblem(w, http.StatusTooManyRequests, fmt.Sprintf("too many requests: retry after %d s", secs))
			return
		}
		console.SetHeaders(w.Header())
		w.Header().Set("Cache-Control", "no-store")
		h(w, r)
	})
}

// consoleSignIn is the answer of POST /console/login and GET
// /console/session.
type consoleSignIn struct {
	Caller  string    `json:"caller"`
	Via     string    `json:"via"`
	Expires time.Time `json:"expires,omitzero"`
	CSRF    string    `json:"csrf,omitempty"`
	Version string    `json:"version"`
}

// consoleAuthMode says how a browser signs in to this server: "link" (no
// authentication: the one-time link rein serve prints), "token" (a JWT)
// or "proxy" (the trusted proxy names the caller).
func (s *Server) consoleAuthMode() string {
	switch {
	case len(s.auth.methods) > 0:
		return "token"
	case s.cfg.Auth.Configured():
		return "proxy"
	}
	return "link"
}

// consoleRefuse answers a refused sign-in: a problem that also says how to
// sign in (sign_in: link, token or proxy).
func (s *Server) consoleRefuse(w http.ResponseWriter, status int, detail string) {
	w.Header().Set("Content-Type", "application/problem+json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"title": http.StatusText(status), "status": status, "detail": detail,
		"sign_in": s.consoleAuthMode()})
}

func (s *Server) consoleLogin(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Token string `json:"token"`
	}
	if r.ContentLength != 0 {
		dec := json.NewDecoder(io.LimitReader(r.Body, 4<<10))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&body); err != nil {
			s.consoleRefuse(w, http.StatusBadRequest, "the body must be JSON {\"token\": \"…\"} (the token of a login link), or empty with Authorization: Bearer <JWT>: "+err.Error())
			return
		}
	}
	var caller string
	var until time.Time
	if body.Token != "" {
		var err error
		if caller, until, err = s.cfg.Console.Redeem(body.Token); err != nil {
			s.consoleRefuse(w, http.StatusUnauthorized, err.Error())
			return
		}
	} else {
		cred, aerr := s.auth.authenticate(r)
		switch {
		case aerr != nil:
			s.consoleRefuse(w, aerr.status(), aerr.Detail)
			return
		case cred.Via == "local" || cred.Via == "cookie":
			s.consoleRefuse(w, http.StatusUnauthorized, "signing in takes the token of a login link: open the link rein serve printed, "+
				"or make one with POST /console/links")
			return
		}
		caller, until = cred.Caller, cred.Until
	}
	si, err := s.cfg.Console.SignIn(w, r, caller, until)
	if err != nil {
		s.consoleRefuse(w, http.StatusUnauthorized, err.Error())
		return
	}
	s.log.Info("console sign-in", "caller", caller, "expires", si.Expires, "request_id", infoFrom(r.Context()).id)
	writeJSON(w, http.StatusOK, "application/json", consoleSignIn{Caller: si.Caller, Via: "cookie", Expires: si.Expires, CSRF: si.CSRF, Version: s.cfg.Version})
}

func (s *Server) consoleSession(w http.ResponseWriter, r *http.Request) {
	cred, aerr := s.auth.authenticate(r)
	if aerr != nil {
		s.consoleRefuse(w, aerr.status(), aerr.Detail)
		return
	}
	out := consoleSignIn{Caller: cred.Caller, Via: cred.Via, Expires: cred.Until, Version: s.cfg.Version}
	switch cred.Via {
	case "local":
		// Any loopback process is the local caller, but a browser signs
		// in: the console acts only with a cookie or a proxy's header.
		s.consoleRefuse(w, http.StatusUnauthorized, "not signed in: open the login link rein serve printed, or make one with POST /console/links")
		return
	case "cookie":
		cs, _, err := s.cfg.Console.Lookup(r)
		if err != nil {
			s.consoleRefuse(w, http.StatusUnauthorized, err.Error())
			return
		}
		out.CSRF = cs.CSRF
	}
	writeJSON(w, http.StatusOK, "application/json", out)
}

// consoleLink is the answer of POST /console/links.
type consoleLink struct {
	URL     string    `json:"url"`
	Expires time.Time `json:"expires"`
}

func (s *Server) consoleLinks(w http.ResponseWriter, r *http.Request) {
	cred, aerr := s.auth.authenticate(r)
	if aerr != nil {
		s.consoleRefuse(w, aerr.status(), aerr.Detail)
		return
	}
	tok, exp, err := s.cfg.Console.IssueLink(cred.Caller, cred.Until)
	if err != nil {
		s.consoleRefuse(w, http.StatusUnauthorized, err.Error())
		return
	}
	writeJSON(w, http.StatusCreated, "application/json", consoleLink{URL: ConsoleLoginURL(requestBase(r), tok), Expires: exp})
}

func (s *Server) consoleLogout(w http.ResponseWriter, r *http.Request) {
	s.cfg.Console.SignOut(w, r)
	w.WriteHeader(http.StatusNoContent)
}

// ConsoleLoginURL is the login link of token on the server at base
// (http://127.0.0.1:7878): the token rides in the fragment, which browsers
// never send, so no request line, log or Referer carries it.
func ConsoleLoginURL(base, token string) string {
	return base + "/#login=" + token
}

// requestBase is the scheme and host r was sent to (its Host was screened).
func requestBase(r *http.Request) string {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}
