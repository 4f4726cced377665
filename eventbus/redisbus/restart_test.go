package redisbus_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os/exec"
	"strconv"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/redis/go-redis/v9"

	"github.com/reinhq/rein/eventbus"
	"github.com/reinhq/rein/eventbus/redisbus"
)

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
	path, err := exec.LookPath("redis-server")
	if err != nil {
		tb.Skip("redis-server is not on PATH: the restart test runs a Redis of its own (the shared one must not be stopped)")
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

// TestRedisRestart stops Redis under a publisher and a subscriber and
// starts it again, empty: the publisher gets errors meanwhile; the
// subscription ends with ErrLost; a new one after the last event received
// reports GapUnknown and gets the events published after the restart.
func TestRedisRestart(t *testing.T) {
	redisURL(t)
	srv := newPrivateRedis(t)
	opts := redisbus.Options{Timeout: time.Second}
	pub := newBus(t, srv.url(), opts)
	b := newBus(t, srv.url(), opts)
	sub := mustSubscribe(t, b, "s1", 0)
	mustPublish(t, pub, "s1", 1, 2, 3)
	if diff := cmp.Diff([]int64{1, 2, 3}, receive(t, sub, 3)); diff != "" {
		t.Fatalf("before the restart (-want +got):\n%s", diff)
	}

	srv.stop()
	ctx := context.Background()
	if err := pub.Publish(ctx, ev("s1", 4)); err == nil {
		t.Error("Publish with Redis stopped: no error")
	}
	if _, err := b.Subscribe(ctx, "s2", 0); err == nil {
		t.Error("Subscribe with Redis stopped: no error")
	}

	srv.start()
	var got []int64
	for e := range sub.Events() {
		got = append(got, e.ID)
	}
	if err := sub.Err(); !errors.Is(err, redisbus.ErrLost) || !errors.Is(err, eventbus.ErrSlow) || len(got) > 0 {
		t.Errorf("after the restart the subscription got %v and %v, want nothing and ErrLost (an ErrSlow)", got, err)
	}

	var again eventbus.Subscription
	eventually(t, 10*time.Second, "resubscribing succeeds", func() bool {
		s, err := b.Subscribe(ctx, "s1", 3)
		again = s
		return err == nil
	})
	defer again.Close()
	if g := again.Gap(); g != eventbus.GapUnknown {
		t.Errorf("Gap() after the restart = %d, want GapUnknown", g)
	}
	eventually(t, 10*time.Second, "publishing succeeds", func() bool {
		return pub.Publish(ctx, ev("s1", 5)) == nil
	})
	mustPublish(t, pub, "s1", 6)
	if diff := cmp.Diff([]int64{5, 6}, receive(t, again, 6)); diff != "" {
		t.Errorf("after the restart (-want +got):\n%s", diff)
	}
	if st := b.Stats(); st.Lost != 1 || st.Reconnects == 0 {
		t.Errorf("Stats = %+v, want Lost 1 and Reconnects > 0", st)
	}
}

// TestRedisUnresponsive pauses Redis's writes: Publish fails after the
// timeout instead of waiting, and works again once Redis answers.
func TestRedisUnresponsive(t *testing.T) {
	redisURL(t)
	srv := newPrivateRedis(t)
	pub := newBus(t, srv.url(), redisbus.Options{Timeout: 300 * time.Millisecond})
	b := newBus(t, srv.url(), redisbus.Options{})
	sub := mustSubscribe(t, b, "s1", 0)
	mustPublish(t, pub, "s1", 1)

	ctx := context.Background()
	c := admin(t, srv.url())
	if err := c.Do(ctx, "CLIENT", "PAUSE", "5000", "WRITE").Err(); err != nil {
		t.Fatalf("CLIENT PAUSE: %v", err)
	}
	err := pub.Publish(ctx, ev("s1", 2))
	t.Logf("Publish with Redis paused: %v", err)
	if err == nil || errors.Is(err, eventbus.ErrOutOfOrder) {
		t.Errorf("Publish with Redis paused: %v, want a timeout", err)
	}
	if err := c.Do(ctx, "CLIENT", "UNPAUSE").Err(); err != nil {
		t.Fatalf("CLIENT UNPAUSE: %v", err)
	}
	mustPublish(t, pub, "s1", 3)
	got := receive(t, sub, 3)
	if got[0] != 1 || got[len(got)-1] != 3 {
		t.Errorf("events = %v, want 1, maybe 2, then 3", got)
	}
}
