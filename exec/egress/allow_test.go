package egress

import (
	"net/netip"
	"strings"
	"testing"
)

// TOOL-7: the allow-list's entries, and what each admits.
func TestAllowList_TOOL7(t *testing.T) {
	l, err := ParseList([]string{" registry.npmjs.org ", "*.example.com", "api.test:8443", "127.0.0.1:4873", "[::1]:8080", "localhost:3000", "", "Upper.Example.ORG."})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		target string
		ok     bool
	}{
		{"registry.npmjs.org:443", true},
		{"registry.npmjs.org:80", true},
		{"REGISTRY.NPMJS.ORG.:443", true},
		{"registry.npmjs.org:22", false},
		{"x.registry.npmjs.org:443", false},
		{"registry.npmjs.org.evil.test:443", false},
		{"a.example.com:443", true},
		{"a.b.example.com:443", true},
		{"example.com:443", false},
		{"badexample.com:443", false},
		{"api.test:8443", true},
		{"api.test:443", false},
		{"127.0.0.1:4873", true},
		{"127.0.0.1:4874", false},
		{"[::ffff:127.0.0.1]:4873", true},
		{"[::1]:8080", true},
		{"localhost:3000", true},
		{"localhost:3001", false},
		{"127.0.0.1:3000", false},
		{"upper.example.org:443", true},
	}
	for _, tt := range tests {
		tg, err := ParseTarget(tt.target, 0)
		if err != nil {
			t.Fatalf("%s: %v", tt.target, err)
		}
		if got := l.Allows(tg); got != tt.ok {
			t.Errorf("%s: allowed %v, want %v", tt.target, got, tt.ok)
		}
	}
	if got := len(l.Loopback()); got != 3 {
		t.Errorf("loopback entries: %d, want 3 (%v)", got, l.Loopback())
	}
	if (List{}).Allows(Target{Name: "a.test", Port: 443}) {
		t.Error("the zero List allows")
	}
}

// TOOL-7: the ready-made entry admits the package registries.
func TestAllowListRegistries_TOOL7(t *testing.T) {
	l, err := ParseList([]string{"registries"})
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range []string{"proxy.golang.org", "registry.npmjs.org", "pypi.org", "files.pythonhosted.org", "crates.io", "repo.maven.apache.org"} {
		if !l.Allows(Target{Name: h, Port: 443}) {
			t.Errorf("registries does not admit %s", h)
		}
	}
	if l.Allows(Target{Name: "evil.test", Port: 443}) {
		t.Error("registries admits anything")
	}
}

// TOOL-7: a bad entry is an error that says how to write one.
func TestAllowListErrors_TOOL7(t *testing.T) {
	for _, e := range []string{"https://registry.npmjs.org/", "user@host", "host/path", "host:0", "host:99999", "*.com", "-bad.test",
		"a..b", "[::1", "fe80::1%eth0", "*", "ex ample.com", "host:port", strings.Repeat("a", 64) + ".test"} {
		_, err := ParseList([]string{e})
		if err == nil {
			t.Errorf("%q: accepted", e)
			continue
		}
		if !strings.Contains(err.Error(), "sandbox.allow_hosts") || !strings.Contains(err.Error(), "registry.npmjs.org") {
			t.Errorf("%q: the error does not say how to write an entry: %v", e, err)
		}
	}
}

// TOOL-7: targets as clients send them.
func TestParseTarget_TOOL7(t *testing.T) {
	good := map[string]Target{
		"a.test:443":        {Name: "a.test", Port: 443},
		"A.TEST.:80":        {Name: "a.test", Port: 80},
		"10.0.0.1:22":       {Addr: netip.MustParseAddr("10.0.0.1"), Port: 22},
		"[2001:db8::1]:443": {Addr: netip.MustParseAddr("2001:db8::1"), Port: 443},
	}
	for in, want := range good {
		got, err := ParseTarget(in, 0)
		if err != nil || got != want {
			t.Errorf("%s: %+v, %v; want %+v", in, got, err, want)
		}
	}
	if got, err := ParseTarget("a.test", 80); err != nil || got.Port != 80 {
		t.Errorf("default port: %+v, %v", got, err)
	}
	for _, bad := range []string{"", "a.test", "a.test:0", "a.test:65536", "u@a.test:443", "a.test:443/x", "a b:443", "a.test:-1", "[fe80::1%25eth0]:443", "a.test:443\r\nX: y"} {
		if _, err := ParseTarget(bad, 0); err == nil {
			t.Errorf("%q: accepted", bad)
		}
	}
}

func FuzzParseList(f *testing.F) {
	for _, s := range []string{"registry.npmjs.org", "*.example.com:8443", "[::1]:80", "registries", "127.0.0.1:4873", "a..b", "*.", ":"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		l, err := ParseList([]string{s})
		if err != nil {
			return
		}
		// Whatever parses admits only what it names: never an address
		// it does not list, and localhost only when it names it.
		for _, tg := range []Target{{Addr: netip.MustParseAddr("169.254.169.254"), Port: 80}, {Name: "localhost", Port: 80}} {
			if l.Allows(tg) && !strings.Contains(strings.ToLower(s), strings.TrimSuffix(tg.String(), ":80")) {
				t.Fatalf("%q admits %s", s, tg)
			}
		}
	})
}

func FuzzParseTarget(f *testing.F) {
	for _, s := range []string{"a.test:443", "[::1]:80", "127.0.0.1:1", "x", "[", "a:b:c"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		tg, err := ParseTarget(s, 0)
		if err != nil {
			return
		}
		if tg.Port < 1 || tg.Port > 65535 || (tg.Name == "") == !tg.Addr.IsValid() {
			t.Fatalf("%q: bad target %+v", s, tg)
		}
		again, err := ParseTarget(tg.String(), 0)
		if err != nil || again != tg {
			t.Fatalf("%q: %s does not parse back: %+v, %v", s, tg, again, err)
		}
	})
}
