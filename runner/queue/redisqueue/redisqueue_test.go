package redisqueue_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/reinhq/rein/runner/queue"
	"github.com/reinhq/rein/runner/queue/queuetest"
	"github.com/reinhq/rein/runner/queue/redisqueue"
)

// TestConformance runs the queue suite, each test with a prefix of its own.
func TestConformance(t *testing.T) {
	u := redisURL(t)
	queuetest.Run(t, func(t *testing.T, opts queue.Options) queue.Queue {
		prefix := newPrefix(t, u)
		q, err := redisqueue.New(context.Background(), u, redisqueue.Options{Options: opts,
			Prefix: prefix, Timeout: 2 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { dumpOnFailure(t, u, prefix) })
		return q
	})
}

// TestNew checks the errors of New: a bad URL without its password, a
// Redis that does not answer, a bad consumer name.
func TestNew(t *testing.T) {
	ctx := context.Background()
	_, err := redisqueue.New(ctx, "redis://user:s3cret@host:port:bad/0", redisqueue.Options{})
	if err == nil || strings.Contains(err.Error(), "s3cret") || !strings.Contains(err.Error(), "bad Redis URL") {
		t.Errorf("New with a bad URL: %v", err)
	}
	_, err = redisqueue.New(ctx, "redis://127.0.0.1:1/0", redisqueue.Options{Timeout: 200 * time.Millisecond})
	if err == nil || !strings.Contains(err.Error(), "127.0.0.1:1") {
		t.Errorf("New with no Redis: %v, want an error naming the address", err)
	}
	u := redisURL(t)
	_, err = redisqueue.New(ctx, u, redisqueue.Options{Options: queue.Options{Consumer: "two words"}})
	if !errors.Is(err, queue.ErrInvalid) {
		t.Errorf("New with a bad consumer: %v, want ErrInvalid", err)
	}
}

// dumpOnFailure logs the queue's keys when the test failed.
func dumpOnFailure(t *testing.T, u, prefix string) {
	if !t.Failed() {
		return
	}
	c := admin(t, u)
	ctx := context.Background()
	keys, _ := c.Keys(ctx, prefix+"*").Result()
	for _, k := range keys {
		typ, _ := c.Type(ctx, k).Result()
		var v any
		switch typ {
		case "string":
			v = c.Get(ctx, k).Val() + fmt.Sprintf(" (pttl %v)", c.PTTL(ctx, k).Val())
		case "stream":
			v = fmt.Sprintf("%v pending %v", c.XRange(ctx, k, "-", "+").Val(),
				c.XPendingExt(ctx, &redis.XPendingExtArgs{Stream: k, Group: "workers", Start: "-", End: "+",
					Count: 100}).Val())
		}
		t.Logf("%s (%s): %v", k, typ, v)
	}
}
