package server_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/reinhq/rein/console"
	"github.com/reinhq/rein/server"
)

// consoleEnv is a server with the console: "local" (no authentication,
// the default of rein serve) or "jwt". Its console runs on clk.
func consoleEnv(t *testing.T, mode string, clk *clock) *env {
	t.Helper()
	return newEnv(t, func(c *server.Config) {
		if mode == "local" {
			c.Auth = server.Auth{}
		}
		c.Console = console.New(console.Options{Now: clk.Now})
	})
}

// signedIn is a browser signed in to the console.
type signedIn struct {
	cookie string // Name=value
	csrf   string
	caller string
}

// link makes a login link as the caller of tok ("" local) and returns its
// token.
func (e *env) link(t *testing.T, tok string) string {
	t.Helper()
	r := e.do(t, "POST", "/console/links", tok, nil)
	if r.status != http.StatusCreated {
		t.Fatalf("POST /console/links: %d %s", r.status, r.body)
	}
	var l struct{ URL string }
	if err := json.Unmarshal(r.body, &l); err != nil {
		t.Fatal(err)
	}
	_, token, ok := strings.Cut(l.URL, "/#login=")
	if !ok || !strings.HasPrefix(l.URL, e.ts.URL) {
		t.Fatalf("login link %q: want %s/#login=TOKEN", l.URL, e.ts.URL)
	}
	return token
}

// signIn redeems a login token and returns the browser's cookie and CSRF
// token.
func (e *env) signIn(t *testing.T, token string) signedIn {
	t.Helper()
	r := e.do(t, "POST", "/console/login", "", map[string]string{"token": token})
	if r.status != http.StatusOK {
		t.Fatalf("POST /console/login: %d %s", r.status, r.body)
	}
	return e.cookieOf(t, r)
}

func (e *env) cookieOf(t *testing.T, r response) signedIn {
	t.Helper()
	var s struct{ CSRF, Caller string }
	if err := json.Unmarshal(r.body, &s); err != nil {
		t.Fatal(err)
	}
	res := http.Response{Header: r.header}
	cs := res.Cookies()
	if len(cs) != 1 {
		t.Fatalf("sign-in set %d cookies, want 1", len(cs))
	}
	return signedIn{cookie: cs[0].Name + "=" + cs[0].Value, csrf: s.CSRF, caller: s.Caller}
}

// The cookie the console sets (SPEC API-10): HttpOnly, SameSite=Strict,
// Path=/, not the login token, named for this process; the answer carries
// the CSRF token and no cache may keep it.
func TestConsoleCookieFlags_API10(t *testing.T) {
	clk := &clock{now: time.Date(2026, 11, 28, 7, 0, 0, 0, time.UTC)}
	e := consoleEnv(t, "local", clk)
	token := e.link(t, "")
	r := e.do(t, "POST", "/console/login", "", map[string]string{"token": token})
	if r.status != http.StatusOK {
		t.Fatalf("login: %d %s", r.status, r.body)
	}
	res := http.Response{Header: r.header}
	c := res.Cookies()[0]
	if !c.HttpOnly || c.SameSite != http.SameSiteStrictMode || c.Path != "/" || c.Secure {
		t.Errorf("cookie %+v: want HttpOnly, SameSite=Strict, Path=/, not Secure over plain http", c)
	}
	if c.Value == token || strings.Contains(c.Value, token) || len(c.Value) < 43 {
		t.Errorf("cookie value %q: want 256 new random bits, never the login token", c.Value)
	}
	if !strings.HasPrefix(c.Name, "rein_console_") || c.MaxAge != int(console.DefaultSessionTTL.Seconds()) {
		t.Errorf("cookie %s Max-Age %d: want rein_console_<id>, Max-Age %v", c.Name, c.MaxAge, console.DefaultSessionTTL)
	}
	if cc := r.header.Get("Cache-Control"); cc != "no-store" {
		t.Errorf("Cache-Control %q, want no-store", cc)
	}
	si := e.cookieOf(t, r)
	if si.caller != server.DefaultLocalCaller || len(si.csrf) < 43 {
		t.Errorf("sign-in %+v: want the local caller and a CSRF token", si)
	}
	// The cookie is the local caller, and a write with its CSRF token works.
	got := e.do(t, "POST", "/workspaces", "", `{"kind":"chat"}`, "Content-Type", "application/json", "Cookie", si.cookie, console.CSRFHeader, si.csrf)
	if got.status != http.StatusCreated {
		t.Fatalf("cookie write with CSRF: %d %s", got.status, got.body)
	}
	s := e.do(t, "GET", "/console/session", "", nil, "Cookie", si.cookie)
	if s.status != http.StatusOK || !strings.Contains(string(s.body), si.csrf) || !strings.Contains(string(s.body), `"via":"cookie"`) {
		t.Errorf("GET /console/session: %d %s", s.status, s.body)
	}
}

