//go:build unix

package server

import (
	"net"
	"sync"
	"syscall"
)

// rawSocket is a parked stream's socket written without waiting: a
// writer of the pool (see writerPool) must never wait on one slow client
// (issue 30). It is the connection's syscall.RawConn and nothing more, as
// 10,000 idle streams each hold one; the state of a call is a pooled
// rawOp.
type rawSocket struct {
	rc syscall.RawConn
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
	return &rawSocket{rc: rc}
}

// rawOp is one system call on a raw socket: its argument, its results,
// and the calls as func values bound to it once (a closure per call would
// be an allocation per write).
type rawOp struct {
	buf    []byte
	n      int
	err    error
	write1 func(fd uintptr) bool
	read1  func(fd uintptr) bool
	one    [1]byte
}

var rawOps = sync.Pool{New: func() any {
	op := &rawOp{}
	op.write1 = func(fd uintptr) bool {
		op.n, op.err = syscall.Write(int(fd), op.buf)
		return true // one attempt: never wait for the socket
	}
	op.read1 = func(fd uintptr) bool {
		op.n, op.err = syscall.Read(int(fd), op.one[:])
		return true
	}
	return op
}}

// tryWrite writes as much of b as the socket takes now and returns how
// much that was; blocked says the socket's buffer is full (the client
// reads slower than the stream comes).
func (r *rawSocket) tryWrite(b []byte) (n int, blocked bool, err error) {
	op := rawOps.Get().(*rawOp)
	defer func() {
		op.buf, op.err = nil, nil
		rawOps.Put(op)
	}()
	for n < len(b) {
		op.buf = b[n:]
		err := r.rc.Write(op.write1)
		switch {
		case err != nil:
			return n, false, err
		case op.err == syscall.EINTR:
			continue
		case op.err == syscall.EAGAIN:
			return n, true, nil
		case op.err != nil:
			return n, false, op.err
		}
		n += op.n
	}
	return n, false, nil
}

// left reports whether the client closed its end (see clientLeft), without
// waiting: a read finds the end, an error, or nothing yet (EAGAIN). The
// end of a client that left is already in the socket when a heartbeat
// asks, as the client's FIN came before.
func (r *rawSocket) left() bool {
	op := rawOps.Get().(*rawOp)
	defer func() {
		op.err = nil
		rawOps.Put(op)
	}()
	for {
		if r.rc.Read(op.read1) != nil {
			return true // the connection is closed
		}
		switch {
		case op.err == syscall.EINTR:
			continue
		case op.err == syscall.EAGAIN:
			return false
		case op.err != nil:
			return true
		}
		return op.n == 0 // the end; a byte the client sent is dropped
	}
}
