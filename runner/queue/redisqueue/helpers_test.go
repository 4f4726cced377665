package redisqueue_test

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/reinhq/rein/runner/queue"
	"github.com/reinhq/rein/runner/queue/redisqueue"
)

// redisURL returns the Redis of the tests, or skips the test.
func redisURL(tb testing.TB) string {
	tb.Helper()
	u := os.Getenv("REIN_TEST_REDIS_URL")
	if u == "" {
		tb.Skip("REIN_TEST_REDIS_URL is not set: set it to a Redis (6.2 or later) to run the Redis run queue " +
			"tests (e.g. REIN_TEST_REDIS_URL=redis://127.0.0.1:6379/0)")
	}
	return u
}

var seq atomic.Int64

// newPrefix returns a key prefix of the test's own, whose keys are deleted
// at the end of the test (after the queues made later are closed).
func newPrefix(tb testing.TB, u string) string {
	tb.Helper()
	prefix := fmt.Sprintf("rein-test-queue-%d-%d-%d:", os.Getpid(), time.Now().UnixNano(), seq.Add(1))
	c := admin(tb, u)
	tb.Cleanup(func() {
		ctx := context.Background()
		iter := c.Scan(ctx, 0, prefix+"*", 1000).Iterator()
		var keys []string
		for iter.Next(ctx) {
			keys = append(keys, iter.Val())
		}
		if err := iter.Err(); err != nil {
			tb.Logf("scanning the test's keys: %v", err)
		}
		if len(keys) > 0 {
			if err := c.Del(ctx, keys...).Err(); err != nil {
				tb.Logf("deleting the test's keys: %v", err)
			}
		}
	})
	return prefix
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

// newQueue returns a queue on u with prefix, closed at the end of the
// test, logging to the test's log.
func newQueue(tb testing.TB, u, prefix string, opts queue.Options) *redisqueue.Queue {
	tb.Helper()
	if opts.Logger == nil {
		opts.Logger = testLogger(tb)
	}
	q, err := redisqueue.New(context.Background(), u, redisqueue.Options{Options: opts, Prefix: prefix,
		Timeout: time.Second})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		if err := q.Close(); err != nil {
			tb.Errorf("Close: %v", err)
		}
	})
	return q
}

// testLogger logs to the test's log until the test ends.
func testLogger(tb testing.TB) *slog.Logger {
	w := &testWriter{tb: tb}
	tb.Cleanup(func() {
		w.mu.Lock()
		w.done = true
		w.mu.Unlock()
	})
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// testWriter writes to a test's log, and drops what comes after the test.
type testWriter struct {
	tb   testing.TB
	mu   sync.Mutex
	done bool
}

func (w *testWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.done {
		w.tb.Log(strings.TrimSuffix(string(p), "\n"))
	}
	return len(p), nil
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

// privateRedis is a redis-server of the test's own, without persistence
// like production's, which it can stop and start again on the same port.
type privateRedis struct {
	tb   testing.TB
	path string
	port int
	dir  string
	cmd  *exec.Cmd
}

func newPrivateRedis(tb testing.TB) *privateRedis {
	tb.Helper()
	redisURL(tb)
	path, err := exec.LookPath("redis-server")
	if err != nil {
		tb.Skip("redis-server is not on PATH: the test runs a Redis of its own (the shared one must not be stopped)")
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	_ = l.Close()
	p := &privateRedis{tb: tb, path: path, port: port, dir: tb.TempDir()}
	p.start()
	tb.Cleanup(p.stop)
	return p
}

func (p *privateRedis) url() string { return fmt.Sprintf("redis://127.0.0.1:%d/0", p.port) }

func (p *privateRedis) start() {
	p.tb.Helper()
	p.cmd = exec.Command(p.path, "--port", strconv.Itoa(p.port), "--bind", "127.0.0.1", "--save", "",
		"--appendonly", "no", "--loglevel", "warning")
	p.cmd.Dir = p.dir
	if err := p.cmd.Start(); err != nil {
		p.tb.Fatalf("starting redis-server: %v", err)
	}
	c := redis.NewClient(&redis.Options{Addr: fmt.Sprintf("127.0.0.1:%d", p.port), MaxRetries: -1})
	defer c.Close()
	eventually(p.tb, 10*time.Second, "redis-server answers", func() bool {
		return c.Ping(context.Background()).Err() == nil
	})
}

func (p *privateRedis) stop() {
	if p.cmd == nil {
		return
	}
	_ = p.cmd.Process.Kill()
	_ = p.cmd.Wait()
	p.cmd = nil
}
