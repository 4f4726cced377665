package main

// The harness of the `rein serve` end-to-end tests: the binary built once
// per package run, the mock vendor with requests that can be held, the
// server process with its log, JSON calls and an SSE reader.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/reinhq/rein/agent"
	"github.com/reinhq/rein/api"
	"github.com/reinhq/rein/llm/llmtest/mockserver"
)

// guard bounds every wait of these tests: reaching it is a failure, never
// a measurement.
const guard = 45 * time.Second

// builtRein is the binary the serve tests share, built by the first one.
var builtRein struct {
	once      sync.Once
	dir, path string
}

func TestMain(m *testing.M) {
	code := m.Run()
	if builtRein.dir != "" {
		os.RemoveAll(builtRein.dir)
	}
	os.Exit(code)
}

// reinBinary builds the rein binary once per package run.
func reinBinary(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the binary and runs rein serve; skipped in short mode")
	}
	builtRein.once.Do(func() {
		dir, err := os.MkdirTemp("", "rein-serve-e2e-")
		if err != nil {
			t.Fatal(err)
		}
		builtRein.dir = dir
		builtRein.path = buildRein(t, dir)
	})
	if builtRein.path == "" {
		t.Fatal("the rein binary could not be built (see the first test that tried)")
	}
	return builtRein.path
}

// vendor is the mock vendor server with a gate in front: a model request
// can be held until the test releases it or the client goes away.
type vendor struct {
	*mockserver.Server
	URL string

	mu    sync.Mutex
	n     int
	holds map[int]*held
}

// held is one model request a test holds.
type held struct {
	arrived chan struct{} // closed when the request arrives
	release chan struct{} // closed by let
	once    sync.Once
}

// let lets the held request through.
func (h *held) let() { h.once.Do(func() { close(h.release) }) }

// wait waits for the held request to arrive.
func (h *held) wait(t *testing.T) {
	t.Helper()
	select {
	case <-h.arrived:
	case <-time.After(guard):
		t.Fatalf("the held model request did not arrive within %s", guard)
	}
}

// newVendor starts the mock vendor on 127.0.0.1, requiring fakeKey.
func newVendor(t *testing.T) *vendor {
	t.Helper()
	v := &vendor{Server: mockserver.NewUnstarted(), holds: map[int]*held{}}
	v.APIKey = fakeKey
	ts := httptest.NewServer(http.HandlerFunc(v.serveHTTP))
	t.Cleanup(func() {
		v.mu.Lock()
		for _, h := range v.holds {
			h.let()
		}
		v.mu.Unlock()
		ts.CloseClientConnections()
		ts.Close()
	})
	v.URL = ts.URL
	return v
}

// hold holds the n-th model request (from 1) until its release is closed.
func (v *vendor) hold(n int) *held {
	v.mu.Lock()
	defer v.mu.Unlock()
	h := &held{arrived: make(chan struct{}), release: make(chan struct{})}
	v.holds[n] = h
	return h
}

func (v *vendor) serveHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodPost {
		v.mu.Lock()
		v.n++
		h := v.holds[v.n]
		v.mu.Unlock()
		if h != nil {
			// Read the body first: only then does net/http watch the
			// connection and cancel the request when rein goes away.
			body, err := io.ReadAll(r.Body)
			if err != nil {
				return
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
			close(h.arrived)
			select {
			case <-h.release:
			case <-r.Context().Done():
				return // rein went away (killed, or the run was cancelled)
			}
		}
	}
	v.Handler().ServeHTTP(w, r)
}

// instance is the environment of one rein server: its HOME, data
// directory and project root survive restarts.
type instance struct {
	t                     *testing.T
	bin, home, data, root string
	project               string // a project directory under root
	vendorURL             string
	args                  []string // extra flags of rein serve
}

