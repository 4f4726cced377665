package main

// End-to-end tests of `rein serve` (SPEC API-1, API-2, API-5): the built
// binary on a free loopback port with a fresh HOME and data directory,
// driven by real clients (curl, redocly; a browser in
// serve_browser_test.go) against the mock vendor.

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/reinhq/rein/agent"
	"github.com/reinhq/rein/api"
	"github.com/reinhq/rein/llm"
	"github.com/reinhq/rein/llm/llmtest/mockserver"
	"github.com/reinhq/rein/session/postgres/pgtest"
)

// listTurns script a run with one read-only tool call (allowed without
// asking) and a text reply.
var listTurns = []mockserver.Turn{
	{Text: "Listing the project.", ToolCalls: []mockserver.ToolCall{{ID: "call_1", Name: "list_dir", Input: `{"path":"."}`}}},
	{Text: "The project holds notes.txt."},
}

// curlEvents reads /sessions/{id}/events with the curl binary (-N: no
// buffering), after the event id after sent as Last-Event-ID, once curl
// has the answer's headers.
func (s *served) curlEvents(curl, sessionID string, after int64) *stream {
	s.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	args := []string{"-sS", "-N", "-i", s.base + "/sessions/" + sessionID + "/events"}
	if after > 0 {
		args = append(args, "-H", "Last-Event-ID: "+strconv.FormatInt(after, 10))
	}
	cmd := exec.CommandContext(ctx, curl, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		s.t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		s.t.Fatalf("curl: %v", err)
	}
	stop := func() {
		cancel()
		_ = cmd.Wait()
	}
	giveUp := time.AfterFunc(guard, cancel)
	br := bufio.NewReader(out)
	status, err := br.ReadString('\n')
	for err == nil {
		var h string
		if h, err = br.ReadString('\n'); strings.TrimSpace(h) == "" {
			break
		}
		if k, v, _ := strings.Cut(h, ":"); strings.EqualFold(k, "Content-Type") && !strings.Contains(v, "text/event-stream") {
			err = errors.New("content type " + strings.TrimSpace(v))
		}
	}
	giveUp.Stop()
	if err != nil || !strings.Contains(status, " 200") {
		stop()
		s.t.Fatalf("curl %s: status %q: %v; stderr: %s", strings.Join(args, " "), status, err, stderr.String())
	}
	return newStream(s.t, br, stop)
}

// API-2: curl reads a session's events while a run with a tool call goes
// on — run_start … tool_start, tool_end … done, ids increasing — and a
// reconnect with Last-Event-ID: N gets exactly the events after N, for a
// durable N and a delta N alike.
func TestServeEventsCurl_API2(t *testing.T) {
	curl, err := exec.LookPath("curl")
	if err != nil {
		t.Skip("curl is not installed: this test reads the event stream with the real curl binary (apt-get install curl)")
	}
	v := newVendor(t)
	v.Enqueue(listTurns...)
	in := newInstance(t, v)
	s := in.start()
	sid := s.session(in.project)

	st := s.curlEvents(curl, sid, 0)
	runID := s.post(sid, map[string]any{"text": "What is in the project?"})
	all := st.until("the run's done event", doneOf(runID))
	st.stop()
	checkFrames(t, sid, 0, all)

	var outline []string
	var final strings.Builder
	var toolStart, delta int64
	for _, e := range all {
		if e.Ev.RunID != runID {
			t.Errorf("event %v of run %q, want %s", e, e.Ev.RunID, runID)
		}
		switch e.Ev.Type {
		case agent.EventRunStart, agent.EventMessage, agent.EventToolStart, agent.EventToolEnd, agent.EventDone:
			outline = append(outline, e.Type)
		}
		switch e.Ev.Type {
		case agent.EventToolStart:
			toolStart = e.ID
		case agent.EventToolEnd:
			if e.Ev.Tool.Outcome != "ok" || !strings.Contains(e.Ev.Tool.Output, "notes.txt") {
				t.Errorf("tool_end %+v, want list_dir ok listing notes.txt", e.Ev.Tool)
			}
		case agent.EventTextDelta:
			if e.Ev.Turn == 2 {
				final.WriteString(e.Ev.Text)
				if delta == 0 {
					delta = e.ID
				}
			}
		case agent.EventDone:
			if e.Ev.Done.Reason != agent.ReasonCompleted {
				t.Errorf("done %+v, want completed", e.Ev.Done)
			}
		}
	}
	want := []string{"run_start", "message", "message", "tool_start", "tool_end", "message", "message", "done"}
	if d := cmp.Diff(want, outline); d != "" {
		t.Fatalf("the run's outline (-want +got):\n%s\nevents: %v", d, all)
	}
	if final.String() != "The project holds notes.txt." {
		t.Errorf("the reply's deltas spell %q", final.String())
	}
	if toolStart == 0 || delta == 0 {
		t.Fatalf("no tool_start or no delta of the reply in %v", all)
	}

	for _, n := range []int64{toolStart, delta} {
		st := s.curlEvents(curl, sid, n)
		got := st.until("the run's done event after a reconnect", doneOf(runID))
		st.stop()
		var after []sseEvent
		for _, e := range all {
			if e.ID > n {
				after = append(after, e)
			}
		}
		if d := cmp.Diff(ids(after), ids(got)); d != "" {
			t.Errorf("reconnect with Last-Event-ID: %d (-want +got):\n%s", n, d)
		}
	}
}

