package registry

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"

	"github.com/reinhq/rein/llm"
	"github.com/reinhq/rein/llm/vendorhttp"
)

// OAuthToken is an OAuth2 access token with what is needed to renew it.
type OAuthToken struct {
	AccessToken  string    `json:"access_token"`            // sent as the bearer token
	RefreshToken string    `json:"refresh_token,omitempty"` // trades for a new access token
	Expiry       time.Time `json:"expiry,omitzero"`         // zero: never expires
}

// OAuthConfig says how a [TokenSource] refreshes its token.
type OAuthConfig struct {
	// Provider names the provider in errors ("anthropic").
	Provider string
	// TokenURL is the OAuth2 token endpoint.
	TokenURL string
	// ClientID and ClientSecret identify the client; either may be empty.
	ClientID     string
	ClientSecret string
	// Scopes, when set, are sent with the refresh request.
	Scopes []string
	// HTTPClient sends the refresh request; nil means http.DefaultClient.
	HTTPClient *http.Client
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Relogin says how to get a new refresh token when the endpoint refuses
	// the one held ("log in again and write it to …"); empty means "log
	// in again".
	Relogin string
	// OnRefresh, when set, is called with each new token (the refresh token
	// may have rotated), so the caller can store it. It must not call the
	// TokenSource.
	OnRefresh func(OAuthToken)
}

// refreshMargin is how long before its expiry a token is renewed.
const refreshMargin = 60 * time.Second

// TokenSource hands out an OAuth2 access token and refreshes it through the
// token endpoint (refresh_token grant through golang.org/x/oauth2: a form
// POST, a JSON or form-encoded reply as its Content-Type says) when it has
// expired or expires within a minute (SPEC PROV-4). Concurrent callers share
// one refresh. It is safe for concurrent use; its Token method fits the
// adapters' Config.Token.
type TokenSource struct {
	cfg OAuthConfig

	mu       sync.Mutex
	tok      OAuthToken
	inflight *refresh // the refresh under way, nil when none
}

// refresh is one refresh request that concurrent callers wait for.
type refresh struct {
	done chan struct{}
	tok  OAuthToken
	err  error
}

// NewTokenSource returns a source that starts from tok.
func NewTokenSource(cfg OAuthConfig, tok OAuthToken) *TokenSource {
	return &TokenSource{cfg: cfg, tok: tok}
}

// Current returns the token held now, without refreshing it.
func (s *TokenSource) Current() OAuthToken {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.tok
}

// Token returns a valid access token, refreshing it first when it has expired
// or is about to. A failed refresh is an *llm.Error: KindAuth when the
// endpoint refused the refresh token (log in again), a retryable kind when
// the endpoint or the network failed.
func (s *TokenSource) Token(ctx context.Context) (string, error) {
	for {
		s.mu.Lock()
		if s.fresh(s.tok) {
			t := s.tok.AccessToken
			s.mu.Unlock()
			return t, nil
		}
		call := s.inflight
		leader := call == nil
		if leader {
			call = &refresh{done: make(chan struct{})}
			s.inflight = call
		}
		rt := s.tok.RefreshToken
		s.mu.Unlock()

		if leader {
			tok, err := s.refresh(ctx, rt)
			s.mu.Lock()
			if err == nil {
				s.tok = tok
			}
			call.tok, call.err = tok, err
			s.inflight = nil
			s.mu.Unlock()
			close(call.done)
			if err != nil {
				return "", err
			}
			if s.cfg.OnRefresh != nil {
				s.cfg.OnRefresh(tok)
			}
			return tok.AccessToken, nil
		}

		select {
		case <-call.done:
		case <-ctx.Done():
			return "", llm.FromTransport(ctx, s.cfg.Provider, ctx.Err())
		}
		if call.err == nil {
			return call.tok.AccessToken, nil
		}
		if llm.KindOf(call.err) != llm.KindCancelled {
			return "", call.err
		}
		// The refresh failed only because its caller gave up: try again.
	}
}

// fresh reports whether tok can be used without refreshing.
func (s *TokenSource) fresh(tok OAuthToken) bool {
	if tok.AccessToken == "" {
		return false
	}
	if tok.Expiry.IsZero() {
		return true
	}
	return s.now().Add(refreshMargin).Before(tok.Expiry)
}