// The console's files: the CSP on every answer, types, ETags; no console
// with --console=false (SPEC API-10).
func TestConsoleAssets_API10(t *testing.T) {
	e := consoleEnv(t, "local", &clock{now: time.Now()})
	for _, p := range []string{"/", "/console/app.js", "/console/style.css"} {
		r := e.do(t, "GET", p, "", nil)
		if r.status != http.StatusOK {
			t.Fatalf("GET %s: %d", p, r.status)
		}
		if r.header.Get("Content-Security-Policy") != console.CSP || r.header.Get("X-Content-Type-Options") != "nosniff" ||
			r.header.Get("X-Frame-Options") != "DENY" {
			t.Errorf("GET %s: headers %v: want the console's CSP, nosniff, DENY", p, r.header)
		}
		et := r.header.Get("ETag")
		if again := e.do(t, "GET", p, "", nil, "If-None-Match", et); et == "" || again.status != http.StatusNotModified {
			t.Errorf("GET %s with its ETag %q: %d, want 304", p, et, again.status)
		}
	}
	if ct := e.do(t, "GET", "/console/app.js", "", nil).header.Get("Content-Type"); ct != "text/javascript; charset=utf-8" {
		t.Errorf("app.js Content-Type %q", ct)
	}
	if r := e.do(t, "GET", "/console/nope.js", "", nil); r.status != http.StatusNotFound {
		t.Errorf("GET an unknown console file: %d, want 404", r.status)
	}
	off := newEnv(t, func(c *server.Config) { c.Auth = server.Auth{} })
	if r := off.do(t, "GET", "/", "", nil); r.status != http.StatusNotFound {
		t.Errorf("GET / without a console: %d, want 404", r.status)
	}
	if r := off.do(t, "POST", "/console/links", "", nil); r.status != http.StatusNotFound {
		t.Errorf("POST /console/links without a console: %d, want 404", r.status)
	}
}

