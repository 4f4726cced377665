package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"
)

// events reads a session's event stream.
type events struct {
	body io.ReadCloser
	r    *bufio.Reader
	// seen, when set, gets every event's data and the time it was read.
	seen func(data []byte, read time.Time)
}

// openEvents opens the session's event stream.
func (s *server) openEvents(ctx context.Context, sessionID string) (*events, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.base+"/sessions/"+sessionID+"/events", nil)
	if err != nil {
		return nil, err
	}
	resp, err := s.hc.Do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return nil, fmt.Errorf("GET events: %s: %s", resp.Status, b)
	}
	return &events{body: resp.Body, r: bufio.NewReaderSize(resp.Body, 64<<10)}, nil
}

func (e *events) close() { e.body.Close() }

// done reads the stream up to the next done event and returns its run id
// and reason; only done events are decoded.
func (e *events) done() (runID, reason string, err error) {
	var typ string
	for {
		line, err := e.r.ReadSlice('\n')
		if err != nil {
			return "", "", err
		}
		switch {
		case len(line) == 1: // the blank line ending an event
			typ = ""
		case strings.HasPrefix(string(line), "event: "):
			typ = strings.TrimSpace(string(line[len("event: "):]))
		case e.seen != nil && strings.HasPrefix(string(line), "data: "):
			e.seen(line[len("data: "):], time.Now())
			if typ != "done" {
				continue
			}
			fallthrough
		case typ == "permission_request" && strings.HasPrefix(string(line), "data: "):
			return "", "", fmt.Errorf("a run asks for permission (the bench's settings should allow its tool): %s", line[len("data: "):])
		case typ == "done" && strings.HasPrefix(string(line), "data: "):
			var ev struct {
				RunID string `json:"run_id"`
				Done  struct {
					Reason string `json:"reason"`
					Error  string `json:"error"`
				} `json:"done"`
			}
			if err := json.Unmarshal(line[len("data: "):], &ev); err != nil {
				return "", "", fmt.Errorf("done event: %w", err)
			}
			if ev.Done.Error != "" {
				return ev.RunID, ev.Done.Reason + ": " + ev.Done.Error, nil
			}
			return ev.RunID, ev.Done.Reason, nil
		}
	}
}

// recorder counts the runs that end inside the measured window.
type recorder struct {
	from, to time.Time

	mu        sync.Mutex
	latencies []time.Duration
}

func (r *recorder) add(posted, ended time.Time) {
	if ended.Before(r.from) || ended.After(r.to) {
		return
	}
	r.mu.Lock()
	r.latencies = append(r.latencies, ended.Sub(posted))
	r.mu.Unlock()
}

// runsResult is what the runs part measured.
type runsResult struct {
	runs      int
	window    time.Duration
	p50, p99  time.Duration
	rss, hwm  int64
	serverCPU time.Duration // the server's CPU time in the window
	childCPU  time.Duration // its commands' (children it waited for)
	allCPU    time.Duration // the server's and every process it started (its cgroup), unless allErr
	allErr    error
	commands  string        // how the server runs commands (/ready)
	benchCPU  time.Duration // this program's (mock vendor and clients)
}

// measureRuns drives o.sessions workers against a fresh server for the
// warm-up and the measured window.
func measureRuns(ctx context.Context, o options, bin, dir, vendorURL string) (*runsResult, error) {
	srv, err := startServer(bin, dir, vendorURL, o.maxConcurrent)
	if err != nil {
		return nil, err
	}
	group, groupErr := newCPUGroup(srv.cmd.Process.Pid)
	defer func() {
		srv.stop()
		group.remove()
	}()
	ws, err := srv.workspace(ctx)
	if err != nil {
		return nil, err
	}
	start := time.Now()
	rec := &recorder{from: start.Add(o.warmup), to: start.Add(o.warmup + o.duration)}
	wctx, cancel := context.WithDeadline(ctx, rec.to)
	defer cancel()
	commands, err := srv.commands(ctx)
	if err != nil {
		return nil, err
	}
	var cpu, child, self, all [2]time.Duration
	var cpuErr [2]error
	var sampled sync.WaitGroup
	for i, at := range []time.Time{rec.from, rec.to} {
		sampled.Add(1)
		time.AfterFunc(time.Until(at), func() {
			defer sampled.Done()
			cpu[i], child[i], cpuErr[i] = srv.cpu()
			if group != nil && groupErr == nil {
				all[i], groupErr = group.usage()
			}
			self[i] = selfCPU()
		})
	}
	errc := make(chan error, o.sessions)
	for range o.sessions {
		go func() { errc <- worker(wctx, clients{post: srv, sse: srv}, ws, o.perSession, rec) }()
	}
	var failed error
	for range o.sessions {
		if err := <-errc; err != nil && wctx.Err() == nil && failed == nil {
			failed = err
			cancel() // one failure ends the measurement
		}
	}
	if failed != nil {
		return nil, fmt.Errorf("%w\nserver log:\n%s", failed, srv.log())
	}
	sampled.Wait()
	if err := errors.Join(cpuErr[:]...); err != nil {
		return nil, err
	}
	res := &runsResult{runs: len(rec.latencies), window: o.duration, serverCPU: cpu[1] - cpu[0],
		childCPU: child[1] - child[0], benchCPU: self[1] - self[0], commands: commands, allCPU: all[1] - all[0], allErr: groupErr}
	if res.runs == 0 {
		return nil, fmt.Errorf("no run ended within %s after the warm-up", o.duration)
	}
	slices.Sort(rec.latencies)
	res.p50 = rec.latencies[res.runs/2]
	res.p99 = rec.latencies[min(res.runs-1, res.runs*99/100)]
	if res.rss, res.hwm, err = srv.memory(); err != nil {
		return nil, err
	}
	return res, nil
}

