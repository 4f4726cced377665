package telegram

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/reinhq/rein/gateway"
	"github.com/reinhq/rein/gateway/gatewaytest"
	"github.com/reinhq/rein/gateway/telegram/telegramfake"
)

func fakeEnv(k string) string {
	if k == DefaultTokenEnv {
		return telegramfake.Token
	}
	return ""
}

// newChannel is a channel against p that polls briefly and backs off
// little, so tests move fast.
func newChannel(t *testing.T, p *telegramfake.Platform) *Channel {
	t.Helper()
	c, err := New("telegram", Config{APIURL: p.URL(), PollTimeout: time.Second}, fakeEnv)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	c.backoff = 10 * time.Millisecond
	return c
}

// recorder is a gateway.Handler that stores what arrives and fails the
// first failMessages messages.
type recorder struct {
	mu           sync.Mutex
	failMessages int
	messages     []gateway.Inbound
	actions      []gateway.Action
	calls        int
	pendingSeen  []int
	pending      func() int
}

func (r *recorder) HandleMessage(_ context.Context, m gateway.Inbound) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls++
	if r.pending != nil {
		r.pendingSeen = append(r.pendingSeen, r.pending())
	}
	if r.failMessages > 0 {
		r.failMessages--
		return errors.New("store is down")
	}
	r.messages = append(r.messages, m)
	return nil
}

func (r *recorder) HandleAction(_ context.Context, a gateway.Action) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.actions = append(r.actions, a)
	return nil
}

func (r *recorder) snapshot() ([]gateway.Inbound, []gateway.Action, int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.messages), slices.Clone(r.actions), r.calls
}

// receive runs c.Receive(h) until the test ends; the returned func stops
// it and returns Receive's error.
func receive(t *testing.T, c *Channel, h gateway.Handler) func() error {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- c.Receive(ctx, h) }()
	var once sync.Once
	var err error
	stop := func() error {
		once.Do(func() {
			cancel()
			err = <-done
		})
		return err
	}
	t.Cleanup(func() { _ = stop() })
	return stop
}

// waitFor waits until cond holds, failing the test after 10s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	gatewaytest.Eventually(t, 10*time.Second, what, cond)
}
