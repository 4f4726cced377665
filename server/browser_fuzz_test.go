package server_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/reinhq/rein/server"
)

// FuzzParseAllowedHost: an accepted entry is never a wildcard, a URL or
// empty, comes back lowercased, and parses again to itself.
func FuzzParseAllowedHost(f *testing.F) {
	for _, s := range []string{"rein.example.com", "rein.example.com:8443", "10.0.0.5", "[fd00::1]:7878", "[fd00::1]",
		"*", "*.example.com", "https://x", "fd00::1", "x:", "x:99999x", "[::1%eth0]", "[1.2.3.4]", "a@b", "localhost."} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, entry string) {
		host, port, err := server.ParseAllowedHost(entry)
		if err != nil {
			return
		}
		if host == "" || strings.ContainsAny(host, "*/@?#[] ") || host != strings.ToLower(host) {
			t.Fatalf("%q accepted as host %q", entry, host)
		}
		again := host
		if strings.Contains(host, ":") {
			again = "[" + host + "]"
		}
		if port != "" {
			again += ":" + port
		}
		if h2, p2, err := server.ParseAllowedHost(again); err != nil || h2 != host || p2 != port {
			t.Fatalf("%q → %q %q, which parses to %q %q %v", entry, host, port, h2, p2, err)
		}
	})
}

// FuzzParseAllowedOrigin: an accepted origin is http(s)://host[:port],
// never "*" or "null", and normalising is idempotent.
func FuzzParseAllowedOrigin(f *testing.F) {
	for _, s := range []string{"https://app.example.com", "http://127.0.0.1:8080", "HTTPS://A.example:443/", "http://[::1]:80",
		"*", "null", "https://*.example.com", "https://a.example/path", "https://u@a.example", "file:///x", "https://a.example?x",
		"https://a.example#", "javascript:alert(1)", "https://a.example:0x50"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, entry string) {
		n, err := server.ParseAllowedOrigin(entry)
		if err != nil {
			return
		}
		if !strings.HasPrefix(n, "http://") && !strings.HasPrefix(n, "https://") || strings.ContainsAny(n, "*@?# ") ||
			strings.Count(n, "/") != 2 {
			t.Fatalf("%q accepted as %q", entry, n)
		}
		if n2, err := server.ParseAllowedOrigin(n); err != nil || n2 != n {
			t.Fatalf("%q → %q → %q %v", entry, n, n2, err)
		}
	})
}

// FuzzScreen sends a workspace-creating POST with fuzzed Host, Origin,
// Sec-Fetch-Site and Content-Type to the local (no-authentication)
// server: never a 5xx; a workspace is created only when the Host is one
// the server answers to, the Origin is none, its own or listed, and the
// body is declared JSON; anything refused writes nothing.
func FuzzScreen(f *testing.F) {
	e := newEnv(f, func(c *server.Config) {
		c.Auth = server.Auth{}
		c.AllowedOrigins = []string{listedOrigin}
	})
	f.Add("127.0.0.1:7878", "", "", "application/json")
	f.Add("attacker.example:7878", "", "", "application/json")
	f.Add("localhost", "http://localhost", "same-origin", "application/json; charset=utf-8")
	f.Add("[::1]:1", "null", "cross-site", "text/plain")
	f.Add("rein.test", listedOrigin, "cross-site", "")
	f.Add("LOCALHOST.", "http://127.0.0.1:1", "same-site", "multipart/form-data; boundary=x")
	f.Fuzz(func(t *testing.T, host, origin, site, ctype string) {
		req := httptest.NewRequest("POST", "http://127.0.0.1/workspaces", strings.NewReader(`{"kind":"chat"}`))
		req.Host = host
		req.RemoteAddr = "127.0.0.1:4000"
		for k, v := range map[string]string{"Origin": origin, "Sec-Fetch-Site": site, "Content-Type": ctype} {
			if v != "" {
				req.Header.Set(k, v)
			}
		}
		was := e.snapshot(t)
		rec := httptest.NewRecorder()
		e.srv.Handler().ServeHTTP(rec, req)
		switch {
		case rec.Code >= 500:
			t.Fatalf("Host %q Origin %q Sec-Fetch-Site %q Content-Type %q → %d %s", host, origin, site, ctype, rec.Code, rec.Body)
		case rec.Code == http.StatusCreated:
			h := strings.ToLower(host)
			okHost := h == "rein.test" || h == "localhost" || strings.HasPrefix(h, "localhost:") || strings.HasPrefix(h, "127.") ||
				strings.HasPrefix(h, "[::1]") || strings.HasPrefix(h, "rein.test:") || strings.HasPrefix(h, "[0:0:0:0:0:0:0:1]") ||
				strings.HasPrefix(h, "[::ffff:127.") || strings.HasPrefix(h, "[::ffff:7f")
			okOrigin := origin == "" || strings.EqualFold(origin, listedOrigin) || strings.EqualFold(strings.TrimSuffix(origin, "/"), "http://"+h) ||
				strings.EqualFold(strings.TrimSuffix(origin, ":80"), "http://"+strings.TrimSuffix(h, ":80")) || strings.HasPrefix(strings.ToLower(origin), listedOrigin)
			okType := strings.HasPrefix(strings.ToLower(strings.TrimSpace(ctype)), "application/json")
			if !okHost || !okOrigin || !okType || site == "cross-site" && !strings.HasPrefix(strings.ToLower(origin), listedOrigin) {
				t.Fatalf("created a workspace with Host %q Origin %q Sec-Fetch-Site %q Content-Type %q", host, origin, site, ctype)
			}
		default:
			if d := cmp.Diff(was, e.snapshot(t)); d != "" {
				t.Fatalf("a refused request (%d) changed the stores:\n%s", rec.Code, d)
			}
		}
	})
}
