package server_test

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/reinhq/rein/server"
)

// principal is who a request of the matrix comes as.
type principal struct {
	name string
	tok  func(t testing.TB) string
}

var principals = []principal{
	{"no token", func(testing.TB) string { return "" }},
	{"expired", func(t testing.TB) string {
		return sign(t, jwt.SigningMethodEdDSA, keys().ed, jwt.MapClaims{"sub": "ada", "exp": time.Now().Add(-time.Hour).Unix()})
	}},
	{"no exp", func(t testing.TB) string {
		return sign(t, jwt.SigningMethodEdDSA, keys().ed, jwt.MapClaims{"sub": "ada"})
	}},
	{"bad signature", func(t testing.TB) string {
		return sign(t, jwt.SigningMethodEdDSA, keys().otherE, jwt.MapClaims{"sub": "ada", "exp": time.Now().Add(time.Hour).Unix()})
	}},
	{"HS256 with the public key as secret", func(t testing.TB) string {
		return sign(t, jwt.SigningMethodHS256, []byte(keys().edPub), jwt.MapClaims{"sub": "ada", "exp": time.Now().Add(time.Hour).Unix()})
	}},
	{"HS256 with the RSA key's PEM as secret", func(t testing.TB) string {
		der, err := x509.MarshalPKIXPublicKey(&keys().rsa.PublicKey)
		if err != nil {
			t.Fatal(err)
		}
		secret := pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})
		return sign(t, jwt.SigningMethodHS256, secret, jwt.MapClaims{"sub": "ada", "exp": time.Now().Add(time.Hour).Unix()})
	}},
	{"alg none", func(t testing.TB) string {
		return sign(t, jwt.SigningMethodNone, jwt.UnsafeAllowNoneSignatureType, jwt.MapClaims{"sub": "ada", "exp": time.Now().Add(time.Hour).Unix()})
	}},
	{"no sub", func(t testing.TB) string {
		return sign(t, jwt.SigningMethodEdDSA, keys().ed, jwt.MapClaims{"exp": time.Now().Add(time.Hour).Unix()})
	}},
	{"other caller", func(t testing.TB) string { return token(t, "bob") }},
	{"owner (RS256)", func(t testing.TB) string {
		return sign(t, jwt.SigningMethodRS256, keys().rsa, jwt.MapClaims{"sub": "ada", "exp": time.Now().Add(time.Hour).Unix()})
	}},
	{"owner", func(t testing.TB) string { return token(t, "ada") }},
}

