package postgres_test

import (
	"context"
	"errors"
	"net/url"
	"testing"
	"time"

	"github.com/reinhq/rein/internal/faultproxy"
	"github.com/reinhq/rein/llm"
	"github.com/reinhq/rein/session"
	"github.com/reinhq/rein/session/postgres"
	"github.com/reinhq/rein/session/postgres/pgtest"
)

// TestUnavailable takes PostgreSQL away from an open store: reads, writes
// and Ping fail with session.ErrUnavailable naming where the store
// connects (the server answers 503 with Retry-After, SPEC API-5), and the
// same store works again once the database is back — the pool reconnects.
func TestUnavailable(t *testing.T) {
	dsn, _ := pgtest.Schema(t)
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	p := faultproxy.Start(t, u.Host)
	u.Host = p.Addr()
	ctx := context.Background()
	s, err := postgres.Open(ctx, u.String(), postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	sess := &session.Session{WorkDir: "/w"}
	if err := s.Create(ctx, sess); err != nil {
		t.Fatal(err)
	}

	p.Down()
	octx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := s.Ping(octx); !errors.Is(err, session.ErrUnavailable) {
		t.Errorf("Ping with the database down: %v, want ErrUnavailable", err)
	}
	if _, err := s.Get(octx, sess.ID); !errors.Is(err, session.ErrUnavailable) {
		t.Errorf("Get with the database down: %v, want ErrUnavailable", err)
	}
	_, err = s.Append(octx, sess.ID, session.Entry{Kind: session.KindMessage, Message: ptr(llm.UserText("x"))})
	if !errors.Is(err, session.ErrUnavailable) {
		t.Errorf("Append with the database down: %v, want ErrUnavailable", err)
	}
	for _, err := range s.Entries(octx, sess.ID, 0) {
		if !errors.Is(err, session.ErrUnavailable) {
			t.Errorf("Entries with the database down: %v, want ErrUnavailable", err)
		}
		break
	}

	p.Up()
	deadline := time.Now().Add(10 * time.Second)
	for s.Ping(ctx) != nil {
		if time.Now().After(deadline) {
			t.Fatal("the store did not reconnect within 10s of the database coming back")
		}
		time.Sleep(50 * time.Millisecond)
	}
	if _, err := s.Get(ctx, sess.ID); err != nil {
		t.Errorf("Get after the database came back: %v", err)
	}
}

func ptr[T any](v T) *T { return &v }
