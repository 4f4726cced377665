package server_test

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// fanoutClientEnv, set in a process's environment, makes the test binary
// the clients of BenchmarkFanout (runFanoutClients) instead of running
// tests: "host session token n".
const fanoutClientEnv = "REIN_BENCH_FANOUT_CLIENTS"

// fanoutClients are n SSE clients of one session for BenchmarkFanout, as
// cheap as a client can be, in a process of their own (the test binary
// started again, see runFanoutClients): raw non-blocking sockets read by
// one thread that waits in epoll_wait and reads every ready socket into
// one buffer, counting frames (a frame ends with an empty line) — no
// goroutine, no buffer and no allocation per client. The benchmark sets
// how many frames each client must have (expect) and waits (wait) until
// all have them; the clients' process's CPU time is reported apart (cpu).
//
// Issue 30: the reading thread used to be the benchmark's own, locked to
// its OS thread. Blocked in epoll_wait, it kept one of the server's
// GOMAXPROCS Ps in its system call, so the writer pool's second writer
// waited for a P most of an op while the first wrote every client (a Go
// execution trace: one writer running and the other runnable 56 % of the
// time, both running 37 %). A client in a process of its own shares the
// machine's cores with the server, as a client on the same machine does,
// but not the server's Ps.
type fanoutClients struct {
	cmd    *exec.Cmd
	in     io.WriteCloser // to the clients: a target (8 bytes) per op
	out    io.ReadCloser  // from the clients: an ack (1 byte) per target, then a result
	stderr bytes.Buffer
	n      int
	// cpuNS is the clients' process's CPU time (ns), as of the end of
	// the latest op.
	cpuNS  atomic.Int64
	result chan []time.Time
	errc   chan error
}

func newFanoutClients(b *testing.B, host, sessionID, tok string, n int) *fanoutClients {
	b.Helper()
	exe, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	c := &fanoutClients{n: n, result: make(chan []time.Time, 1), errc: make(chan error, 1)}
	c.cmd = exec.Command(exe, "-test.run=^$")
	c.cmd.Env = append(os.Environ(), fanoutClientEnv+"="+strings.Join([]string{host, sessionID, tok, strconv.Itoa(n)}, " "))
	c.cmd.Stderr = &c.stderr
	if c.in, err = c.cmd.StdinPipe(); err != nil {
		b.Fatal(err)
	}
	if c.out, err = c.cmd.StdoutPipe(); err != nil {
		b.Fatal(err)
	}
	if err := c.cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(c.close)
	var cpu [8]byte // the clients are connected: their CPU time so far
	if _, err := io.ReadFull(c.out, cpu[:]); err != nil {
		b.Fatalf("the clients did not start: %v: %s", err, c.stderr.Bytes())
	}
	c.cpuNS.Store(int64(binary.LittleEndian.Uint64(cpu[:])))
	return c
}

// expect sets how many frames every client must have for the next op; it
// returns once the clients know, and reads their result in the background.
func (c *fanoutClients) expect(b *testing.B, frames int64) {
	var msg [8]byte
	binary.LittleEndian.PutUint64(msg[:], uint64(frames))
	if _, err := c.in.Write(msg[:]); err != nil {
		b.Fatalf("the clients: %v: %s", err, c.stderr.Bytes())
	}
	if _, err := io.ReadFull(c.out, msg[:1]); err != nil {
		b.Fatalf("the clients: %v: %s", err, c.stderr.Bytes())
	}
	go c.readResult()
}

// readResult reads an op's result: the clients' CPU time, then when each
// client got its last frame (unix ns).
func (c *fanoutClients) readResult() {
	buf := make([]byte, 8*(1+c.n))
	if _, err := io.ReadFull(c.out, buf); err != nil {
		c.errc <- err
		return
	}
	c.cpuNS.Store(int64(binary.LittleEndian.Uint64(buf)))
	at := make([]time.Time, c.n)
	for i := range at {
		at[i] = time.Unix(0, int64(binary.LittleEndian.Uint64(buf[8*(i+1):])))
	}
	c.result <- at
}

// wait returns when every client has the frames expected, with the time
// each got its last.
func (c *fanoutClients) wait(b *testing.B) []time.Time {
	select {
	case at := <-c.result:
		return at
	case err := <-c.errc:
		b.Fatalf("the clients: %v: %s", err, c.stderr.Bytes())
	case <-time.After(time.Minute):
		b.Fatal("the clients did not get their frames within a minute")
	}
	return nil
}

// cpu is the clients' process's CPU time as of the end of the last op.
func (c *fanoutClients) cpu() time.Duration { return time.Duration(c.cpuNS.Load()) }

// close ends the clients' process (its stdin's end) and waits for it.
func (c *fanoutClients) close() {
	c.in.Close()
	done := make(chan struct{})
	go func() {
		_ = c.cmd.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		_ = c.cmd.Process.Kill()
		<-done
	}
}

// runFanoutClients is the clients' process's main when fanoutClientEnv is
// set (see fanoutClients): it connects the clients, writes its CPU time to
// stdout, then for every target read from stdin acks it (a byte), reads
// the clients' sockets until each has that many frames, and writes its CPU
// time and the time each client got its last frame, until stdin ends; ok
// false: the process is the tests'.
func runFanoutClients() (code int, ok bool) {
	spec := os.Getenv(fanoutClientEnv)
	if spec == "" {
		return 0, false
	}
	if err := fanoutClientsMain(spec); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1, true
	}
	return 0, true
}

