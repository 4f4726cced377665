package runner_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/reinhq/rein/llm"
	"github.com/reinhq/rein/llm/llmtest"
	"github.com/reinhq/rein/runner"
	"github.com/reinhq/rein/session"
)

// jobsHarness is a Service whose runs run commands on the host unasked
// (bypass), with env's settings on top.
func jobsHarness(t *testing.T, model llm.Provider, env map[string]string) *harness {
	t.Helper()
	vars := map[string]string{"REIN_PERMISSION_MODE": "bypass"}
	for k, v := range env {
		vars[k] = v
	}
	return newHarness(t, model, runner.ServiceConfig{Getenv: func(k string) string { return vars[k] }})
}

// run submits text to the session and waits for the run's end.
func (h *harness) run(t *testing.T, sid, text string) *session.Run {
	t.Helper()
	r, err := h.svc.Submit(context.Background(), session.Submission{SessionID: sid, Caller: "alice", Text: text})
	if err != nil {
		t.Fatal(err)
	}
	r = h.wait(t, r.ID)
	if r.Status != session.RunCompleted {
		t.Fatalf("run %s: %s (%s)", r.ID, r.Status, r.Error)
	}
	return r
}

// job returns the session's job id as the service lists it.
func job(t *testing.T, svc *runner.Service, sid, id string) runner.JobInfo {
	t.Helper()
	for _, j := range svc.SessionJobs(sid) {
		if j.ID == id {
			return j
		}
	}
	t.Fatalf("session %s has no job %s: %+v", sid, id, svc.SessionJobs(sid))
	return runner.JobInfo{}
}

