package server_test

import (
	"bufio"
	"context"
	"crypto"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/reinhq/rein/eventbus"
	"github.com/reinhq/rein/server"
	"github.com/reinhq/rein/session"
)

// pipeListener is a net.Listener of in-process pipes: inside a synctest
// bubble a server's goroutines blocked on its connections are durably
// blocked, and deadlines run on the bubble's clock.
type pipeListener struct {
	conns chan net.Conn
	once  sync.Once
	done  chan struct{}
}

func newPipeListener() *pipeListener {
	return &pipeListener{conns: make(chan net.Conn), done: make(chan struct{})}
}

func (l *pipeListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

func (l *pipeListener) Close() error {
	l.once.Do(func() { close(l.done) })
	return nil
}

func (l *pipeListener) Addr() net.Addr { return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 80} }

// dial returns the client's end of a new connection.
func (l *pipeListener) dial() net.Conn {
	srv, cl := net.Pipe()
	l.conns <- srv
	return cl
}

// pipeEnv is a server over a pipeListener, with the env's in-memory
// stores and bus (see newEnvBus), for tests inside a synctest bubble.
func pipeEnv(t *testing.T, busOpts eventbus.Options, heartbeat time.Duration) (*env, *pipeListener) {
	t.Helper()
	e := &env{store: session.NewMemStore(), ledger: session.NewMemLedger(), bus: eventbus.NewMemory(busOpts),
		root: t.TempDir(), logs: &syncBuffer{}}
	e.rt = &fakeRuntime{ledger: e.ledger}
	srv, err := server.New(server.Config{
		Runtime: e.rt, Sessions: e.store, Ledger: e.ledger, Bus: e.bus,
		Auth:      server.Auth{PublicKeys: []crypto.PublicKey{keys().edPub}},
		Roots:     []string{e.root},
		RateLimit: -1, MaxStreamsPerCaller: -1, MaxStreams: -1,
		AllowedHosts: []string{"rein.test"},
		Version:      "test",
		Heartbeat:    heartbeat,
		Logger:       slog.New(slog.NewJSONHandler(e.logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
	})
	if err != nil {
		t.Fatal(err)
	}
	e.srv = srv
	l := newPipeListener()
	hs := &http.Server{Handler: srv.Handler()}
	go func() { _ = hs.Serve(l) }()
	t.Cleanup(func() {
		srv.CloseStreams()
		_ = hs.Close()
		_ = e.bus.Close()
	})
	return e, l
}

// pipeStream is the client's end of an event stream over a pipe.
type pipeStream struct {
	c net.Conn
	r *bufio.Reader
}

// openPipeStream sends GET /sessions/{id}/events and reads the answer's
// head.
func openPipeStream(t *testing.T, l *pipeListener, f fixture) *pipeStream {
	t.Helper()
	c := l.dial()
	go fmt.Fprintf(c, "GET /sessions/%s/events HTTP/1.1\r\nHost: rein.test\r\nAuthorization: Bearer %s\r\n\r\n", f.session, f.tok)
	s := &pipeStream{c: c, r: bufio.NewReader(c)}
	status, err := s.r.ReadString('\n')
	if err != nil || !strings.HasPrefix(status, "HTTP/1.1 200") {
		t.Fatalf("GET events: %q, %v", status, err)
	}
	for {
		line, err := s.r.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		if line == "\r\n" {
			break
		}
	}
	t.Cleanup(func() { c.Close() })
	return s
}

// frame reads one frame (the lines up to a blank one) within wait, on the
// bubble's clock; "" when none came.
func (s *pipeStream) frame(t *testing.T, wait time.Duration) string {
	t.Helper()
	_ = s.c.SetReadDeadline(time.Now().Add(wait))
	defer s.c.SetReadDeadline(time.Time{})
	var b strings.Builder
	for {
		line, err := s.r.ReadString('\n')
		b.WriteString(line)
		var ne net.Error
		switch {
		case errors.As(err, &ne) && ne.Timeout() && b.Len() == 0:
			return ""
		case err != nil:
			t.Fatalf("reading a frame: %q, %v", b.String(), err)
		case line == "\n":
			return b.String()
		}
	}
}

// bubbleGoroutines counts the goroutines of synctest bubbles (the test's
// own: one runs at a time), not the process's others, which come and go.
func bubbleGoroutines() int {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			return strings.Count(string(buf[:n]), ", synctest bubble ")
		}
		buf = make([]byte, 2*len(buf))
	}
}

