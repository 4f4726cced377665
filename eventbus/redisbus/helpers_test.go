package redisbus_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/reinhq/rein/eventbus"
	"github.com/reinhq/rein/eventbus/redisbus"
)

// redisURL returns the Redis of the tests, or skips the test.
func redisURL(tb testing.TB) string {
	tb.Helper()
	u := os.Getenv("REIN_TEST_REDIS_URL")
	if u == "" {
		tb.Skip("REIN_TEST_REDIS_URL is not set: set it to a Redis to run the Redis event bus tests " +
			"(e.g. REIN_TEST_REDIS_URL=redis://127.0.0.1:6379/0)")
	}
	return u
}

var seq atomic.Int64

// uniq returns a name no other test of any process uses.
func uniq(what string) string {
	return fmt.Sprintf("rein-test-%s-%d-%d-%d", what, os.Getpid(), time.Now().UnixNano(), seq.Add(1))
}

// admin returns a plain client to the Redis at u, closed at the end of the
// test.
func admin(tb testing.TB, u string) *redis.Client {
	tb.Helper()
	o, err := redis.ParseURL(u)
	if err != nil {
		tb.Fatal(err)
	}
	c := redis.NewClient(o)
	tb.Cleanup(func() { _ = c.Close() })
	return c
}

// newPrefix returns a key prefix of its own, whose keys are deleted at the
// end of the test (after the buses made later are closed).
func newPrefix(tb testing.TB, u string) string {
	tb.Helper()
	prefix := uniq("bus") + ":"
	c := admin(tb, u)
	tb.Cleanup(func() {
		ctx := context.Background()
		iter := c.Scan(ctx, 0, prefix+"*", 1000).Iterator()
		var keys []string
		for iter.Next(ctx) {
			keys = append(keys, iter.Val())
		}
		if err := iter.Err(); err != nil {
			tb.Errorf("scanning the test's keys: %v", err)
		}
		if len(keys) > 0 {
			if err := c.Del(ctx, keys...).Err(); err != nil {
				tb.Errorf("deleting the test's keys: %v", err)
			}
		}
	})
	return prefix
}

// newBus returns a bus on u, closed at the end of the test, logging to
// the test's log.
func newBus(tb testing.TB, u string, opts redisbus.Options) *redisbus.Bus {
	tb.Helper()
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewTextHandler(testWriter{tb}, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	b, err := redisbus.New(context.Background(), u, opts)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		if err := b.Close(); err != nil {
			tb.Errorf("Close: %v", err)
		}
	})
	return b
}

// withClientName returns u naming its connections name.
func withClientName(tb testing.TB, u, name string) string {
	tb.Helper()
	pu, err := url.Parse(u)
	if err != nil {
		tb.Fatal(err)
	}
	q := pu.Query()
	q.Set("client_name", name)
	pu.RawQuery = q.Encode()
	return pu.String()
}

// clients returns the IDs of the connections named name.
func clients(tb testing.TB, c *redis.Client, name string) []string {
	tb.Helper()
	list, err := c.ClientList(context.Background()).Result()
	if err != nil {
		tb.Fatal(err)
	}
	var ids []string
	for line := range strings.Lines(list) {
		var id string
		named := false
		for f := range strings.FieldsSeq(line) {
			if v, ok := strings.CutPrefix(f, "id="); ok {
				id = v
			}
			if f == "name="+name {
				named = true
			}
		}
		if named {
			ids = append(ids, id)
		}
	}
	return ids
}

func ev(sid string, id int64) eventbus.Event {
	return eventbus.Event{SessionID: sid, ID: id, RunID: "r1", Type: "text_delta", Data: fmt.Appendf(nil, `{"n":%d}`, id)}
}

func mustPublish(tb testing.TB, b eventbus.Bus, sid string, ids ...int64) {
	tb.Helper()
	for _, id := range ids {
		if err := b.Publish(context.Background(), ev(sid, id)); err != nil {
			tb.Fatalf("Publish(%s, %d): %v", sid, id, err)
		}
	}
}

func mustSubscribe(tb testing.TB, b eventbus.Bus, sid string, after int64) eventbus.Subscription {
	tb.Helper()
	sub, err := b.Subscribe(context.Background(), sid, after)
	if err != nil {
		tb.Fatalf("Subscribe(%s, %d): %v", sid, after, err)
	}
	tb.Cleanup(sub.Close)
	return sub
}

// receive reads the IDs of sub's events up to the first at or above last;
// it fails if the subscription ends first.
func receive(tb testing.TB, sub eventbus.Subscription, last int64) []int64 {
	tb.Helper()
	var ids []int64
	for len(ids) == 0 || ids[len(ids)-1] < last {
		e, ok := <-sub.Events()
		if !ok {
			tb.Fatalf("subscription ended after %v, before %d: %v", ids, last, sub.Err())
		}
		ids = append(ids, e.ID)
	}
	return ids
}

func span(from, to int64) []int64 {
	var ids []int64
	for id := from; id <= to; id++ {
		ids = append(ids, id)
	}
	return ids
}

// eventually polls cond every 10ms until it holds, failing after d.
func eventually(tb testing.TB, d time.Duration, what string, cond func() bool) {
	tb.Helper()
	for end := time.Now().Add(d); !cond(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(end) {
			tb.Fatalf("%s: not after %v", what, d)
		}
	}
}

// testWriter writes to a test's log.
type testWriter struct{ tb testing.TB }

func (w testWriter) Write(p []byte) (int, error) {
	w.tb.Log(strings.TrimSuffix(string(p), "\n"))
	return len(p), nil
}
