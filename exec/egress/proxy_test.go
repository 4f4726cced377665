package egress

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
)

// fixture is a proxy whose public names resolve to TEST-NET addresses that
// its dialer maps to a local server, which counts what reaches it.
type fixture struct {
	p       *Proxy
	g       *Gate
	reached atomic.Int64
	srv     *httptest.Server
}

func newFixture(t testing.TB, allow ...string) *fixture {
	t.Helper()
	f := &fixture{}
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.reached.Add(1)
		fmt.Fprintf(w, "host=%s path=%s", r.Host, r.URL.Path)
	}))
	t.Cleanup(f.srv.Close)
	l, err := ParseList(allow)
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]string{
		"ok.test":        "203.0.113.7",
		"metadata.test":  "169.254.169.254",
		"rebind.test":    "127.0.0.1",
		"mapped.test":    "::ffff:127.0.0.1",
		"zero.test":      "0.0.0.0",
		"v6local.test":   "::1",
		"multicast.test": "224.0.0.1",
	}
	f.p = &Proxy{Allow: l, Hint: "add %s to sandbox.allow_hosts",
		Lookup: func(ctx context.Context, host string) ([]netip.Addr, error) {
			if a, ok := names[host]; ok {
				return []netip.Addr{netip.MustParseAddr(a)}, nil
			}
			return nil, fmt.Errorf("no such host %s", host)
		},
		Dial: func(ctx context.Context, network, addr string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, network, strings.TrimPrefix(f.srv.URL, "http://"))
		}}
	sock := filepath.Join(t.TempDir(), "s")
	g, err := f.p.Open(sock)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close() })
	f.g = g
	return f
}

