package registry

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

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
	// OnRefresh, when set, is called with each new token (the refresh token
	// may have rotated), so the caller can store it. It must not call the
	// TokenSource.
	OnRefresh func(OAuthToken)
}

// refreshMargin is how long before its expiry a token is renewed.
const refreshMargin = 60 * time.Second

// TokenSource hands out an OAuth2 access token and refreshes it through the
// token endpoint (refresh_token grant, form POST, JSON reply) when it has
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
	now := time.Now
	if s.cfg.Now != nil {
		now = s.cfg.Now
	}
	return now().Add(refreshMargin).Before(tok.Expiry)
}

// tokenReply is the token endpoint's JSON reply (RFC 6749 §5.1, §5.2).
type tokenReply struct {
	AccessToken      string `json:"access_token"`
	TokenType        string `json:"token_type"`
	ExpiresIn        int64  `json:"expires_in"`
	RefreshToken     string `json:"refresh_token"`
	Error            string `json:"error"`
	ErrorDescription string `json:"error_description"`
}

// refresh asks the token endpoint for a new access token.
func (s *TokenSource) refresh(ctx context.Context, refreshToken string) (OAuthToken, error) {
	prov := s.cfg.Provider
	if refreshToken == "" {
		return OAuthToken{}, &llm.Error{Kind: llm.KindAuth, Provider: prov,
			Message: "the OAuth access token has expired and there is no refresh token",
			Hint:    "log in again"}
	}
	if s.cfg.TokenURL == "" {
		return OAuthToken{}, &llm.Error{Kind: llm.KindAuth, Provider: prov,
			Message: "the OAuth access token has expired and no token endpoint is configured"}
	}
	form := url.Values{"grant_type": {"refresh_token"}, "refresh_token": {refreshToken}}
	if s.cfg.ClientID != "" {
		form.Set("client_id", s.cfg.ClientID)
	}
	if s.cfg.ClientSecret != "" {
		form.Set("client_secret", s.cfg.ClientSecret)
	}
	if len(s.cfg.Scopes) > 0 {
		form.Set("scope", strings.Join(s.cfg.Scopes, " "))
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.cfg.TokenURL, strings.NewReader(form.Encode()))
	if err != nil {
		return OAuthToken{}, &llm.Error{Kind: llm.KindAuth, Provider: prov, Message: "bad OAuth token endpoint", Err: err}
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	client := s.cfg.HTTPClient
	if client == nil {
		client = http.DefaultClient
	}
	now := time.Now
	if s.cfg.Now != nil {
		now = s.cfg.Now
	}
	start := now()
	resp, err := client.Do(req)
	if err != nil {
		return OAuthToken{}, llm.FromTransport(ctx, prov, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return OAuthToken{}, llm.FromTransport(ctx, prov, err)
	}
	var reply tokenReply
	jsonErr := json.Unmarshal(body, &reply)
	if resp.StatusCode != http.StatusOK || reply.Error != "" {
		return OAuthToken{}, refreshError(prov, resp, body, reply)
	}
	if jsonErr != nil || reply.AccessToken == "" {
		if jsonErr == nil {
			jsonErr = errors.New("no access_token in the reply")
		}
		return OAuthToken{}, &llm.Error{Kind: llm.KindMalformed, Provider: prov, Status: resp.StatusCode,
			Message: "OAuth token refresh: " + jsonErr.Error(), Err: jsonErr}
	}
	tok := OAuthToken{AccessToken: reply.AccessToken, RefreshToken: reply.RefreshToken}
	if tok.RefreshToken == "" {
		tok.RefreshToken = refreshToken // not rotated
	}
	if reply.ExpiresIn > 0 {
		tok.Expiry = start.Add(time.Duration(reply.ExpiresIn) * time.Second)
	}
	return tok, nil
}

// refreshError classifies a refused refresh: the endpoint's 4xx means the
// refresh token is no good (log in again); 5xx and 429 may pass.
func refreshError(prov string, resp *http.Response, body []byte, reply tokenReply) error {
	msg := reply.Error
	if reply.ErrorDescription != "" {
		msg += ": " + reply.ErrorDescription
	}
	if msg == "" {
		msg = strings.TrimSpace(string(body[:min(len(body), 300)]))
	}
	status := resp.StatusCode
	if status == http.StatusOK { // an error field in a 200 reply
		status = http.StatusBadRequest
	}
	e := vendorhttp.FromHTTP(prov, status, resp.Header, body)
	e.Message = fmt.Sprintf("OAuth token refresh failed: %s", msg)
	if status >= 400 && status < 500 && status != http.StatusTooManyRequests && status != http.StatusRequestTimeout {
		e.Kind = llm.KindAuth
		e.Hint = "the refresh token was refused; log in again"
	}
	return e
}