// API-5, SESS-2: a server killed with SIGKILL while a run waits — for the
// model, or inside a tool call — loses nothing it acknowledged. After a
// restart on the same data directory the run that was running is
// interrupted and its session healed (an interrupted tool call gets its
// result); the runs queued behind it (202 before the kill) run in order
// and complete; the session loads, exports and takes a new run; and the
// Last-Event-ID from before the crash resumes the stream.
func TestServeCrashRecovery_API5(t *testing.T) {
	t.Run("held in a model call", func(t *testing.T) { crashWhileRunning(t, false) })
	t.Run("held in a tool call", func(t *testing.T) { crashWhileRunning(t, true) })
}

// API-5 on PostgreSQL (issue 13): the same kill -9 and restart with the
// sessions, runs and events in a real PostgreSQL (--database-url) instead
// of SQLite; the store is the truth across the crash.
func TestServeCrashRecoveryPostgres_API5(t *testing.T) {
	url, _ := pgtest.Schema(t)
	args := []string{"--database-url", url}
	if r := os.Getenv("REIN_TEST_REDIS_URL"); r != "" { // and the queue and events through Redis
		// The killed process's lease of the session runs out after the
		// TTL; a prefix of the test's own keeps other tests' keys apart.
		args = append(args, "--redis-url", r, "--lease-ttl", "2s", "--redis-prefix", fmt.Sprintf("rein-e2e-%d:", time.Now().UnixNano()))
	}
	t.Run("held in a model call", func(t *testing.T) { crashWhileRunning(t, false, args...) })
	t.Run("held in a tool call", func(t *testing.T) { crashWhileRunning(t, true, args...) })
}

// crashWhileRunning kills the server while run one waits (inTool: in a
// bash call, else in a model call) with runs two and three queued behind
// it, restarts it and checks what the restart makes of them.
func crashWhileRunning(t *testing.T, inTool bool, args ...string) {
	v := newVendor(t)
	var in *instance
	var held *held
	first := map[string]any{"text": "message one"}
	if inTool {
		in = newInstance(t, v, append(args, "--allow-bypass")...)
		v.Enqueue(mockserver.Turn{ToolCalls: []mockserver.ToolCall{{ID: "call_1", Name: "bash", Input: holdCommand}}})
		first["permission_mode"] = "bypass"
		fifo(t, in.project)
	} else {
		in = newInstance(t, v, args...)
		held = v.hold(1)
	}
	v.Enqueue(mockserver.Turn{Text: "Answer two."}, mockserver.Turn{Text: "Answer three."}, mockserver.Turn{Text: "Answer four."})
	s := in.start()
	sid := s.session(in.project)
	st := s.events(sid, 0)
	r1 := s.post(sid, first)
	seen := st.until("run one waiting", func(e sseEvent) bool {
		if inTool {
			return e.Ev.Type == agent.EventToolStart
		}
		return e.Ev.Type == agent.EventMessage && e.Ev.RunID == r1 // its prompt, stored before the model call
	})
	if held != nil {
		held.wait(t)
	}
	lastSeen := seen[len(seen)-1].ID
	r2 := s.post(sid, map[string]any{"text": "message two"})
	r3 := s.post(sid, map[string]any{"text": "message three"})
	var runs api.RunList
	s.must(http.StatusOK, http.MethodGet, "/sessions/"+sid+"/runs", nil, &runs)
	if d := cmp.Diff([]string{"running", "queued", "queued"}, runStatuses(runs.Items, r1, r2, r3)); d != "" {
		t.Fatalf("runs before the kill (-want +got):\n%s", d)
	}

	s.signal(syscall.SIGKILL)
	if state := s.wait(); state.Success() {
		t.Fatalf("rein serve survived SIGKILL: %v", state)
	}
	st.stop()

	s = in.start()
	st = s.events(sid, lastSeen)
	checkQueuedRan(t, st.until("run three's done event", doneOf(r3)), sid, lastSeen, r2, r3)
	s.finalRun(r2)
	s.finalRun(r3)
	s.must(http.StatusOK, http.MethodGet, "/sessions/"+sid+"/runs", nil, &runs)
	if d := cmp.Diff([]string{"interrupted", "completed", "completed"}, runStatuses(runs.Items, r1, r2, r3)); d != "" {
		t.Errorf("runs after the restart (-want +got):\n%s", d)
	}
	if r := s.run(r1); r.Error == "" {
		t.Errorf("the interrupted run does not say what happened: %+v", r)
	}
	checkSessionGoesOn(t, s, v, st, sid)
}