// newInstance makes a fresh HOME, data directory and a project under a
// root holding one file.
func newInstance(t *testing.T, v *vendor, args ...string) *instance {
	t.Helper()
	in := &instance{t: t, bin: reinBinary(t), home: t.TempDir(), data: t.TempDir(), root: t.TempDir(),
		vendorURL: v.URL, args: args}
	in.project = filepath.Join(in.root, "project")
	if err := os.MkdirAll(in.project, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(in.project, "notes.txt"), []byte("hello from the project\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return in
}

// served is one running rein process (rein serve, rein worker, rein mcp
// serve --http).
type served struct {
	t    *testing.T
	cmd  *exec.Cmd
	name string // rein serve, rein worker: for messages
	base string // http://127.0.0.1:PORT (with the path logged); empty for a worker

	mu      sync.Mutex
	lines   []string
	changed chan struct{} // closed and replaced on every new stderr line
	exited  chan struct{} // closed when the process has exited
	state   *os.ProcessState
}

// start starts rein serve on a free loopback port and waits until it
// listens.
func (in *instance) start() *served {
	in.t.Helper()
	args := append([]string{"serve", "--addr", "127.0.0.1:0", "--root", in.root, "--data-dir", in.data}, in.args...)
	return in.launch(args, "rein: serving on http://")
}

// startWorker starts rein worker with args (the store and queue flags;
// it takes no --addr or --root) and a data directory of its own, and
// waits until it works.
func (in *instance) startWorker(args ...string) *served {
	in.t.Helper()
	return in.launch(append([]string{"worker", "--data-dir", in.t.TempDir()}, args...), "rein: working (")
}

// launch runs the rein binary with args in the instance's environment
// and waits for the stderr line holding ready (see startServed).
func (in *instance) launch(args []string, ready string) *served {
	in.t.Helper()
	cmd := exec.Command(in.bin, args...)
	cmd.Dir = in.project
	cmd.Env = []string{"HOME=" + in.home, "PATH=" + os.Getenv("PATH"),
		"ANTHROPIC_API_KEY=" + fakeKey, "ANTHROPIC_BASE_URL=" + in.vendorURL}
	return startServed(in.t, cmd, "rein "+args[0], ready)
}

// startServed starts cmd (a rein process, called name in messages) and
// waits for the stderr line holding ready; a line naming an http://
// address sets the process's base URL. The process is killed when the
// test ends, its stderr logged when the test failed.
func startServed(t *testing.T, cmd *exec.Cmd, name, ready string) *served {
	t.Helper()
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	s := &served{t: t, cmd: cmd, name: name, changed: make(chan struct{}), exited: make(chan struct{})}
	if err := cmd.Start(); err != nil {
		t.Fatalf("%s: %v", s.name, err)
	}
	go s.readLog(stderr)
	t.Cleanup(func() {
		s.kill()
		if t.Failed() {
			t.Logf("%s (%s, pid %d) stderr:\n%s", s.name, s.base, cmd.Process.Pid, s.log())
		}
	})
	line := s.waitLog(ready)
	if i := strings.Index(line, "http://"); i >= 0 {
		addr := strings.TrimPrefix(line[i:], "http://")
		if i := strings.IndexByte(addr, ' '); i >= 0 {
			addr = addr[:i]
		}
		s.base = "http://" + addr
	}
	return s
}

// readLog collects the server's stderr, then waits for the process.
func (s *served) readLog(r io.Reader) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	for sc.Scan() {
		s.mu.Lock()
		s.lines = append(s.lines, sc.Text())
		close(s.changed)
		s.changed = make(chan struct{})
		s.mu.Unlock()
	}
	s.cmd.Wait()
	s.mu.Lock()
	s.state = s.cmd.ProcessState
	s.mu.Unlock()
	close(s.exited)
}

// log returns the server's stderr so far.
func (s *served) log() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return strings.Join(s.lines, "\n")
}

// waitLog waits for a stderr line holding substr and returns it.
func (s *served) waitLog(substr string) string {
	s.t.Helper()
	deadline := time.After(guard)
	for seen := 0; ; {
		s.mu.Lock()
		lines, changed := s.lines, s.changed
		s.mu.Unlock()
		for ; seen < len(lines); seen++ {
			if strings.Contains(lines[seen], substr) {
				return lines[seen]
			}
		}
		select {
		case <-changed:
		case <-s.exited:
			s.mu.Lock()
			n := len(s.lines)
			s.mu.Unlock()
			if n == seen {
				s.t.Fatalf("%s exited (%v) before logging %q:\n%s", s.name, s.state, substr, s.log())
			}
		case <-deadline:
			s.t.Fatalf("%s did not log %q within %s:\n%s", s.name, substr, guard, s.log())
		}
	}
}

// signal sends sig to the process.
func (s *served) signal(sig syscall.Signal) {
	s.t.Helper()
	if err := s.cmd.Process.Signal(sig); err != nil {
		s.t.Fatalf("signal %v: %v", sig, err)
	}
}

