package client

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestErrors(t *testing.T) {
	tests := []struct {
		name   string
		rc     *recorder
		want   *Error
		is     error
		errStr string
	}{{
		name: "problem",
		rc: &recorder{status: 404, ctype: "application/problem+json",
			body: `{"type":"about:blank","title":"Not Found","status":404,"detail":"no session \"s9\": list yours with GET /sessions"}`},
		want:   &Error{Status: 404, Title: "Not Found", Type: "about:blank", Detail: `no session "s9": list yours with GET /sessions`, Method: "GET", Path: "/sessions/s9"},
		is:     ErrNotFound,
		errStr: `client: GET /sessions/s9: 404 Not Found: no session "s9": list yours with GET /sessions`,
	}, {
		name: "validation",
		rc: &recorder{status: 422, ctype: "application/problem+json; charset=utf-8",
			body: `{"title":"Unprocessable Entity","status":422,"detail":"validation failed: fix the fields",` +
				`"errors":[{"message":"expected length >= 1","location":"body.workspace_id","value":""},{"message":"unexpected property"}]}`},
		want: &Error{Status: 422, Title: "Unprocessable Entity", Detail: "validation failed: fix the fields", Method: "GET", Path: "/sessions/s9",
			Fields: []FieldError{{Message: "expected length >= 1", Location: "body.workspace_id", Value: ""}, {Message: "unexpected property"}}},
		errStr: `client: GET /sessions/s9: 422 Unprocessable Entity: validation failed: fix the fields (body.workspace_id: expected length >= 1; unexpected property)`,
	}, {
		name: "rate limited",
		rc: &recorder{status: 429, ctype: "application/problem+json", header: http.Header{"Retry-After": {"7"}},
			body: `{"title":"Too Many Requests","status":429,"detail":"slow down"}`},
		want:   &Error{Status: 429, Title: "Too Many Requests", Detail: "slow down", RetryAfter: 7 * time.Second, Method: "GET", Path: "/sessions/s9"},
		is:     ErrRateLimited,
		errStr: `client: GET /sessions/s9: 429 Too Many Requests: slow down; retry after 7s`,
	}, {
		name: "conflict",
		rc:   &recorder{status: 409, ctype: "application/problem+json", body: `{"title":"Conflict","status":409,"detail":"cancel run r1 first"}`},
		want: &Error{Status: 409, Title: "Conflict", Detail: "cancel run r1 first", Method: "GET", Path: "/sessions/s9"},
		is:   ErrConflict,
	}, {
		name: "unauthorized",
		rc:   &recorder{status: 401, ctype: "application/problem+json", body: `{"title":"Unauthorized","status":401,"detail":"no credentials"}`},
		want: &Error{Status: 401, Title: "Unauthorized", Detail: "no credentials", Method: "GET", Path: "/sessions/s9"},
		is:   ErrUnauthorized,
	}, {
		name:   "not a problem",
		rc:     &recorder{status: 502, ctype: "text/html", body: "<html>bad gateway</html>\n"},
		want:   &Error{Status: 502, Title: "Bad Gateway", Detail: "<html>bad gateway</html>", Method: "GET", Path: "/sessions/s9"},
		errStr: `client: GET /sessions/s9: 502 Bad Gateway: <html>bad gateway</html>`,
	}, {
		name: "JSON that is not a problem",
		rc:   &recorder{status: 500, ctype: "application/json", body: `[1,2]`},
		want: &Error{Status: 500, Title: "Internal Server Error", Detail: "[1,2]", Method: "GET", Path: "/sessions/s9"},
	}, {
		name: "empty",
		rc:   &recorder{status: 503},
		want: &Error{Status: 503, Title: "Service Unavailable", Method: "GET", Path: "/sessions/s9"},
	}}
	sentinels := []error{ErrNotFound, ErrConflict, ErrUnauthorized, ErrRateLimited}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := serve(t, tt.rc, Options{})
			_, err := c.Session(context.Background(), "s9")
			var got *Error
			if !errors.As(err, &got) {
				t.Fatalf("error %v (%T), want an *Error", err, err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			if tt.errStr != "" && err.Error() != tt.errStr {
				t.Errorf("Error() = %q\nwant      %q", err.Error(), tt.errStr)
			}
			for _, s := range sentinels {
				if errors.Is(err, s) != (s == tt.is) {
					t.Errorf("errors.Is(err, %v) = %v", s, !(s == tt.is))
				}
			}
		})
	}
}

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	tests := map[string]time.Duration{
		"":                              0,
		"3":                             3 * time.Second,
		" 120 ":                         2 * time.Minute,
		"-1":                            0,
		"soon":                          0,
		"999999999999":                  24 * time.Hour,
		"Fri, 01 May 2026 12:00:30 GMT": 30 * time.Second,
		"Fri, 01 May 2026 11:00:00 GMT": 0,
	}
	for in, want := range tests {
		if got := parseRetryAfter(in, now); got != want {
			t.Errorf("parseRetryAfter(%q) = %v, want %v", in, got, want)
		}
	}
}

func TestCut(t *testing.T) {
	if got := cut("héllo", 2); got != "h…" {
		t.Errorf("cut at a rune's middle: %q", got)
	}
	if got := cut("abc", 5); got != "abc" {
		t.Errorf("cut short text: %q", got)
	}
}
