//go:build unix

package server

import (
	"bytes"
	"errors"
	"io"
	"net"
	"os"
	"syscall"
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

// API-2, issue 30: a parked stream's socket leaves the runtime's poller
// and its writes never wait. Detaching closes the connection and keeps the
// socket (close-on-exec); a raw socket takes what fits and says when it is
// full, and the rest goes after it in order; a waiting write gets it all
// through once the client reads, and fails at its deadline when the
// client does not; the probe for a departed client answers without
// waiting, as clientLeft does; a connection without a socket is not
// detached.
func TestRawSocket_API2(t *testing.T) {
	srv, cl := tcpPair(t)
	r := detachSocket(srv)
	if r == nil {
		t.Fatal("a TCP connection was not detached")
	}
	defer r.close()
	if _, err := srv.Write([]byte("x")); !errors.Is(err, net.ErrClosed) {
		t.Errorf("a write to the detached connection: %v, want net.ErrClosed", err)
	}
	flags, _, errno := syscall.Syscall(syscall.SYS_FCNTL, uintptr(r.fd), syscall.F_GETFD, 0)
	if errno != 0 || flags&syscall.FD_CLOEXEC == 0 {
		t.Errorf("the detached descriptor's flags: %#x, %v; want close-on-exec", flags, errno)
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
	// A waiting write to a client that reads nothing fails at its deadline.
	start := time.Now()
	if err := r.writeAll(chunk, start.Add(50*time.Millisecond)); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("a waiting write to a full socket: %v, want the deadline exceeded", err)
	}
	if d := time.Since(start); d < 50*time.Millisecond {
		t.Errorf("the waiting write gave up after %v, before its deadline", d)
	}
	// The client reads what was sent, in order; bytes the failed write got
	// in follow (the stream ends after a failed write: they are not
	// checked).
	got := make([]byte, len(sent))
	if _, err := io.ReadFull(cl, got); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, sent) {
		t.Fatal("the bytes read differ from those written")
	}
	drain := make(chan int64, 1)
	go func() {
		n, _ := io.Copy(io.Discard, cl)
		drain <- n
	}()
	// A waiting write larger than the socket's buffers gets through while
	// the client reads.
	big := bytes.Repeat(chunk, 128) // 8 MiB
	if err := r.writeAll(big, time.Now().Add(time.Minute)); err != nil {
		t.Fatalf("a waiting write while the client reads: %v", err)
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
	if n := <-drain; n < int64(len(big)) {
		t.Errorf("the client read %d bytes after the first %d, want at least the %d of the waiting write", n, len(sent), len(big))
	}
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
	r.close()
	if !r.left() {
		t.Error("a closed socket was not taken for gone")
	}
	if _, _, err := r.tryWrite([]byte("x")); err == nil {
		t.Error("a write to a closed socket succeeded")
	}

	// A pipe has no socket: it stays the stream's connection.
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	if detachSocket(a) != nil {
		t.Error("a pipe was detached")
	}
	go func() { _, _ = b.Write([]byte("y")) }()
	if _, err := a.Read(make([]byte, 1)); err != nil {
		t.Errorf("the pipe after detachSocket: %v, want it open", err)
	}
}
