package console_test

import (
	"errors"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reinhq/rein/console"
)

// clock is a settable clock.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

func newConsole(o console.Options) (*console.Console, *clock) {
	clk := &clock{now: time.Date(2026, 11, 28, 7, 0, 0, 0, time.UTC)}
	o.Now = clk.Now
	return console.New(o), clk
}

// A login link signs in once, before it expires, as its caller; no
// credential outlives the one it was made from (SPEC API-10).
func TestLoginLinks_API10(t *testing.T) {
	tests := []struct {
		name   string
		run    func(c *console.Console, clk *clock) error
		detail string // "" means success
	}{
		{"redeemed once", func(c *console.Console, _ *clock) error {
			tok, _, _ := c.IssueLink("local", time.Time{})
			caller, _, err := c.Redeem(tok)
			if err == nil && caller != "local" {
				return errors.New("caller " + caller)
			}
			return err
		}, ""},
		{"redeemed twice", func(c *console.Console, _ *clock) error {
			tok, _, _ := c.IssueLink("local", time.Time{})
			_, _, _ = c.Redeem(tok)
			_, _, err := c.Redeem(tok)
			return err
		}, "already used"},
		{"just before it expires", func(c *console.Console, clk *clock) error {
			tok, _, _ := c.IssueLink("local", time.Time{})
			clk.advance(console.DefaultLinkTTL - time.Second)
			_, _, err := c.Redeem(tok)
			return err
		}, ""},
		{"when it expires", func(c *console.Console, clk *clock) error {
			tok, _, _ := c.IssueLink("local", time.Time{})
			clk.advance(console.DefaultLinkTTL)
			_, _, err := c.Redeem(tok)
			return err
		}, "expired at"},
		{"made from a credential that ends first", func(c *console.Console, clk *clock) error {
			tok, exp, _ := c.IssueLink("ada", clk.Now().Add(time.Minute))
			if !exp.Equal(clk.Now().Add(time.Minute)) {
				return errors.New("the link outlives its credential: " + exp.String())
			}
			clk.advance(time.Minute)
			_, _, err := c.Redeem(tok)
			return err
		}, "expired at"},
		{"made from an expired credential", func(c *console.Console, clk *clock) error {
			_, _, err := c.IssueLink("ada", clk.Now().Add(-time.Second))
			return err
		}, "expired"},
		{"empty token", func(c *console.Console, _ *clock) error { _, _, err := c.Redeem(""); return err }, "no login token"},
		{"overlong token", func(c *console.Console, _ *clock) error {
			_, _, err := c.Redeem(strings.Repeat("A", 129))
			return err
		}, "no login token"},
		{"a prefix of a real token", func(c *console.Console, _ *clock) error {
			tok, _, _ := c.IssueLink("local", time.Time{})
			_, _, err := c.Redeem(tok[:42])
			return err
		}, "unknown"},
		{"the oldest link goes beyond MaxLinks", func(c *console.Console, _ *clock) error {
			first, _, _ := c.IssueLink("local", time.Time{})
			for range console.DefaultMaxLinks {
				c.IssueLink("local", time.Time{})
			}
			_, _, err := c.Redeem(first)
			return err
		}, "unknown"},
		{"no caller", func(c *console.Console, _ *clock) error { _, _, err := c.IssueLink("", time.Time{}); return err }, "needs a caller"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, clk := newConsole(console.Options{})
			err := tt.run(c, clk)
			switch {
			case tt.detail == "" && err != nil:
				t.Fatalf("error %v, want none", err)
			case tt.detail != "" && (err == nil || !strings.Contains(err.Error(), tt.detail)):
				t.Fatalf("error %v, want one saying %q", err, tt.detail)
			}
		})
	}
}

// Tokens are 256 random bits, URL-safe, never repeated.
func TestLinkTokens_API10(t *testing.T) {
	c, _ := newConsole(console.Options{MaxLinks: 1000})
	seen := map[string]bool{}
	for range 200 {
		tok, _, err := c.IssueLink("local", time.Time{})
		if err != nil {
			t.Fatal(err)
		}
		if len(tok) != 43 || !regexp.MustCompile(`^[A-Za-z0-9_-]+$`).MatchString(tok) || seen[tok] {
			t.Fatalf("token %q: want 43 URL-safe characters, each new", tok)
		}
		seen[tok] = true
	}
}

