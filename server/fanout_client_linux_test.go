package server_test

import (
	"bytes"
	"fmt"
	"net"
	"net/netip"
	"runtime"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// fanoutClients are n SSE clients of one session for BenchmarkFanout, as
// cheap as a client can be: raw non-blocking sockets outside the Go
// runtime's poller, read by one goroutine locked to its OS thread, which
// waits in epoll_wait and reads every ready socket into one buffer,
// counting frames (a frame ends with an empty line) — no goroutine, no
// buffer and no allocation per client. The benchmark sets how many frames
// each client must have (expect) and waits (wait) until all have them; the
// thread's own CPU time is the clients' share of the process's (cpu).
type fanoutClients struct {
	epfd   int
	fds    []int
	stop   [2]int // a pipe: a byte on it ends the reading thread
	target atomic.Int64
	done   chan []time.Time
	errc   chan error
	exited chan struct{}
	// threadCPU is the reading thread's CPU time (ns), as of its start
	// and of the end of every op.
	threadCPU atomic.Int64
}

func newFanoutClients(b *testing.B, host, sessionID, tok string, n int) *fanoutClients {
	b.Helper()
	ap, err := netip.ParseAddrPort(host)
	if err != nil {
		b.Fatal(err)
	}
	c := &fanoutClients{epfd: -1, done: make(chan []time.Time, 1), errc: make(chan error, 1), exited: make(chan struct{})}
	b.Cleanup(c.close)
	if c.epfd, err = syscall.EpollCreate1(syscall.EPOLL_CLOEXEC); err != nil {
		b.Fatal(err)
	}
	if err := syscall.Pipe2(c.stop[:], syscall.O_CLOEXEC); err != nil {
		b.Fatal(err)
	}
	req := []byte("GET /sessions/" + sessionID + "/events HTTP/1.1\r\nHost: " + host + "\r\nAuthorization: Bearer " + tok + "\r\nAccept: text/event-stream\r\n\r\n")
	sa := &syscall.SockaddrInet4{Port: int(ap.Port()), Addr: ap.Addr().As4()}
	for i := range n {
		fd, err := dialRaw(sa, req)
		if fd >= 0 {
			c.fds = append(c.fds, fd)
		}
		if err != nil {
			b.Fatalf("client %d: %v", i, err)
		}
		ev := syscall.EpollEvent{Events: syscall.EPOLLIN | syscall.EPOLLRDHUP, Fd: int32(i)}
		if err := syscall.EpollCtl(c.epfd, syscall.EPOLL_CTL_ADD, fd, &ev); err != nil {
			b.Fatal(err)
		}
	}
	ev := syscall.EpollEvent{Events: syscall.EPOLLIN, Fd: int32(n)}
	if err := syscall.EpollCtl(c.epfd, syscall.EPOLL_CTL_ADD, c.stop[0], &ev); err != nil {
		b.Fatal(err)
	}
	started := make(chan struct{})
	go c.read(started)
	<-started
	return c
}

// dialRaw connects a blocking socket, sends req, reads the answer's
// headers (a 200 with nothing after them) and makes the socket
// non-blocking.
func dialRaw(sa *syscall.SockaddrInet4, req []byte) (int, error) {
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return -1, err
	}
	tv := syscall.Timeval{Sec: 10}
	if err := syscall.SetsockoptTimeval(fd, syscall.SOL_SOCKET, syscall.SO_RCVTIMEO, &tv); err != nil {
		return fd, err
	}
	if err := syscall.Connect(fd, sa); err != nil {
		return fd, err
	}
	for rest := req; len(rest) > 0; {
		m, err := syscall.Write(fd, rest)
		if err != nil {
			return fd, err
		}
		rest = rest[m:]
	}
	var head []byte
	buf := make([]byte, 1024)
	for !bytes.Contains(head, []byte("\r\n\r\n")) {
		m, err := syscall.Read(fd, buf)
		if err != nil || m == 0 {
			return fd, fmt.Errorf("reading the answer's headers: %d bytes, %v", m, err)
		}
		head = append(head, buf[:m]...)
	}
	if status, rest, _ := bytes.Cut(head, []byte("\r\n\r\n")); !strings.HasPrefix(string(status), "HTTP/1.1 200") || len(rest) > 0 {
		return fd, fmt.Errorf("answer %q", head)
	}
	return fd, syscall.SetNonblock(fd, true)
}

