//go:build unix

package server

import (
	"bytes"
	"io"
	"net"
	"testing"
	"time"
)

// tcpPair returns both ends of a loopback TCP connection.
func tcpPair(t *testing.T) (server, client net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	client, err = net.Dial("tcp", ln.Addr().String())
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

// API-2, issue 30: the writer pool's writes never wait. A raw socket takes
// what fits and says when it is full, and the rest goes after it in
// order; a write deadline a blocking write left behind, long passed, does
// not fail the next raw write; the probe for a departed client answers
// without waiting, as clientLeft does.
func TestRawSocket_API2(t *testing.T) {
	srv, cl := tcpPair(t)
	r := newRawSocket(srv)
	if r == nil {
		t.Fatal("a TCP connection has no raw socket")
	}
	// Write until the socket is full: the client reads nothing.
	chunk := bytes.Repeat([]byte("0123456789abcdef"), 4096) // 64 KiB
	var sent []byte
	for blocked := false; !blocked; {
		n, b, err := r.tryWrite(chunk)
		if err != nil {
			t.Fatal(err)
		}
		if n > len(chunk) || (!b && n != len(chunk)) {
			t.Fatalf("wrote %d of %d, blocked %v", n, len(chunk), b)
		}
		sent = append(sent, chunk[:n]...)
		blocked = b
		if len(sent) > 256<<20 {
			t.Fatal("256 MiB written to a client that reads nothing: the socket never said it was full")
		}
	}
	t.Logf("the socket took %d bytes before it was full", len(sent))
	// The client reads it all, in order.
	got := make([]byte, len(sent))
	if _, err := io.ReadFull(cl, got); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, sent) {
		t.Fatal("the bytes read differ from those written")
	}

	// A deadline set by a blocking write, passed since.
	p := &parkedStream{conn: srv, raw: r, sw: &sseWriter{out: srv, setDeadline: srv.SetWriteDeadline}}
	p.sw.buf.WriteString(": first\n\n")
	if err := p.sw.write(); err != nil { // sets the deadline
		t.Fatal(err)
	}
	if err := srv.SetWriteDeadline(time.Now().Add(-time.Second)); err != nil {
		t.Fatal(err)
	}
	p.sw.deadline = time.Now().Add(-time.Second)
	p.sw.buf.WriteString(": second\n\n")
	if blocked, err := p.flush(false); err != nil || blocked {
		t.Fatalf("a raw write after a passed deadline: blocked %v, err %v", blocked, err)
	}
	want := ": first\n\n: second\n\n"
	buf := make([]byte, len(want))
	if _, err := io.ReadFull(cl, buf); err != nil || string(buf) != want {
		t.Fatalf("read %q, %v; want %q", buf, err, want)
	}

	if r.left() {
		t.Error("an open, silent client was taken for gone")
	}
	if _, err := cl.Write([]byte("x")); err != nil { // a stray byte
		t.Fatal(err)
	}
	time.Sleep(10 * time.Millisecond) // on loopback the byte is there at once; this is margin
	if r.left() {
		t.Error("a client that sent a byte was taken for gone")
	}
	cl.Close()
	gone := false
	for range 1000 { // the end is in the socket as soon as the close returned; the loop is margin
		if gone = r.left(); gone {
			break
		}
		time.Sleep(time.Millisecond)
	}
	if !gone {
		t.Error("a client that closed its end was not noticed")
	}
	srv.Close()
	if !r.left() {
		t.Error("a closed connection was not taken for gone")
	}
	if _, _, err := r.tryWrite([]byte("x")); err == nil {
		t.Error("a write to a closed connection succeeded")
	}
}
