package redisbus_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/reinhq/rein/eventbus"
	"github.com/reinhq/rein/eventbus/redisbus"
)

// TestUnavailable stops Redis under a bus: Ping, Publish and Subscribe
// fail with eventbus.ErrUnavailable naming Redis's address (the server
// answers 503 with Retry-After, SPEC API-5), and once Redis is back they
// work again without a new bus.
func TestUnavailable(t *testing.T) {
	r := newPrivateRedis(t)
	b := newBus(t, r.url(), redisbus.Options{Timeout: time.Second})
	ctx := context.Background()
	if err := b.Ping(ctx); err != nil {
		t.Fatalf("Ping with Redis up: %v", err)
	}
	r.stop()
	if err := b.Ping(ctx); !errors.Is(err, eventbus.ErrUnavailable) {
		t.Errorf("Ping with Redis down: %v, want ErrUnavailable", err)
	}
	err := b.Publish(ctx, eventbus.Event{SessionID: "s1", ID: 1, Data: []byte(`{}`)})
	if !errors.Is(err, eventbus.ErrUnavailable) {
		t.Errorf("Publish with Redis down: %v, want ErrUnavailable", err)
	}
	if _, err := b.Subscribe(ctx, "s2", 0); !errors.Is(err, eventbus.ErrUnavailable) {
		t.Errorf("Subscribe with Redis down: %v, want ErrUnavailable", err)
	}
	r.start()
	eventually(t, 10*time.Second, "Ping answers again", func() bool { return b.Ping(ctx) == nil })
	eventually(t, 10*time.Second, "Publish works again", func() bool {
		return b.Publish(ctx, eventbus.Event{SessionID: "s1", ID: 2, Data: []byte(`{}`)}) == nil
	})
}
