package server

import (
	"context"
	"net/http"

	"github.com/danielgtaylor/huma/v2"

	"github.com/reinhq/rein/api"
	"github.com/reinhq/rein/runner"
)

// JobLister is implemented by a Runtime that runs background jobs (SPEC
// TOOL-8), as [runner.Service] does: the jobs of a session whose run it
// executes now, oldest first. GET /sessions/{id}/jobs lists them; with a
// Runtime that does not implement it the list is empty.
type JobLister interface {
	SessionJobs(sessionID string) []runner.JobInfo
}

type jobListOutput struct {
	Body api.JobList
}

func (s *Server) registerJobs() {
	op := s.operation(http.MethodGet, "/sessions/{id}/jobs", "list-jobs", "List a session's background jobs", http.StatusOK, http.StatusNotFound)
	op.Tags = []string{"sessions"}
	op.Description = "The background jobs (run_in_background, or moved there at their timeout) of the session's current run, " +
		"oldest first. A job ends with the run that started it; between runs the list is empty. Output paths are not shown: " +
		"they are the server's."
	huma.Register(s.api, op, s.listJobs)
}

func (s *Server) listJobs(ctx context.Context, in *sessionIDInput) (*jobListOutput, error) {
	c, err := caller(ctx)
	if err != nil {
		return nil, err
	}
	if _, err := s.ownSession(ctx, c, in.ID); err != nil {
		return nil, err
	}
	out := api.JobList{Items: []api.Job{}}
	if l, ok := s.cfg.Runtime.(JobLister); ok {
		for _, j := range l.SessionJobs(in.ID) {
			out.Items = append(out.Items, api.Job{ID: j.ID, Command: j.Command, Description: j.Description, State: string(j.State),
				ExitCode: j.ExitCode, Started: j.Started, Ended: j.Ended, OutputBytes: j.OutputBytes, Error: j.Error})
		}
	}
	return &jobListOutput{Body: out}, nil
}