// TestConsoleAttacks is the console's attack table (SPEC API-10): what a
// web page, a stale browser or a guesser tries with the sign-in; each is
// refused with its status and a detail saying why, and creates nothing.
func TestConsoleAttacks_API10(t *testing.T) {
	json := "application/json"
	type row struct {
		name   string
		mode   string // local (default) or jwt
		do     func(t *testing.T, e *env, clk *clock) response
		want   int
		detail string
	}
	write := func(e *env, t *testing.T, hdr ...string) response {
		return e.do(t, "POST", "/workspaces", "", `{"kind":"chat"}`, append([]string{"Content-Type", json}, hdr...)...)
	}
	rows := []row{
		{name: "cookie write without the CSRF header", do: func(t *testing.T, e *env, _ *clock) response {
			si := e.signIn(t, e.link(t, ""))
			return write(e, t, "Cookie", si.cookie)
		}, want: 403, detail: console.CSRFHeader},
		{name: "cookie write with a wrong CSRF token", do: func(t *testing.T, e *env, _ *clock) response {
			si := e.signIn(t, e.link(t, ""))
			// The last character changed: to "B" when it is "A" already, or
			// the row would pass one time in 64 with the right token.
			last := "A"
			if strings.HasSuffix(si.csrf, "A") {
				last = "B"
			}
			return write(e, t, "Cookie", si.cookie, console.CSRFHeader, si.csrf[:len(si.csrf)-1]+last)
		}, want: 403, detail: "does not match"},
		{name: "cookie write with the CSRF token of another sign-in", do: func(t *testing.T, e *env, _ *clock) response {
			a, b := e.signIn(t, e.link(t, "")), e.signIn(t, e.link(t, ""))
			return write(e, t, "Cookie", a.cookie, console.CSRFHeader, b.csrf)
		}, want: 403, detail: "does not match"},
		{name: "cookie delete without the CSRF header", do: func(t *testing.T, e *env, _ *clock) response {
			si := e.signIn(t, e.link(t, ""))
			return e.do(t, "DELETE", "/sessions/x", "", nil, "Cookie", si.cookie)
		}, want: 403, detail: console.CSRFHeader},
		{name: "forged cookie from loopback is not the local caller", do: func(t *testing.T, e *env, _ *clock) response {
			return e.do(t, "GET", "/workspaces", "", nil, "Cookie", e.srvCookie(t)+"=AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA")
		}, want: 401, detail: "unknown or ended"},
		{name: "the login token used as the cookie", do: func(t *testing.T, e *env, _ *clock) response {
			tok := e.link(t, "")
			return e.do(t, "GET", "/workspaces", "", nil, "Cookie", e.srvCookie(t)+"="+tok)
		}, want: 401, detail: "unknown or ended"},
		{name: "cookie after sign-out", do: func(t *testing.T, e *env, _ *clock) response {
			si := e.signIn(t, e.link(t, ""))
			e.do(t, "POST", "/console/logout", "", nil, "Cookie", si.cookie)
			return e.do(t, "GET", "/workspaces", "", nil, "Cookie", si.cookie)
		}, want: 401, detail: "unknown or ended"},
		{name: "cookie past its lifetime", do: func(t *testing.T, e *env, clk *clock) response {
			si := e.signIn(t, e.link(t, ""))
			clk.advance(console.DefaultSessionTTL + time.Second)
			return e.do(t, "GET", "/workspaces", "", nil, "Cookie", si.cookie)
		}, want: 401, detail: "expired"},
		{name: "two console cookies in one request", do: func(t *testing.T, e *env, _ *clock) response {
			si := e.signIn(t, e.link(t, ""))
			return e.do(t, "GET", "/workspaces", "", nil, "Cookie", si.cookie+"; "+si.cookie)
		}, want: 401, detail: "2 times"},
		{name: "login token redeemed twice", do: func(t *testing.T, e *env, _ *clock) response {
			tok := e.link(t, "")
			e.signIn(t, tok)
			return e.do(t, "POST", "/console/login", "", map[string]string{"token": tok})
		}, want: 401, detail: "already used"},
		{name: "login token past its lifetime", do: func(t *testing.T, e *env, clk *clock) response {
			tok := e.link(t, "")
			clk.advance(console.DefaultLinkTTL)
			return e.do(t, "POST", "/console/login", "", map[string]string{"token": tok})
		}, want: 401, detail: "expired"},
		{name: "guessed login token", do: func(t *testing.T, e *env, _ *clock) response {
			e.link(t, "")
			return e.do(t, "POST", "/console/login", "", map[string]string{"token": "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"})
		}, want: 401, detail: "unknown"},
		{name: "login token with one character changed", do: func(t *testing.T, e *env, _ *clock) response {
			tok := e.link(t, "")
			return e.do(t, "POST", "/console/login", "", map[string]string{"token": tok[:len(tok)-1] + string(tok[len(tok)-1]^1)})
		}, want: 401, detail: "unknown"},
		{name: "sign-in without a token on a server without authentication", do: func(t *testing.T, e *env, _ *clock) response {
			return e.do(t, "POST", "/console/login", "", nil)
		}, want: 401, detail: "login link"},
		{name: "sign-in with a valid token from a page of another origin", do: func(t *testing.T, e *env, _ *clock) response {
			return e.do(t, "POST", "/console/login", "", map[string]string{"token": e.link(t, "")}, "Origin", foreign)
		}, want: 403, detail: "--allowed-origin"},
		{name: "cookie write with its CSRF token from a page of another origin", do: func(t *testing.T, e *env, _ *clock) response {
			si := e.signIn(t, e.link(t, ""))
			return write(e, t, "Cookie", si.cookie, console.CSRFHeader, si.csrf, "Origin", "http://127.0.0.1:1")
		}, want: 403, detail: "--allowed-origin"},
		{name: "cookie write from another site (Sec-Fetch-Site) with its CSRF token", do: func(t *testing.T, e *env, _ *clock) response {
			si := e.signIn(t, e.link(t, ""))
			return write(e, t, "Cookie", si.cookie, console.CSRFHeader, si.csrf, "Sec-Fetch-Site", "same-site")
		}, want: 403, detail: "Sec-Fetch-Site"},
		{name: "a link minted from a page of another origin", do: func(t *testing.T, e *env, _ *clock) response {
			return e.do(t, "POST", "/console/links", "", nil, "Origin", foreign)
		}, want: 403},
		{name: "the console's session read without a sign-in (loopback is not signed in)", do: func(t *testing.T, e *env, _ *clock) response {
			return e.do(t, "GET", "/console/session", "", nil)
		}, want: 401, detail: "not signed in"},
		{name: "jwt: sign-in with an expired token", mode: "jwt", do: func(t *testing.T, e *env, _ *clock) response {
			exp := sign(t, jwt.SigningMethodEdDSA, keys().ed, jwt.MapClaims{"sub": "ada", "exp": time.Now().Add(-time.Hour).Unix()})
			return e.do(t, "POST", "/console/login", exp, nil)
		}, want: 401, detail: "expired"},
		{name: "jwt: sign-in with no credentials", mode: "jwt", do: func(t *testing.T, e *env, _ *clock) response {
			return e.do(t, "POST", "/console/login", "", nil)
		}, want: 401, detail: "Bearer"},
		{name: "jwt: a login link without credentials", mode: "jwt", do: func(t *testing.T, e *env, _ *clock) response {
			return e.do(t, "POST", "/console/links", "", nil)
		}, want: 401},
	}
	for _, rw := range rows {
		t.Run(rw.name, func(t *testing.T) {
			mode := rw.mode
			if mode == "" {
				mode = "local"
			}
			clk := &clock{now: time.Now()}
			e := consoleEnv(t, mode, clk)
			r := rw.do(t, e, clk)
			if r.status != rw.want {
				t.Fatalf("status %d, want %d: %s", r.status, rw.want, r.body)
			}
			if !strings.Contains(string(r.body), rw.detail) {
				t.Errorf("answer %s: want a detail holding %q", r.body, rw.detail)
			}
			if ws, _ := e.ledger.ListWorkspaces(bg, server.DefaultLocalCaller); len(ws) != 0 {
				t.Errorf("the refused request left %d workspaces", len(ws))
			}
		})
	}
}

