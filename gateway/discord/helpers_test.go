package discord

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/reinhq/rein/gateway"
	"github.com/reinhq/rein/gateway/discord/discordfake"
	"github.com/reinhq/rein/gateway/gatewaytest"
)

// newChannel returns a channel against the fake, with short backoffs.
func newChannel(t *testing.T, p *discordfake.Platform) *Channel {
	t.Helper()
	c, err := New("discord", Config{APIURL: p.URL()}, p.Env())
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	c.backoff = 10 * time.Millisecond
	return c
}

// recorder is a gateway.Handler that records what it takes; it fails the
// first failFirst messages.
type recorder struct {
	mu        sync.Mutex
	failFirst int
	calls     int
	msgs      []gateway.Inbound
	acts      []gateway.Action
}

func (r *recorder) HandleMessage(_ context.Context, m gateway.Inbound) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls++
	if r.calls <= r.failFirst {
		return errors.New("store is down")
	}
	r.msgs = append(r.msgs, m)
	return nil
}

func (r *recorder) HandleAction(_ context.Context, a gateway.Action) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.acts = append(r.acts, a)
	return nil
}

func (r *recorder) messages() []gateway.Inbound {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]gateway.Inbound(nil), r.msgs...)
}

func (r *recorder) actions() []gateway.Action {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]gateway.Action(nil), r.acts...)
}

func (r *recorder) attempts() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.calls
}

// receive runs c.Receive(h) until the returned stop is called (or the
// test ends); stop returns Receive's error.
func receive(t *testing.T, c *Channel, h gateway.Handler) (stop func() error) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- c.Receive(ctx, h) }()
	var once sync.Once
	var err error
	stop = func() error {
		once.Do(func() {
			cancel()
			select {
			case err = <-done:
			case <-time.After(30 * time.Second):
				err = errors.New("Receive did not return")
			}
		})
		return err
	}
	t.Cleanup(func() {
		if err := stop(); err != nil {
			t.Errorf("Receive: %v", err)
		}
	})
	return stop
}

// eventually waits up to 20 s for cond.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	gatewaytest.Eventually(t, 20*time.Second, what, cond)
}