// TestParkedStreams_API2: an idle event stream over a hijacked connection
// holds no goroutine (issue 30: 10,000 idle clients cost the collector
// their stacks), and still gets its events at once, its heartbeat every
// interval (one wheel for all streams), notices its client left at that
// heartbeat, and ends on CloseStreams.
func TestParkedStreams_API2(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const hb = 64 * time.Second // the wheel ticks every second
		e, l := pipeEnv(t, eventbus.Options{}, hb)
		f := e.fixture(t, "ada")
		first := openPipeStream(t, l, f)
		synctest.Wait()
		idle := bubbleGoroutines()
		more := make([]*pipeStream, 20)
		for i := range more {
			more[i] = openPipeStream(t, l, f)
		}
		synctest.Wait()
		if n := bubbleGoroutines(); n != idle {
			t.Errorf("%d goroutines with 21 idle streams, %d with 1: an idle stream holds a goroutine", n, idle)
		}

		data := `{"type":"text_delta","text":"hi"}`
		if err := e.bus.Publish(bg, eventbus.Event{SessionID: f.session, ID: 1, Type: "text_delta", Data: []byte(data)}); err != nil {
			t.Fatal(err)
		}
		want := "id: 1\nevent: text_delta\ndata: " + data + "\n\n"
		for i, s := range append(more, first) {
			if got := s.frame(t, time.Millisecond); got != want {
				t.Fatalf("stream %d: %q, want %q", i, got, want)
			}
		}
		synctest.Wait()
		if n := bubbleGoroutines(); n != idle {
			t.Errorf("%d goroutines once the event was written, want %d", n, idle)
		}

		// The heartbeat: not before hb less one tick, by hb.
		if got := first.frame(t, hb-2*time.Second); got != "" {
			t.Errorf("before the heartbeat: %q", got)
		}
		if got := first.frame(t, 3*time.Second); got != ": ping\n\n" {
			t.Errorf("at the heartbeat: %q, want the ping", got)
		}
		for i, s := range more[:10] {
			if got := s.frame(t, time.Millisecond); got != ": ping\n\n" {
				t.Errorf("stream %d at the heartbeat: %q", i, got)
			}
		}
		// Ten clients leave; the next heartbeat ends their streams.
		for _, s := range more[10:] {
			s.c.Close()
		}
		for _, s := range append(more[:10], first) {
			if got := s.frame(t, hb+time.Second); got != ": ping\n\n" {
				t.Fatalf("the next heartbeat: %q", got)
			}
		}
		synctest.Wait()
		if n := e.bus.Subscribers(); n != 11 {
			t.Errorf("%d subscriptions after 10 of 21 clients left, want 11", n)
		}

		e.srv.CloseStreams()
		for _, s := range append(more[:10], first) {
			if b, err := io.ReadAll(s.r); err != nil || len(b) != 0 {
				t.Errorf("after CloseStreams: %q, %v; want the end", b, err)
			}
		}
		synctest.Wait()
		if n := e.bus.Subscribers(); n != 0 {
			t.Errorf("%d subscriptions after CloseStreams", n)
		}
	})
}

