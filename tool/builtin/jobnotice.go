package builtin

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// maxNoticeJobs is how many ended jobs one notice names one by one.
const maxNoticeJobs = 5

// Notices returns what the model should be told about the session's
// background jobs since it was last asked: the jobs that ended, except
// those job_kill stopped (the model knows); one the user stopped is told
// as such. The run loop asks before each
// model call and stores the notice with the newest user message, so the
// model hears of a job's end at its next turn (SPEC TOOL-8) and the
// history stays append-only for the prompt cache. Each job is told once;
// nil when there is nothing new.
func (j *Jobs) Notices() []string {
	j.mu.Lock()
	jobs := slices.Clone(j.jobs)
	j.mu.Unlock()
	var lines []string
	n := 0
	for _, x := range jobs {
		line, ok := x.notice()
		if !ok {
			continue
		}
		n++
		if n <= maxNoticeJobs {
			lines = append(lines, line)
		}
	}
	if n == 0 {
		return nil
	}
	if n > maxNoticeJobs {
		lines = append(lines, fmt.Sprintf("… and %d more background jobs ended: job_list shows them.", n-maxNoticeJobs))
	}
	return []string{"<system-reminder>\n" + strings.Join(lines, "\n") +
		"\nThis is a notice from rein about background jobs, not a message from the user; no human input occurred.\n</system-reminder>"}
}

// notice is the line telling the model the job ended, once; false when
// there is nothing to tell.
func (job *Job) notice() (string, bool) {
	total, _ := job.out.size()
	job.mu.Lock()
	defer job.mu.Unlock()
	if !job.visible || job.noticed || job.killed && !job.byUser || job.state == JobRunning {
		return "", false
	}
	job.noticed = true
	var how string
	switch {
	case job.err != nil:
		how = fmt.Sprintf("could not be run: %v", job.err)
	case job.byUser:
		how = "was stopped by the user"
	case job.result.OutputLimited:
		how = fmt.Sprintf("was stopped: its output passed the limit of %s", FormatBytes(job.result.OutputLimit))
	case job.state == JobStopped:
		how = "was stopped"
	default:
		how = fmt.Sprintf("exited with code %d", job.result.ExitCode)
	}
	after := job.ended.Sub(job.Started).Round(time.Second)
	unread := max(0, total-job.readTo)
	return fmt.Sprintf("Background job %s (%s) %s after %s; it wrote %s, %s not read yet: job_output {\"id\": %q} shows it (the whole output is in %s).",
		job.ID, quoteCommand(job.Command), how, after, FormatBytes(total), FormatBytes(unread), job.ID, job.out.path), true
}

// quoteCommand is a command on one line, cut to 100 characters, in
// backquotes.
func quoteCommand(c string) string {
	c = oneLineOf(c)
	if r := []rune(c); len(r) > 100 {
		c = string(r[:100]) + "…"
	}
	return "`" + strings.ReplaceAll(c, "`", "'") + "`"
}

func oneLineOf(s string) string { return strings.Join(strings.Fields(s), " ") }