// clients say where a worker creates sessions and posts (post) and where
// it reads their event streams (sse): the same server, or two API
// processes of the split. seen, when set, gets every event read.
type clients struct {
	post, sse *server
	seen      func(data []byte, read time.Time)
	// stuck, when set, is how long a run may take before the measurement
	// fails.
	stuck time.Duration
}

// worker posts runs to a session, each after the previous one's done
// event, and moves to a new session every perSession runs, until ctx ends.
func worker(ctx context.Context, c clients, ws string, perSession int, rec *recorder) error {
	for ctx.Err() == nil {
		sid, err := c.post.session(ctx, ws)
		if err != nil {
			return err
		}
		if err := runSession(ctx, c, sid, perSession, rec); err != nil {
			return err
		}
	}
	return nil
}

// runSession posts n runs to the session one after another.
func runSession(ctx context.Context, c clients, sid string, n int, rec *recorder) error {
	ev, err := c.sse.openEvents(ctx, sid)
	if err != nil {
		return err
	}
	defer ev.close()
	ev.seen = c.seen
	for range n {
		posted := time.Now()
		var timer *time.Timer
		if c.stuck > 0 {
			timer = time.AfterFunc(c.stuck, ev.close) // the read below fails
		}
		runID, err := c.post.message(ctx, sid, "What is in the project?")
		if err != nil {
			return err
		}
		got, reason, err := ev.done()
		if timer != nil && !timer.Stop() && ctx.Err() == nil {
			return fmt.Errorf("session %s: run %s: no done event within %s", sid, runID, c.stuck)
		}
		switch {
		case err != nil && ctx.Err() != nil:
			return nil
		case err != nil:
			return fmt.Errorf("session %s: reading events: %w", sid, err)
		case got != runID:
			return fmt.Errorf("session %s: done event of run %s while waiting for run %s", sid, got, runID)
		case reason != "completed":
			return fmt.Errorf("run %s ended %s, want completed", runID, reason)
		}
		rec.add(posted, time.Now())
	}
	return nil
}

func (r *runsResult) report(t *table, o options) {
	t.heading(fmt.Sprintf("runs: %d sessions at once, %d runs a session, one %s call and a reply each; %s counted after %s",
		o.sessions, o.perSession, o.tool, o.duration, o.warmup))
	t.row("server's commands (/ready)", r.commands)
	t.row("runs completed", fmt.Sprintf("%d", r.runs))
	t.row("runs per minute", fmt.Sprintf("%.0f", float64(r.runs)/r.window.Minutes()))
	t.row("server CPU a run (user + system)", ms(r.serverCPU/time.Duration(r.runs)))
	t.row("its commands' CPU a run (children it waited for)", ms(r.childCPU/time.Duration(r.runs)))
	if r.allErr != nil {
		t.row("server and all its processes' CPU a run (cgroup)", "not measured: "+r.allErr.Error())
	} else {
		t.row("server and all its processes' CPU a run (cgroup)", ms(r.allCPU/time.Duration(r.runs)))
	}
	t.row("this program's CPU a run (mock vendor, clients)", ms(r.benchCPU/time.Duration(r.runs)))
	t.row("latency p50 / p99 (POST → done read)", fmt.Sprintf("%s / %s", ms(r.p50), ms(r.p99)))
	t.row("server VmRSS / VmHWM after", fmt.Sprintf("%s / %s", mib(r.rss), mib(r.hwm)))
}

// selfCPU is the CPU time this program has used.
func selfCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
