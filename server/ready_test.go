package server_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/reinhq/rein/api"
	"github.com/reinhq/rein/server"
)

// TestReady checks /ready (SPEC API-5): every dependency answers → 200
// naming each; one down → 503 with Retry-After naming it and the cause; a
// hung check is cut off by its timeout, not left hanging.
func TestReady(t *testing.T) {
	ok := func(context.Context) error { return nil }
	down := func(context.Context) error { return errors.New("postgres at 127.0.0.1:5432: connection refused") }
	hung := func(ctx context.Context) error { <-ctx.Done(); return ctx.Err() }

	e := newEnv(t, func(c *server.Config) { c.Checks = map[string]func(context.Context) error{"store": ok, "bus": ok} })
	got := decode[api.Ready](t, e.do(t, "GET", "/ready", "", nil), http.StatusOK)
	if d := cmp.Diff(api.Ready{Status: "ready", Checks: map[string]string{"store": "ok", "bus": "ok"}}, got); d != "" {
		t.Error(d)
	}

	e = newEnv(t, func(c *server.Config) {
		c.Checks = map[string]func(context.Context) error{"store": down, "bus": ok, "queue": hung}
	})
	r := e.do(t, "GET", "/ready", "", nil)
	p := r.problem(t)
	if r.status != http.StatusServiceUnavailable || r.header.Get("Retry-After") == "" {
		t.Fatalf("/ready with the store down: %d Retry-After %q", r.status, r.header.Get("Retry-After"))
	}
	if want := "not ready: queue, store not answering"; !strings.HasPrefix(p.Detail, want) {
		t.Errorf("detail %q, want it to start %q", p.Detail, want)
	}
	if strings.Contains(p.Detail, "127.0.0.1") {
		t.Errorf("the public answer shows an address: %q", p.Detail)
	}
	logs := e.logs.String()
	for _, want := range []string{"store: postgres at 127.0.0.1:5432: connection refused", "queue: context deadline exceeded"} {
		if !strings.Contains(logs, want) {
			t.Errorf("the log does not say %q:\n%s", want, logs)
		}
	}

	// No checks: ready while the process serves.
	got = decode[api.Ready](t, newEnv(t).do(t, "GET", "/ready", "", nil), http.StatusOK)
	if got.Status != "ready" {
		t.Errorf("without checks: %+v", got)
	}
}
