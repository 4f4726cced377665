package registry

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reinhq/rein/llm"
)

// PROV-4: an OAuth profile's settings are checked with errors that say what
// is wrong; a key and OAuth together are refused.
func TestPROV4OAuthProfileValidate(t *testing.T) {
	file := filepath.Join(t.TempDir(), "rt")
	ok := OAuthProfile{TokenURL: "https://login.example/token", RefreshTokenEnv: "RT"}
	for _, tt := range []struct {
		name string
		edit func(p *Profile)
		want string
	}{
		{"env", func(p *Profile) {}, ""},
		{"file", func(p *Profile) { p.OAuth.RefreshTokenEnv, p.OAuth.RefreshTokenFile = "", file }, ""},
		{"loopback http", func(p *Profile) { p.OAuth.TokenURL = "http://127.0.0.1:8080/token" }, ""},
		{"no url", func(p *Profile) { p.OAuth.TokenURL = "" }, "token_url is required"},
		{"plain http", func(p *Profile) { p.OAuth.TokenURL = "http://login.example/token" }, "must use https"},
		{"no refresh token", func(p *Profile) { p.OAuth.RefreshTokenEnv = "" }, "refresh_token_env or refresh_token_file"},
		{"both", func(p *Profile) { p.OAuth.RefreshTokenFile = file }, "keep one"},
		{"relative file", func(p *Profile) { p.OAuth.RefreshTokenEnv, p.OAuth.RefreshTokenFile = "", "rt" }, "absolute path"},
		{"bad scope", func(p *Profile) { p.OAuth.Scopes = []string{"a b"} }, "holds spaces"},
		{"key too", func(p *Profile) { p.APIKeyEnv = "KEY" }, "not both"},
	} {
		o := ok
		p := Profile{Name: "corp", Provider: KindAnthropic, OAuth: &o}
		tt.edit(&p)
		err := p.validate()
		if (tt.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tt.want)) {
			t.Errorf("%s: %v, want %q", tt.name, err, tt.want)
		}
	}
	// OAuth on a built-in's name replaces its key variable.
	r, err := New(Config{Profiles: []Profile{{Name: "anthropic", OAuth: &ok}}})
	if err != nil {
		t.Fatal(err)
	}
	if p, _ := r.Profile("anthropic"); p.APIKeyEnv != "" || p.OAuth == nil || p.CheckAuth() != nil {
		t.Errorf("overridden built-in: %+v", p)
	}
}

// PROV-4: a profile's TokenSource refreshes through the token endpoint with
// the configured client, secret and scopes, and writes a rotated refresh
// token back to the refresh token file.
func TestPROV4ProfileTokenSource(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := r.ParseForm(); err != nil {
			t.Error(err)
		}
		f := r.PostForm
		if f.Get("grant_type") != "refresh_token" || f.Get("refresh_token") != "rt-1" || f.Get("client_id") != "rein" ||
			f.Get("client_secret") != "s3" || f.Get("scope") != "llm.invoke offline_access" {
			w.WriteHeader(http.StatusBadRequest)
			io.WriteString(w, `{"error":"invalid_grant","error_description":"bad refresh token"}`)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"access_token":"at-1","token_type":"Bearer","expires_in":3600,"refresh_token":"rt-2"}`)
	}))
	defer srv.Close()
	file := filepath.Join(t.TempDir(), "rt")
	if err := os.WriteFile(file, []byte("rt-1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	p := Profile{Name: "corp", Provider: KindAnthropic, OAuth: &OAuthProfile{TokenURL: srv.URL + "/token", ClientID: "rein",
		ClientSecretEnv: "CORP_SECRET", RefreshTokenFile: file, Scopes: []string{"llm.invoke", "offline_access"}}}
	getenv := func(k string) string { return map[string]string{"CORP_SECRET": "s3"}[k] }
	if err := p.CheckOAuth(getenv); err != nil {
		t.Fatal(err)
	}
	ts, err := p.TokenSource(getenv, srv.Client())
	if err != nil {
		t.Fatal(err)
	}
	tok, err := ts.Token(context.Background())
	if err != nil || tok != "at-1" {
		t.Fatalf("Token = %q, %v", tok, err)
	}
	b, _ := os.ReadFile(file)
	if strings.TrimSpace(string(b)) != "rt-2" {
		t.Errorf("refresh token file holds %q, want the rotated rt-2", b)
	}
	if fi, _ := os.Stat(file); fi.Mode().Perm() != 0o600 {
		t.Errorf("refresh token file mode %v", fi.Mode().Perm())
	}

	// The refreshed file holds rt-2, which this endpoint refuses: an auth
	// error that names the profile and says to log in again and where the
	// new refresh token goes.
	ts, _ = p.TokenSource(getenv, srv.Client())
	_, err = ts.Token(context.Background())
	if llm.KindOf(err) != llm.KindAuth {
		t.Errorf("refused refresh: %v, want an auth error", err)
	}
	for _, want := range []string{"corp", "invalid_grant", "log in", file} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("refused refresh: %v; want it to mention %q", err, want)
		}
	}

	if h := (&OAuthProfile{RefreshTokenEnv: "CORP_REFRESH"}).relogin("corp"); !strings.Contains(h, `"corp"`) || !strings.Contains(h, "set CORP_REFRESH") {
		t.Errorf("relogin hint of an env profile = %q; want the profile and the variable", h)
	}

	// A refresh token variable that is not set names it.
	p.OAuth.RefreshTokenFile, p.OAuth.RefreshTokenEnv = "", "CORP_REFRESH"
	if _, err := p.TokenSource(getenv, nil); llm.KindOf(err) != llm.KindAuth || !strings.Contains(err.Error(), "CORP_REFRESH") {
		t.Errorf("unset variable: %v", err)
	}
	if _, err := (Profile{Name: "plain"}).TokenSource(getenv, nil); err == nil {
		t.Error("a profile without oauth gave a token source")
	}
}
