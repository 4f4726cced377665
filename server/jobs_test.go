package server_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/reinhq/rein/api"
	"github.com/reinhq/rein/server"
	"github.com/reinhq/rein/session"
)

// jobLister holds background jobs (SPEC TOOL-8) by session; stopping
// a session's drops them, or fails with fail.
type jobLister struct {
	jobs    map[string][]api.Job
	workers bool
	fail    error
	stopped []string
}

func (l *jobLister) SessionJobs(id string) []api.Job { return l.jobs[id] }
func (l *jobLister) JobsHeldByWorkers() bool         { return l.workers }
func (l *jobLister) StopSessionJobs(_ context.Context, id string) error {
	if l.fail != nil {
		return l.fail
	}
	l.stopped = append(l.stopped, id)
	delete(l.jobs, id)
	return nil
}

// TOOL-8, API-4: GET /sessions/{id}/jobs lists the caller's session's
// jobs; another caller's session is not found,
// exactly like an unknown one; a session without jobs lists none.
func TestListJobs_TOOL8(t *testing.T) {
	jobs := &jobLister{jobs: map[string][]api.Job{}}
	e := newEnv(t, func(c *server.Config) { c.Jobs = jobs })
	alice, bob := e.fixture(t, "alice"), e.fixture(t, "bob")
	code := 0
	started := time.Date(2026, 11, 28, 1, 0, 0, 0, time.UTC)
	jobs.jobs[alice.session] = []api.Job{
		{ID: "1", Command: "npm run dev", State: "running", Started: started, OutputBytes: 120},
		{ID: "2", Command: "make", State: "exited", ExitCode: &code, Started: started, Ended: started.Add(time.Minute)},
	}
	r := e.do(t, "GET", "/sessions/"+alice.session+"/jobs", alice.tok, nil)
	got := decode[api.JobList](t, r, http.StatusOK)
	want := api.JobList{Items: []api.Job{
		{ID: "1", Command: "npm run dev", State: "running", Started: started, OutputBytes: 120},
		{ID: "2", Command: "make", State: "exited", ExitCode: &code, Started: started, Ended: started.Add(time.Minute)},
	}}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("jobs (-want +got):\n%s", d)
	}
	r = e.do(t, "GET", "/sessions/"+alice.session+"/jobs", bob.tok, nil)
	if r.status != http.StatusNotFound {
		t.Errorf("another caller's session: %d", r.status)
	}
	r = e.do(t, "GET", "/sessions/"+bob.idle+"/jobs", bob.tok, nil)
	if got := decode[api.JobList](t, r, http.StatusOK); got.Items == nil || len(got.Items) != 0 {
		t.Errorf("no jobs: %+v", got)
	}
}

// TOOL-8, API-5: an API process of a split deployment holds no jobs and
// says so (held_by_worker) rather than listing none as if there were
// none.
func TestListJobsHeldByWorker_TOOL8(t *testing.T) {
	jobs := &jobLister{workers: true}
	e := newEnv(t, func(c *server.Config) { c.Jobs = jobs })
	alice := e.fixture(t, "alice")
	r := e.do(t, "GET", "/sessions/"+alice.session+"/jobs", alice.tok, nil)
	if got := decode[api.JobList](t, r, http.StatusOK); !got.HeldByWorker || len(got.Items) != 0 {
		t.Errorf("split mode: %+v", got)
	}
	jobs.workers = false
	r = e.do(t, "GET", "/sessions/"+alice.session+"/jobs", alice.tok, nil)
	if strings.Contains(string(r.body), "held_by_worker") {
		t.Errorf("embedded mode says held_by_worker: %s", r.body)
	}
}

// TOOL-8: deleting a session stops its jobs first; when they cannot be
// reached (the broadcast to the workers is down) the session is kept and
// the answer is 503, so the caller retries rather than leaving jobs
// running for a session that is gone.
func TestDeleteSessionStopsJobs_TOOL8(t *testing.T) {
	jobs := &jobLister{jobs: map[string][]api.Job{}}
	e := newEnv(t, func(c *server.Config) { c.Jobs = jobs })
	alice := e.fixture(t, "alice")
	jobs.fail = fmt.Errorf("broadcast: %w", session.ErrUnavailable)
	r := e.do(t, "DELETE", "/sessions/"+alice.idle, alice.tok, nil)
	if r.status != http.StatusServiceUnavailable {
		t.Fatalf("jobs unreachable: %d %s", r.status, r.body)
	}
	if _, err := e.store.Get(context.Background(), alice.idle); err != nil {
		t.Fatalf("the session was deleted though its jobs were not stopped: %v", err)
	}
	jobs.fail = nil
	r = e.do(t, "DELETE", "/sessions/"+alice.idle, alice.tok, nil)
	if r.status != http.StatusNoContent || len(jobs.stopped) != 1 || jobs.stopped[0] != alice.idle {
		t.Fatalf("delete: %d %s, stopped %v", r.status, r.body, jobs.stopped)
	}
}
