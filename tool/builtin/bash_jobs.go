package builtin

import (
	"context"
	"fmt"
	"time"

	"github.com/reinhq/rein/exec"
	"github.com/reinhq/rein/llm"
	"github.com/reinhq/rein/tool"
)

// bashJobIn is the bash tool's input when the session has background jobs.
type bashJobIn struct {
	Command         string  `json:"command"`
	Timeout         float64 `json:"timeout,omitempty" jsonschema:"seconds (default 120, max 600)"`
	Description     string  `json:"description,omitempty" jsonschema:"5-10 words, for the user"`
	Dir             string  `json:"dir,omitempty" jsonschema:"default: workspace root"`
	Unsandboxed     bool    `json:"unsandboxed,omitempty" jsonschema:"asks the user"`
	RunInBackground bool    `json:"run_in_background,omitempty"`
}

func (in bashJobIn) plain() bashIn {
	return bashIn{Command: in.Command, Timeout: in.Timeout, Description: in.Description, Dir: in.Dir, Unsandboxed: in.Unsandboxed}
}

const bashJobsDesc = " run_in_background (servers, watchers, long builds) returns a job id at once, no timeout; " +
	"you are told when it ends. A command still running at its timeout moves to the background."

// runJobs is the bash tool with background jobs (SPEC TOOL-8).
func (b *bash) runJobs(ctx context.Context, call tool.Call, jin bashJobIn) (tool.Result, error) {
	in := jin.plain()
	cmd, res := b.prepare(ctx, call, in)
	if res != nil {
		return *res, nil
	}
	backend, res := b.backendOf(in)
	if res != nil {
		return *res, nil
	}
	jobs := b.opts.Jobs
	if jin.RunInBackground {
		cmd.Timeout = 0
		job, err := jobs.start(backend, call, cmd, in.Command, in.Description, true)
		if err == nil {
			if err = job.startErr(); err != nil {
				jobs.forget(job)
				job.out.discard()
			}
		}
		if err != nil {
			r := tool.Errorf("not started: %v", err)
			r.Metadata = map[string]any{"job_error": err.Error()}
			return r, nil
		}
		r := tool.Text(fmt.Sprintf("Started background job %s: %s. It runs on while you work: read its output with "+
			"job_output {\"id\": %q} (wait_ms waits for some), stop it with job_kill; you are told when it ends. "+
			"Its output goes to %s.", job.ID, quoteCommand(in.Command), job.ID, job.out.path))
		r.Metadata = map[string]any{"job_id": job.ID, "output_path": job.out.path, "background": true}
		return r, nil
	}
	if !b.opts.BackgroundOnTimeout || !autoBackground(in.Command) {
		return b.runNow(ctx, call, in, cmd), nil
	}
	timeout := cmd.Timeout
	cmd.Timeout = 0 // this call waits, and decides at the timeout
	job, err := jobs.start(backend, call, cmd, in.Command, in.Description, false)
	if err != nil { // the session's jobs are closed
		cmd.Timeout = timeout
		return b.runNow(ctx, call, in, cmd), nil
	}
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case <-job.done:
		return b.jobResult(call, in, timeout, job, false), nil
	case <-ctx.Done():
		job.cancel()
		<-job.done
		return b.jobResult(call, in, timeout, job, false), nil
	case <-t.C:
	}
	if err := jobs.promote(job); err != nil {
		// No room in the background: end it as a timeout always did.
		job.cancel()
		<-job.done
		r := b.jobResult(call, in, timeout, job, true)
		r.Content = append(r.Content, &llm.Text{Text: "(it was not moved to the background: " + err.Error() + ")"})
		return r, nil
	}
	return b.moved(job, timeout), nil
}

// autoBackground reports whether a command reaching its timeout may be
// moved to the background: not sleep (the model asked to wait), not git
// (a lock left held breaks the next git command), not a command line that
// cannot be parsed (what it runs is unknown).
func autoBackground(command string) bool {
	cmds, ok := scanBash(command)
	if !ok || len(cmds) == 0 {
		return false
	}
	if len(cmds[0].Args) > 0 && cmds[0].Args[0] == "sleep" {
		return false
	}
	for _, c := range cmds {
		if len(c.Args) > 0 && c.Args[0] == "git" {
			return false
		}
	}
	return true
}

// moved is the result of a command moved to the background at its timeout.
func (b *bash) moved(job *Job, timeout time.Duration) tool.Result {
	total, _ := job.out.size()
	shown := int(min(total, int64(BashPreviewChars)))
	tail, from, _ := job.out.read(total-int64(shown), shown)
	job.setReadOffset(total)
	text := fmt.Sprintf("Command did not complete within its %s s timeout and was moved to the background as job %s; "+
		"it runs on, nothing was killed. Read its output with job_output {\"id\": %q} (wait_ms waits for more), stop it "+
		"with job_kill; you are told when it ends. Its whole output goes to %s.",
		fmtSecs(timeout.Seconds()), job.ID, job.ID, job.out.path)
	switch {
	case total == 0:
		text += "\n\nNo output so far."
	case from > 0:
		text += fmt.Sprintf("\n\nThe last %s of its %s of output so far:\n%s", FormatBytes(int64(len(tail))), FormatBytes(total), clean(dropPartialRune(tail)))
	default:
		text += "\n\nIts output so far:\n" + clean(tail)
	}
	r := tool.Text(text)
	r.Metadata = map[string]any{"job_id": job.ID, "output_path": job.out.path, "background": true, "moved_after_ms": timeout.Milliseconds()}
	return r
}

// jobResult renders a foreground command that ran as a job like any
// foreground command (TOOL-4): the job's output becomes the Output the
// backend would have given, and the job is forgotten. timedOut says it was
// stopped at its timeout.
func (b *bash) jobResult(call tool.Call, in bashIn, timeout time.Duration, job *Job, timedOut bool) tool.Result {
	b.opts.Jobs.forget(job)
	job.mu.Lock()
	out, err := job.result, job.err
	job.mu.Unlock()
	if err != nil {
		job.out.discard()
		r := tool.Errorf("the command could not be run: %v", err)
		if be, res := b.backendOf(in); res == nil {
			r.Metadata = map[string]any{"backend": be.Name()}
		}
		return r
	}
	if timedOut {
		out.TimedOut, out.Cancelled = true, false
	}
	const memory = exec.DefaultMaxMemory
	if total, _ := job.out.size(); total > memory || out.OutputLimited {
		// The output is cut for the model, which is told where it all
		// is: a lazy file is made now, from the ring, which holds it all.
		_ = job.out.materialize() // a failure leaves no path to tell
	}
	total, inFile := job.out.size()
	head, _, _ := job.out.read(0, int(min(total, memory)))
	// exec counts the bytes past the limit too; the job kept the others.
	out.Combined, out.TotalBytes = head, max(out.TotalBytes, total)
	if total > int64(len(head)) || out.OutputLimited {
		out.Truncated = true
		n := int(min(total, memory))
		out.Tail, _, _ = job.out.read(total-int64(n), n)
		if inFile > 0 {
			out.SpillPath, out.SpillBytes = job.out.path, inFile
		}
	}
	if out.SpillPath == "" {
		job.out.discard()
	} else {
		job.out.close()
	}
	return b.result(call, in, timeout, out)
}
