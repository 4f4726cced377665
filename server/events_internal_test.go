package server

import (
	"net"
	"strings"
	"testing"

	"github.com/reinhq/rein/eventbus"
)

// API-2, issue 30: a heartbeat learns that the client of a hijacked event
// stream closed its end at once, not at the next heartbeat's failed write;
// a client still there, or one that sent stray bytes, is not taken for
// gone.
func TestClientLeft(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	pair := func() (server, client net.Conn) {
		client, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		server, err = ln.Accept()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { server.Close(); client.Close() })
		return server, client
	}
	srv, cl := pair()
	if clientLeft(srv) {
		t.Error("an open, silent client was taken for gone")
	}
	if _, err := cl.Write([]byte("GET / HTTP/1.1\r\n")); err != nil { // pipelined bytes
		t.Fatal(err)
	}
	if clientLeft(srv) {
		t.Error("a client that sent bytes was taken for gone")
	}
	cl.Close()
	gone := false
	for range 1000 { // the bytes it sent are read first, one a probe
		if gone = clientLeft(srv); gone {
			break
		}
	}
	if !gone {
		t.Error("a client that closed its end was not noticed")
	}
	// A write to it still succeeds once: reading is what notices.
	srv2, cl2 := pair()
	cl2.Close()
	if _, err := srv2.Write([]byte(": ping\n\n")); err != nil {
		t.Logf("the first write after the close failed already (%v): fine, the probe is then a second net", err)
	}
	if !clientLeft(srv2) {
		t.Error("a client that closed its end was not noticed by the probe")
	}
}

// TestFrameCache_API2 (issue 30): a bus event is framed once for all its
// streams, byte for byte as a stream would frame it; an unframeable one
// keeps its error; the cache holds at most frameCacheSize events, and no
// frame larger than maxCachedFrame.
func TestFrameCache_API2(t *testing.T) {
	var c frameCache
	for _, tc := range []struct {
		name    string
		ev      eventbus.Event
		wantErr bool
	}{
		{"a delta", eventbus.Event{ID: 7, Type: "text_delta", Data: []byte(`{"text":"hi"}`)}, false},
		{"JSON over lines is compacted", eventbus.Event{ID: 8, Type: "message", Data: []byte("{\n\"a\": 1\n}")}, false},
		{"a type with a line break", eventbus.Event{ID: 9, Type: "x\nevent: admin", Data: []byte(`{}`)}, true},
		{"data with a line break that is not JSON", eventbus.Event{ID: 10, Type: "message", Data: []byte("a\ndata: b")}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ev := tc.ev
			var want sseWriter
			wantErr := want.event(ev.ID, ev.Type, ev.Data)
			for i := range 2 { // made, then from the cache
				got, err := c.frame(&ev)
				if (err != nil) != tc.wantErr || (err != nil) != (wantErr != nil) {
					t.Fatalf("call %d: err %v, want error %v", i, err, tc.wantErr)
				}
				if string(got) != want.buf.String() {
					t.Fatalf("call %d: %q, want %q", i, got, want.buf.String())
				}
			}
		})
	}
	evs := make([]eventbus.Event, frameCacheSize+50)
	for i := range evs {
		evs[i] = eventbus.Event{ID: int64(i + 1), Type: "text_delta", Data: []byte(`{}`)}
		if _, err := c.frame(&evs[i]); err != nil {
			t.Fatal(err)
		}
	}
	big := eventbus.Event{ID: 1 << 20, Type: "tool_end", Data: []byte(`"` + strings.Repeat("x", maxCachedFrame) + `"`)}
	if _, err := c.frame(&big); err != nil {
		t.Fatal(err)
	}
	n := 0
	c.frames.Range(func(k, _ any) bool {
		n++
		if k == &big {
			t.Error("a frame larger than maxCachedFrame is cached")
		}
		return true
	})
	if n != frameCacheSize {
		t.Errorf("%d frames cached, want %d", n, frameCacheSize)
	}
}
