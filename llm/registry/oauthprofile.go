package registry

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/reinhq/rein/llm"
)

// OAuthProfile says how a profile authenticates with OAuth2 instead of an
// API key (SPEC PROV-4): the token endpoint and client, and where the
// refresh token lives — a variable or a file, never config.yaml itself.
// [Profile.TokenSource] turns it into a refreshing [TokenSource].
type OAuthProfile struct {
	// TokenURL is the OAuth2 token endpoint (https; http only for a
	// loopback host).
	TokenURL string `json:"token_url" yaml:"token_url"`
	// ClientID identifies the client; empty when the endpoint needs none.
	ClientID string `json:"client_id,omitempty" yaml:"client_id,omitempty"`
	// ClientSecretEnv names a variable holding the client secret, if any.
	ClientSecretEnv string `json:"client_secret_env,omitempty" yaml:"client_secret_env,omitempty"`
	// RefreshTokenEnv names the variable holding the refresh token.
	RefreshTokenEnv string `json:"refresh_token_env,omitempty" yaml:"refresh_token_env,omitempty"`
	// RefreshTokenFile is a file holding the refresh token (trimmed); a
	// rotated refresh token is written back to it. Exactly one of
	// RefreshTokenEnv and RefreshTokenFile is set.
	RefreshTokenFile string `json:"refresh_token_file,omitempty" yaml:"refresh_token_file,omitempty"`
	// Scopes are sent with each refresh when set.
	Scopes []string `json:"scopes,omitempty" yaml:"scopes,omitempty"`
}

// validate checks o as the OAuth settings of profile name.
func (o *OAuthProfile) validate(name string) error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("profile %q: oauth: "+format, append([]any{name}, args...)...)
	}
	if o.TokenURL == "" {
		return bad("a token_url is required")
	}
	u, err := url.Parse(o.TokenURL)
	switch {
	case err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http"):
		return bad("token_url %q is not an http(s) URL", o.TokenURL)
	case u.Scheme == "http" && !loopback(u.Hostname()):
		return bad("token_url %q must use https (http is allowed only for localhost)", o.TokenURL)
	}
	switch {
	case o.RefreshTokenEnv == "" && o.RefreshTokenFile == "":
		return bad("say where the refresh token is: refresh_token_env or refresh_token_file")
	case o.RefreshTokenEnv != "" && o.RefreshTokenFile != "":
		return bad("refresh_token_env and refresh_token_file are both set; keep one")
	case o.RefreshTokenFile != "" && !filepath.IsAbs(o.RefreshTokenFile):
		return bad("refresh_token_file %q must be an absolute path", o.RefreshTokenFile)
	}
	for _, env := range []string{o.RefreshTokenEnv, o.ClientSecretEnv} {
		if strings.ContainsAny(env, " \t\r\n=,") {
			return bad("%q is not a variable name", env)
		}
	}
	for _, s := range o.Scopes {
		if s == "" || strings.ContainsAny(s, " \t\r\n") {
			return bad("scope %q is empty or holds spaces (give scopes as a list)", s)
		}
	}
	return nil
}

func loopback(host string) bool {
	return host == "localhost" || host == "127.0.0.1" || host == "::1" || strings.HasSuffix(host, ".localhost")
}

// refreshToken reads the refresh token o points at.
func (o *OAuthProfile) refreshToken(name string, getenv func(string) string) (string, error) {
	if o.RefreshTokenFile != "" {
		b, err := os.ReadFile(o.RefreshTokenFile)
		if err != nil {
			return "", &llm.Error{Kind: llm.KindAuth, Provider: name, Err: err,
				Message: fmt.Sprintf("cannot read the OAuth refresh token: %v", err),
				Hint:    "write the refresh token to " + o.RefreshTokenFile + " (mode 0600)"}
		}
		if t := strings.TrimSpace(string(b)); t != "" {
			return t, nil
		}
		return "", &llm.Error{Kind: llm.KindAuth, Provider: name,
			Message: "the OAuth refresh token file " + o.RefreshTokenFile + " is empty",
			Hint:    "write the refresh token to it"}
	}
	if getenv != nil {
		if t := strings.TrimSpace(getenv(o.RefreshTokenEnv)); t != "" {
			return t, nil
		}
	}
	return "", llm.AuthMissing(name, o.RefreshTokenEnv)
}

// relogin says how to replace the refresh token of profile name once its
// endpoint refuses it.
func (o *OAuthProfile) relogin(name string) string {
	if o.RefreshTokenFile != "" {
		return fmt.Sprintf("log in to the provider of profile %q again and write the new refresh token to %s (mode 0600)", name, o.RefreshTokenFile)
	}
	return fmt.Sprintf("log in to the provider of profile %q again and set %s to the new refresh token", name, o.RefreshTokenEnv)
}

// TokenSource returns the refreshing token source of an OAuth profile
// (SPEC PROV-4), reading the refresh token and client secret through getenv
// (or the refresh token file). It starts with no access token, so the first
// request refreshes; a rotated refresh token is written back to
// RefreshTokenFile when the profile uses one. client may be nil. It fails
// with an auth *llm.Error when p has no OAuth settings or the refresh token
// cannot be read.
func (p Profile) TokenSource(getenv func(string) string, client *http.Client) (*TokenSource, error) {
	o := p.OAuth
	if o == nil {
		return nil, &llm.Error{Kind: llm.KindAuth, Provider: p.Name, Message: "profile " + p.Name + " has no oauth settings"}
	}
	if err := o.validate(p.Name); err != nil {
		return nil, &llm.Error{Kind: llm.KindAuth, Provider: p.Name, Message: err.Error(), Err: err}
	}
	rt, err := o.refreshToken(p.Name, getenv)
	if err != nil {
		return nil, err
	}
	cfg := OAuthConfig{Provider: p.Name, TokenURL: o.TokenURL, ClientID: o.ClientID, Scopes: o.Scopes, HTTPClient: client,
		Relogin: o.relogin(p.Name)}
	if o.ClientSecretEnv != "" && getenv != nil {
		cfg.ClientSecret = strings.TrimSpace(getenv(o.ClientSecretEnv))
	}
	if o.RefreshTokenFile != "" {
		path := o.RefreshTokenFile
		cfg.OnRefresh = func(t OAuthToken) {
			if t.RefreshToken != "" && t.RefreshToken != rt {
				_ = writeSecret(path, t.RefreshToken) // a failed save costs a login, not this run
			}
		}
	}
	return NewTokenSource(cfg, OAuthToken{RefreshToken: rt}), nil
}

// CheckOAuth reports, without any request, whether an OAuth profile's
// refresh token can be read (for `rein doctor` and `rein provider add`);
// nil for a profile without OAuth.
func (p Profile) CheckOAuth(getenv func(string) string) error {
	if p.OAuth == nil {
		return nil
	}
	_, err := p.OAuth.refreshToken(p.Name, getenv)
	return err
}

// writeSecret replaces path's content by s, through a temporary file, mode
// 0600.
func writeSecret(path, s string) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".refresh-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.WriteString(s + "\n"); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

var errOAuthAndKey = errors.New("a profile authenticates with an API key or with oauth, not both")
