package server_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/reinhq/rein/api"
	"github.com/reinhq/rein/runner"
	"github.com/reinhq/rein/server"
)

// jobsRuntime is a Runtime with background jobs (SPEC TOOL-8) by session.
type jobsRuntime struct {
	*fakeRuntime
	jobs map[string][]runner.JobInfo
}

func (r *jobsRuntime) SessionJobs(id string) []runner.JobInfo { return r.jobs[id] }

var _ server.JobLister = (*runner.Service)(nil)

// TOOL-8, API-4: GET /sessions/{id}/jobs lists the caller's session's
// jobs without their server paths; another caller's session is not found,
// exactly like an unknown one; a session without jobs lists none.
func TestListJobs_TOOL8(t *testing.T) {
	rt := &jobsRuntime{fakeRuntime: &fakeRuntime{}, jobs: map[string][]runner.JobInfo{}}
	e := newEnv(t, func(c *server.Config) { c.Runtime = rt })
	alice, bob := e.fixture(t, "alice"), e.fixture(t, "bob")
	code := 0
	started := time.Date(2026, 11, 28, 1, 0, 0, 0, time.UTC)
	rt.jobs[alice.session] = []runner.JobInfo{
		{ID: "1", Command: "npm run dev", State: "running", Started: started, OutputBytes: 120, OutputPath: "/srv/data/s/job-1.log", PGID: 4242},
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