// TestAuthorizationMatrix sends every operation as every principal: bad
// credentials get 401 with a challenge, another caller's ids 404 exactly
// like unknown ones, the owner success.
func TestAuthorizationMatrix(t *testing.T) {
	const unauthorized = http.StatusUnauthorized
	for _, row := range []struct {
		method, path string
		body         any
		owner, other int // statuses; other is bob's
		public       bool
	}{
		{"GET", "/health", nil, 200, 200, true},
		{"GET", "/openapi.json", nil, 200, 200, true},
		{"GET", "/metrics", nil, 200, 200, false},
		{"POST", "/workspaces", `{"kind":"chat"}`, 201, 201, false},
		{"GET", "/workspaces", nil, 200, 200, false},
		{"GET", "/workspaces/{ws}", nil, 200, 404, false},
		{"POST", "/sessions", `{"workspace_id":"{ws}"}`, 201, 404, false},
		{"GET", "/sessions", nil, 200, 200, false},
		{"GET", "/sessions/{s}", nil, 200, 404, false},
		{"PATCH", "/sessions/{s}", `{"permission_mode":"plan"}`, 200, 404, false},
		{"DELETE", "/sessions/{idle}", nil, 204, 404, false},
		{"POST", "/sessions/{s}/fork", `{"at_seq":0}`, 201, 404, false},
		{"GET", "/sessions/{s}/export", nil, 200, 404, false},
		{"POST", "/sessions/{s}/messages", `{"text":"hi"}`, 202, 404, false},
		{"GET", "/sessions/{s}/runs", nil, 200, 404, false},
		{"GET", "/sessions/{s}/events", nil, 200, 404, false},
		{"GET", "/runs/{r}", nil, 200, 404, false},
		{"POST", "/runs/{r}/cancel", nil, 200, 404, false},
		{"POST", "/runs/{r}/permissions/{call}", `{"answer":"once"}`, 204, 404, false},
		{"GET", "/audit", nil, 200, 200, false},
	} {
		t.Run(row.method+" "+row.path, func(t *testing.T) {
			e := newEnv(t, func(c *server.Config) { c.Metrics = okHandler })
			ada := e.fixture(t, "ada")
			e.fixture(t, "bob")
			fill := func(s string, f fixture) string {
				return strings.NewReplacer("{ws}", f.workspace, "{s}", f.session, "{idle}", f.idle, "{r}", f.run, "{call}", f.callID).Replace(s)
			}
			path := fill(row.path, ada)
			var body any
			if row.body != nil {
				body = fill(row.body.(string), ada)
			}
			for _, p := range principals {
				want := row.owner
				switch {
				case row.public:
				case p.name == "other caller":
					want = row.other
				case !strings.HasPrefix(p.name, "owner"):
					want = unauthorized
				}
				if p.name == "owner (RS256)" && row.method != "GET" {
					continue // the owner's write comes last
				}
				r := e.request(t, row.method, path, p.tok(t), body)
				if r.status != want {
					t.Errorf("%s: status %d, want %d: %s", p.name, r.status, want, r.body)
					continue
				}
				if want == unauthorized {
					if !strings.HasPrefix(r.header.Get("WWW-Authenticate"), "Bearer") {
						t.Errorf("%s: WWW-Authenticate %q", p.name, r.header.Get("WWW-Authenticate"))
					}
					if pr := r.problem(t); pr.Detail == "" {
						t.Errorf("%s: problem without detail", p.name)
					}
				}
				if p.name == "other caller" && want == http.StatusNotFound {
					// The same answer as for an id that does not exist.
					missing := fixture{workspace: "0000missing", session: "0000missing", idle: "0000missing", run: "0000missing", callID: ada.callID}
					var mbody any
					if row.body != nil {
						mbody = fill(row.body.(string), missing)
					}
					m := e.request(t, row.method, fill(row.path, missing), p.tok(t), mbody)
					foreign := string(r.body)
					for _, id := range []string{ada.workspace, ada.session, ada.idle, ada.run} {
						foreign = strings.ReplaceAll(foreign, id, "ID")
					}
					if got := strings.ReplaceAll(string(m.body), "0000missing", "ID"); m.status != r.status || got != foreign {
						t.Errorf("foreign id answers\n%d %s\nunknown id answers\n%d %s", r.status, foreign, m.status, got)
					}
				}
			}
		})
	}
}

var okHandler = http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok\n")) })

// request sends a request; for the event stream it returns once the
// headers are in and closes the stream.
func (e *env) request(t testing.TB, method, path, tok string, body any) response {
	t.Helper()
	if !strings.HasSuffix(path, "/events") {
		return e.do(t, method, path, tok, body)
	}
	ctx, cancel := context.WithCancel(bg)
	defer cancel()
	req := newRequest(t, method, e.ts.URL+path, tok, body).WithContext(ctx)
	res, err := e.ts.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	r := response{status: res.StatusCode, header: res.Header}
	if res.StatusCode != http.StatusOK {
		r.body = readAll(t, res)
	}
	return r
}

func TestTrustedHeader(t *testing.T) {
	loop := netip.MustParsePrefix("127.0.0.0/8")
	elsewhere := netip.MustParsePrefix("10.0.0.0/8")
	for _, tc := range []struct {
		name    string
		proxies []netip.Prefix
		header  string
		tok     string
		want    int
	}{
		{"from a trusted proxy", []netip.Prefix{loop}, "ada", "", 200},
		{"from an untrusted address", []netip.Prefix{elsewhere}, "ada", "", 401},
		{"untrusted address, header ignored, token used", []netip.Prefix{elsewhere}, "mallory", "ada", 200},
		{"trusted proxy, no header, token used", []netip.Prefix{loop}, "", "ada", 200},
		{"trusted proxy, invalid UTF-8", []netip.Prefix{loop}, "ada\xff", "", 401},
		{"trusted proxy, too long", []netip.Prefix{loop}, strings.Repeat("a", 300), "", 401},
		// A proxy that appends its header to the client's (rather than
		// replacing it) passes both: the first is the client's claim.
		{"trusted proxy, the client's header before the proxy's (two values)", []netip.Prefix{loop}, "ada\nmallory", "", 401},
		{"trusted proxy, the client's header before the proxy's, with a token", []netip.Prefix{loop}, "ada\nmallory", "mallory", 401},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, func(c *server.Config) {
				c.Auth.TrustedHeader, c.Auth.TrustedProxies = "X-Rein-Caller", tc.proxies
			})
			ada := e.fixture(t, "ada")
			var tok string
			if tc.tok != "" {
				tok = token(t, tc.tok)
			}
			req := newRequest(t, "GET", e.ts.URL+"/sessions/"+ada.session, tok, nil)
			if tc.header != "" {
				req.Header["X-Rein-Caller"] = strings.Split(tc.header, "\n")
			}
			res, err := e.ts.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body := readAll(t, res)
			res.Body.Close()
			if res.StatusCode != tc.want {
				t.Errorf("status %d, want %d: %s", res.StatusCode, tc.want, body)
			}
		})
	}
}

