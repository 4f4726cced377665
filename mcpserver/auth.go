package mcpserver

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"fmt"
	"net/http"
	"strings"
)

// MinTokenLen is the shortest bearer token [Server.Handler] takes: a
// token that short is still 96 bits of base64.
const MinTokenLen = 16

// NewToken returns a random bearer token: 32 bytes from crypto/rand,
// base64url without padding (43 characters).
func NewToken() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("mcpserver: no random token: %w", err)
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}

// CheckToken says what is wrong with a token given by the user, nil when
// it may be used: long enough, and only characters a header carries as
// they are (RFC 6750's b64token: letters, digits, -._~+/ and = at the end).
func CheckToken(token string) error {
	if len(token) < MinTokenLen {
		return fmt.Errorf("the token has %d characters, fewer than %d: use a long random one (openssl rand -base64 32), or let rein make one", len(token), MinTokenLen)
	}
	body := strings.TrimRight(token, "=")
	if body == "" || strings.TrimLeft(body, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~+/") != "" {
		return fmt.Errorf("the token may hold only letters, digits and -._~+/ (and = at its end), as a bearer token does")
	}
	return nil
}

// bearer refuses a request without "Authorization: Bearer <token>" (401,
// with WWW-Authenticate), comparing in constant time: the tokens' SHA-256
// sums are compared, so neither their bytes nor their lengths show in the
// time taken.
func bearer(token string, next http.Handler) http.Handler {
	want := sha256.Sum256([]byte(token))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got, ok := bearerOf(r.Header.Get("Authorization"))
		sum := sha256.Sum256([]byte(got))
		if !ok || subtle.ConstantTimeCompare(sum[:], want[:]) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="rein mcp serve"`)
			msg := "rein mcp serve needs its token: send Authorization: Bearer <token> (the token rein printed at start, or REIN_MCP_TOKEN's)"
			if ok {
				msg = "rein mcp serve: the bearer token is not this server's"
			}
			http.Error(w, msg, http.StatusUnauthorized)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// bearerOf is the token of an Authorization header, ok false when it is
// not a bearer one (the scheme's case does not matter, RFC 7235).
func bearerOf(h string) (string, bool) {
	scheme, tok, found := strings.Cut(strings.TrimSpace(h), " ")
	if !found || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	tok = strings.TrimSpace(tok)
	return tok, tok != ""
}
