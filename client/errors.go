package client

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
	"time"

	"github.com/reinhq/rein/llm/vendorhttp"
)

// Sentinels an *Error matches with errors.Is, by status.
var (
	// ErrNotFound: 404 — an unknown id, or one of another caller's.
	ErrNotFound = errors.New("not found")
	// ErrConflict: 409 — the resource's state forbids the request (a run
	// already final, a session with a run in progress).
	ErrConflict = errors.New("conflict")
	// ErrUnauthorized: 401 — no credentials, or ones the server refuses.
	ErrUnauthorized = errors.New("unauthorized")
	// ErrRateLimited: 429 — too many requests; see Error.RetryAfter.
	ErrRateLimited = errors.New("rate limited")
)

// Error is a failure the server answered with: its status and the RFC 9457
// problem it sent (huma's error model).
type Error struct {
	// Status is the HTTP status code.
	Status int
	// Title is the problem's short summary ("Not Found").
	Title string
	// Detail says what is wrong and how to fix it.
	Detail string
	// Type is the problem type URI, when the server sent one.
	Type string
	// Fields lists the parts of the request at fault (422).
	Fields []FieldError
	// RetryAfter is the server's Retry-After, when it sent one (429, 503).
	RetryAfter time.Duration
	// Method and Path name the request.
	Method, Path string
}

// FieldError is one entry of a problem's errors list.
type FieldError struct {
	Message  string `json:"message"`
	Location string `json:"location,omitempty"`
	Value    any    `json:"value,omitempty"`
}

// Error reads "client: POST /sessions: 422 Unprocessable Entity: validation
// failed: … (body.workspace_id: expected length >= 1); retry after 3s".
func (e *Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "client: %s %s: %d", e.Method, e.Path, e.Status)
	if e.Title != "" {
		b.WriteString(" " + e.Title)
	}
	if e.Detail != "" {
		b.WriteString(": " + e.Detail)
	}
	if len(e.Fields) > 0 {
		b.WriteString(" (")
		for i, f := range e.Fields {
			if i > 0 {
				b.WriteString("; ")
			}
			if f.Location != "" {
				b.WriteString(f.Location + ": ")
			}
			b.WriteString(f.Message)
		}
		b.WriteString(")")
	}
	if e.RetryAfter > 0 {
		fmt.Fprintf(&b, "; retry after %s", e.RetryAfter)
	}
	return b.String()
}

// Is matches the sentinel of the error's status.
func (e *Error) Is(target error) bool {
	switch target {
	case ErrNotFound:
		return e.Status == http.StatusNotFound
	case ErrConflict:
		return e.Status == http.StatusConflict
	case ErrUnauthorized:
		return e.Status == http.StatusUnauthorized
	case ErrRateLimited:
		return e.Status == http.StatusTooManyRequests
	}
	return false
}

// temporary reports whether the same request may succeed later: timeouts,
// rate limits and server-side failures.
func (e *Error) temporary() bool {
	return e.Status == http.StatusRequestTimeout || e.Status == http.StatusTooManyRequests || e.Status >= 500
}

// maxErrorBody bounds how much of an error response is read.
const maxErrorBody = 64 << 10

// decodeError turns a non-2xx response into an *Error: the problem+json
// (or plain JSON) body when there is one, else the status text and the
// start of the body as the detail.
func decodeError(req *http.Request, resp *http.Response) *Error {
	e := &Error{Status: resp.StatusCode, Method: req.Method, Path: req.URL.Path,
		RetryAfter: parseRetryAfter(resp.Header.Get("Retry-After"), time.Now())}
	body, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	var p struct {
		Type   string       `json:"type"`
		Title  string       `json:"title"`
		Detail string       `json:"detail"`
		Errors []FieldError `json:"errors"`
	}
	if (mt == "application/problem+json" || mt == "application/json") && json.Unmarshal(body, &p) == nil {
		e.Type, e.Title, e.Detail, e.Fields = p.Type, p.Title, p.Detail, p.Errors
	} else if text := strings.TrimSpace(string(body)); text != "" {
		e.Detail = cut(text, 200)
	}
	if e.Title == "" {
		e.Title = http.StatusText(resp.StatusCode)
	}
	return e
}

// cut shortens s to about n bytes, at a rune boundary.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && n < len(s) && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n] + "…"
}

// parseRetryAfter reads a Retry-After header: seconds, or an HTTP date
// (relative to now), at most a day. Zero when absent, malformed or past.
func parseRetryAfter(v string, now time.Time) time.Duration {
	d, _ := vendorhttp.ParseRetryAfter(v, now)
	return d
}
