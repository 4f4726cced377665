//go:build unix

package server

import (
	"bytes"
	"io"
	"testing"

	"github.com/reinhq/rein/eventbus"
)

// API-2, issue 30: a step with one event sends its cached frame straight
// from the cache; when the socket takes only part of it, the rest waits in
// the stream's buffer and follows in order; an event already sent, or one
// whose frame is not cached, is left to the usual path.
func TestParkedSendOne_API2(t *testing.T) {
	srv, cl := tcpPair(t)
	r := detachSocket(srv)
	if r == nil {
		t.Fatal("a TCP connection was not detached")
	}
	defer r.close()
	p := &parkedStream{s: &Server{streams: newStreamCaps(0, 0)}, sw: &sseWriter{}, raw: r, last: 1}
	ev := func(id int64, n int) *eventbus.Event {
		return &eventbus.Event{SessionID: "s", ID: id, Type: "text_delta", Data: []byte(`{"text":"` + string(bytes.Repeat([]byte("x"), n)) + `"}`)}
	}
	if res, ok := p.sendOne(ev(1, 10)); res != stepIdle || !ok || p.last != 1 {
		t.Errorf("an event already sent: %v, %v, last %d; want it skipped", res, ok, p.last)
	}
	if res, ok := p.sendOne(ev(2, maxCachedFrame)); res != stepIdle || ok || p.last != 1 {
		t.Errorf("an event too large for the cache: %v, %v, last %d; want it left to the usual path", res, ok, p.last)
	}
	// Fill the socket, leaving less room than a frame.
	var sent []byte
	for blocked := false; !blocked; {
		n, b, err := r.tryWrite(bytes.Repeat([]byte{'.'}, 4096))
		if err != nil {
			t.Fatal(err)
		}
		sent, blocked = append(sent, bytes.Repeat([]byte{'.'}, n)...), b
	}
	e := ev(3, 8000)
	want, _ := p.s.streams.frames.frame(e)
	var res stepResult
	var ok bool
	for range 100 { // the socket may take a whole frame once the loopback moved bytes on
		if res, ok = p.sendOne(e); res == stepBlocked {
			break
		}
		if res != stepIdle || !ok {
			t.Fatalf("sending to a full socket: %v, %v", res, ok)
		}
		sent = append(sent, want...)
		e = ev(e.ID+1, 8000)
		want, _ = p.s.streams.frames.frame(e)
	}
	if res != stepBlocked || ok || p.last != e.ID {
		t.Fatalf("a frame the socket could not take whole: %v, %v, last %d (want %d)", res, ok, p.last, e.ID)
	}
	if p.sw.buf.Len() == 0 || p.sw.buf.Len() > len(want) || !bytes.HasSuffix(want, p.sw.buf.Bytes()) {
		t.Fatalf("the buffer holds %d bytes, want the frame's last ones (1 to %d)", p.sw.buf.Len(), len(want))
	}
	sent = append(sent, want...)
	flushed := make(chan error, 1)
	go func() {
		_, err := p.flush(true)
		r.close()
		flushed <- err
	}()
	got, err := io.ReadAll(cl)
	if ferr := <-flushed; ferr != nil {
		t.Fatalf("sending the rest: %v", ferr)
	}
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, sent) {
		t.Fatalf("the client read %d bytes, want the %d sent, in order", len(got), len(sent))
	}
}
