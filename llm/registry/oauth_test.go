package registry

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/reinhq/rein/llm"
)

var t0 = time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)

// tokenURL is where the tests' token endpoints live; nothing listens there:
// requests are served in memory (inMemory).
const tokenURL = "https://login.test/token"

// roundTripFunc adapts a function to http.RoundTripper.
type roundTripFunc func(*http.Request) (*http.Response, error)

// RoundTrip calls f.
func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// inMemory returns a client whose requests h serves in the caller's
// goroutine, with no socket, so the tests can run in a synctest bubble. A
// request whose context ends while h runs fails with the context's error,
// as it would over a network.
func inMemory(h http.Handler) *http.Client {
	return &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		if r.Body != nil {
			_ = r.Body.Close()
		}
		if err := r.Context().Err(); err != nil {
			return nil, err
		}
		return rec.Result(), nil
	})}
}

// tokenServer is an OAuth2 token endpoint that counts refreshes and answers
// with reply (status and JSON body; a string is sent as it is); when gate is
// not nil each request waits for it to close first.
type tokenServer struct {
	calls atomic.Int32
	mu    sync.Mutex
	forms []map[string]string
	http  *http.Client
}

func newTokenServer(status int, reply any, gate <-chan struct{}) *tokenServer {
	ts := &tokenServer{}
	ts.http = inMemory(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ts.calls.Add(1)
		if r.Method != http.MethodPost || r.Header.Get("Content-Type") != "application/x-www-form-urlencoded" {
			http.Error(w, "want a form POST", http.StatusMethodNotAllowed)
			return
		}
		if err := r.ParseForm(); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		form := map[string]string{}
		for k := range r.PostForm {
			form[k] = r.PostForm.Get(k)
		}
		ts.mu.Lock()
		ts.forms = append(ts.forms, form)
		ts.mu.Unlock()
		if gate != nil {
			select {
			case <-gate:
			case <-r.Context().Done():
				return
			}
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		if s, ok := reply.(string); ok {
			io.WriteString(w, s)
			return
		}
		json.NewEncoder(w).Encode(reply)
	}))
	return ts
}

// config is an OAuthConfig for ts.
func (ts *tokenServer) config() OAuthConfig {
	return OAuthConfig{TokenURL: tokenURL, HTTPClient: ts.http, Now: clock(t0)}
}

func okReply(access string) map[string]any {
	return map[string]any{"access_token": access, "token_type": "Bearer", "expires_in": 3600, "refresh_token": "rt-2"}
}

func clock(t time.Time) func() time.Time { return func() time.Time { return t } }

func TestTokenSourceFreshTokenNeedsNoRefresh(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ts := newTokenServer(200, okReply("new"), nil)
		for _, tok := range []OAuthToken{
			{AccessToken: "at", RefreshToken: "rt", Expiry: t0.Add(61 * time.Second)},
			{AccessToken: "at", RefreshToken: "rt"}, // no expiry
		} {
			s := NewTokenSource(ts.config(), tok)
			got, err := s.Token(context.Background())
			if err != nil || got != "at" {
				t.Errorf("Token() = %q, %v; want the current token", got, err)
			}
		}
		if n := ts.calls.Load(); n != 0 {
			t.Errorf("%d refreshes, want none", n)
		}
	})
}

func TestTokenSourceRefreshes(t *testing.T) {
	for _, tt := range []struct {
		name   string
		expiry time.Time
	}{
		{"expired", t0.Add(-time.Hour)},
		{"within 60s of expiry", t0.Add(59 * time.Second)},
		{"no access token", time.Time{}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ts := newTokenServer(200, okReply("at-2"), nil)
				var stored []OAuthToken
				cfg := ts.config()
				cfg.Provider, cfg.ClientID, cfg.Scopes = "anthropic", "cli", []string{"a", "b"}
				cfg.OnRefresh = func(tok OAuthToken) { stored = append(stored, tok) }
				s := NewTokenSource(cfg, OAuthToken{AccessToken: map[bool]string{true: "", false: "at-1"}[tt.expiry.IsZero()], RefreshToken: "rt-1", Expiry: tt.expiry})
				got, err := s.Token(context.Background())
				if err != nil || got != "at-2" {
					t.Fatalf("Token() = %q, %v; want at-2", got, err)
				}
				want := OAuthToken{AccessToken: "at-2", RefreshToken: "rt-2", Expiry: t0.Add(time.Hour)}
				if diff := cmp.Diff(want, s.Current()); diff != "" {
					t.Errorf("token after refresh (-want +got):\n%s", diff)
				}
				if diff := cmp.Diff([]OAuthToken{want}, stored); diff != "" {
					t.Errorf("OnRefresh (-want +got):\n%s", diff)
				}
				wantForm := map[string]string{"grant_type": "refresh_token", "refresh_token": "rt-1", "client_id": "cli", "scope": "a b"}
				if diff := cmp.Diff([]map[string]string{wantForm}, ts.forms); diff != "" {
					t.Errorf("request form (-want +got):\n%s", diff)
				}
				// The new token is fresh: no second refresh.
				if got, _ := s.Token(context.Background()); got != "at-2" || ts.calls.Load() != 1 {
					t.Errorf("second Token() = %q after %d refreshes", got, ts.calls.Load())
				}
			})
		})
	}
}