func TestLocalCaller(t *testing.T) {
	e := newEnv(t, func(c *server.Config) { c.Auth = server.Auth{} })
	if r := e.serve(t, "POST", "/workspaces", "", `{"kind":"chat"}`, "127.0.0.1:5555"); r.status != http.StatusCreated {
		t.Fatalf("loopback: %d %s", r.status, r.body)
	}
	if ws, _ := e.ledger.ListWorkspaces(bg, server.DefaultLocalCaller); len(ws) != 1 {
		t.Errorf("the local caller's workspaces: %v", ws)
	}
	if r := e.serve(t, "POST", "/workspaces", "", `{"kind":"chat"}`, "[::1]:5555"); r.status != http.StatusCreated {
		t.Errorf("IPv6 loopback: %d %s", r.status, r.body)
	}
	r := e.serve(t, "GET", "/workspaces", "", nil, "192.0.2.1:5555")
	if p := r.problem(t); r.status != http.StatusUnauthorized || !strings.Contains(p.Detail, "loopback") {
		t.Errorf("remote client: %d %+v", r.status, p)
	}
}

func TestAuthConfigured(t *testing.T) {
	p := []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}
	for _, tc := range []struct {
		auth server.Auth
		want bool
	}{
		{server.Auth{}, false},
		{server.Auth{Local: "me"}, false},
		{server.Auth{HS256Secret: []byte("s")}, true},
		{server.Auth{PublicKeys: []crypto.PublicKey{keys().edPub}}, true},
		{server.Auth{TrustedHeader: "X-Rein-Caller"}, false},
		{server.Auth{TrustedHeader: "X-Rein-Caller", TrustedProxies: p}, true},
	} {
		if got := tc.auth.Configured(); got != tc.want {
			t.Errorf("%+v: Configured() = %v", tc.auth, got)
		}
	}
}

func TestHS256(t *testing.T) {
	secret := []byte("0123456789abcdef0123456789abcdef")
	e := newEnv(t, func(c *server.Config) { c.Auth = server.Auth{HS256Secret: secret, Issuer: "idp", Audience: "rein"} })
	claims := func(iss, aud string) jwt.MapClaims {
		return jwt.MapClaims{"sub": "ada", "iss": iss, "aud": aud, "exp": time.Now().Add(time.Hour).Unix()}
	}
	for _, tc := range []struct {
		name string
		tok  string
		want int
	}{
		{"good", sign(t, jwt.SigningMethodHS256, secret, claims("idp", "rein")), 200},
		{"wrong issuer", sign(t, jwt.SigningMethodHS256, secret, claims("other", "rein")), 401},
		{"wrong audience", sign(t, jwt.SigningMethodHS256, secret, claims("idp", "other")), 401},
		{"EdDSA not configured", sign(t, jwt.SigningMethodEdDSA, keys().ed, claims("idp", "rein")), 401},
		{"HS512", sign(t, jwt.SigningMethodHS512, secret, claims("idp", "rein")), 401},
		{"garbage", "not.a.token", 401},
	} {
		if r := e.do(t, "GET", "/workspaces", tc.tok, nil); r.status != tc.want {
			t.Errorf("%s: %d, want %d: %s", tc.name, r.status, tc.want, r.body)
		}
	}
	if r := e.do(t, "GET", "/workspaces", "", nil, "Authorization", "Basic YWRhOng="); r.status != 401 {
		t.Errorf("Basic auth: %d", r.status)
	}
}

func TestNewRefusesBadAuth(t *testing.T) {
	ek, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	for name, a := range map[string]server.Auth{
		"short secret":               {HS256Secret: []byte("short")},
		"ECDSA key":                  {PublicKeys: []crypto.PublicKey{&ek.PublicKey}},
		"header without proxies":     {TrustedHeader: "X-Rein-Caller"},
		"local caller not printable": {Local: "a\nb"},
	} {
		cfg := newEnvConfig(t)
		cfg.Auth = a
		_, err := server.New(cfg)
		if err == nil {
			t.Errorf("%s: New accepted %+v", name, a)
		}
	}
	if _, err := server.New(server.Config{}); err == nil || !strings.Contains(err.Error(), "Runtime, Sessions, Ledger, Bus not set") {
		t.Errorf("empty config: %v", err)
	}
}