// waitGone waits until process group pgid has ended.
func waitGone(t *testing.T, pgid int, what string) {
	t.Helper()
	for range 1000 {
		if syscall.Kill(-pgid, 0) != nil {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("%s: process group %d still runs", what, pgid)
}

// toolResult returns the text of the result of call id in the request.
func toolResult(req *llm.Request, id string) string {
	for _, m := range req.Messages {
		for _, r := range m.ToolResults() {
			if r.ToolUseID == id {
				b, _ := json.Marshal(r.Content)
				return string(b)
			}
		}
	}
	return ""
}

// TOOL-8 on the server: a job started by a run outlives it — listed after
// the run, journaled (a crash leaves it findable), its end told to the
// model of the session's next run, whose job_output reads it; a later run
// reaches a job an earlier one started (job_list, job_kill), and counts it
// against jobs.max_per_session; another session sees none of them.
func TestServiceJobsOutliveTheirRun_TOOL8(t *testing.T) {
	model := llmtest.NewScripted(
		// run 1: a job waiting for a file
		llmtest.Reply{ToolCalls: []llm.ToolUse{jobCall("c1", "echo up; while [ ! -e go ]; do sleep 0.02; done; echo finished-ok; exit 4", true)}},
		llmtest.Reply{Text: "started"},
		// run 2: told it ended; reads it
		llmtest.Reply{ToolCalls: []llm.ToolUse{llmtest.Call("c2", "job_output", `{"id":"1"}`)}},
		llmtest.Reply{Text: "read"},
		// run 3: a long job, then one more at the cap
		llmtest.Reply{ToolCalls: []llm.ToolUse{jobCall("c3", "sleep 1000", true)}},
		llmtest.Reply{Text: "long one"},
		llmtest.Reply{ToolCalls: []llm.ToolUse{jobCall("c4", "sleep 1000", true), llmtest.Call("c5", "job_list", `{}`)}},
		llmtest.Reply{Text: "capped"},
		// run 5: kills the job run 3 started
		llmtest.Reply{ToolCalls: []llm.ToolUse{llmtest.Call("c6", "job_kill", `{"id":"2"}`)}},
		llmtest.Reply{Text: "killed"},
	)
	h := jobsHarness(t, model, map[string]string{"REIN_JOBS_MAX_PER_SESSION": "1"})
	sid, other := h.newSession(t).ID, h.newSession(t).ID

	h.run(t, sid, "start it")
	j1 := job(t, h.svc, sid, "1")
	if j1.State != "running" || j1.PGID <= 0 {
		t.Fatalf("after its run, job 1: %+v", j1)
	}
	if got := h.svc.SessionJobs(other); len(got) != 0 {
		t.Fatalf("another session lists %+v", got)
	}
	// Journaled: a crash now would leave it findable.
	st, err := session.Load(context.Background(), h.sessions, sid)
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Pending) != 1 || st.Pending[0].Job != "1" || st.Pending[0].PGID != j1.PGID || !st.Pending[0].Alive {
		t.Fatalf("journal after run 1: %+v", st.Pending)
	}
	if err := os.WriteFile(filepath.Join(h.dir, "go"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	waitGone(t, j1.PGID, "job 1")
	for range 1000 {
		if job(t, h.svc, sid, "1").State != "running" {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	if j := job(t, h.svc, sid, "1"); j.State != "exited" || j.ExitCode == nil || *j.ExitCode != 4 {
		t.Fatalf("job 1 ended as %+v", j)
	}

	h.run(t, sid, "what happened?")
	reqs := model.Requests()
	last := reqs[2].Messages[len(reqs[2].Messages)-1]
	b, _ := json.Marshal(last.Content)
	if !strings.Contains(string(b), "Background job 1") || !strings.Contains(string(b), "exited with code 4") {
		t.Fatalf("run 2's model was not told job 1 ended: %s", b)
	}
	if out := toolResult(reqs[3], "c2"); !strings.Contains(out, "finished-ok") {
		t.Fatalf("job_output in a later run: %s", out)
	}

	h.run(t, sid, "start a long one")
	j2 := job(t, h.svc, sid, "2")
	h.run(t, sid, "and another")
	reqs = model.Requests()
	if out := toolResult(reqs[7], "c4"); !strings.Contains(out, "the most this session allows") {
		t.Errorf("a second job past jobs.max_per_session 1: %s", out)
	}
	if out := toolResult(reqs[7], "c5"); !strings.Contains(out, "sleep 1000") {
		t.Errorf("job_list in a later run: %s", out)
	}
	h.run(t, sid, "stop it")
	waitGone(t, j2.PGID, "job 2 after job_kill in a later run")
	if j := job(t, h.svc, sid, "2"); j.State != "killed" {
		t.Errorf("job 2 after job_kill: %+v", j)
	}
}

// TOOL-8: a session's jobs stop when it is deleted (StopSessionJobs), and
// every job stops when the service shuts down, after its runs ended.
func TestServiceJobsStop_TOOL8(t *testing.T) {
	model := llmtest.NewScripted(
		llmtest.Reply{ToolCalls: []llm.ToolUse{jobCall("c1", "sleep 1000", true)}},
		llmtest.Reply{Text: "a"},
		llmtest.Reply{ToolCalls: []llm.ToolUse{jobCall("c2", "sleep 1000", true)}},
		llmtest.Reply{Text: "b"},
	)
	h := jobsHarness(t, model, nil)
	deleted, kept := h.newSession(t).ID, h.newSession(t).ID
	h.run(t, deleted, "one")
	h.run(t, kept, "two")
	a, b := job(t, h.svc, deleted, "1"), job(t, h.svc, kept, "1")
	files := sessionFiles(t, h.data, deleted, kept)
	if err := h.svc.StopSessionJobs(context.Background(), deleted); err != nil {
		t.Fatal(err)
	}
	waitGone(t, a.PGID, "the deleted session's job")
	files.check(t, deleted, kept)
	for _, id := range []string{"", ".", "..", ".caches", "../x", kept + "/.."} {
		if err := h.svc.StopSessionJobs(context.Background(), id); err != nil {
			t.Fatal(err)
		}
	}
	files.check(t, deleted, kept) // a name that is not a session's removes nothing
	if got := h.svc.SessionJobs(deleted); len(got) != 0 {
		t.Errorf("a deleted session still lists %+v", got)
	}
	if syscall.Kill(-b.PGID, 0) != nil {
		t.Fatal("deleting one session stopped another's job")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := h.svc.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	waitGone(t, b.PGID, "a job after the service's shutdown")
	if h.svc.JobsHeldByWorkers() {
		t.Error("an embedded service says workers hold its jobs")
	}
}

// TOOL-8, API-5: in split mode the worker whose run started a job holds
// it: the API process lists none and says workers hold them; deleting the
// session through the API process stops the job on the worker.
func TestSplitJobsHeldByWorker_TOOL8(t *testing.T) {
	model := llmtest.NewScripted(
		llmtest.Reply{ToolCalls: []llm.ToolUse{jobCall("c1", "sleep 1000", true)}},
		llmtest.Reply{Text: "started"},
	)
	workerData := t.TempDir()
	s := newSplit(t, model, nil, func(k string) string {
		if k == "REIN_PERMISSION_MODE" {
			return "bypass"
		}
		return ""
	}, func(c *runner.ServiceConfig, worker bool) {
		if worker {
			c.DataDir = workerData
		}
	})
	sid := s.newSession(t).ID
	r, err := s.api.Submit(context.Background(), session.Submission{SessionID: sid, Caller: "alice", Text: "go"})
	if err != nil {
		t.Fatal(err)
	}
	if r = s.wait(t, r.ID); r.Status != session.RunCompleted {
		t.Fatalf("run: %s %s", r.Status, r.Error)
	}
	j := job(t, s.worker, sid, "1")
	if j.State != "running" {
		t.Fatalf("the worker's job: %+v", j)
	}
	if !s.api.JobsHeldByWorkers() || len(s.api.SessionJobs(sid)) != 0 {
		t.Fatalf("the API process: held by workers %v, lists %+v", s.api.JobsHeldByWorkers(), s.api.SessionJobs(sid))
	}
	files := sessionFiles(t, workerData, sid, "kept")
	if err := s.api.StopSessionJobs(context.Background(), sid); err != nil {
		t.Fatal(err)
	}
	waitGone(t, j.PGID, "the worker's job after the session was deleted through the API")
	files.check(t, sid, "kept")
	if got := s.worker.SessionJobs(sid); len(got) != 0 {
		t.Errorf("the worker still lists %+v", got)
	}
}

// sessionDirs are the files a service keeps for sessions in its DataDir:
// each session's directory and sandbox cache.
type sessionDirs struct{ data string }

// sessionFiles puts a file in the directory and the sandbox cache of each
// session in data (DataDir/<id>, DataDir/.caches/<id>).
func sessionFiles(t *testing.T, data string, ids ...string) sessionDirs {
	t.Helper()
	d := sessionDirs{data}
	for _, id := range ids {
		for _, dir := range d.of(id) {
			if err := os.MkdirAll(dir, 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, "spill.txt"), []byte("output"), 0o600); err != nil {
				t.Fatal(err)
			}
		}
	}
	return d
}

func (d sessionDirs) of(id string) []string {
	return []string{filepath.Join(d.data, id), filepath.Join(d.data, ".caches", id)}
}

// check fails unless the deleted session's files are gone and the kept
// session's are there (TOOL-8: what a deleted session leaves).
func (d sessionDirs) check(t *testing.T, deleted, kept string) {
	t.Helper()
	for _, dir := range d.of(deleted) {
		if _, err := os.Stat(dir); !os.IsNotExist(err) {
			t.Errorf("the deleted session's %s is still there (%v)", dir, err)
		}
	}
	for _, dir := range d.of(kept) {
		if _, err := os.Stat(filepath.Join(dir, "spill.txt")); err != nil {
			t.Errorf("another session's file: %v", err)
		}
	}
}