// PROV-4: a token is renewed once it is within refreshMargin of its expiry,
// not before, on the real clock (the bubble's).
func TestTokenSourceRefreshesBeforeExpiry(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ts := newTokenServer(200, okReply("at-2"), nil)
		cfg := ts.config()
		cfg.Now = nil
		start := time.Now()
		s := NewTokenSource(cfg, OAuthToken{AccessToken: "at-1", RefreshToken: "rt-1", Expiry: start.Add(5 * time.Minute)})
		time.Sleep(5*time.Minute - refreshMargin - time.Second)
		if got, err := s.Token(context.Background()); got != "at-1" || err != nil || ts.calls.Load() != 0 {
			t.Fatalf("61s before expiry: Token() = %q, %v after %d refreshes; want at-1 and none", got, err, ts.calls.Load())
		}
		time.Sleep(time.Second)
		if got, err := s.Token(context.Background()); got != "at-2" || err != nil || ts.calls.Load() != 1 {
			t.Fatalf("60s before expiry: Token() = %q, %v after %d refreshes; want at-2 and one", got, err, ts.calls.Load())
		}
		if got, want := s.Current().Expiry, time.Now().Add(time.Hour); !got.Equal(want) {
			t.Errorf("new expiry %v, want %v (expires_in from the request's start)", got, want)
		}
	})
}

func TestTokenSourceKeepsRefreshTokenWhenNotRotated(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ts := newTokenServer(200, map[string]any{"access_token": "at-2", "expires_in": 60}, nil)
		cfg := ts.config()
		cfg.ClientSecret = "sec"
		s := NewTokenSource(cfg, OAuthToken{RefreshToken: "rt-1"})
		if _, err := s.Token(context.Background()); err != nil {
			t.Fatal(err)
		}
		if got := s.Current(); got.RefreshToken != "rt-1" || !got.Expiry.Equal(t0.Add(time.Minute)) {
			t.Errorf("token = %+v, want the old refresh token and a one-minute expiry", got)
		}
		if ts.forms[0]["client_secret"] != "sec" {
			t.Errorf("form = %v, want client_secret", ts.forms[0])
		}
	})
}

func TestTokenSourceRefreshesOnceUnderConcurrency(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		gate := make(chan struct{})
		ts := newTokenServer(200, okReply("at-2"), gate)
		s := NewTokenSource(ts.config(), OAuthToken{AccessToken: "at-1", RefreshToken: "rt-1", Expiry: t0.Add(-time.Second)})

		const n = 50
		var wg sync.WaitGroup
		results := make([]string, n)
		errs := make([]error, n)
		for i := range n {
			wg.Go(func() { results[i], errs[i] = s.Token(context.Background()) })
		}
		// Every caller is now blocked: one in the refresh, the rest behind it.
		synctest.Wait()
		if c := ts.calls.Load(); c != 1 {
			t.Errorf("%d refresh requests under way, want 1", c)
		}
		close(gate)
		wg.Wait()
		for i := range n {
			if errs[i] != nil || results[i] != "at-2" {
				t.Errorf("caller %d: %q, %v", i, results[i], errs[i])
			}
		}
		if c := ts.calls.Load(); c != 1 {
			t.Errorf("%d refresh requests, want 1", c)
		}
	})
}

