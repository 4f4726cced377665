package slack_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/reinhq/rein/gateway"
	"github.com/reinhq/rein/gateway/slack"
	"github.com/reinhq/rein/gateway/slack/slackfake"
)

// spy is a gateway.Handler that records what arrives; fail makes its
// next calls fail.
type spy struct {
	mu       sync.Mutex
	msgs     []gateway.Inbound
	actions  []gateway.Action
	fail     int
	arrived  chan struct{}
	failures int
}

func newSpy() *spy { return &spy{arrived: make(chan struct{}, 100)} }

func (s *spy) record(f func()) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fail > 0 {
		s.fail--
		s.failures++
		return errors.New("the store is away")
	}
	f()
	select {
	case s.arrived <- struct{}{}:
	default: // a waiter wakes on the ones queued already
	}
	return nil
}

func (s *spy) HandleMessage(_ context.Context, m gateway.Inbound) error {
	return s.record(func() { s.msgs = append(s.msgs, m) })
}

func (s *spy) HandleAction(_ context.Context, a gateway.Action) error {
	return s.record(func() { s.actions = append(s.actions, a) })
}

func (s *spy) failNext(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fail = n
}

// wait waits for n stored updates in all.
func (s *spy) wait(t *testing.T, n int) {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		s.mu.Lock()
		got := len(s.msgs) + len(s.actions)
		s.mu.Unlock()
		if got >= n {
			return
		}
		select {
		case <-s.arrived:
		case <-deadline:
			t.Fatalf("waited for %d updates; have %d", n, got)
		}
	}
}

func (s *spy) messages() []gateway.Inbound {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]gateway.Inbound(nil), s.msgs...)
}

func (s *spy) presses() []gateway.Action {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]gateway.Action(nil), s.actions...)
}

// env is a channel against the fake, served as the gateway serves it.
type env struct {
	p   *slackfake.Platform
	ch  *slack.Channel
	h   *spy
	url string // the channel's base: url+"/events", url+"/interactivity"
}

func newEnv(t *testing.T) *env {
	t.Helper()
	p := slackfake.New(t)
	ch, err := slack.New("slack", slack.Config{APIURL: p.URL()}, p.Getenv)
	if err != nil {
		t.Fatal(err)
	}
	h := newSpy()
	mux := http.NewServeMux()
	mux.Handle("/slack/", http.StripPrefix("/slack", ch.HTTPHandler(h)))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	p.Target(srv.URL + "/slack")
	return &env{p: p, ch: ch, h: h, url: srv.URL + "/slack"}
}