// refresh asks the token endpoint for a new access token: the
// refresh_token grant of RFC 6749 §6, sent by golang.org/x/oauth2, which
// also reads the reply (JSON or form-encoded, RFC 6749 §5.1 and §5.2).
//
// The request goes through clientcredentials.Config with grant_type
// overridden by EndpointParams — the override x/oauth2 documents for
// endpoints that need more than its own grants — not oauth2.Config's
// refresher: that one sends no scope, and rein sends a profile's scopes
// with each refresh, as some endpoints require (Microsoft Entra's v2
// endpoint among them). The form is the one rein always sent:
// grant_type=refresh_token, refresh_token, scope, and client_id and
// client_secret as parameters.
//
// oauth2.ReuseTokenSource is not used for the token held: it cannot be
// given a caller's context, so a waiting caller could not give up, and its
// clock cannot be set; [TokenSource.Token] keeps the token, the margin and
// the one refresh of concurrent callers itself.
func (s *TokenSource) refresh(ctx context.Context, refreshToken string) (OAuthToken, error) {
	prov := s.cfg.Provider
	if refreshToken == "" {
		return OAuthToken{}, &llm.Error{Kind: llm.KindAuth, Provider: prov,
			Message: "the OAuth access token has expired and there is no refresh token",
			Hint:    s.relogin()}
	}
	if s.cfg.TokenURL == "" {
		return OAuthToken{}, &llm.Error{Kind: llm.KindAuth, Provider: prov,
			Message: "the OAuth access token has expired and no token endpoint is configured"}
	}
	if _, err := url.Parse(s.cfg.TokenURL); err != nil {
		return OAuthToken{}, &llm.Error{Kind: llm.KindAuth, Provider: prov, Message: "bad OAuth token endpoint", Err: err}
	}
	cc := clientcredentials.Config{
		ClientID:     s.cfg.ClientID,
		ClientSecret: s.cfg.ClientSecret,
		TokenURL:     s.cfg.TokenURL,
		Scopes:       s.cfg.Scopes,
		AuthStyle:    oauth2.AuthStyleInParams,
		EndpointParams: url.Values{
			"grant_type":    {"refresh_token"},
			"refresh_token": {refreshToken},
		},
	}
	client := s.cfg.HTTPClient
	if client == nil {
		client = http.DefaultClient
	}
	start := s.now()
	tk, err := cc.Token(context.WithValue(ctx, oauth2.HTTPClient, client))
	if err != nil {
		return OAuthToken{}, s.refreshError(ctx, err)
	}
	// x/oauth2 keeps the old refresh token when the reply has none.
	tok := OAuthToken{AccessToken: tk.AccessToken, RefreshToken: cmp.Or(tk.RefreshToken, refreshToken)}
	if d := expiresIn(tk); d > 0 {
		tok.Expiry = start.Add(d) // counted from before the request: never late
	}
	return tok, nil
}

// expiresIn reads the expires_in of the token reply (a JSON number, or a
// string as some endpoints and form-encoded replies send it), whole
// seconds, at most maxExpiresIn; 0 — a token that does not expire — when
// it is absent or not a positive number.
func expiresIn(tk *oauth2.Token) time.Duration {
	var secs float64
	switch v := tk.Extra("expires_in").(type) {
	case float64:
		secs = v
	case string:
		secs, _ = strconv.ParseFloat(strings.TrimSpace(v), 64)
	}
	if !(secs >= 1) { // also NaN
		return 0
	}
	return time.Duration(min(secs, maxExpiresIn.Seconds())) * time.Second
}

// maxExpiresIn bounds a token lifetime read from a reply, so a hostile
// endpoint's huge expires_in cannot overflow the expiry.
const maxExpiresIn = 100 * 365 * 24 * time.Hour

// refreshError classifies a failed refresh. The endpoint's 4xx means the
// refresh token is no good (log in again); 5xx and 429 may pass; a failure
// to reach the endpoint is classified like any transport failure, and a
// reply that does not parse, or holds no access token, is KindMalformed.
func (s *TokenSource) refreshError(ctx context.Context, err error) error {
	prov := s.cfg.Provider
	re, ok := errors.AsType[*oauth2.RetrieveError](err)
	if !ok {
		msg := err.Error()
		switch {
		case ctx.Err() == nil && strings.Contains(msg, "missing access_token"):
			return &llm.Error{Kind: llm.KindMalformed, Provider: prov,
				Message: "OAuth token refresh: no access_token in the reply", Err: err}
		case ctx.Err() == nil && strings.Contains(msg, "cannot parse"):
			return &llm.Error{Kind: llm.KindMalformed, Provider: prov,
				Message: "OAuth token refresh: " + strings.TrimPrefix(msg, "oauth2: "), Err: err}
		}
		return llm.FromTransport(ctx, prov, err)
	}
	msg := re.ErrorCode
	if re.ErrorDescription != "" {
		msg += ": " + re.ErrorDescription
	}
	if msg == "" {
		msg = strings.TrimSpace(string(re.Body[:min(len(re.Body), 300)]))
	}
	status := re.Response.StatusCode
	if status >= 200 && status < 300 { // an error field in a 2xx reply
		status = http.StatusBadRequest
	}
	e := vendorhttp.FromHTTP(prov, status, re.Response.Header, re.Body)
	e.Message = fmt.Sprintf("OAuth token refresh failed: %s", msg)
	if status >= 400 && status < 500 && status != http.StatusTooManyRequests && status != http.StatusRequestTimeout {
		e.Kind = llm.KindAuth
		e.Hint = "the refresh token was refused; " + s.relogin()
	}
	return e
}

// relogin says how to get a new refresh token.
func (s *TokenSource) relogin() string {
	return cmp.Or(s.cfg.Relogin, "log in again")
}

// now reads the clock of the configuration.
func (s *TokenSource) now() time.Time {
	if s.cfg.Now != nil {
		return s.cfg.Now()
	}
	return time.Now()
}
