//go:build unix

package server

import (
	"net"
	"syscall"
)

// rawSocket is a parked stream's socket written without waiting: a
// writer of the pool (see writerPool) must never wait on one slow client
// (issue 30). Its methods are called by one goroutine at a time (the one
// stepping the stream).
type rawSocket struct {
	rc syscall.RawConn
	// The results of the last system call, and the calls as func values
	// made once (a closure per call would be an allocation per write).
	buf     []byte
	n       int
	err     error
	write1  func(fd uintptr) bool
	read1   func(fd uintptr) bool
	readBuf [1]byte
}

// newRawSocket returns conn's socket, or nil when conn has none (TLS, a
// pipe): such a stream's steps run on goroutines of their own, whose
// writes may wait.
func newRawSocket(conn net.Conn) *rawSocket {
	sc, ok := conn.(syscall.Conn)
	if !ok {
		return nil
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return nil
	}
	r := &rawSocket{rc: rc}
	r.write1 = func(fd uintptr) bool {
		r.n, r.err = syscall.Write(int(fd), r.buf)
		return true // one attempt: never wait for the socket
	}
	r.read1 = func(fd uintptr) bool {
		r.n, r.err = syscall.Read(int(fd), r.readBuf[:])
		return true
	}
	return r
}

// tryWrite writes as much of b as the socket takes now and returns how
// much that was; blocked says the socket's buffer is full (the client
// reads slower than the stream comes).
func (r *rawSocket) tryWrite(b []byte) (n int, blocked bool, err error) {
	for n < len(b) {
		r.buf = b[n:]
		err := r.rc.Write(r.write1)
		r.buf = nil
		switch {
		case err != nil:
			return n, false, err
		case r.err == syscall.EINTR:
			continue
		case r.err == syscall.EAGAIN:
			return n, true, nil
		case r.err != nil:
			return n, false, r.err
		}
		n += r.n
	}
	return n, false, nil
}

// left reports whether the client closed its end (see clientLeft), without
// waiting: a read finds the end, an error, or nothing yet (EAGAIN). The
// end of a client that left is already in the socket when a heartbeat
// asks, as the client's FIN came before.
func (r *rawSocket) left() bool {
	for {
		if r.rc.Read(r.read1) != nil {
			return true // the connection is closed
		}
		switch {
		case r.err == syscall.EINTR:
			continue
		case r.err == syscall.EAGAIN:
			return false
		case r.err != nil:
			return true
		}
		return r.n == 0 // the end; a byte the client sent is dropped
	}
}
