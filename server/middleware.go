package server

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"net/http"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"github.com/danielgtaylor/huma/v2"
	"github.com/danielgtaylor/huma/v2/adapters/humago"
)

// requestInfo is what the layers of a request learn about it for its log
// line: the outer handler creates it, huma's middleware fills it in.
type requestInfo struct {
	id     string // X-Request-Id
	route  string // the operation's path template, e.g. /sessions/{id}
	caller string
	// sessionID and runID are the ids the path names (SPEC OBS-1).
	sessionID, runID string
}

type infoKey struct{}

// infoFrom returns the request's info; an empty one outside a request.
func infoFrom(ctx context.Context) *requestInfo {
	if info, ok := ctx.Value(infoKey{}).(*requestInfo); ok {
		return info
	}
	return &requestInfo{}
}

type credentialKey struct{}

// callerOf returns the caller the gate authenticated.
func callerOf(ctx context.Context) string {
	return credentialOf(ctx).Caller
}

// credentialOf returns the credential the gate authenticated.
func credentialOf(ctx context.Context) credential {
	c, _ := ctx.Value(credentialKey{}).(credential)
	return c
}

// recorder remembers the status a handler wrote.
type recorder struct {
	http.ResponseWriter
	status int
}

func (r *recorder) WriteHeader(code int) {
	if r.status == 0 && code >= 200 {
		r.status = code
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *recorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	return r.ResponseWriter.Write(b)
}

// FlushError lets http.ResponseController flush through the recorder.
func (r *recorder) FlushError() error {
	return http.NewResponseController(r.ResponseWriter).Flush()
}

// Flush lets handlers that want an http.Flusher (a metrics handler) flush
// through the recorder.
func (r *recorder) Flush() { _ = r.FlushError() }

// Unwrap gives http.ResponseController the writer underneath.
func (r *recorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

// serveLogged is the outermost handler: it names the request (X-Request-Id),
// turns a panic into a 500 problem, screens it (Host, Origin, Content-Type:
// see screen) before routing, and logs one line per request (SPEC OBS-1) —
// method, route, path, status, duration and caller, never a header or the
// query, so never a token.
func (s *Server) serveLogged(w http.ResponseWriter, r *http.Request) {
	start := s.now()
	info := &requestInfo{id: newRequestID()}
	w.Header().Set("X-Request-Id", info.id)
	rec := &recorder{ResponseWriter: w}
	defer func() {
		p := recover()
		if p != nil && p != http.ErrAbortHandler {
			s.log.Error("http handler panicked", "request_id", info.id, "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
			if rec.status == 0 {
				writeProblem(rec, http.StatusInternalServerError, fmt.Sprintf("the server failed (request %s); the server log has the cause", info.id))
				p = nil
			}
		}
		s.logRequest(r, rec.status, info, s.now().Sub(start))
		if p != nil {
			panic(http.ErrAbortHandler) // the response was under way: cut the connection
		}
	}()
	if !s.screen(rec, r) {
		return
	}
	s.mux.ServeHTTP(rec, r.WithContext(context.WithValue(r.Context(), infoKey{}, info)))
}

func (s *Server) logRequest(r *http.Request, status int, info *requestInfo, d time.Duration) {
	if status == 0 {
		status = http.StatusOK
	}
	if s.cfg.OnRequest != nil {
		method := r.Method
		switch method {
		case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete, http.MethodOptions:
		default:
			method = "other" // a label's values stay bounded whatever clients send
		}
		s.cfg.OnRequest(method, info.route, status, d)
	}
	level := slog.LevelInfo
	if status >= 500 {
		level = slog.LevelError
	}
	attrs := []slog.Attr{slog.String("method", r.Method), slog.String("route", info.route), slog.String("path", r.URL.Path),
		slog.Int("status", status), slog.Duration("duration", d), slog.String("caller", info.caller),
		slog.String("request_id", info.id)}
	if info.sessionID != "" {
		attrs = append(attrs, slog.String("session_id", info.sessionID))
	}
	if info.runID != "" {
		attrs = append(attrs, slog.String("run_id", info.runID))
	}
	s.log.LogAttrs(r.Context(), level, "http request", attrs...)
}

func newRequestID() string {
	var b [8]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand)
	return hex.EncodeToString(b[:])
}

// gate is huma's middleware for every operation: it authenticates the
// caller of an operation that needs one (it declares security), then takes a
// token of the caller's rate-limit bucket — of the client address's for
// public operations and refused credentials.
func (s *Server) gate(ctx huma.Context, next func(huma.Context)) {
	op := ctx.Operation()
	info := infoFrom(ctx.Context())
	info.route = op.Path
	switch {
	case strings.HasPrefix(op.Path, "/sessions/{id}"):
		info.sessionID = ctx.Param("id")
	case strings.HasPrefix(op.Path, "/runs/{id}"):
		info.runID = ctx.Param("id")
	}
	r, _ := humago.Unwrap(ctx)
	key := "addr:" + addrKey(r)
	if len(op.Security) > 0 {
		cred, aerr := s.auth.authenticate(r)
		if aerr != nil {
			if !s.admit(ctx, key) {
				return
			}
			if aerr.Challenge != "" {
				ctx.SetHeader("WWW-Authenticate", aerr.Challenge)
			}
			_ = huma.WriteErr(s.api, ctx, aerr.status(), aerr.Detail)
			return
		}
		info.caller = cred.Caller
		key = "caller:" + cred.Caller
		ctx = huma.WithValue(ctx, credentialKey{}, cred)
	}
	if !s.admit(ctx, key) {
		return
	}
	next(ctx)
}

// admit takes a token of key's bucket, or answers 429 with Retry-After.
func (s *Server) admit(ctx huma.Context, key string) bool {
	ok, wait := s.limits.allow(key, s.now())
	if ok {
		return true
	}
	secs := retryAfter(wait)
	ctx.SetHeader("Retry-After", strconv.Itoa(secs))
	_ = huma.WriteErr(s.api, ctx, http.StatusTooManyRequests, fmt.Sprintf(
		"too many requests: this server allows %g requests a second per caller (bursts of %d); retry after %d s",
		s.cfg.RateLimit, s.cfg.Burst, secs))
	return false
}

// addrKey is the rate-limit key of a request's peer address.
func addrKey(r *http.Request) string {
	if ip, ok := remoteIP(r); ok {
		return ip.String()
	}
	return r.RemoteAddr
}

// noRoute answers requests no operation matches: 405 with Allow when the
// path exists under other methods, else 404, both as problems.
func (s *Server) noRoute(w http.ResponseWriter, r *http.Request) {
	var allow []string
	for _, m := range []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete} {
		if m == r.Method {
			continue
		}
		probe := r.Clone(r.Context())
		probe.Method = m
		if _, pattern := s.mux.Handler(probe); pattern != "" && pattern != "/" {
			allow = append(allow, m)
		}
	}
	if len(allow) > 0 {
		w.Header().Set("Allow", strings.Join(allow, ", "))
		writeProblem(w, http.StatusMethodNotAllowed, fmt.Sprintf("%s is not allowed on %s: use %s", r.Method, r.URL.Path, strings.Join(allow, " or ")))
		return
	}
	writeProblem(w, http.StatusNotFound, fmt.Sprintf("no route %s %s: /openapi.json lists the API", r.Method, r.URL.Path))
}