// wait waits for the server to exit and returns its state.
func (s *served) wait() *os.ProcessState {
	s.t.Helper()
	select {
	case <-s.exited:
	case <-time.After(guard):
		s.t.Fatalf("%s did not exit within %s:\n%s", s.name, guard, s.log())
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.state
}

// kill ends the server, if it still runs, with SIGKILL.
func (s *served) kill() {
	select {
	case <-s.exited:
		return
	default:
	}
	_ = s.cmd.Process.Kill()
	<-s.exited
}

// call sends a JSON request and decodes the answer into out (when not
// nil); it returns the status and the raw answer.
func (s *served) call(method, path string, body, out any) (int, []byte) {
	s.t.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			s.t.Fatal(err)
		}
		rd = bytes.NewReader(b)
	}
	ctx, cancel := context.WithTimeout(context.Background(), guard)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, s.base+path, rd)
	if err != nil {
		s.t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		s.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		s.t.Fatalf("%s %s: read the answer: %v", method, path, err)
	}
	if out != nil && resp.StatusCode < 300 {
		if err := json.Unmarshal(raw, out); err != nil {
			s.t.Fatalf("%s %s: %v in %s", method, path, err, raw)
		}
	}
	return resp.StatusCode, raw
}

// must is call that fails the test unless the status is want.
func (s *served) must(want int, method, path string, body, out any) []byte {
	s.t.Helper()
	code, raw := s.call(method, path, body, out)
	if code != want {
		s.t.Fatalf("%s %s: status %d, want %d: %s", method, path, code, want, raw)
	}
	return raw
}

// session opens a project workspace and a session in it.
func (s *served) session(dir string) string {
	s.t.Helper()
	var ws api.Workspace
	s.must(http.StatusCreated, http.MethodPost, "/workspaces", map[string]string{"kind": "project", "dir": dir}, &ws)
	var sess api.Session
	s.must(http.StatusCreated, http.MethodPost, "/sessions", map[string]string{"workspace_id": ws.ID}, &sess)
	return sess.ID
}

// post posts a message and returns its run id.
func (s *served) post(sessionID string, msg map[string]any) string {
	s.t.Helper()
	var acc api.Accepted
	s.must(http.StatusAccepted, http.MethodPost, "/sessions/"+sessionID+"/messages", msg, &acc)
	if acc.RunID == "" || acc.Status != "queued" {
		s.t.Fatalf("POST message answered %+v", acc)
	}
	return acc.RunID
}

// run gets a run.
func (s *served) run(id string) api.Run {
	s.t.Helper()
	var r api.Run
	s.must(http.StatusOK, http.MethodGet, "/runs/"+id, nil, &r)
	return r
}

