package redisbus_test

import (
	"context"
	"testing"
	"time"

	"github.com/reinhq/rein/eventbus/redisbus"
)

// API-5: Listen says when Redis confirmed its subscription, and a message
// broadcast from another process's bus right after that reaches it, every
// time: the runner's worker takes no run before (a cancellation sent once
// the run started cannot pass unheard).
func TestListenReady_API5(t *testing.T) {
	u := redisURL(t)
	prefix := newPrefix(t, u)
	api := newBus(t, u, redisbus.Options{Prefix: prefix})
	for i := range 20 {
		worker := newBus(t, u, redisbus.Options{Prefix: prefix})
		ctx, cancel := context.WithCancel(context.Background())
		ready, got := make(chan struct{}), make(chan string, 1)
		done := make(chan error, 1)
		go func() {
			done <- worker.Listen(ctx, func() { close(ready) }, func(msg []byte) {
				select {
				case got <- string(msg):
				default:
				}
			})
		}()
		select {
		case <-ready:
		case err := <-done:
			t.Fatalf("round %d: Listen returned before it was ready: %v", i, err)
		case <-time.After(10 * time.Second):
			t.Fatalf("round %d: Listen not ready after 10 s", i)
		}
		if n, err := api.Broadcast(context.Background(), []byte("cancel")); err != nil || n < 1 {
			t.Fatalf("round %d: Broadcast = %d, %v; want the listener counted", i, n, err)
		}
		select {
		case msg := <-got:
			if msg != "cancel" {
				t.Errorf("round %d: got %q", i, msg)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("round %d: the message broadcast after ready did not arrive", i)
		}
		cancel()
		<-done
	}
}

// Listen on a closed bus fails without calling ready.
func TestListenClosed_API5(t *testing.T) {
	u := redisURL(t)
	b := newBus(t, u, redisbus.Options{Prefix: newPrefix(t, u), Timeout: time.Second})
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	err := b.Listen(context.Background(), func() { t.Error("ready called on a closed bus") }, func([]byte) {})
	if err == nil {
		t.Error("Listen on a closed bus: no error")
	}
}