// TestParkedStreamAttacks_API2 (attack rows, issue 30): a client of a
// parked stream cannot make the server hold memory or goroutines without
// bound by reading slowly or not at all.
func TestParkedStreamAttacks_API2(t *testing.T) {
	for _, tc := range []struct {
		name string
		read func(s *pipeStream) // what the client reads meanwhile
	}{
		{"a client that never reads is dropped", func(*pipeStream) {}},
		{"a client reading one byte a second is dropped", func(s *pipeStream) {
			go func() {
				var b [1]byte
				for {
					if _, err := s.c.Read(b[:]); err != nil {
						return
					}
					time.Sleep(time.Second)
				}
			}()
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				e, l := pipeEnv(t, eventbus.Options{Buffer: 8, Window: 16}, 15*time.Second)
				f := e.fixture(t, "mallory")
				s := openPipeStream(t, l, f)
				synctest.Wait()
				idle := bubbleGoroutines()
				tc.read(s)
				big := []byte(`{"type":"text_delta","text":"` + strings.Repeat("x", 4<<10) + `"}`)
				for i := range 1000 { // 4 MB: more than the 8 events the subscription may hold
					if err := e.bus.Publish(bg, eventbus.Event{SessionID: f.session, ID: int64(i + 1), Type: "text_delta", Data: big}); err != nil {
						t.Fatal(err)
					}
				}
				if st := e.bus.Stats(); st.Slow != 1 {
					t.Errorf("%d subscriptions cut off, want the client's", st.Slow)
				}
				// The write in progress gives up at its deadline (10 s).
				time.Sleep(11 * time.Second)
				synctest.Wait()
				if n := e.bus.Subscribers(); n != 0 {
					t.Errorf("%d subscriptions left", n)
				}
				if n := bubbleGoroutines(); n > idle {
					t.Errorf("%d goroutines, %d before: the stream's are left", n, idle)
				}
			})
		})
	}
}

// TestParkedStreamCredentialExpires_API9: a parked stream opened with a
// token ends when the token expires (exp plus the 30 s leeway), with the
// last comment saying so, though nothing else happened on it.
func TestParkedStreamCredentialExpires_API9(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e, l := pipeEnv(t, eventbus.Options{}, time.Hour)
		f := e.fixture(t, "ada")
		f.tok = sign(t, jwt.SigningMethodEdDSA, keys().ed, jwt.MapClaims{"sub": "ada", "exp": time.Now().Add(time.Minute).Unix()})
		s := openPipeStream(t, l, f)
		if got := s.frame(t, time.Minute+29*time.Second); got != "" {
			t.Fatalf("before the credential's end: %q", got)
		}
		if got := s.frame(t, 2*time.Second); !strings.HasPrefix(got, ": credential expired:") {
			t.Fatalf("at the credential's end: %q, want the expired comment", got)
		}
		if b, err := io.ReadAll(s.r); err != nil || len(b) != 0 {
			t.Errorf("after the expired comment: %q, %v; want the end", b, err)
		}
		synctest.Wait()
		if n := e.bus.Subscribers(); n != 0 {
			t.Errorf("%d subscriptions after the credential expired", n)
		}
	})
}

// plainBus hides that its subscriptions are Notifiers, as the Redis bus's
// are not.
type plainBus struct{ *eventbus.Memory }

type plainSub struct{ eventbus.Subscription }

func (b plainBus) Subscribe(ctx context.Context, sessionID string, afterID int64) (eventbus.Subscription, error) {
	s, err := b.Memory.Subscribe(ctx, sessionID, afterID)
	if err != nil {
		return nil, err
	}
	return plainSub{s}, nil
}

// TestStreamWithoutNotifier_API2: over a bus whose subscriptions cannot
// notify (eventbus/redisbus), a hijacked stream keeps a goroutine of its
// own and still gets its events, its heartbeats, and ends on
// CloseStreams.
func TestStreamWithoutNotifier_API2(t *testing.T) {
	e := newEnv(t, func(c *server.Config) {
		c.Bus = plainBus{c.Bus.(*eventbus.Memory)}
		c.Heartbeat = 50 * time.Millisecond
	})
	f := e.fixture(t, "ada")
	s := e.events(t, f.session, f.tok, "")
	if err := e.bus.Publish(bg, eventbus.Event{SessionID: f.session, ID: 1, Type: "text_delta", Data: []byte(`{"text":"hi"}`)}); err != nil {
		t.Fatal(err)
	}
	if got := s.nextEvents(t, 1); got[0].ID != 1 || got[0].Event != "text_delta" {
		t.Errorf("event %+v, want 1 text_delta", got[0])
	}
	if got := s.next(t); got != (frame{Comment: "ping"}) {
		t.Errorf("then %+v, want the heartbeat", got)
	}
	e.srv.CloseStreams()
	if b, err := io.ReadAll(s.r); err != nil || len(b) != 0 {
		t.Errorf("after CloseStreams: %q, %v; want the end of the stream", b, err)
	}
}
