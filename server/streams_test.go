package server_test

import (
	"bytes"
	"context"
	"crypto"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
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

// sseRecorder is a ResponseWriter a test reads while a handler streams to
// it. It cannot be hijacked, so the server streams in the handler — no
// network, which a synctest bubble needs.
type sseRecorder struct {
	mu     sync.Mutex
	header http.Header
	code   int
	buf    bytes.Buffer
}

func newSSERecorder() *sseRecorder { return &sseRecorder{header: http.Header{}} }

func (w *sseRecorder) Header() http.Header { return w.header }

func (w *sseRecorder) WriteHeader(code int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.code == 0 {
		w.code = code
	}
}

func (w *sseRecorder) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.code == 0 {
		w.code = http.StatusOK
	}
	return w.buf.Write(p)
}

func (w *sseRecorder) Flush() {}

func (w *sseRecorder) body() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

func (w *sseRecorder) status() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.code
}

// bubble is a server built inside a synctest bubble: its clock is the
// bubble's.
type bubble struct {
	srv *server.Server
	bus *eventbus.Memory
	f   fixture
}

func newBubble(t *testing.T, opts ...func(*server.Config)) *bubble {
	store, ledger := session.NewMemStore(), session.NewMemLedger()
	b := &bubble{bus: eventbus.NewMemory(eventbus.Options{})}
	t.Cleanup(func() { _ = b.bus.Close() })
	cfg := server.Config{Runtime: &fakeRuntime{ledger: ledger}, Sessions: store, Ledger: ledger, Bus: b.bus,
		Auth: server.Auth{PublicKeys: []crypto.PublicKey{keys().edPub}}, RateLimit: -1,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	for _, o := range opts {
		o(&cfg)
	}
	srv, err := server.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	b.srv = srv
	w := &session.Workspace{Caller: "ada", Kind: session.WorkspaceChat}
	if err := ledger.CreateWorkspace(bg, w); err != nil {
		t.Fatal(err)
	}
	s := &session.Session{Caller: "ada", Workspace: w.ID}
	if err := store.Create(bg, s); err != nil {
		t.Fatal(err)
	}
	b.f = fixture{caller: "ada", workspace: w.ID, session: s.ID}
	return b
}

// open starts a stream of the session with the token; cancel ends the
// client's side, done is closed when the handler returned.
func (b *bubble) open(tok string) (w *sseRecorder, cancel context.CancelFunc, done chan struct{}) {
	ctx, cancel := context.WithCancel(bg)
	req := httptest.NewRequestWithContext(ctx, "GET", "http://127.0.0.1/sessions/"+b.f.session+"/events", nil)
	req.RemoteAddr = "127.0.0.1:4000"
	if tok != "" {
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	w, done = newSSERecorder(), make(chan struct{})
	go func() {
		defer close(done)
		b.srv.Handler().ServeHTTP(w, req)
	}()
	return w, cancel, done
}

func (b *bubble) publish(t *testing.T, id int64) {
	t.Helper()
	err := b.bus.Publish(bg, eventbus.Event{SessionID: b.f.session, ID: id, Type: "text_delta", Data: []byte(`{"type":"text_delta","text":"x"}`)})
	if err != nil {
		t.Fatal(err)
	}
}

func ended(done chan struct{}) bool {
	select {
	case <-done:
		return true
	default:
		return false
	}
}

// TestStreamEndsWhenTokenExpires (SPEC API-9): a stream opened with a JWT
// carries events until the token would no longer be accepted — exp plus
// the 30 s leeway — then says why in a last comment and ends; later
// events never reach it, and the same token opens no new stream.
func TestStreamEndsWhenTokenExpires(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := newBubble(t)
		exp := time.Now().Add(10 * time.Minute).Truncate(time.Second)
		tok := sign(t, jwt.SigningMethodEdDSA, keys().ed, jwt.MapClaims{"sub": "ada", "exp": exp.Unix()})
		w, cancel, done := b.open(tok)
		defer cancel()
		synctest.Wait()
		if w.status() != http.StatusOK {
			t.Fatalf("status %d: %s", w.status(), w.body())
		}
		b.publish(t, 1)
		time.Sleep(time.Until(exp.Add(30*time.Second)) - time.Nanosecond)
		synctest.Wait()
		if ended(done) {
			t.Fatalf("the stream ended before exp+leeway: %q", w.body())
		}
		b.publish(t, 2)
		synctest.Wait()
		time.Sleep(time.Nanosecond)
		synctest.Wait()
		if !ended(done) {
			t.Fatal("the stream is still open after its token expired")
		}
		b.publish(t, 3)
		body := w.body()
		if !strings.Contains(body, "id: 1\n") || !strings.Contains(body, "id: 2\n") || strings.Contains(body, "id: 3\n") {
			t.Errorf("events: want 1 and 2, not 3:\n%s", body)
		}
		if !strings.HasSuffix(body, ": credential expired: reconnect with a fresh token and Last-Event-ID\n\n") {
			t.Errorf("the stream does not end saying why:\n%s", body)
		}
		w2, cancel2, done2 := b.open(tok)
		defer cancel2()
		<-done2
		if w2.status() != http.StatusUnauthorized {
			t.Errorf("reopening with the expired token: %d %s", w2.status(), w2.body())
		}
	})
}

// TestStreamWithoutExpiry: a caller without a token (the local caller)
// has no expiry: its stream stays open for days.
func TestStreamWithoutExpiry(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := newBubble(t, func(c *server.Config) { c.Auth = server.Auth{Local: "ada"} })
		w, cancel, done := b.open("")
		time.Sleep(72 * time.Hour)
		synctest.Wait()
		if ended(done) {
			t.Fatalf("the local caller's stream ended: %d %q", w.status(), w.body())
		}
		cancel()
		<-done
	})
}

// TestStreamCapFrees: a refused stream's 429 says which cap; a stream
// that ends gives its slot back, so the next one opens.
func TestStreamCapFrees(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := newBubble(t, func(c *server.Config) { c.MaxStreamsPerCaller = 2 })
		tok := sign(t, jwt.SigningMethodEdDSA, keys().ed, jwt.MapClaims{"sub": "ada", "exp": time.Now().Add(time.Hour).Unix()})
		_, cancel1, done1 := b.open(tok)
		_, cancel2, done2 := b.open(tok)
		defer cancel2()
		synctest.Wait()
		w3, cancel3, done3 := b.open(tok)
		defer cancel3()
		<-done3
		if w3.status() != http.StatusTooManyRequests || w3.header.Get("Retry-After") == "" ||
			!strings.Contains(w3.body(), "--max-streams-per-caller") {
			t.Fatalf("third stream: %d %v %s", w3.status(), w3.header, w3.body())
		}
		cancel1()
		<-done1
		w4, cancel4, done4 := b.open(tok)
		synctest.Wait()
		if w4.status() != http.StatusOK || ended(done4) {
			t.Errorf("a stream after one ended: %d %s", w4.status(), w4.body())
		}
		cancel4()
		<-done4
		cancel2()
		<-done2
	})
}
