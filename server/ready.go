package server

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/reinhq/rein/api"
)

// readyTimeout bounds each dependency check of /ready.
const readyTimeout = 2 * time.Second

type readyOutput struct {
	Body api.Ready
}

// ready answers GET /ready: every check of Config.Checks runs at once,
// each within readyTimeout; any failing makes a 503 with Retry-After that
// names the dependencies down (SPEC API-5), their causes going to the log.
func (s *Server) ready(ctx context.Context, _ *struct{}) (*readyOutput, error) {
	checks, down, causes := runChecks(ctx, s.cfg.Checks)
	if len(down) > 0 {
		// /ready is public (probes carry no token): the answer names the
		// dependencies, the log their addresses and causes.
		s.log.WarnContext(ctx, "not ready", "down", strings.Join(causes, "; "))
		return nil, huma.ErrorWithHeaders(huma.Error503ServiceUnavailable(notReady(down)),
			http.Header{"Retry-After": {"5"}})
	}
	return &readyOutput{Body: api.Ready{Status: "ready", Checks: checks, Commands: s.cfg.Commands}}, nil
}

// runChecks runs every check at once, each within readyTimeout: ok maps
// the names of those that answered to "ok"; down names the others, sorted,
// and causes says why, for the log.
func runChecks(ctx context.Context, all map[string]func(context.Context) error) (ok map[string]string, down, causes []string) {
	names := make([]string, 0, len(all))
	for name := range all {
		names = append(names, name)
	}
	slices.Sort(names)
	errs := make([]error, len(names))
	var wg sync.WaitGroup
	for i, name := range names {
		wg.Go(func() {
			cctx, cancel := context.WithTimeout(ctx, readyTimeout)
			defer cancel()
			errs[i] = all[name](cctx)
		})
	}
	wg.Wait()
	ok = map[string]string{}
	for i, name := range names {
		if errs[i] != nil {
			down = append(down, name)
			causes = append(causes, fmt.Sprintf("%s: %v", name, errs[i]))
			continue
		}
		ok[name] = "ok"
	}
	return ok, down, causes
}

// CheckWorkers is the name of the readiness check that work waiting in
// the run queue is taken (queue.TakenCheck).
const CheckWorkers = "workers"

// notReady is the detail of a 503 from /ready.
func notReady(down []string) string {
	var parts, others []string
	for _, d := range down {
		if d == CheckWorkers {
			parts = append(parts, "no worker has taken the queued work within the lease time (is rein worker running?)")
			continue
		}
		others = append(others, d)
	}
	if len(others) > 0 {
		parts = append([]string{strings.Join(others, ", ") + " not answering"}, parts...)
	}
	return "not ready: " + strings.Join(parts, "; ") + "; the server log says why"
}

// ProbeHandler serves /health and /ready for a process without the API (a
// worker): the same answers as the server's, from the same checks, as
// plain JSON (problem+json for a 503 with Retry-After). commands is how
// the worker's runs' commands run (see Config.Commands). logger receives
// why a check failed.
func ProbeHandler(version, commands string, checks map[string]func(context.Context) error, logger *slog.Logger) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /health", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, "application/json", api.Health{Status: "ok", Version: version})
	})
	mux.HandleFunc("GET /ready", func(w http.ResponseWriter, r *http.Request) {
		ok, down, causes := runChecks(r.Context(), checks)
		if len(down) > 0 {
			logger.WarnContext(r.Context(), "not ready", "down", strings.Join(causes, "; "))
			w.Header().Set("Retry-After", "5")
			writeJSON(w, http.StatusServiceUnavailable, "application/problem+json", map[string]any{
				"title": http.StatusText(http.StatusServiceUnavailable), "status": http.StatusServiceUnavailable,
				"detail": notReady(down)})
			return
		}
		writeJSON(w, http.StatusOK, "application/json", api.Ready{Status: "ready", Checks: ok, Commands: commands})
	})
	return mux
}

// writeJSON writes v as the whole answer.
func writeJSON(w http.ResponseWriter, status int, contentType string, v any) {
	w.Header().Set("Content-Type", contentType)
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