// PROV-4 attack table: what a hostile or broken token endpoint can answer,
// and what rein makes of it. No reply yields a token without an access
// token, and each failure says what went wrong.
func TestTokenSourceRefreshFails(t *testing.T) {
	tests := []struct {
		name        string
		status      int
		contentType string // default application/json
		reply       any
		token       OAuthToken
		kind        llm.ErrorKind
		retryable   bool
		msg         string
		requests    int32
	}{
		{"invalid grant", 400, "", map[string]any{"error": "invalid_grant", "error_description": "refresh token revoked"},
			OAuthToken{RefreshToken: "rt"}, llm.KindAuth, false, "invalid_grant: refresh token revoked", 1},
		{"unauthorized client", 401, "", map[string]any{"error": "invalid_client"},
			OAuthToken{RefreshToken: "rt"}, llm.KindAuth, false, "invalid_client", 1},
		{"error field in a 200", 200, "", map[string]any{"error": "invalid_grant", "access_token": "smuggled"},
			OAuthToken{RefreshToken: "rt"}, llm.KindAuth, false, "invalid_grant", 1},
		{"server error", 503, "", "upstream down", OAuthToken{RefreshToken: "rt"}, llm.KindOverloaded, true, "upstream down", 1},
		{"rate limited", 429, "", map[string]any{"error": "slow_down"}, OAuthToken{RefreshToken: "rt"}, llm.KindRateLimit, true, "slow_down", 1},
		{"not json", 200, "", "<html>", OAuthToken{RefreshToken: "rt"}, llm.KindMalformed, true, "OAuth token refresh", 1},
		{"no access token", 200, "", map[string]any{"token_type": "Bearer"}, OAuthToken{RefreshToken: "rt"}, llm.KindMalformed, true, "no access_token", 1},
		{"json sent as text/plain", 200, "text/plain", okReply("x"), OAuthToken{RefreshToken: "rt"}, llm.KindMalformed, true, "no access_token", 1},
		{"reply over 1 MiB", 200, "", map[string]any{"access_token": strings.Repeat("a", 2<<20)},
			OAuthToken{RefreshToken: "rt"}, llm.KindMalformed, true, "OAuth token refresh", 1},
		{"no refresh token", 200, "", okReply("x"), OAuthToken{AccessToken: "old", Expiry: t0.Add(-time.Minute)},
			llm.KindAuth, false, "no refresh token", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var calls atomic.Int32
				client := inMemory(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					calls.Add(1)
					w.Header().Set("Content-Type", "application/json")
					if tt.contentType != "" {
						w.Header().Set("Content-Type", tt.contentType)
					}
					w.WriteHeader(tt.status)
					if s, ok := tt.reply.(string); ok {
						io.WriteString(w, s)
						return
					}
					json.NewEncoder(w).Encode(tt.reply)
				}))
				s := NewTokenSource(OAuthConfig{Provider: "anthropic", TokenURL: tokenURL, HTTPClient: client, Now: clock(t0)}, tt.token)
				got, err := s.Token(context.Background())
				if err == nil {
					t.Fatalf("Token() = %q, want an error", got)
				}
				e, ok := llm.AsError(err)
				if !ok {
					t.Fatalf("error %v is %T, want *llm.Error", err, err)
				}
				if e.Kind != tt.kind || e.Retryable() != tt.retryable || e.Provider != "anthropic" {
					t.Errorf("error = %v (kind %v, retryable %v); want kind %v, retryable %v", err, e.Kind, e.Retryable(), tt.kind, tt.retryable)
				}
				if !strings.Contains(err.Error(), tt.msg) {
					t.Errorf("error %q does not mention %q", err, tt.msg)
				}
				if e.Kind == llm.KindAuth && !strings.Contains(err.Error(), "log in again") {
					t.Errorf("auth error %q does not say to log in again", err)
				}
				if c := calls.Load(); c != tt.requests {
					t.Errorf("%d requests, want %d", c, tt.requests)
				}
				if s.Current() != tt.token {
					t.Errorf("token changed after a failed refresh: %+v", s.Current())
				}
			})
		})
	}
}