// srvCookie is the name of the env's console cookie, learnt from a sign-in.
func (e *env) srvCookie(t *testing.T) string {
	t.Helper()
	si := e.signIn(t, e.link(t, ""))
	name, _, _ := strings.Cut(si.cookie, "=")
	return name
}

// With JWT callers (SPEC API-10): a bearer token signs a browser in as its
// subject until the token expires; the API keeps accepting bearer tokens,
// and one wins over a stale cookie; the cookie sees only its caller's.
func TestConsoleJWTSignIn_API10(t *testing.T) {
	clk := &clock{now: time.Now()}
	e := consoleEnv(t, "jwt", clk)
	ada := e.fixture(t, "ada")
	bob := e.fixture(t, "bob")
	r := e.do(t, "POST", "/console/login", ada.tok, nil)
	if r.status != http.StatusOK {
		t.Fatalf("login with a bearer token: %d %s", r.status, r.body)
	}
	si := e.cookieOf(t, r)
	if si.caller != "ada" {
		t.Fatalf("signed in as %q, want ada", si.caller)
	}
	if got := e.do(t, "GET", "/sessions/"+ada.session, "", nil, "Cookie", si.cookie); got.status != http.StatusOK {
		t.Errorf("ada's cookie reading ada's session: %d %s", got.status, got.body)
	}
	if got := e.do(t, "GET", "/sessions/"+bob.session, "", nil, "Cookie", si.cookie); got.status != http.StatusNotFound {
		t.Errorf("ada's cookie reading bob's session: %d, want 404", got.status)
	}
	name, _, _ := strings.Cut(si.cookie, "=")
	stale := name + "=AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"
	if got := e.do(t, "GET", "/sessions/"+bob.session, bob.tok, nil, "Cookie", stale); got.status != http.StatusOK {
		t.Errorf("a bearer token with a stale cookie: %d, want 200 (the token wins)", got.status)
	}
	// The sign-in ends with the token (its exp is an hour away, plus leeway).
	clk.advance(2 * time.Hour)
	if got := e.do(t, "GET", "/sessions/"+ada.session, "", nil, "Cookie", si.cookie); got.status != http.StatusUnauthorized {
		t.Errorf("ada's cookie after her token expired: %d, want 401", got.status)
	}
}