func TestLoadPublicKeys(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, blocks ...*pem.Block) string {
		var data []byte
		for _, b := range blocks {
			data = append(data, pem.EncodeToMemory(b)...)
		}
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	edDER, err := x509.MarshalPKIXPublicKey(keys().edPub)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "idp"},
		NotBefore: time.Now(), NotAfter: time.Now().Add(time.Hour)}
	cert, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &keys().rsa.PublicKey, keys().rsa)
	if err != nil {
		t.Fatal(err)
	}
	ek, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	ecDER, _ := x509.MarshalPKIXPublicKey(&ek.PublicKey)

	both := write("both.pem", &pem.Block{Type: "PUBLIC KEY", Bytes: edDER},
		&pem.Block{Type: "RSA PUBLIC KEY", Bytes: x509.MarshalPKCS1PublicKey(&keys().rsa.PublicKey)})
	certFile := write("cert.pem", &pem.Block{Type: "CERTIFICATE", Bytes: cert})
	got, err := server.LoadPublicKeys(both, certFile)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 {
		t.Fatalf("%d keys, want 3", len(got))
	}
	// The loaded keys verify tokens.
	e := newEnv(t, func(c *server.Config) { c.Auth = server.Auth{PublicKeys: got} })
	if r := e.do(t, "GET", "/workspaces", token(t, "ada"), nil); r.status != 200 {
		t.Errorf("EdDSA token with loaded key: %d", r.status)
	}

	for name, p := range map[string]string{
		"missing file": filepath.Join(dir, "nope.pem"),
		"no keys":      write("empty.pem", &pem.Block{Type: "PRIVATE KEY", Bytes: []byte{1}}),
		"ECDSA":        write("ec.pem", &pem.Block{Type: "PUBLIC KEY", Bytes: ecDER}),
		"corrupt":      write("bad.pem", &pem.Block{Type: "PUBLIC KEY", Bytes: []byte("junk")}),
	} {
		if _, err := server.LoadPublicKeys(p); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

// TestReservedLocalCallerAttacks_API9 is the attack table of the local
// caller's id (SPEC API-9): a loopback server without authentication
// stores its operator's sessions, workspaces and kept "always" rules under
// "local"; after a restart with authentication on the same data, a remote
// caller who gets that id (a token whose sub is "local", a proxy's header)
// must not inherit them. Each row must get 401 and never the operator's
// session.
func TestReservedLocalCallerAttacks_API9(t *testing.T) {
	proxies := []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}
	for _, tc := range []struct {
		name   string
		local  string // Auth.Local; "" the default
		caller string // the id the attacker gets
		header bool   // by the trusted proxy's header, not a token
	}{
		{name: "token whose sub is local", caller: "local"},
		{name: "token whose sub is the configured local id", local: "operator", caller: "operator"},
		{name: "token whose sub is local while another local id is configured", local: "operator", caller: "local"},
		{name: "proxy header naming local", caller: "local", header: true},
		{name: "proxy header naming the configured local id", local: "operator", caller: "operator", header: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, func(c *server.Config) {
				c.Auth.Local = tc.local
				c.Auth.TrustedHeader, c.Auth.TrustedProxies = "X-Rein-Caller", proxies
			})
			// The operator's session of the earlier, unauthenticated server.
			op := e.fixture(t, tc.caller)
			var r response
			if tc.header {
				r = e.serve(t, "GET", "/sessions/"+op.session, "", nil, "10.1.2.3:5000", "X-Rein-Caller", tc.caller)
			} else {
				r = e.serve(t, "GET", "/sessions/"+op.session, op.tok, nil, "192.0.2.7:5000")
			}
			if r.status != http.StatusUnauthorized {
				t.Fatalf("status %d, want 401: the remote caller %q reads the local operator's session: %s", r.status, tc.caller, r.body)
			}
			if p := r.problem(t); !strings.Contains(p.Detail, "reserved for the operator") {
				t.Errorf("detail %q does not say the id is reserved", p.Detail)
			}
		})
	}
	// Control: another id through the same routes still works.
	e := newEnv(t, func(c *server.Config) { c.Auth.TrustedHeader, c.Auth.TrustedProxies = "X-Rein-Caller", proxies })
	f := e.fixture(t, "localhost-user")
	if r := e.serve(t, "GET", "/sessions/"+f.session, f.tok, nil, "192.0.2.7:5000"); r.status != http.StatusOK {
		t.Errorf("control token: %d: %s", r.status, r.body)
	}
	if r := e.serve(t, "GET", "/sessions/"+f.session, "", nil, "10.1.2.3:5000", "X-Rein-Caller", "localhost-user"); r.status != http.StatusOK {
		t.Errorf("control header: %d: %s", r.status, r.body)
	}
}
