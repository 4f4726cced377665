package cli

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/reinhq/rein/tool/builtin"
)

// jobsCommand is /jobs: the session's background jobs (SPEC TOOL-8), and
// /jobs kill ID to stop one.
func (e *engine) jobsCommand(ctx context.Context, args string) (string, error) {
	jobs := e.Jobs()
	f := strings.Fields(args)
	switch {
	case len(f) == 0:
		if jobs == nil {
			return "No background jobs: none started in this session (or jobs.max_per_session is 0).", nil
		}
		return jobsText(jobs.List(), time.Now()), nil
	case f[0] == "kill" && len(f) == 2:
		if jobs == nil {
			return "", fmt.Errorf("no job %q: this session has no background jobs", f[1])
		}
		job, err := jobs.Get(f[1])
		if err != nil {
			return "", err
		}
		select {
		case <-job.Done():
			return fmt.Sprintf("Job %s had already ended.", f[1]), nil
		default:
		}
		if _, err := jobs.Kill(ctx, f[1]); err != nil {
			return "", fmt.Errorf("job %s: %w", f[1], err)
		}
		return fmt.Sprintf("Stopped job %s; the model is told at its next turn.", f[1]), nil
	}
	return "", fmt.Errorf("/jobs takes no arguments, or kill and a job id (/jobs kill 2)")
}

// jobsText lists jobs for the terminal, one a line.
func jobsText(list []builtin.JobInfo, now time.Time) string {
	if len(list) == 0 {
		return "No background jobs in this session."
	}
	var b strings.Builder
	b.WriteString("Background jobs of this session (/jobs kill ID stops one):\n")
	for _, j := range list {
		state := string(j.State)
		switch {
		case j.State == builtin.JobRunning:
			state = "running for " + now.Sub(j.Started).Round(time.Second).String()
		case j.ExitCode != nil:
			state = fmt.Sprintf("%s (exit %d)", j.State, *j.ExitCode)
		}
		cmd := strings.Join(strings.Fields(j.Command), " ")
		if r := []rune(cmd); len(r) > 60 {
			cmd = string(r[:60]) + "…"
		}
		fmt.Fprintf(&b, "- %s  %s  %s  %s\n", j.ID, state, builtin.FormatBytes(j.OutputBytes), cmd)
	}
	return strings.TrimRight(b.String(), "\n")
}
