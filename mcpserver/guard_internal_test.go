package mcpserver

import (
	"net/netip"
	"net/url"
	"strings"
	"testing"
)

// The Host check (attack rows: DNS rebinding sends the attacker's name).
func TestLoopbackHost_FRONT2(t *testing.T) {
	for host, want := range map[string]bool{
		"localhost": true, "LOCALHOST:7879": true, "127.0.0.1": true, "127.0.0.1:80": true, "127.8.9.10:1": true,
		"[::1]": true, "[::1]:7879": true,
		"": false, "localhost.": false, "app.localhost": false, "attacker.example": false, "attacker.example:7879": false,
		"127.0.0.1.nip.io": false, "10.0.0.1:80": false, "0.0.0.0:80": false, "[::]:80": false, "[fe80::1%eth0]:80": false,
		"localhost:": false, "localhost:99999x": false, "localhost:123456": false, "user@localhost": false, "localhost/x": false,
	} {
		if got := loopbackHost(host); got != want {
			t.Errorf("loopbackHost(%q) = %v, want %v", host, got, want)
		}
	}
}

// FuzzLoopbackHost checks that every Host the guard lets through names a
// loopback host as Go's URL parser reads it.
func FuzzLoopbackHost(f *testing.F) {
	for _, s := range []string{"localhost", "127.0.0.1:7879", "[::1]:1", "evil.test", "[::1", "localhost:0", "127.1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, host string) {
		if !loopbackHost(host) {
			return
		}
		u, err := url.Parse("http://" + host + "/")
		if err != nil {
			t.Fatalf("accepted %q, which is no URL host: %v", host, err)
		}
		h := u.Hostname()
		if a, err := netip.ParseAddr(h); err == nil {
			if !a.IsLoopback() {
				t.Fatalf("accepted %q: %s is not loopback", host, a)
			}
			return
		}
		if !strings.EqualFold(h, "localhost") {
			t.Fatalf("accepted %q, whose host is %q", host, h)
		}
	})
}