// read is the reading thread: it counts each client's frames and, once
// every client has the target, sends their times to done.
func (c *fanoutClients) read(started chan<- struct{}) {
	defer close(c.exited)
	runtime.LockOSThread() // never unlocked: the thread ends with the goroutine
	c.threadCPU.Store(threadCPU())
	close(started)
	n := len(c.fds)
	buf := make([]byte, 64<<10)
	evs := make([]syscall.EpollEvent, 256)
	frames := make([]int64, n)
	nl := make([]bool, n) // the last byte read was a line break ending no frame
	reached := make([]int64, n)
	at := make([]time.Time, n)
	left := n
	fail := func(err error) {
		c.errc <- err
	}
	for {
		k, err := syscall.EpollWait(c.epfd, evs, -1)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			fail(err)
			return
		}
		target := c.target.Load()
		for _, ev := range evs[:k] {
			i := int(ev.Fd)
			if i == n {
				return
			}
			m, err := syscall.Read(c.fds[i], buf)
			if err == syscall.EAGAIN {
				continue
			}
			if err != nil || m == 0 {
				fail(fmt.Errorf("client %d: the stream ended (%v) after %d frames", i, err, frames[i]))
				return
			}
			var f int64
			f, nl[i] = countFrames(buf[:m], nl[i])
			frames[i] += f
			switch {
			case frames[i] > target:
				fail(fmt.Errorf("client %d: %d frames, want %d", i, frames[i], target))
				return
			case frames[i] == target && reached[i] < target:
				at[i], reached[i] = time.Now(), target
				if left--; left == 0 {
					c.threadCPU.Store(threadCPU())
					c.done <- at
					at = make([]time.Time, n)
					left = n
				}
			}
		}
	}
}

// countFrames counts the frames that end in b (an empty line: "\n\n");
// nl says the byte before b was a line break ending no frame, and the
// result whether b's last one is.
func countFrames(b []byte, nl bool) (int64, bool) {
	var frames int64
	for {
		j := bytes.IndexByte(b, '\n')
		if j < 0 {
			return frames, false
		}
		if j == 0 && nl {
			frames++
			nl = false
		} else {
			nl = true
		}
		b = b[j+1:]
	}
}

// expect sets how many frames every client must have for the next op.
func (c *fanoutClients) expect(frames int64) { c.target.Store(frames) }

// wait returns when every client has the frames expected, with the time
// each got its last.
func (c *fanoutClients) wait(b *testing.B) []time.Time {
	select {
	case at := <-c.done:
		return at
	case err := <-c.errc:
		b.Fatal(err)
	case <-time.After(time.Minute):
		b.Fatal("the clients did not get their frames within a minute")
	}
	return nil
}

// cpu is the reading thread's CPU time as of the end of the last op.
func (c *fanoutClients) cpu() time.Duration { return time.Duration(c.threadCPU.Load()) }

func (c *fanoutClients) close() {
	if c.stop[1] > 0 {
		_, _ = syscall.Write(c.stop[1], []byte{0})
		select {
		case <-c.exited:
		case <-c.errc:
		}
		syscall.Close(c.stop[0])
		syscall.Close(c.stop[1])
	}
	for _, fd := range c.fds {
		syscall.Close(fd)
	}
	if c.epfd >= 0 {
		syscall.Close(c.epfd)
	}
}

// threadCPU is the calling OS thread's CPU time in ns.
func threadCPU() int64 {
	const rusageThread = 1 // RUSAGE_THREAD
	var ru syscall.Rusage
	if err := syscall.Getrusage(rusageThread, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// writeTimeListener notes in last when the latest write(2) to one of its
// connections ended (unix ns), and counts the writes: a Write of the
// connection's is noted here, a parked stream's write to its raw socket
// through server.SetRawWriteHook(l.note) (the server detaches the socket
// through SyscallConn, which is the connection's).
type writeTimeListener struct {
	net.Listener
	last   atomic.Int64
	writes atomic.Int64
}

func (l *writeTimeListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &writeTimeConn{Conn: c, l: l}, nil
}

type writeTimeConn struct {
	net.Conn
	l *writeTimeListener
}

func (c *writeTimeConn) Write(p []byte) (int, error) {
	n, err := c.Conn.Write(p)
	c.l.note()
	return n, err
}

// SyscallConn is the connection's.
func (c *writeTimeConn) SyscallConn() (syscall.RawConn, error) {
	sc, ok := c.Conn.(syscall.Conn)
	if !ok {
		return nil, fmt.Errorf("%T has no SyscallConn", c.Conn)
	}
	return sc.SyscallConn()
}

// note counts a write and raises last to now.
func (l *writeTimeListener) note() {
	l.writes.Add(1)
	t := time.Now().UnixNano()
	for {
		old := l.last.Load()
		if t <= old || l.last.CompareAndSwap(old, t) {
			return
		}
	}
}
