package mcpserver

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// FuzzBearerOf: whatever Authorization header comes, the token read is
// what follows a Bearer scheme, trimmed and not empty, and the server's
// check lets a request through only when that token is the server's
// (FRONT-2).
func FuzzBearerOf(f *testing.F) {
	const token = "fuzz-token-0123456789abcdef"
	for _, s := range []string{"Bearer " + token, "bearer " + token, "Bearer", "Bearer  ", "Basic abc", token, "Bearer " + token + " x", " Bearer\t" + token, ""} {
		f.Add(s)
	}
	ok := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) })
	h := bearer(token, ok)
	f.Fuzz(func(t *testing.T, header string) {
		got, found := bearerOf(header)
		if found && (got == "" || got != strings.TrimSpace(got)) {
			t.Fatalf("bearerOf(%q) = %q", header, got)
		}
		r := httptest.NewRequest("POST", "/", nil)
		r.Header["Authorization"] = []string{header}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if passed := w.Code == http.StatusNoContent; passed != (found && got == token) {
			t.Fatalf("header %q: status %d, token read %q", header, w.Code, got)
		}
	})
}

// NewToken makes tokens CheckToken takes, each different.
func TestNewToken_FRONT2(t *testing.T) {
	seen := map[string]bool{}
	for range 50 {
		tok, err := NewToken()
		if err != nil {
			t.Fatal(err)
		}
		if err := CheckToken(tok); err != nil || len(tok) != 43 || seen[tok] {
			t.Fatalf("token %q: %v (seen %v)", tok, err, seen[tok])
		}
		seen[tok] = true
	}
}
