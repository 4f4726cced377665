//go:build unix

package server

import (
	"io"
	"net"
	"os"
	"sync/atomic"
	"syscall"
	"time"
)

// rawSocket is a parked stream's socket taken out of the Go runtime's
// network poller: a descriptor of the stream's own, written without
// waiting by the writer pool (see writerPool: a writer must never wait on
// one slow client).
//
// Issue 30: a net.Conn holds a poll descriptor of the runtime's, 512
// bytes allocated outside the heap and never given back to the system
// (the runtime keeps it for the next connection), plus its netFD, poll.FD
// and finalizer record. 10,000 idle streams held 5.6 MiB of such memory,
// which stayed the process's after they left. A parked stream needs the
// poller for nothing — the bus and the heartbeat wheel wake it, and the
// pool's writes never wait — so at park its connection is closed and a
// duplicate of its descriptor kept: the poll descriptor returns to the
// runtime's cache for the next connection, and the most poll descriptors
// ever made is the most connections open at once outside parked streams
// (being accepted, read, replayed, or a slow client's wait), not the most
// listeners.
//
// Only the goroutine stepping the stream uses it (parkedStream.running
// serializes the steps), so it is never written after close: a descriptor
// number, once closed, may be a new connection's.
type rawSocket struct {
	fd int // -1 once closed
}

// detachSocket takes conn's socket out of the runtime's poller (see
// rawSocket): it duplicates the descriptor (the duplicate shares the socket
// and its non-blocking mode), then closes conn. It returns nil, and leaves
// conn open, when conn has no socket (TLS, a pipe) or the descriptor cannot
// be duplicated (no descriptor free): such a stream's steps run on
// goroutines of their own, whose writes may wait.
func detachSocket(conn net.Conn) *rawSocket {
	sc, ok := conn.(syscall.Conn)
	if !ok {
		return nil
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return nil
	}
	fd, dupErr := -1, error(nil)
	if err := rc.Control(func(s uintptr) { fd, dupErr = dupCloseOnExec(int(s)) }); err != nil || dupErr != nil {
		return nil
	}
	_ = conn.Close() // the socket stays open: fd refers to it
	return &rawSocket{fd: fd}
}

// dupCloseOnExec duplicates fd, closed on exec: the server starts
// processes (sandboxed commands), which must not inherit a client's socket.
// The fork lock keeps a fork from coming between the two calls.
func dupCloseOnExec(fd int) (int, error) {
	syscall.ForkLock.RLock()
	defer syscall.ForkLock.RUnlock()
	nfd, err := syscall.Dup(fd)
	if err != nil {
		return -1, err
	}
	syscall.CloseOnExec(nfd)
	return nfd, nil
}

// rawWriteHook, when set, is called after every write(2) to a raw socket
// (the fan-out benchmark notes the end of the server's last write; see
// export_test.go).
var rawWriteHook atomic.Pointer[func()]

// tryWrite writes as much of b as the socket takes now and returns how
// much that was; blocked says the socket's buffer is full (the client
// reads slower than the stream comes).
func (r *rawSocket) tryWrite(b []byte) (n int, blocked bool, err error) {
	for n < len(b) {
		m, err := r.send(b[n:])
		if h := rawWriteHook.Load(); h != nil {
			(*h)()
		}
		switch {
		case err == syscall.EINTR:
			continue
		case err == syscall.EAGAIN:
			return n, true, nil
		case err != nil:
			return n, false, err
		case m <= 0: // a socket takes at least a byte of a write it does not refuse
			return n, false, io.ErrShortWrite
		}
		n += m
	}
	return n, false, nil
}

// writeAll writes b whole, waiting for the socket to take it until
// deadline. The wait goes through a duplicate of the descriptor registered
// with the runtime's poller for the call (an *os.File): a waiting write
// parks its goroutine, not a thread, and the poll descriptor is the
// runtime's again once the call returns.
func (r *rawSocket) writeAll(b []byte, deadline time.Time) error {
	n, blocked, err := r.tryWrite(b)
	if err != nil || !blocked {
		return err
	}
	fd, err := dupCloseOnExec(r.fd)
	if err != nil {
		return err
	}
	f := os.NewFile(uintptr(fd), "event stream")
	defer f.Close()
	if err := f.SetWriteDeadline(deadline); err != nil {
		return err // not pollable: nothing can wait for it
	}
	_, err = f.Write(b[n:])
	return err
}

// left reports whether the client closed its end (see clientLeft), without
// waiting: a read finds the end, an error, or nothing yet (EAGAIN). The
// end of a client that left is already in the socket when a heartbeat
// asks, as the client's FIN came before.
func (r *rawSocket) left() bool {
	var b [1]byte
	for {
		n, err := syscall.Read(r.fd, b[:])
		switch {
		case err == syscall.EINTR:
			continue
		case err == syscall.EAGAIN:
			return false
		case err != nil:
			return true
		}
		return n == 0 // the end; a byte the client sent is dropped
	}
}

// close closes the socket; later calls fail with EBADF.
func (r *rawSocket) close() {
	if r.fd >= 0 {
		_ = syscall.Close(r.fd)
		r.fd = -1
	}
}