// raw sends one request, as written, to the gate and returns the status
// line and body.
func (f *fixture) raw(t testing.TB, req string) (int, string) {
	t.Helper()
	c, err := net.Dial("unix", f.g.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := io.WriteString(c, req); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(c)
	res, err := http.ReadResponse(br, nil)
	if err != nil {
		return 0, err.Error()
	}
	defer res.Body.Close()
	if res.StatusCode == http.StatusOK && strings.HasPrefix(req, "CONNECT") {
		fmt.Fprintf(c, "GET /tunnelled HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
		inner, err := http.ReadResponse(br, nil)
		if err != nil {
			return 0, err.Error()
		}
		b, _ := io.ReadAll(inner.Body)
		return 200, string(b)
	}
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

// TOOL-7 attack table: what a hostile command sends the egress proxy.
func TestGateAttacks_TOOL7(t *testing.T) {
	f := newFixture(t, "ok.test", "metadata.test", "rebind.test", "mapped.test", "zero.test", "v6local.test", "multicast.test", "127.0.0.1:4873")
	tests := []struct {
		name, req string
		status    int
		reach     bool
	}{
		{"allowed CONNECT", "CONNECT ok.test:443 HTTP/1.1\r\nHost: ok.test:443\r\n\r\n", 200, true},
		{"allowed plain GET", "GET http://ok.test/x HTTP/1.1\r\nHost: ok.test\r\n\r\n", 200, true},
		{"not listed", "CONNECT evil.test:443 HTTP/1.1\r\nHost: evil.test:443\r\n\r\n", 403, false},
		{"listed name, other port", "CONNECT ok.test:22 HTTP/1.1\r\nHost: ok.test:22\r\n\r\n", 403, false},
		{"suffix trick", "CONNECT ok.test.evil.test:443 HTTP/1.1\r\nHost: x\r\n\r\n", 403, false},
		{"userinfo trick", "CONNECT evil.test@ok.test:443 HTTP/1.1\r\nHost: x\r\n\r\n", 403, false},
		{"Host header smuggles an allowed host", "GET http://evil.test/ HTTP/1.1\r\nHost: ok.test\r\n\r\n", 403, false},
		{"allowed Host header, origin-form", "GET / HTTP/1.1\r\nHost: ok.test\r\n\r\n", 400, false},
		{"https in plain form", "GET https://ok.test/ HTTP/1.1\r\nHost: ok.test\r\n\r\n", 400, false},
		{"cloud metadata by name", "GET http://metadata.test/latest/meta-data HTTP/1.1\r\nHost: metadata.test\r\n\r\n", 403, false},
		{"cloud metadata by address", "GET http://169.254.169.254/ HTTP/1.1\r\nHost: 169.254.169.254\r\n\r\n", 403, false},
		{"DNS rebinding to loopback", "CONNECT rebind.test:443 HTTP/1.1\r\nHost: x\r\n\r\n", 403, false},
		{"mapped loopback", "CONNECT mapped.test:443 HTTP/1.1\r\nHost: x\r\n\r\n", 403, false},
		{"unspecified address", "CONNECT zero.test:443 HTTP/1.1\r\nHost: x\r\n\r\n", 403, false},
		{"IPv6 loopback by name", "CONNECT v6local.test:443 HTTP/1.1\r\nHost: x\r\n\r\n", 403, false},
		{"multicast", "CONNECT multicast.test:443 HTTP/1.1\r\nHost: x\r\n\r\n", 403, false},
		{"loopback not listed", "CONNECT 127.0.0.1:22 HTTP/1.1\r\nHost: x\r\n\r\n", 403, false},
		{"localhost not listed", "CONNECT localhost:4873 HTTP/1.1\r\nHost: x\r\n\r\n", 403, false},
		{"shorthand loopback", "CONNECT 127.1:4873 HTTP/1.1\r\nHost: x\r\n\r\n", 403, false},
		{"decimal loopback", "CONNECT 2130706433:4873 HTTP/1.1\r\nHost: x\r\n\r\n", 403, false},
		{"port out of range", "CONNECT ok.test:70000 HTTP/1.1\r\nHost: x\r\n\r\n", 403, false},
		{"no port", "CONNECT ok.test HTTP/1.1\r\nHost: x\r\n\r\n", 403, false},
		{"percent-encoded host", "CONNECT ok%2etest:443 HTTP/1.1\r\nHost: x\r\n\r\n", 400, false}, // net/http refuses it first
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := f.reached.Load()
			status, body := f.raw(t, tt.req)
			if status != tt.status {
				t.Fatalf("status %d, want %d: %s", status, tt.status, body)
			}
			if reached := f.reached.Load() > before; reached != tt.reach {
				t.Fatalf("reached the server: %v, want %v", reached, tt.reach)
			}
			if status == 403 && !strings.Contains(body, "sandbox.allow_hosts") {
				t.Errorf("the refusal does not name the setting: %q", body)
			}
		})
	}
	if len(f.g.Denials()) == 0 {
		t.Fatal("no denial recorded")
	}
}

// TOOL-7: the listed loopback port is reached, through CONNECT, as the
// in-sandbox mirror asks for it.
func TestGateLoopback_TOOL7(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "local") }))
	t.Cleanup(srv.Close)
	u, _ := url.Parse(srv.URL)
	l, err := ParseList([]string{u.Host})
	if err != nil {
		t.Fatal(err)
	}
	g := (&Proxy{Allow: l}).Serve(listen(t))
	t.Cleanup(func() { g.Close() })
	c, err := net.Dial("tcp", g.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", u.Host, u.Host)
	br := bufio.NewReader(c)
	res, err := http.ReadResponse(br, nil)
	if err != nil || res.StatusCode != 200 {
		t.Fatalf("CONNECT: %v %v", res, err)
	}
	fmt.Fprintf(c, "GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
	inner, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(inner.Body)
	if string(b) != "local" {
		t.Fatalf("body %q", b)
	}
}

func listen(t testing.TB) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return ln
}

// BenchmarkGate measures what the proxy adds to one HTTP request (a new
// connection each time), against the same request sent directly.
func BenchmarkGate(b *testing.B) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") }))
	b.Cleanup(srv.Close)
	u, _ := url.Parse(srv.URL)
	l, _ := ParseList([]string{u.Host})
	g := (&Proxy{Allow: l}).Serve(listen(b))
	b.Cleanup(func() { g.Close() })
	proxyURL, _ := url.Parse("http://" + g.Addr().String())
	get := func(b *testing.B, tr *http.Transport) {
		for b.Loop() {
			res, err := (&http.Client{Transport: tr}).Get(srv.URL)
			if err != nil {
				b.Fatal(err)
			}
			io.Copy(io.Discard, res.Body)
			res.Body.Close()
		}
	}
	b.Run("direct", func(b *testing.B) { get(b, &http.Transport{DisableKeepAlives: true}) })
	b.Run("proxied", func(b *testing.B) { get(b, &http.Transport{DisableKeepAlives: true, Proxy: http.ProxyURL(proxyURL)}) })
	b.Run("connect-tunnel", func(b *testing.B) {
		for b.Loop() {
			c, err := net.Dial("tcp", g.Addr().String())
			if err != nil {
				b.Fatal(err)
			}
			fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nHost: x\r\n\r\nGET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", u.Host)
			io.Copy(io.Discard, c)
			c.Close()
		}
	})
}