// signIn signs a browser in and returns the request its cookie makes.
func signIn(t *testing.T, c *console.Console, until time.Time) (*http.Cookie, console.Session) {
	t.Helper()
	w := httptest.NewRecorder()
	s, err := c.SignIn(w, httptest.NewRequest("POST", "/console/login", nil), "local", until)
	if err != nil {
		t.Fatal(err)
	}
	cs := w.Result().Cookies()
	if len(cs) != 1 {
		t.Fatalf("%d cookies", len(cs))
	}
	return cs[0], s
}

func withCookie(cs ...*http.Cookie) *http.Request {
	r := httptest.NewRequest("GET", "/sessions", nil)
	for _, c := range cs {
		r.AddCookie(c)
	}
	return r
}

// The cookie: flags, lifetime, lookups of stale and forged values, the
// sign-in cap, sign-out (SPEC API-10).
func TestSignInCookie_API10(t *testing.T) {
	c, clk := newConsole(console.Options{MaxSignIns: 2})
	ck, s := signIn(t, c, time.Time{})
	if !ck.HttpOnly || ck.SameSite != http.SameSiteStrictMode || ck.Path != "/" || ck.Secure || ck.Name != c.CookieName() {
		t.Errorf("cookie %+v", ck)
	}
	got, present, err := c.Lookup(withCookie(ck))
	if err != nil || !present || got.Caller != "local" || got.CSRF != s.CSRF {
		t.Fatalf("lookup: %+v %v %v", got, present, err)
	}
	if _, present, err := c.Lookup(withCookie(&http.Cookie{Name: "other", Value: ck.Value})); present || err != nil {
		t.Errorf("another cookie's name: present %v, err %v", present, err)
	}
	other, _ := newConsole(console.Options{})
	if other.CookieName() == c.CookieName() {
		t.Errorf("two consoles share the cookie name %s", c.CookieName())
	}
	for name, r := range map[string]*http.Request{
		"forged":       withCookie(&http.Cookie{Name: ck.Name, Value: "AAAA"}),
		"overlong":     withCookie(&http.Cookie{Name: ck.Name, Value: strings.Repeat("A", 200)}),
		"twice":        withCookie(ck, ck),
		"another proc": withCookie(&http.Cookie{Name: ck.Name, Value: ck.Value + "x"}),
	} {
		if _, present, err := c.Lookup(r); !present || !errors.Is(err, console.ErrInvalid) {
			t.Errorf("%s cookie: present %v, err %v: want a refusal", name, present, err)
		}
	}
	// TLS sets Secure.
	w := httptest.NewRecorder()
	r := httptest.NewRequest("POST", "https://rein.example/console/login", nil)
	if _, err := c.SignIn(w, r, "ada", time.Time{}); err != nil || !w.Result().Cookies()[0].Secure {
		t.Errorf("over TLS: err %v, cookie %+v: want Secure", err, w.Result().Cookies())
	}
	// MaxSignIns 2: a third sign-in signs the first out.
	signIn(t, c, time.Time{})
	if _, _, err := c.Lookup(withCookie(ck)); err == nil {
		t.Error("the oldest sign-in survived MaxSignIns")
	}
	ck2, _ := signIn(t, c, clk.Now().Add(time.Hour))
	clk.advance(time.Hour)
	if _, _, err := c.Lookup(withCookie(ck2)); err == nil || !strings.Contains(err.Error(), "expired") {
		t.Errorf("a sign-in past its credential's end: %v", err)
	}
	ck3, _ := signIn(t, c, time.Time{})
	w = httptest.NewRecorder()
	c.SignOut(w, withCookie(ck3))
	if _, _, err := c.Lookup(withCookie(ck3)); err == nil {
		t.Error("a signed-out cookie still works")
	}
	if cl := w.Result().Cookies(); len(cl) != 1 || cl[0].MaxAge >= 0 {
		t.Errorf("sign-out cleared no cookie: %+v", cl)
	}
	if _, err := c.SignIn(httptest.NewRecorder(), r, "ada", clk.Now()); err == nil {
		t.Error("signed in with a credential that has ended")
	}
}

