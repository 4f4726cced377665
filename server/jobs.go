package server

import (
	"context"
	"net/http"

	"github.com/danielgtaylor/huma/v2"

	"github.com/reinhq/rein/api"
)

// JobHolder holds sessions' background jobs (SPEC TOOL-8), which outlive
// the run that started them: it lists them for GET /sessions/{id}/jobs and
// stops them when the session is deleted. The runner's service holds them;
// the front hands it in (Config.Jobs), converting its snapshots to
// api.Job, so this package stays clear of what the runner reaches.
type JobHolder interface {
	// SessionJobs lists the jobs of a session this process holds, oldest
	// first.
	SessionJobs(sessionID string) []api.Job
	// JobsHeldByWorkers reports that this process only enqueues runs
	// (split mode): worker processes hold the jobs, and SessionJobs has
	// none.
	JobsHeldByWorkers() bool
	// StopSessionJobs stops the session's jobs, wherever they run, and
	// removes the files kept for the session there; an error means they
	// could not be reached (a dependency is down).
	StopSessionJobs(ctx context.Context, sessionID string) error
}

type jobListOutput struct {
	Body api.JobList
}

func (s *Server) registerJobs() {
	op := s.operation(http.MethodGet, "/sessions/{id}/jobs", "list-jobs", "List a session's background jobs", http.StatusOK, http.StatusNotFound)
	op.Tags = []string{"sessions"}
	op.Description = "The background jobs (run_in_background, or moved there at their timeout) of the session, oldest first. " +
		"A job runs on after the run that started it; later runs of the session read its output, kill it and are told when it ended. " +
		"Jobs stop when the session is deleted or the server shuts down. In split mode the worker whose run started a job " +
		"holds it: the API process answers held_by_worker with no items. Output paths are not shown: they are the server's."
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
		out.HeldByWorker = s.cfg.Jobs.JobsHeldByWorkers()
	}
	return &jobListOutput{Body: out}, nil
}

// stopJobs stops a session's background jobs before it is deleted.
func (s *Server) stopJobs(ctx context.Context, sessionID string) error {
	if s.cfg.Jobs == nil {
		return nil
	}
	if err := s.cfg.Jobs.StopSessionJobs(ctx, sessionID); err != nil {
		return s.fail(ctx, "stopping the session's background jobs", err)
	}
	return nil
}
