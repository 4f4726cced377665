package server

import (
	"io"
	"net"
	"os"
	"os/signal"
	"syscall"
	"testing"
	"time"
)

// API-2, issue 30: the writer pool's send(2) raises no SIGPIPE at a client
// gone mid-stream (the write fails with an error the step ends the stream
// on), never waits even on a socket left in blocking mode, and a
// descriptor that is not a socket is written all the same.
func TestRawSocketSend_API2(t *testing.T) {
	t.Run("client gone", func(t *testing.T) {
		srv, cl := tcpPair(t)
		r := detachSocket(srv)
		if r == nil {
			t.Fatal("a TCP connection was not detached")
		}
		defer r.close()
		sig := make(chan os.Signal, 1)
		signal.Notify(sig, syscall.SIGPIPE)
		defer signal.Stop(sig)
		// The client resets the connection (no lingering): the next sends
		// fail, the second with EPIPE, which a write(2) signals.
		if err := cl.(*net.TCPConn).SetLinger(0); err != nil {
			t.Fatal(err)
		}
		cl.Close()
		var errs []error
		for range 1000 {
			if _, _, err := r.tryWrite([]byte(": ping\n\n")); err != nil {
				if errs = append(errs, err); len(errs) == 2 {
					break
				}
			}
			time.Sleep(time.Millisecond)
		}
		if len(errs) < 2 {
			t.Fatalf("sends to a reset connection failed %d times, want 2: %v", len(errs), errs)
		}
		select {
		case s := <-sig:
			t.Errorf("a send to a departed client raised %v (errors %v)", s, errs)
		case <-time.After(50 * time.Millisecond):
		}
	})
	t.Run("blocking descriptor", func(t *testing.T) {
		srv, _ := tcpPair(t)
		r := detachSocket(srv)
		if r == nil {
			t.Fatal("a TCP connection was not detached")
		}
		defer r.close()
		if err := syscall.SetNonblock(r.fd, false); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() {
			chunk := make([]byte, 64<<10)
			for total := 0; total < 256<<20; {
				n, blocked, err := r.tryWrite(chunk)
				if err != nil || blocked {
					done <- err
					return
				}
				total += n
			}
			done <- io.ErrShortWrite // 256 MiB taken by a client that reads nothing
		}()
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("filling a socket in blocking mode: %v, want it to say it is full", err)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("a send to a full socket in blocking mode waited") // the goroutine stays blocked: the test binary ends
		}
	})
	t.Run("not a socket", func(t *testing.T) {
		pr, pw, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		defer pr.Close()
		defer pw.Close()
		fd, err := dupCloseOnExec(int(pw.Fd()))
		if err != nil {
			t.Fatal(err)
		}
		r := &rawSocket{fd: fd}
		defer r.close()
		if n, blocked, err := r.tryWrite([]byte("data: x\n\n")); err != nil || blocked || n != 9 {
			t.Fatalf("a write to a pipe: %d, %v, %v", n, blocked, err)
		}
		got := make([]byte, 9)
		if _, err := io.ReadFull(pr, got); err != nil || string(got) != "data: x\n\n" {
			t.Fatalf("read %q, %v", got, err)
		}
	})
}