// PROV-4 attack table, the lifetime a hostile endpoint claims: expires_in
// is whole seconds from the request's start, a number or a string of
// digits; a huge one is capped, a negative or missing one means no expiry,
// and anything else fails the refresh as malformed.
func TestTokenSourceExpiresIn(t *testing.T) {
	for _, tt := range []struct {
		name      string
		expiresIn any
		want      time.Time
		malformed bool
	}{
		{"number", 120, t0.Add(2 * time.Minute), false},
		{"string", "120", t0.Add(2 * time.Minute), false},
		{"huge", int64(1) << 52, t0.Add(maxExpiresIn), false},
		{"negative", -5, time.Time{}, false},
		{"absent", nil, time.Time{}, false},
		{"fraction", 90.5, time.Time{}, true},
		{"exponent", 1e300, time.Time{}, true},
		{"not a number", "soon", time.Time{}, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				reply := map[string]any{"access_token": "at-2"}
				if tt.expiresIn != nil {
					reply["expires_in"] = tt.expiresIn
				}
				ts := newTokenServer(200, reply, nil)
				s := NewTokenSource(ts.config(), OAuthToken{RefreshToken: "rt"})
				_, err := s.Token(context.Background())
				if tt.malformed {
					if llm.KindOf(err) != llm.KindMalformed || !strings.Contains(err.Error(), "expires_in") && !strings.Contains(err.Error(), "parse") {
						t.Errorf("Token() error = %v, want a malformed reply", err)
					}
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				if got := s.Current().Expiry; !got.Equal(tt.want) {
					t.Errorf("expiry %v, want %v", got, tt.want)
				}
			})
		})
	}
}

func TestTokenSourceFailureReachesEveryWaiter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		gate := make(chan struct{})
		ts := newTokenServer(400, map[string]any{"error": "invalid_grant"}, gate)
		s := NewTokenSource(ts.config(), OAuthToken{RefreshToken: "rt"})
		const n = 20
		errs := make(chan error, n)
		for range n {
			go func() {
				_, err := s.Token(context.Background())
				errs <- err
			}()
		}
		synctest.Wait()
		close(gate)
		for range n {
			if err := <-errs; llm.KindOf(err) != llm.KindAuth {
				t.Errorf("err = %v, want an auth error", err)
			}
		}
		if c := ts.calls.Load(); c != 1 {
			t.Errorf("%d refresh requests, want 1", c)
		}
	})
}

func TestTokenSourceCancelledCallers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var calls atomic.Int32
		release := make(chan struct{})
		defer close(release)
		client := inMemory(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if calls.Add(1) == 1 {
				// The first refresh hangs until its caller gives up.
				select {
				case <-r.Context().Done():
				case <-release:
				}
				return
			}
			w.Header().Set("Content-Type", "application/json")
			json.NewEncoder(w).Encode(okReply("at-2"))
		}))
		s := NewTokenSource(OAuthConfig{TokenURL: tokenURL, HTTPClient: client, Now: clock(t0)}, OAuthToken{RefreshToken: "rt"})

		leaderCtx, cancelLeader := context.WithCancel(context.Background())
		leaderErr := make(chan error, 1)
		go func() {
			_, err := s.Token(leaderCtx)
			leaderErr <- err
		}()
		synctest.Wait()
		if calls.Load() != 1 {
			t.Fatalf("%d refresh requests under way, want 1", calls.Load())
		}

		// A waiter whose own context ends stops waiting.
		shortCtx, cancelShort := context.WithTimeout(context.Background(), 10*time.Millisecond)
		defer cancelShort()
		if _, err := s.Token(shortCtx); llm.KindOf(err) != llm.KindCancelled {
			t.Errorf("waiter with an expired context: %v, want cancelled", err)
		}

		// A patient waiter outlives the leader's cancellation and refreshes itself.
		got := make(chan string, 1)
		go func() {
			tok, err := s.Token(context.Background())
			if err != nil {
				tok = "error: " + err.Error()
			}
			got <- tok
		}()
		synctest.Wait()
		cancelLeader()
		if err := <-leaderErr; !errors.Is(err, context.Canceled) && llm.KindOf(err) != llm.KindCancelled {
			t.Errorf("leader: %v, want cancelled", err)
		}
		if tok := <-got; tok != "at-2" {
			t.Errorf("patient waiter got %q, want at-2", tok)
		}
		if c := calls.Load(); c != 2 {
			t.Errorf("%d refresh requests, want 2 (the cancelled one, the patient waiter's)", c)
		}
	})
}

// The method value fits the adapters' Config.Token field.
var _ func(context.Context) (string, error) = (*TokenSource)(nil).Token
