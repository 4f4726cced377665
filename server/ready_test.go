package server_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
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
	// API-9: /ready says how runs' commands run here.
	e = newEnv(t, func(c *server.Config) { c.Commands = "refused" })
	if got := decode[api.Ready](t, e.do(t, "GET", "/ready", "", nil), http.StatusOK); got.Commands != "refused" {
		t.Errorf("/ready commands = %q, want refused", got.Commands)
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

// A worker's probes (ProbeHandler) answer as the server's do: /health 200
// with the version; /ready 200 naming the checks, or 503 with Retry-After
// naming what is down, as problem+json.
func TestProbeHandler(t *testing.T) {
	var storeDown atomic.Bool
	checks := map[string]func(context.Context) error{
		"store": func(context.Context) error {
			if storeDown.Load() {
				return errors.New("postgres at 127.0.0.1:5432: connection refused")
			}
			return nil
		},
		"bus": func(context.Context) error { return nil },
	}
	ts := httptest.NewServer(server.ProbeHandler("v1", "refused", checks, slog.New(slog.DiscardHandler)))
	defer ts.Close()
	get := func(path string) (*http.Response, []byte) {
		resp, err := http.Get(ts.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, b
	}
	if resp, b := get("/health"); resp.StatusCode != http.StatusOK || !strings.Contains(string(b), `"version":"v1"`) {
		t.Errorf("/health: %d %s", resp.StatusCode, b)
	}
	resp, b := get("/ready")
	var ready api.Ready
	if err := json.Unmarshal(b, &ready); err != nil || resp.StatusCode != http.StatusOK ||
		!cmp.Equal(ready, api.Ready{Status: "ready", Checks: map[string]string{"store": "ok", "bus": "ok"}, Commands: "refused"}) {
		t.Errorf("/ready: %d %s", resp.StatusCode, b)
	}
	storeDown.Store(true)
	resp, b = get("/ready")
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" ||
		resp.Header.Get("Content-Type") != "application/problem+json" || !strings.Contains(string(b), "not ready: store not answering") {
		t.Errorf("/ready with the store down: %d %v %s", resp.StatusCode, resp.Header, b)
	}
	if strings.Contains(string(b), "5432") {
		t.Errorf("the public answer names the store's address: %s", b)
	}
	if resp, _ := get("/sessions"); resp.StatusCode != http.StatusNotFound {
		t.Errorf("a worker's probe server serves /sessions: %d", resp.StatusCode)
	}
}

// API-5: an API process whose queued work no worker takes is not ready,
// and its /ready says so in words, not "workers not answering".
func TestReadyNoWorker_API5(t *testing.T) {
	stale := func(context.Context) error {
		return errors.New("no worker takes the queued work: 1 session(s) waiting")
	}
	ok := func(context.Context) error { return nil }
	e := newEnv(t, func(c *server.Config) {
		c.Checks = map[string]func(context.Context) error{"store": ok, server.CheckWorkers: stale}
	})
	r := e.do(t, "GET", "/ready", "", nil)
	p := r.problem(t)
	if r.status != http.StatusServiceUnavailable {
		t.Fatalf("/ready with no worker: %d", r.status)
	}
	if want := "not ready: no worker has taken the queued work within the lease time (is rein worker running?)"; !strings.HasPrefix(p.Detail, want) {
		t.Errorf("detail %q, want it to start %q", p.Detail, want)
	}
}