// finalRun waits for a run to reach a final state and returns it. A run's
// done event is published before its final state is stored, so a client
// that saw done may still read running for a moment.
func (s *served) finalRun(id string) api.Run {
	s.t.Helper()
	deadline := time.Now().Add(guard)
	for {
		r := s.run(id)
		switch r.Status {
		case "completed", "failed", "cancelled", "interrupted":
			return r
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("run %s still %s after %s", id, r.Status, guard)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// sseEvent is one event of a session's stream.
type sseEvent struct {
	ID   int64
	Type string // the SSE event field
	Data string
	Ev   agent.Event // Data decoded
}

func (e sseEvent) String() string { return fmt.Sprintf("%d %s", e.ID, e.Type) }

// readSSE parses a text/event-stream from r, handing each event to send,
// until r ends, a frame does not parse or send returns false.
func readSSE(r *bufio.Reader, send func(sseEvent) bool) error {
	var ev sseEvent
	var fields int
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return err
		}
		line = strings.TrimRight(line, "\r\n")
		switch {
		case line == "":
			if fields > 0 {
				if err := json.Unmarshal([]byte(ev.Data), &ev.Ev); err != nil {
					return fmt.Errorf("event %d: data %q: %w", ev.ID, ev.Data, err)
				}
				if !complete(ev.Ev) {
					return fmt.Errorf("event %d: %s without its %s field: %s", ev.ID, ev.Ev.Type, ev.Ev.Type, ev.Data)
				}
				if !send(ev) {
					return errors.New("stopped")
				}
			}
			ev, fields = sseEvent{}, 0
		case strings.HasPrefix(line, ":"): // a comment: heartbeat
		case strings.HasPrefix(line, "id: "):
			id, err := strconv.ParseInt(strings.TrimPrefix(line, "id: "), 10, 64)
			if err != nil {
				return fmt.Errorf("id line %q: %w", line, err)
			}
			ev.ID, fields = id, fields+1
		case strings.HasPrefix(line, "event: "):
			ev.Type, fields = strings.TrimPrefix(line, "event: "), fields+1
		case strings.HasPrefix(line, "data: "):
			ev.Data, fields = strings.TrimPrefix(line, "data: "), fields+1
		default:
			return fmt.Errorf("unexpected line %q", line)
		}
	}
}

// complete reports whether an event carries the field its type needs (the
// tests read those fields without checking).
func complete(e agent.Event) bool {
	switch e.Type {
	case agent.EventToolStart, agent.EventToolEnd:
		return e.Tool != nil
	case agent.EventPermissionRequest, agent.EventPermissionDecision:
		return e.Permission != nil
	case agent.EventDone:
		return e.Done != nil
	case agent.EventMessage:
		return e.Message != nil
	}
	return true
}

// stream is a session's event stream being read.
type stream struct {
	t      *testing.T
	events chan sseEvent
	ended  chan struct{}
	err    error // why reading ended, once ended is closed
	quit   chan struct{}
	once   sync.Once
	source func() // ends the source
}

// newStream reads SSE from r in the background; source ends r.
func newStream(t *testing.T, r io.Reader, source func()) *stream {
	st := &stream{t: t, events: make(chan sseEvent, 1024), ended: make(chan struct{}), quit: make(chan struct{}), source: source}
	go func() {
		st.err = readSSE(bufio.NewReader(r), func(ev sseEvent) bool {
			select {
			case st.events <- ev:
				return true
			case <-st.quit:
				return false
			}
		})
		close(st.ended)
	}()
	t.Cleanup(st.stop)
	return st
}

// stop ends the stream and waits for its reader.
func (st *stream) stop() {
	st.once.Do(func() {
		close(st.quit)
		st.source()
		<-st.ended
	})
}

// events opens /sessions/{id}/events with Go's client, after the event
// id after (0: from the start) sent as Last-Event-ID.
func (s *served) events(sessionID string, after int64) *stream {
	s.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.base+"/sessions/"+sessionID+"/events", nil)
	if err != nil {
		s.t.Fatal(err)
	}
	if after > 0 {
		req.Header.Set("Last-Event-ID", strconv.FormatInt(after, 10))
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		cancel()
		s.t.Fatalf("GET events: %v", err)
	}
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		cancel()
		s.t.Fatalf("GET events: %s %s: %s", resp.Status, resp.Header.Get("Content-Type"), b)
	}
	return newStream(s.t, resp.Body, func() {
		cancel()
		resp.Body.Close()
	})
}

// until reads events until one satisfies done and returns them all, that
// one included.
func (st *stream) until(what string, done func(sseEvent) bool) []sseEvent {
	st.t.Helper()
	var got []sseEvent
	deadline := time.After(guard)
	for {
		select {
		case ev := <-st.events:
			got = append(got, ev)
			if done(ev) {
				return got
			}
		case <-st.ended:
			select {
			case ev := <-st.events: // drain what was read before the end
				got = append(got, ev)
				if done(ev) {
					return got
				}
				continue
			default:
			}
			st.t.Fatalf("the event stream ended (%v) before %s; got %v", st.err, what, got)
		case <-deadline:
			st.t.Fatalf("no %s within %s; got %v", what, guard, got)
		}
	}
}

// doneOf matches the done event of a run.
func doneOf(runID string) func(sseEvent) bool {
	return func(e sseEvent) bool { return e.Type == string(agent.EventDone) && e.Ev.RunID == runID }
}

// checkFrames checks what every event must satisfy: ids increase, all
// above after, and the data is the event the frame names, of the session.
func checkFrames(t *testing.T, sessionID string, after int64, evs []sseEvent) {
	t.Helper()
	last := after
	for _, e := range evs {
		if e.ID <= last {
			t.Errorf("event %v after id %d: ids must increase (no duplicate, no reordering): %v", e, last, evs)
		}
		last = e.ID
		if string(e.Ev.Type) != e.Type || e.Ev.SessionID != sessionID {
			t.Errorf("event %v carries %s of session %q", e, e.Ev.Type, e.Ev.SessionID)
		}
	}
}

// ids lists the events' ids.
func ids(evs []sseEvent) []int64 {
	out := make([]int64, len(evs))
	for i, e := range evs {
		out[i] = e.ID
	}
	return out
}
