package server

import (
	"context"
	"fmt"
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
	names := make([]string, 0, len(s.cfg.Checks))
	for name := range s.cfg.Checks {
		names = append(names, name)
	}
	slices.Sort(names)
	errs := make([]error, len(names))
	var wg sync.WaitGroup
	for i, name := range names {
		wg.Go(func() {
			cctx, cancel := context.WithTimeout(ctx, readyTimeout)
			defer cancel()
			errs[i] = s.cfg.Checks[name](cctx)
		})
	}
	wg.Wait()
	out := &readyOutput{Body: api.Ready{Status: "ready", Checks: map[string]string{}}}
	var down, causes []string
	for i, name := range names {
		if errs[i] != nil {
			down = append(down, name)
			causes = append(causes, fmt.Sprintf("%s: %v", name, errs[i]))
			continue
		}
		out.Body.Checks[name] = "ok"
	}
	if len(down) > 0 {
		// /ready is public (probes carry no token): the answer names the
		// dependencies, the log their addresses and causes.
		s.log.WarnContext(ctx, "not ready", "down", strings.Join(causes, "; "))
		return nil, huma.ErrorWithHeaders(huma.Error503ServiceUnavailable(fmt.Sprintf(
			"not ready: %s not answering; the server log says why", strings.Join(down, ", "))),
			http.Header{"Retry-After": {"5"}})
	}
	return out, nil
}
