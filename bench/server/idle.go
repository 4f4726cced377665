package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"time"
)

// idleResult is what the idle-clients part measured.
type idleResult struct {
	clients          int
	before, rss, hwm int64
	files            int
	runAlone         time.Duration // one run before the clients came
	run              time.Duration // one run while the clients listen
	after            int64         // VmRSS once the clients left and the server noticed
	anonBefore       int64         // RssAnon before the clients
	anonAfter        int64         // RssAnon once they left
	runAfter         time.Duration // one run after they left
}

// measureIdle connects o.clients idle SSE clients to a fresh server and
// reads its memory before and with them.
func measureIdle(ctx context.Context, o options, bin, dir, vendorURL string) (*idleResult, error) {
	srv, err := startServer(bin, dir, vendorURL, o.maxConcurrent)
	if err != nil {
		return nil, err
	}
	defer srv.stop()
	ws, err := srv.workspace(ctx)
	if err != nil {
		return nil, err
	}
	sessions := make([]string, o.sseSessions)
	for i := range sessions {
		if sessions[i], err = srv.session(ctx, ws); err != nil {
			return nil, err
		}
	}
	res := &idleResult{}
	// A first run warms the server up; the second is timed.
	for range 2 {
		if res.runAlone, err = timedRun(ctx, srv, sessions[0]); err != nil {
			return nil, fmt.Errorf("the run before the clients: %w", err)
		}
	}
	if res.before, _, err = srv.memory(); err != nil {
		return nil, err
	}
	if res.anonBefore, err = srv.anon(); err != nil {
		return nil, err
	}
	conns, err := dialIdle(ctx, srv.addr, sessions, o.clients, o.dialPool)
	closeAll := func() {
		for _, c := range conns {
			c.Close()
		}
		conns = nil
	}
	defer closeAll()
	if err != nil {
		return nil, fmt.Errorf("%d clients connected, then: %w\nserver log:\n%s", len(conns), err, srv.log())
	}
	res.clients = len(conns)
	if res.rss, res.hwm, err = srv.memory(); err != nil {
		return nil, err
	}
	res.files = srv.openFiles()
	// One run in a session that idle clients listen to.
	if res.run, err = timedRun(ctx, srv, sessions[0]); err != nil {
		return nil, fmt.Errorf("the run among idle clients: %w", err)
	}
	// The clients leave; the server notices at each stream's next
	// heartbeat.
	closeAll()
	time.Sleep(o.leaveWait)
	if res.after, _, err = srv.memory(); err != nil {
		return nil, err
	}
	if res.anonAfter, err = srv.anon(); err != nil {
		return nil, err
	}
	if res.runAfter, err = timedRun(ctx, srv, sessions[0]); err != nil {
		return nil, fmt.Errorf("the run after the clients left: %w", err)
	}
	return res, nil
}

// timedRun posts a message to session and times it to its done event, read
// on a stream of its own (opened before the post, so the time includes
// no connection set-up).
func timedRun(ctx context.Context, srv *server, session string) (time.Duration, error) {
	ev, err := srv.openEvents(ctx, session)
	if err != nil {
		return 0, err
	}
	defer ev.close()
	posted := time.Now()
	runID, err := srv.message(ctx, session, "What is in the project?")
	if err != nil {
		return 0, err
	}
	for {
		// The stream replays the session's earlier runs first.
		got, reason, err := ev.done()
		if err == nil && got != runID {
			continue
		}
		if err != nil || reason != "completed" {
			return 0, fmt.Errorf("run %s ended %q (%v), want completed", runID, reason, err)
		}
		return time.Since(posted), nil
	}
}

// dialIdle opens n event streams, round robin over the sessions, parallel
// at a time, and returns the connections once each has its answer's
// headers. The connections are then left alone: nothing reads them.
func dialIdle(ctx context.Context, addr string, sessions []string, n, parallel int) ([]net.Conn, error) {
	var (
		mu    sync.Mutex
		conns = make([]net.Conn, 0, n)
		first error
		wg    sync.WaitGroup
		next  = make(chan int)
	)
	for range parallel {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				c, err := dialStream(ctx, addr, sessions[i%len(sessions)])
				mu.Lock()
				if err != nil && first == nil {
					first = err
				}
				if c != nil {
					conns = append(conns, c)
				}
				mu.Unlock()
			}
		}()
	}
	for i := range n {
		mu.Lock()
		failed := first != nil
		mu.Unlock()
		if failed {
			break
		}
		next <- i
	}
	close(next)
	wg.Wait()
	return conns, first
}

// dialStream sends GET /sessions/{id}/events on a new connection and
// reads the answer's headers.
func dialStream(ctx context.Context, addr, sessionID string) (net.Conn, error) {
	d := net.Dialer{Timeout: 30 * time.Second}
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	_ = c.SetDeadline(time.Now().Add(30 * time.Second))
	req := "GET /sessions/" + sessionID + "/events HTTP/1.1\r\nHost: " + addr + "\r\nAccept: text/event-stream\r\n\r\n"
	if _, err := io.WriteString(c, req); err != nil {
		c.Close()
		return nil, err
	}
	br := bufio.NewReaderSize(c, 512)
	status, err := br.ReadString('\n')
	for err == nil {
		var h string
		if h, err = br.ReadString('\n'); h == "\r\n" {
			break
		}
	}
	if err != nil || !strings.HasPrefix(status, "HTTP/1.1 200") {
		c.Close()
		return nil, fmt.Errorf("GET events: %q: %v", strings.TrimSpace(status), err)
	}
	_ = c.SetDeadline(time.Time{})
	return c, nil
}

func (r *idleResult) report(t *table, o options) {
	t.heading(fmt.Sprintf("idle SSE clients: a fresh server, %d sessions", o.sseSessions))
	t.row("clients connected", fmt.Sprintf("%d", r.clients))
	t.row("server VmRSS before the clients", mib(r.before))
	t.row("server VmRSS / VmHWM with the clients", fmt.Sprintf("%s / %s", mib(r.rss), mib(r.hwm)))
	if r.clients > 0 {
		t.row("per client", fmt.Sprintf("%.1f KiB", float64(r.rss-r.before)/float64(r.clients)/1024))
	}
	t.row("server open files", fmt.Sprintf("%d", r.files))
	t.row("one run before they came (POST → done read)", ms(r.runAlone))
	t.row("one run while they listen", ms(r.run))
	t.row(fmt.Sprintf("server VmRSS %s after they left", o.leaveWait), mib(r.after))
	t.row("server RssAnon before / after (heap and stacks)", fmt.Sprintf("%s / %s", mib(r.anonBefore), mib(r.anonAfter)))
	t.row("one run after they left", ms(r.runAfter))
}