// Writes made with the cookie carry its CSRF token, once, exactly.
func TestCSRF_API10(t *testing.T) {
	c, _ := newConsole(console.Options{})
	_, s := signIn(t, c, time.Time{})
	_, s2 := signIn(t, c, time.Time{})
	for _, tt := range []struct {
		name   string
		values []string
		detail string
	}{
		{"right", []string{s.CSRF}, ""},
		{"missing", nil, "needs its CSRF token"},
		{"empty", []string{""}, "does not match"},
		{"another sign-in's", []string{s2.CSRF}, "does not match"},
		{"twice", []string{s.CSRF, s.CSRF}, "2 times"},
		{"with a suffix", []string{s.CSRF + "x"}, "does not match"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest("POST", "/workspaces", nil)
			r.Header[http.CanonicalHeaderKey(console.CSRFHeader)] = tt.values
			err := s.CheckCSRF(r)
			if tt.detail == "" && err != nil || tt.detail != "" && (err == nil || !strings.Contains(err.Error(), tt.detail)) {
				t.Fatalf("error %v, want %q", err, tt.detail)
			}
		})
	}
}

// The embedded files obey the CSP they are served with: no inline script,
// no inline handlers or styles, no eval, no HTML parsing of strings
// (innerHTML and friends), nothing from another origin; and they stay
// small (SPEC API-10).
func TestAssetsRules_API10(t *testing.T) {
	a := console.NewAssets()
	if n := a.Size(); n > 200<<10 {
		t.Errorf("the console is %d bytes: the aim is under 200 KiB", n)
	} else {
		t.Logf("console size: %d bytes", n)
	}
	forbidden := regexp.MustCompile(`innerHTML|outerHTML|insertAdjacentHTML|document\.write|\beval\(|new Function|setTimeout\(\s*["'\x60]|DOMParser|createContextualFragment|https?://(?:[a-z0-9-]+\.)+[a-z]{2,}`)
	inline := regexp.MustCompile(`(?i)<script(?:\s+(?:type="module"\s+)?)?>|\son[a-z]+=|\sstyle=|javascript:`)
	err := fs.WalkDir(os.DirFS("assets"), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(filepath.Join("assets", p))
		if err != nil {
			return err
		}
		if !a.Has("/console/" + p) {
			t.Errorf("%s is not served", p)
		}
		src := string(b)
		if strings.HasSuffix(p, ".js") {
			for _, m := range forbidden.FindAllString(src, -1) {
				t.Errorf("%s uses %q: the console builds DOM nodes from text and loads nothing from elsewhere", p, m)
			}
		}
		if strings.HasSuffix(p, ".html") {
			for _, m := range inline.FindAllString(src, -1) {
				t.Errorf("%s has inline code %q: the CSP refuses it", p, m)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(console.CSP, "script-src 'self'") || strings.Contains(console.CSP, "unsafe") {
		t.Errorf("CSP %q", console.CSP)
	}
}

// Redeem takes any string without panicking, and a guess never signs in.
func FuzzRedeem(f *testing.F) {
	f.Add("")
	f.Add("AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA")
	f.Add(strings.Repeat("é", 100))
	c, _ := newConsole(console.Options{})
	if _, _, err := c.IssueLink("local", time.Time{}); err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, tok string) {
		if _, _, err := c.Redeem(tok); err == nil {
			t.Fatalf("the guess %q signed in", tok)
		}
	})
}

// Lookup takes any cookie value without panicking, and a guess is never a
// sign-in.
func FuzzLookup(f *testing.F) {
	f.Add("AAAA")
	f.Add("")
	c, _ := newConsole(console.Options{})
	f.Fuzz(func(t *testing.T, v string) {
		r := httptest.NewRequest("GET", "/", nil)
		r.Header.Set("Cookie", c.CookieName()+"="+v)
		if s, present, err := c.Lookup(r); err == nil && present {
			t.Fatalf("the value %q is a sign-in: %+v", v, s)
		}
	})
}
