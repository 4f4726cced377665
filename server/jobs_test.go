package server_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/reinhq/rein/api"
	"github.com/reinhq/rein/server"
)

// jobLister lists background jobs (SPEC TOOL-8) by session.
type jobLister map[string][]api.Job

func (l jobLister) SessionJobs(id string) []api.Job { return l[id] }

// TOOL-8, API-4: GET /sessions/{id}/jobs lists the caller's session's
// jobs; another caller's session is not found,
// exactly like an unknown one; a session without jobs lists none.
func TestListJobs_TOOL8(t *testing.T) {
	jobs := jobLister{}
	e := newEnv(t, func(c *server.Config) { c.Jobs = jobs })
	alice, bob := e.fixture(t, "alice"), e.fixture(t, "bob")
	code := 0
	started := time.Date(2026, 11, 28, 1, 0, 0, 0, time.UTC)
	jobs[alice.session] = []api.Job{
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
