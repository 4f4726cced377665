package feishu

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/reinhq/rein/gateway"
	"github.com/reinhq/rein/gateway/feishu/feishufake"
)

// recorder is a gateway.Handler that keeps what arrives; it fails the
// next fail calls.
type recorder struct {
	mu      sync.Mutex
	msgs    []gateway.Inbound
	actions []gateway.Action
	fail    int
}

func (r *recorder) HandleMessage(_ context.Context, m gateway.Inbound) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.fail > 0 {
		r.fail--
		return errors.New("the store is away")
	}
	r.msgs = append(r.msgs, m)
	return nil
}

func (r *recorder) HandleAction(_ context.Context, a gateway.Action) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.fail > 0 {
		r.fail--
		return errors.New("the store is away")
	}
	r.actions = append(r.actions, a)
	return nil
}

func (r *recorder) messages() []gateway.Inbound {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]gateway.Inbound(nil), r.msgs...)
}

func (r *recorder) pressed() []gateway.Action {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]gateway.Action(nil), r.actions...)
}

func (r *recorder) failNext(n int) {
	r.mu.Lock()
	r.fail = n
	r.mu.Unlock()
}

// env is a channel against the fake, served as the gateway serves it
// (under /feishu/, prefix stripped).
type env struct {
	p   *feishufake.Platform
	ch  *Channel
	rec *recorder
	url string // the channel's base: http://127.0.0.1:PORT/feishu
}

func setup(t *testing.T, opts ...feishufake.Option) *env {
	t.Helper()
	p := feishufake.New(t, opts...)
	ch, err := New("feishu", Config{AppID: feishufake.AppID, APIURL: p.URL()}, p.Getenv)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	rec := &recorder{}
	mux := http.NewServeMux()
	mux.Handle("/feishu/", http.StripPrefix("/feishu", ch.HTTPHandler(rec)))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	p.Target(srv.URL + "/feishu")
	return &env{p: p, ch: ch, rec: rec, url: srv.URL + "/feishu"}
}

// modes are the two ways Feishu posts events: plain (verification
// token) and encrypted (signature).
var modes = []struct {
	name string
	opts []feishufake.Option
}{
	{"plain", nil},
	{"encrypted", []feishufake.Option{feishufake.WithEncryptKey(feishufake.EncryptKey)}},
}
