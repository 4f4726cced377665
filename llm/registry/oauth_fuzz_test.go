package registry

import (
	"context"
	"io"
	"net/http"
	"testing"

	"github.com/reinhq/rein/llm"
)

// FuzzTokenRefreshReply feeds the token endpoint's reply — status, content
// type, body — to a refresh (PROV-4; the endpoint is hostile input). A
// refresh either yields a non-empty access token whose expiry is absent or
// within maxExpiresIn of the request, or fails with an *llm.Error naming
// the provider, the token held left as it was.
func FuzzTokenRefreshReply(f *testing.F) {
	f.Add(200, "application/json", `{"access_token":"at","token_type":"Bearer","expires_in":3600,"refresh_token":"rt-2"}`)
	f.Add(200, "application/json", `{"access_token":"at","expires_in":"60"}`)
	f.Add(200, "application/x-www-form-urlencoded", `access_token=at&expires_in=60&refresh_token=r`)
	f.Add(200, "text/plain", `{"access_token":"at"}`)
	f.Add(200, "application/json", `{"error":"invalid_grant","access_token":"at"}`)
	f.Add(400, "application/json", `{"error":"invalid_grant","error_description":"revoked"}`)
	f.Add(503, "text/html", `<html>down</html>`)
	f.Add(200, "application/json", `{"access_token":"at","expires_in":99999999999999999999}`)
	f.Add(200, "application/json", `{"access_token":"at","expires_in":-1}`)
	f.Add(200, "", ``)
	f.Fuzz(func(t *testing.T, status int, contentType, body string) {
		if status < 200 || status > 599 {
			t.Skip("net/http answers only statuses 200-599 here")
		}
		client := inMemory(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", contentType)
			w.WriteHeader(status)
			io.WriteString(w, body)
		}))
		held := OAuthToken{AccessToken: "old", RefreshToken: "rt", Expiry: t0}
		s := NewTokenSource(OAuthConfig{Provider: "p", TokenURL: tokenURL, HTTPClient: client, Now: clock(t0)}, held)
		tok, err := s.Token(context.Background())
		if err != nil {
			e, ok := llm.AsError(err)
			if !ok || e.Provider != "p" || e.Error() == "" {
				t.Fatalf("error %v (%T) is not an *llm.Error naming the provider", err, err)
			}
			if s.Current() != held {
				t.Fatalf("a failed refresh changed the token: %+v", s.Current())
			}
			return
		}
		cur := s.Current()
		if tok == "" || cur.AccessToken != tok || cur.RefreshToken == "" {
			t.Fatalf("refresh gave %q, holding %+v", tok, cur)
		}
		if !cur.Expiry.IsZero() && (!cur.Expiry.After(t0) || cur.Expiry.After(t0.Add(maxExpiresIn))) {
			t.Fatalf("expiry %v is outside (%v, %v]", cur.Expiry, t0, t0.Add(maxExpiresIn))
		}
	})
}
