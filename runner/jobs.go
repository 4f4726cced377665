package runner

import (
	"slices"

	"github.com/reinhq/rein/tool"
	"github.com/reinhq/rein/tool/builtin"
	"github.com/reinhq/rein/workspace"
)

// Background jobs (SPEC TOOL-8) belong to the Conversation: buildTools
// makes them with the session's tools — bash takes run_in_background and
// moves a command still running at its timeout to the background
// (bash.auto_background), and job_output, job_kill and job_list
// come with it — each job's process group is journaled with its id, so a
// crash leaves an orphan that [session.Load] reports, the agent's
// Config.Notices tells the model at its next turn when one ended, and
// [Conversation.Close] stops them all: a job ends with its session. On
// the server a run's Conversation lives for that run, but its jobs are
// the session's, held by the [Service] (servicejobs.go): the
// Conversation borrows them and gives them back when it closes.

// newJobs returns the session's jobs under the workspace's settings, or
// nil when jobs.max_per_session is 0; a Service's run borrows the
// session's held jobs (c.releaseJobs gives them back).
func (c *Conversation) newJobs() *builtin.Jobs {
	limit := c.s.ev.Int(workspace.JobsMax)
	if limit <= 0 {
		return nil
	}
	open := func(onStart func(tool.Call, string, int)) *builtin.Jobs {
		return builtin.NewJobs(builtin.JobsOptions{Dir: c.sessDir, Max: limit, Now: c.s.cfg.Now, OnStart: onStart})
	}
	if held := c.s.cfg.heldJobs; held != nil {
		jobs, release := held.acquire(c.sess.ID, c.rec, open)
		c.releaseJobs = release
		return jobs
	}
	rec, logger := c.rec, c.s.logger
	return open(func(call tool.Call, id string, pgid int) {
		if err := rec.RecordJob(call.ID, id, pgid); err != nil {
			logger.Warn("could not journal a background job's process group", "tool", call.Name, "job", id, "err", err)
		}
	})
}

// jobTools adds the job tools after bash, when the session has jobs and
// bash.
func (c *Conversation) jobTools(all []tool.Tool) []tool.Tool {
	if c.jobs == nil {
		return all
	}
	for i, t := range all {
		if t.Spec().Name == "bash" {
			return slices.Insert(all, i+1, builtin.JobTools(c.jobs)...)
		}
	}
	return all
}

// Jobs returns the bound session's background jobs, nil when it has none
// (none bound yet, no tools, jobs.max_per_session 0). The terminal UI and
// the API list them.
func (c *Conversation) Jobs() *builtin.Jobs { return c.jobs }

// notices is the agent's Config.Notices: the jobs that ended (TOOL-8).
func (c *Conversation) notices() func() []string {
	if c.jobs == nil {
		return nil
	}
	return c.jobs.Notices
}

// closeJobs stops the session's jobs and waits for them, or gives the
// Service's back.
func (c *Conversation) closeJobs() {
	if c.releaseJobs != nil {
		c.releaseJobs()
		c.releaseJobs, c.jobs = nil, nil
		return
	}
	if c.jobs == nil {
		return
	}
	if err := c.jobs.Close(); err != nil {
		c.s.logger.Warn("closing the background jobs' output files", "err", err)
	}
	c.jobs = nil
}
