package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/danielgtaylor/huma/v2"

	"github.com/reinhq/rein/eventbus"
	"github.com/reinhq/rein/session"
)

// notFound is the 404 of an unknown id — and of another caller's, which a
// caller cannot tell apart (SPEC API-4).
func notFound(kind, id, hint string) error {
	return huma.Error404NotFound(fmt.Sprintf("no %s %q: %s", kind, id, hint))
}

// invalid is a 422 about one field of the request.
func invalid(location string, value any, detail string) error {
	return huma.Error422UnprocessableEntity(detail, &huma.ErrorDetail{Location: location, Message: detail, Value: value})
}

// fail maps an error of a store or the runtime to a problem: ErrNotFound →
// 404, ErrInvalid → 422, ErrConflict, ErrExists and ErrLocked → 409, with
// the error's text as the detail; an unreachable store or bus (their
// ErrUnavailable) and a shutting-down runtime (session.ErrShuttingDown) → 503 with Retry-After;
// anything else → 500 with a generic detail
// naming the request, the error itself going to the log.
func (s *Server) fail(ctx context.Context, op string, err error) error {
	switch {
	case errors.Is(err, session.ErrNotFound):
		return huma.Error404NotFound(err.Error())
	case errors.Is(err, session.ErrInvalid):
		return huma.Error422UnprocessableEntity(err.Error())
	case errors.Is(err, session.ErrConflict), errors.Is(err, session.ErrExists), errors.Is(err, session.ErrLocked):
		return huma.Error409Conflict(err.Error())
	case errors.Is(err, session.ErrShuttingDown):
		return huma.ErrorWithHeaders(huma.Error503ServiceUnavailable(err.Error()+"; retry in a moment"),
			http.Header{"Retry-After": {"5"}})
	case errors.Is(err, session.ErrUnavailable), errors.Is(err, eventbus.ErrUnavailable):
		// A dependency is down (SPEC API-5): the client retries; the log
		// has which and why, the detail does not leak addresses.
		s.log.WarnContext(ctx, "dependency unavailable", "op", op, "request_id", infoFrom(ctx).id, "err", err)
		return huma.ErrorWithHeaders(huma.Error503ServiceUnavailable(op+" cannot be done now: a service the server depends on does not answer; retry in a moment"),
			http.Header{"Retry-After": {"5"}})
	}
	info := infoFrom(ctx)
	if ctx.Err() != nil {
		// The client went away; nobody reads the answer.
		s.log.DebugContext(ctx, "http request abandoned", "op", op, "request_id", info.id, "err", err)
	} else {
		s.log.ErrorContext(ctx, "http request failed", "op", op, "request_id", info.id, "err", err)
	}
	return huma.Error500InternalServerError(fmt.Sprintf("%s failed on the server (request %s); the server log has the cause — retry later or report it", op, info.id))
}

// The details huma gives the problems it finds before a handler runs, and
// what a client should do about them.
var problemHints = map[string]string{
	"validation failed":        "fix the fields listed in errors and send the request again; /openapi.json has the schema",
	"request body is required": "send a JSON object as the body; /openapi.json has its schema",
}

// explainProblem is a huma transformer: it completes the details of the
// problems huma writes itself ("validation failed") with what is wrong and
// how to fix it (api.md: a detail says both).
func explainProblem(_ huma.Context, _ string, v any) (any, error) {
	em, ok := v.(*huma.ErrorModel)
	if !ok {
		return v, nil
	}
	switch {
	case problemHints[em.Detail] != "":
		var parts []string
		for i, e := range em.Errors {
			if i == 3 {
				parts = append(parts, fmt.Sprintf("and %d more", len(em.Errors)-i))
				break
			}
			if e == nil {
				continue
			}
			p := e.Message
			if e.Location != "" {
				p = e.Location + ": " + p
			}
			parts = append(parts, p)
		}
		what := em.Detail
		if len(parts) > 0 {
			what += " (" + strings.Join(parts, "; ") + ")"
		}
		em.Detail = what + ": " + problemHints[em.Detail]
	case strings.HasPrefix(em.Detail, "request body is too large"):
		em.Detail += ": send a smaller body"
	}
	return em, nil
}

// writeProblem writes a problem outside huma's handlers (no route, a panic).
func writeProblem(w http.ResponseWriter, status int, detail string) {
	w.Header().Set("Content-Type", "application/problem+json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(&huma.ErrorModel{Title: http.StatusText(status), Status: status, Detail: detail})
}