// checkQueuedRan checks the events after a restart, resumed after the id
// after: ids increase, and runs two and three ran, completed, in order.
func checkQueuedRan(t *testing.T, evs []sseEvent, sid string, after int64, r2, r3 string) {
	t.Helper()
	checkFrames(t, sid, after, evs)
	lastOf2, firstOf3 := -1, -1
	for i, e := range evs {
		switch {
		case e.Ev.RunID == r2:
			lastOf2 = i
		case e.Ev.RunID == r3 && firstOf3 < 0:
			firstOf3 = i
		case e.Ev.RunID != r3:
			t.Errorf("event %v of run %q after the restart", e, e.Ev.RunID)
		}
		if e.Ev.Type == agent.EventDone && e.Ev.Done.Reason != agent.ReasonCompleted {
			t.Errorf("run %s ended %+v, want completed", e.Ev.RunID, e.Ev.Done)
		}
	}
	if lastOf2 < 0 || firstOf3 < lastOf2 {
		t.Errorf("run two's events must all come before run three's: %v", evs)
	}
}

// checkSessionGoesOn checks that the session of the crashed run loads,
// exports, and takes a fourth run whose model request holds the whole
// conversation, every tool call with its result.
func checkSessionGoesOn(t *testing.T, s *served, v *vendor, st *stream, sid string) {
	t.Helper()
	s.must(http.StatusOK, http.MethodGet, "/sessions/"+sid, nil, &api.Session{})
	jsonl := s.must(http.StatusOK, http.MethodGet, "/sessions/"+sid+"/export?format=jsonl", nil, nil)
	md := s.must(http.StatusOK, http.MethodGet, "/sessions/"+sid+"/export?format=markdown", nil, nil)
	for _, text := range []string{"message one", "message two", "Answer three."} {
		if !bytes.Contains(jsonl, []byte(text)) || !bytes.Contains(md, []byte(text)) {
			t.Errorf("the exports lack %q:\njsonl:\n%s\nmarkdown:\n%s", text, jsonl, md)
		}
	}
	r4 := s.post(sid, map[string]any{"text": "message four"})
	st.until("run four's done event", doneOf(r4))
	if r := s.finalRun(r4); r.Status != "completed" {
		t.Errorf("run four: %+v", r)
	}
	reqs := v.Requests()
	last := reqs[len(reqs)-1].Decoded
	if last == nil {
		t.Fatalf("run four's model request did not decode: %v", reqs[len(reqs)-1].DecodeErr)
	}
	var said []string
	for _, m := range last.Messages {
		if m.Role == llm.RoleUser && m.TextOf() != "" {
			said = append(said, m.TextOf())
		}
	}
	if got := strings.Join(said, "|"); !inOrder(got, "message one", "message two", "message three", "message four") {
		t.Errorf("run four's request holds the user's messages %q, want all four in order", said)
	}
	if err := answered(last.Messages); err != nil {
		t.Errorf("run four's request: %v", err)
	}
}

// holdCommand is a bash call that waits on the named pipe fifo makes.
const holdCommand = `{"command":"timeout 120 cat hold.fifo"}`