func fanoutClientsMain(spec string) error {
	runtime.LockOSThread()
	f := strings.Fields(spec)
	if len(f) != 4 {
		return fmt.Errorf("%s: want host, session, token and n: %q", fanoutClientEnv, spec)
	}
	host, sessionID, tok := f[0], f[1], f[2]
	n, err := strconv.Atoi(f[3])
	if err != nil {
		return err
	}
	ap, err := netip.ParseAddrPort(host)
	if err != nil {
		return err
	}
	epfd, err := syscall.EpollCreate1(syscall.EPOLL_CLOEXEC)
	if err != nil {
		return err
	}
	req := []byte("GET /sessions/" + sessionID + "/events HTTP/1.1\r\nHost: " + host + "\r\nAuthorization: Bearer " + tok + "\r\nAccept: text/event-stream\r\n\r\n")
	sa := &syscall.SockaddrInet4{Port: int(ap.Port()), Addr: ap.Addr().As4()}
	fds := make([]int, 0, n)
	for i := range n {
		fd, err := dialRaw(sa, req)
		if err != nil {
			return fmt.Errorf("client %d: %v", i, err)
		}
		fds = append(fds, fd)
		ev := syscall.EpollEvent{Events: syscall.EPOLLIN | syscall.EPOLLRDHUP, Fd: int32(i)}
		if err := syscall.EpollCtl(epfd, syscall.EPOLL_CTL_ADD, fd, &ev); err != nil {
			return err
		}
	}
	const stdin, stdout = 0, 1
	ev := syscall.EpollEvent{Events: syscall.EPOLLIN, Fd: int32(n)}
	if err := syscall.EpollCtl(epfd, syscall.EPOLL_CTL_ADD, stdin, &ev); err != nil {
		return err
	}
	out := make([]byte, 8*(1+n))
	writeOut := func(b []byte) error {
		for len(b) > 0 {
			m, err := syscall.Write(stdout, b)
			if err == syscall.EINTR {
				continue
			}
			if err != nil {
				return err
			}
			b = b[m:]
		}
		return nil
	}
	binary.LittleEndian.PutUint64(out, uint64(processCPUNS()))
	if err := writeOut(out[:8]); err != nil {
		return err
	}
	buf := make([]byte, 64<<10)
	evs := make([]syscall.EpollEvent, 256)
	frames := make([]int64, n)
	nl := make([]bool, n) // the last byte read was a line break ending no frame
	reached := make([]int64, n)
	at := make([]int64, n)
	left := n
	var target int64
	for {
		k, err := syscall.EpollWait(epfd, evs, -1)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return err
		}
		for _, ev := range evs[:k] {
			i := int(ev.Fd)
			if i == n { // a new target, or the end
				var msg [8]byte
				m, err := syscall.Read(stdin, msg[:])
				switch {
				case m == 0:
					return nil
				case err != nil || m != len(msg):
					return fmt.Errorf("reading a target: %d bytes, %v", m, err)
				}
				target, left = int64(binary.LittleEndian.Uint64(msg[:])), n
				if err := writeOut(msg[:1]); err != nil {
					return err
				}
				continue
			}
			m, err := syscall.Read(fds[i], buf)
			if err == syscall.EAGAIN {
				continue
			}
			if err != nil || m == 0 {
				return fmt.Errorf("client %d: the stream ended (%v) after %d frames", i, err, frames[i])
			}
			var f int64
			f, nl[i] = countFrames(buf[:m], nl[i])
			frames[i] += f
			switch {
			case frames[i] > target:
				return fmt.Errorf("client %d: %d frames, want %d", i, frames[i], target)
			case frames[i] == target && reached[i] < target:
				at[i], reached[i] = time.Now().UnixNano(), target
				if left--; left == 0 {
					binary.LittleEndian.PutUint64(out, uint64(processCPUNS()))
					for j, t := range at {
						binary.LittleEndian.PutUint64(out[8*(j+1):], uint64(t))
					}
					if err := writeOut(out); err != nil {
						return err
					}
				}
			}
		}
	}
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
	// A signal (the Go runtime's preemption) interrupts a call on a socket
	// with a timeout even with SA_RESTART: such calls are made again.
	for err := syscall.Connect(fd, sa); err != nil; err = syscall.Connect(fd, sa) {
		if err == syscall.EISCONN {
			break
		}
		if err != syscall.EINTR && err != syscall.EALREADY {
			return fd, err
		}
		time.Sleep(time.Millisecond) // an interrupted connect goes on: wait for it
	}
	for rest := req; len(rest) > 0; {
		m, err := syscall.Write(fd, rest)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return fd, err
		}
		rest = rest[m:]
	}
	var head []byte
	buf := make([]byte, 1024)
	for !bytes.Contains(head, []byte("\r\n\r\n")) {
		m, err := syscall.Read(fd, buf)
		if err == syscall.EINTR {
			continue
		}
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

// processCPUNS is this process's CPU time in ns.
func processCPUNS() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
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
