package server_test

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reinhq/rein/server"
)

// clock is a settable clock.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

func TestRateLimit(t *testing.T) {
	clk := &clock{now: time.Now()}
	e := newEnv(t, func(c *server.Config) { c.RateLimit, c.Burst, c.Now = 0.5, 2, clk.Now })
	ada, bob := token(t, "ada"), token(t, "bob")
	for i := range 2 {
		if r := e.do(t, "GET", "/workspaces", ada, nil); r.status != 200 {
			t.Fatalf("request %d: %d", i, r.status)
		}
	}
	r := e.do(t, "GET", "/workspaces", ada, nil)
	if p := r.problem(t); r.status != http.StatusTooManyRequests || r.header.Get("Retry-After") != "2" || !strings.Contains(p.Detail, "retry after 2 s") {
		t.Errorf("over the limit: %d, Retry-After %q, %+v", r.status, r.header.Get("Retry-After"), p)
	}
	if r := e.do(t, "GET", "/workspaces", bob, nil); r.status != 200 {
		t.Errorf("another caller: %d", r.status)
	}
	clk.advance(2 * time.Second)
	if r := e.do(t, "GET", "/workspaces", ada, nil); r.status != 200 {
		t.Errorf("after the wait: %d", r.status)
	}
	// Requests without a caller are limited by address, refused
	// credentials included.
	for i := range 2 {
		if r := e.do(t, "GET", "/health", "", nil); r.status != 200 {
			t.Fatalf("health %d: %d", i, r.status)
		}
	}
	if r := e.do(t, "GET", "/workspaces", "bad", nil); r.status != http.StatusTooManyRequests || r.header.Get("Retry-After") == "" {
		t.Errorf("bad token over the address's limit: %d %q", r.status, r.header.Get("Retry-After"))
	}
}

func TestLimiterStaysBounded(t *testing.T) {
	l := server.NewLimiter(10, 5, 100)
	t0 := time.Now()
	// Idle callers whose buckets refilled are dropped when room is needed.
	for i := range 100 {
		l.Allow(fmt.Sprint("old", i), t0)
	}
	for i := range 50 {
		l.Allow(fmt.Sprint("new", i), t0.Add(time.Second))
	}
	if n := l.Size(); n != 50 {
		t.Errorf("%d keys after the idle ones went, want 50", n)
	}
	// Busy callers: the least recently seen go, the map never exceeds its
	// bound.
	for i := range 1000 {
		l.Allow(fmt.Sprint("busy", i), t0.Add(time.Second+time.Duration(i)*time.Microsecond))
		if n := l.Size(); n > 100 {
			t.Fatalf("%d keys, bound 100", n)
		}
	}
	// A caller that lost its bucket to eviction was the least recent one;
	// a recent caller keeps its (empty) bucket.
	now := t0.Add(2 * time.Second)
	for range 5 {
		l.Allow("hot", now)
	}
	if ok, wait := l.Allow("hot", now); ok || wait != 100*time.Millisecond {
		t.Errorf("hot caller: allowed %v, wait %v; want refused for 100ms", ok, wait)
	}
}

func TestNoRateLimit(t *testing.T) {
	l := server.NewLimiter(-1, 0, 10)
	for range 100 {
		if ok, _ := l.Allow("a", time.Now()); !ok {
			t.Fatal("refused without a limit")
		}
	}
}