// fifo makes the named pipe hold.fifo in dir, which holds a tool reading
// it until the test ends: then the pipe's reader, if any, gets its end.
func fifo(t *testing.T, dir string) {
	t.Helper()
	path := filepath.Join(dir, "hold.fifo")
	if err := syscall.Mkfifo(path, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// A reader may still be on its way (an orphan of a killed
		// server); without one, opening for writing fails with ENXIO.
		for range 50 {
			f, err := os.OpenFile(path, os.O_WRONLY|syscall.O_NONBLOCK, 0)
			if err == nil {
				f.Close()
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
	})
}

// runStatuses lists the statuses of the runs ids, in that order.
func runStatuses(runs []api.Run, ids ...string) []string {
	out := make([]string, len(ids))
	for i, id := range ids {
		for _, r := range runs {
			if r.ID == id {
				out[i] = r.Status
			}
		}
	}
	return out
}

// inOrder reports whether s holds the parts in that order.
func inOrder(s string, parts ...string) bool {
	for _, p := range parts {
		i := strings.Index(s, p)
		if i < 0 {
			return false
		}
		s = s[i+len(p):]
	}
	return true
}

// PERM-3 over HTTP: a run whose tool asks emits permission_request; the
// answer POSTed to /runs/{id}/permissions/{call_id} lets the call run; a
// second answer finds no question.
func TestServePermissionAnswer_PERM3(t *testing.T) {
	v := newVendor(t)
	v.Enqueue(
		mockserver.Turn{ToolCalls: []mockserver.ToolCall{{ID: "call_1", Name: "write_file",
			Input: `{"path":"greeting.txt","content":"written over HTTP\n"}`}}},
		mockserver.Turn{Text: "Wrote greeting.txt."},
	)
	in := newInstance(t, v)
	s := in.start()
	sid := s.session(in.project)
	st := s.events(sid, 0)
	runID := s.post(sid, map[string]any{"text": "Write the greeting.", "permission_mode": "default"})
	asked := st.until("a permission request", func(e sseEvent) bool { return e.Ev.Type == agent.EventPermissionRequest })
	p := asked[len(asked)-1].Ev.Permission
	if p == nil || p.CallID != "call_1" || p.Tool != "write_file" {
		t.Fatalf("permission_request %+v, want call_1 write_file", p)
	}
	file := filepath.Join(in.project, "greeting.txt")
	if _, err := os.Stat(file); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the file exists before the answer: %v", err)
	}
	path := "/runs/" + runID + "/permissions/call_1"
	s.must(http.StatusNoContent, http.MethodPost, path, api.PermissionAnswer{Answer: "once"}, nil)
	if code, raw := s.call(http.MethodPost, path, api.PermissionAnswer{Answer: "once"}, nil); code != http.StatusNotFound {
		t.Errorf("a second answer: %d %s, want 404", code, raw)
	}
	rest := st.until("the run's done event", doneOf(runID))
	var decided bool
	for _, e := range rest {
		switch e.Ev.Type {
		case agent.EventPermissionDecision:
			decided = e.Ev.Permission.Decision == "allow" && e.Ev.Permission.By == "user"
		case agent.EventToolEnd:
			if e.Ev.Tool.Outcome != "ok" {
				t.Errorf("tool_end %+v, want ok", e.Ev.Tool)
			}
		case agent.EventDone:
			if e.Ev.Done.Reason != agent.ReasonCompleted {
				t.Errorf("done %+v, want completed", e.Ev.Done)
			}
		}
	}
	if !decided {
		t.Errorf("no permission_decision allow by user in %v", rest)
	}
	if b, err := os.ReadFile(file); err != nil || string(b) != "written over HTTP\n" {
		t.Errorf("greeting.txt: %q, %v", b, err)
	}
}

