package server

import (
	"context"
	"net/http"

	"github.com/danielgtaylor/huma/v2"

	"github.com/reinhq/rein/api"
)

// JobLister lists the background jobs (SPEC TOOL-8) of a session whose
// run this process executes now, oldest first, for GET
// /sessions/{id}/jobs. The runner's service has them; the front hands it
// in (Config.Jobs), converting its snapshots to api.Job, so this package
// stays clear of what the runner reaches.
type JobLister interface {
	SessionJobs(sessionID string) []api.Job
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
	if s.cfg.Jobs != nil {
		out.Items = append(out.Items, s.cfg.Jobs.SessionJobs(in.ID)...)
	}
	return &jobListOutput{Body: out}, nil
}
