package cli

import (
	"context"

	"github.com/reinhq/rein/api"
	"github.com/reinhq/rein/runner"
	"github.com/reinhq/rein/server"
)

// serviceJobs hands the service's background jobs (SPEC TOOL-8) to the
// server's GET /sessions/{id}/jobs, as wire types. The paths of their
// output files are the server's and are left out.
type serviceJobs struct{ svc *runner.Service }

var _ server.JobHolder = serviceJobs{}

// JobsHeldByWorkers implements server.JobHolder.
func (s serviceJobs) JobsHeldByWorkers() bool { return s.svc.JobsHeldByWorkers() }

// StopSessionJobs implements server.JobHolder.
func (s serviceJobs) StopSessionJobs(ctx context.Context, sessionID string) error {
	return s.svc.StopSessionJobs(ctx, sessionID)
}

// SessionJobs implements server.JobHolder.
func (s serviceJobs) SessionJobs(sessionID string) []api.Job {
	var out []api.Job
	for _, j := range s.svc.SessionJobs(sessionID) {
		out = append(out, api.Job{ID: j.ID, Command: j.Command, Description: j.Description, State: string(j.State),
			ExitCode: j.ExitCode, Started: j.Started, Ended: j.Ended, OutputBytes: j.OutputBytes, Error: j.Error})
	}
	return out
}