// API-5: SIGTERM stops taking runs, lets the running one finish, and the
// process exits 0; a run still going at --shutdown-timeout is cancelled
// with every tool call answered, and its session goes on after a restart.
func TestServeGracefulShutdown_API5(t *testing.T) {
	t.Run("the running run finishes", func(t *testing.T) {
		v := newVendor(t)
		held := v.hold(1)
		v.Enqueue(mockserver.Turn{Text: "Finished in time."})
		in := newInstance(t, v, "--shutdown-timeout", "30s")
		s := in.start()
		sid := s.session(in.project)
		st := s.events(sid, 0)
		runID := s.post(sid, map[string]any{"text": "Take your time."})
		held.wait(t)
		s.signal(syscall.SIGTERM)
		s.waitLog("shutting down")
		if code, raw := s.call(http.MethodPost, "/sessions/"+sid+"/messages", map[string]any{"text": "One more."}, nil); code != http.StatusServiceUnavailable {
			t.Errorf("a message posted during shutdown: %d %s, want 503", code, raw)
		}
		var runs api.RunList
		s.must(http.StatusOK, http.MethodGet, "/sessions/"+sid+"/runs", nil, &runs)
		if len(runs.Items) != 1 {
			t.Errorf("the refused message left a run: %+v", runs.Items)
		}
		held.let()
		evs := st.until("the run's done event", doneOf(runID))
		st.stop()
		if d := evs[len(evs)-1].Ev.Done; d.Reason != agent.ReasonCompleted || d.Text != "Finished in time." {
			t.Errorf("done %+v, want completed", d)
		}
		if state := s.wait(); state.ExitCode() != 0 {
			t.Errorf("rein serve exited %v after SIGTERM, want 0:\n%s", state, s.log())
		}
		if r := in.start().run(runID); r.Status != "completed" {
			t.Errorf("after a restart the run is %+v, want completed", r)
		}
	})

	t.Run("the deadline cancels the run", func(t *testing.T) {
		v := newVendor(t)
		v.Enqueue(
			mockserver.Turn{ToolCalls: []mockserver.ToolCall{{ID: "call_1", Name: "bash", Input: holdCommand}}},
			mockserver.Turn{Text: "Still here."},
		)
		in := newInstance(t, v, "--shutdown-timeout", "2s", "--allow-bypass")
		fifo(t, in.project)
		s := in.start()
		sid := s.session(in.project)
		st := s.events(sid, 0)
		runID := s.post(sid, map[string]any{"text": "Wait for the pipe.", "permission_mode": "bypass"})
		st.until("the tool_start of the call", func(e sseEvent) bool { return e.Ev.Type == agent.EventToolStart })
		s.signal(syscall.SIGTERM)
		evs := st.until("the run's done event", doneOf(runID))
		st.stop()
		if state := s.wait(); state.ExitCode() != 0 {
			t.Errorf("rein serve exited %v after SIGTERM, want 0:\n%s", state, s.log())
		}
		var ended bool
		for _, e := range evs {
			ended = ended || e.Ev.Type == agent.EventToolEnd && e.Ev.Tool.ID == "call_1"
		}
		if d := evs[len(evs)-1].Ev.Done; !ended || d.Reason != agent.ReasonCancelled {
			t.Errorf("done %+v, tool_end of call_1: %v; want cancelled with the call ended", d, ended)
		}

		s = in.start()
		if r := s.run(runID); r.Status != "cancelled" {
			t.Errorf("after a restart the run is %+v, want cancelled", r)
		}
		st = s.events(sid, evs[len(evs)-1].ID)
		next := s.post(sid, map[string]any{"text": "Are you still there?"})
		st.until("the next run's done event", doneOf(next))
		if r := s.finalRun(next); r.Status != "completed" {
			t.Errorf("the next run: %+v", r)
		}
		reqs := v.Requests()
		if len(reqs) != 2 || reqs[1].Decoded == nil {
			t.Fatalf("%d model requests, want 2", len(reqs))
		}
		if err := answered(reqs[1].Decoded.Messages); err != nil {
			t.Errorf("the next run's request: %v", err)
		}
	})
}

// answered checks that every tool call of the conversation has its result
// in the message after it.
func answered(msgs []llm.Message) error {
	for i, m := range msgs {
		for _, u := range m.ToolUses() {
			ok := false
			if i+1 < len(msgs) {
				for _, r := range msgs[i+1].ToolResults() {
					ok = ok || r.ToolUseID == u.ID
				}
			}
			if !ok {
				return errors.New("tool call " + u.ID + " (" + u.Name + ") has no result")
			}
		}
	}
	return nil
}

// API-1: the OpenAPI document the server serves passes `redocly lint`
// (@redocly/cli, pinned by scripts/test) with its recommended rules.
func TestServeOpenAPILint_API1(t *testing.T) {
	redocly := filepath.Join(moduleRoot(t), ".cache", "npm", "node_modules", ".bin", "redocly")
	if _, err := os.Stat(redocly); err != nil {
		t.Skipf("redocly is not installed at %s: scripts/test installs it (npm install --prefix .cache/npm @redocly/cli@2.77.0)", redocly)
	}
	v := newVendor(t)
	in := newInstance(t, v)
	s := in.start()
	doc := s.must(http.StatusOK, http.MethodGet, "/openapi.json", nil, nil)
	dir := t.TempDir()
	spec, cfg := filepath.Join(dir, "openapi.json"), filepath.Join(dir, "redocly.yaml")
	if err := os.WriteFile(spec, doc, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cfg, []byte("extends:\n  - recommended\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), guard)
	defer cancel()
	cmd := exec.CommandContext(ctx, redocly, "lint", "--config", cfg, "--format", "stylish", spec)
	cmd.Dir = dir
	cmd.Env = []string{"HOME=" + dir, "PATH=" + os.Getenv("PATH"), "CI=true", "NO_COLOR=1",
		"REDOCLY_TELEMETRY=off", "REDOCLY_SUPPRESS_NOTIFICATIONS=true"}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Errorf("redocly lint /openapi.json: %v\n%s", err, out)
	}
}

// moduleRoot is the directory of go.mod above the test's directory.
func moduleRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test's directory")
		}
		dir = parent
	}
}
