package server_test

import (
	"testing"

	"github.com/reinhq/rein/eventbus"
)

// BenchmarkGetSession measures one authenticated read through the whole
// stack: JWT verification (EdDSA), rate limiting, huma, the store.
func BenchmarkGetSession(b *testing.B) {
	e := newEnv(b)
	f := e.fixture(b, "ada")
	path := "/sessions/" + f.session
	b.ReportAllocs()
	for b.Loop() {
		if r := e.serve(b, "GET", path, f.tok, nil, "127.0.0.1:4000"); r.status != 200 {
			b.Fatalf("%d %s", r.status, r.body)
		}
	}
}

// BenchmarkSendMessage measures a message's 202: validation, the
// ownership check and the runtime's Submit (an in-memory ledger here).
func BenchmarkSendMessage(b *testing.B) {
	e := newEnv(b)
	f := e.fixture(b, "ada")
	path := "/sessions/" + f.session + "/messages"
	body := []byte(`{"text":"run the tests","max_turns":5}`)
	b.ReportAllocs()
	for b.Loop() {
		if r := e.serve(b, "POST", path, f.tok, body, "127.0.0.1:4000"); r.status != 202 {
			b.Fatalf("%d %s", r.status, r.body)
		}
	}
}

// BenchmarkStreamEvent measures an event from Publish to a client's read of
// its frame, over a loopback connection.
func BenchmarkStreamEvent(b *testing.B) {
	e := newEnvBus(b, eventbus.Options{Buffer: 1 << 16})
	f := e.fixture(b, "ada")
	s := e.events(b, f.session, f.tok, "")
	data := []byte(`{"type":"text_delta","time":"2026-11-21T07:00:01Z","session_id":"s1","run_id":"r1","turn":1,"text":"Let me "}`)
	id := int64(0)
	b.ReportAllocs()
	for b.Loop() {
		id++
		if err := e.bus.Publish(bg, eventbus.Event{SessionID: f.session, ID: id, Type: "text_delta", Data: data}); err != nil {
			b.Fatal(err)
		}
		if fr := s.next(b); fr.ID != id {
			b.Fatalf("read %d, want %d", fr.ID, id)
		}
	}
}

// BenchmarkMiddlewareHealth measures the cheapest request through every
// layer: the screen (Host, Origin, Content-Type; SPEC API-8), huma, the
// rate limiter, with no authentication or store behind it.
func BenchmarkMiddlewareHealth(b *testing.B) {
	e := newEnv(b)
	b.ReportAllocs()
	for b.Loop() {
		if r := e.serve(b, "GET", "/health", "", nil, "127.0.0.1:4000"); r.status != 200 {
			b.Fatalf("%d %s", r.status, r.body)
		}
	}
}

// BenchmarkMiddlewareBrowserPost measures a message's 202 as the server's
// own page sends it: Origin and Sec-Fetch-Site set, so the screen parses
// and compares the origin as well as the Host and Content-Type.
func BenchmarkMiddlewareBrowserPost(b *testing.B) {
	e := newEnv(b)
	f := e.fixture(b, "ada")
	path := "/sessions/" + f.session + "/messages"
	body := []byte(`{"text":"run the tests","max_turns":5}`)
	b.ReportAllocs()
	for b.Loop() {
		if r := e.serve(b, "POST", path, f.tok, body, "127.0.0.1:4000", "Origin", "http://rein.test", "Sec-Fetch-Site", "same-origin"); r.status != 202 {
			b.Fatalf("%d %s", r.status, r.body)
		}
	}
}

// BenchmarkMiddlewareRefusedHost measures the 421 of a request with a
// foreign Host (DNS rebinding): refused before routing and authentication.
func BenchmarkMiddlewareRefusedHost(b *testing.B) {
	e := newEnv(b)
	b.ReportAllocs()
	for b.Loop() {
		r := e.serve(b, "POST", "/workspaces", "", `{"kind":"chat"}`, "127.0.0.1:4000", "Host", "attacker.example:7878")
		if r.status != 421 {
			b.Fatalf("%d %s", r.status, r.body)
		}
	}
}
