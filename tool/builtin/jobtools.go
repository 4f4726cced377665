package builtin

import (
	"bytes"
	"context"
	"fmt"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/reinhq/rein/tool"
)

// Limits of job_output (SPEC TOOL-8).
const (
	// JobOutputMaxBytes is the most output one job_output call returns.
	JobOutputMaxBytes = BashOutputCap
	// JobFilterMaxLen bounds a filter's length: Go's regexp runs in linear
	// time, but a huge pattern still costs its size on every line.
	JobFilterMaxLen = 512
	// JobWaitMax bounds job_output's wait_ms.
	JobWaitMax = 30 * time.Second
	// jobScanChunk is how much output a filtered read looks at per step.
	jobScanChunk = 64 << 10
)

// The schemas of the job tools' inputs.
var (
	jobOutputSchema = tool.NewStaticSchema[jobOutputIn](nil)
	jobIDSchema     = tool.NewStaticSchema[jobIDIn](nil)
	jobListSchema   = tool.NewStaticSchema[jobListIn](nil)
)

type jobOutputIn struct {
	ID       string  `json:"id" jsonschema:"job id"`
	Offset   *int64  `json:"offset,omitempty" jsonschema:"byte offset"`
	Filter   string  `json:"filter,omitempty" jsonschema:"regexp: only matching lines"`
	MaxBytes int     `json:"max_bytes,omitempty"`
	WaitMS   float64 `json:"wait_ms,omitempty" jsonschema:"ms to wait for new output or the end (max 30000)"`
}

type jobIDIn struct {
	ID string `json:"id" jsonschema:"job id"`
}

type jobListIn struct{}

// JobTools returns job_output, job_kill and job_list over a session's jobs
// (SPEC TOOL-8). They see only this session's jobs. job_output and
// job_list only read the session's state; job_kill stops a process this
// session started, nothing else, so it is a session tool too (it runs in
// every permission mode but strict, like todo_write).
func JobTools(jobs *Jobs) []tool.Tool {
	t := &jobTools{jobs: jobs}
	read := tool.Meta{ReadOnly: true, ConcurrencySafe: true, Category: tool.CategorySession}
	return []tool.Tool{
		tool.DefineStatic("job_output", "Reads a background job's new output, its state and exit code.", read, jobOutputSchema, t.output),
		tool.DefineStatic("job_kill", "Stops a background job and its process group.",
			tool.Meta{Category: tool.CategorySession}, jobIDSchema, t.kill),
		tool.DefineStatic("job_list", "Lists background jobs and their state.", read, jobListSchema, t.list),
	}
}

type jobTools struct{ jobs *Jobs }

func (t *jobTools) output(ctx context.Context, call tool.Call, in jobOutputIn) (tool.Result, error) {
	job, err := t.jobs.Get(strings.TrimSpace(in.ID))
	if err != nil {
		return tool.Errorf("%v", err), nil
	}
	maxBytes := in.MaxBytes
	switch {
	case maxBytes < 0:
		return tool.Errorf("max_bytes %d is negative; give a number of bytes up to %d, or leave it out", maxBytes, JobOutputMaxBytes), nil
	case maxBytes == 0 || maxBytes > JobOutputMaxBytes:
		maxBytes = JobOutputMaxBytes
	}
	var re *regexp.Regexp
	if in.Filter != "" {
		if len(in.Filter) > JobFilterMaxLen {
			return tool.Errorf("filter is %d characters long, more than the %d allowed; use a shorter pattern", len(in.Filter), JobFilterMaxLen), nil
		}
		if re, err = regexp.Compile(in.Filter); err != nil {
			return tool.Errorf("filter is not a valid regular expression (Go syntax, like RE2): %v", err), nil
		}
	}
	if in.WaitMS < 0 || in.WaitMS > float64(JobWaitMax.Milliseconds()) {
		return tool.Errorf("wait_ms %v is out of range; give 0 to %d milliseconds", in.WaitMS, JobWaitMax.Milliseconds()), nil
	}
	off := job.readOffset()
	if in.Offset != nil {
		if *in.Offset < 0 {
			return tool.Errorf("offset %d is negative; give a byte offset from 0 (next_offset of an earlier read)", *in.Offset), nil
		}
		off = *in.Offset
	}
	if in.WaitMS > 0 {
		job.waitOutput(ctx, off, time.Duration(in.WaitMS*float64(time.Millisecond)))
	}
	var data []byte
	var from, next int64
	if re == nil {
		data, from, next = job.out.read(off, maxBytes)
		data, next = cutRune(data, next, job.running())
	} else {
		data, from, next = job.filtered(re, off, maxBytes)
	}
	job.setReadOffset(next)
	return t.render(job, in, off, from, next, data), nil
}

// cutRune drops a rune cut at the end of data (its rest comes next time),
// unless the job ended.
func cutRune(data []byte, next int64, running bool) ([]byte, int64) {
	if !running || len(data) == 0 {
		return data, next
	}
	for i := 1; i <= utf8.UTFMax && i <= len(data); i++ {
		if utf8.RuneStart(data[len(data)-i]) {
			if !utf8.FullRune(data[len(data)-i:]) {
				return data[:len(data)-i], next - int64(i)
			}
			break
		}
	}
	return data, next
}

// filtered returns the lines matching re from off, up to maxBytes of
// them, scanning what was written when the call began. A running job's
// last, unfinished line waits for its end.
func (job *Job) filtered(re *regexp.Regexp, off int64, maxBytes int) (out []byte, from, next int64) {
	end, _ := job.out.size()
	running := job.running()
	from, next = -1, off
	for next < end && len(out) < maxBytes {
		chunk, f, n := job.out.read(next, jobScanChunk)
		if from < 0 {
			from = f
		}
		if len(chunk) == 0 {
			break
		}
		last := bytes.LastIndexByte(chunk, '\n')
		switch {
		case last >= 0:
			chunk = chunk[:last+1]
		case n < end || !running:
			// A line longer than a chunk, or the job's last line: take it as it is.
		default:
			return out, max(from, off), f
		}
		next = f + int64(len(chunk))
		at := f // where line starts
		for line := range bytes.Lines(chunk) {
			start := at
			at += int64(len(line))
			if re.Match(bytes.TrimRight(line, "\r\n")) {
				if len(out)+len(line) > maxBytes && len(out) > 0 {
					// Stop before this line; the next read starts at it.
					return out, from, start
				}
				if len(line) > maxBytes { // one line longer than the whole answer: its start
					line = line[:maxBytes]
				}
				out = append(out, line...)
			}
		}
	}
	if from < 0 {
		from = next
	}
	return out, from, next
}

func (t *jobTools) render(job *Job, in jobOutputIn, off, from, next int64, data []byte) tool.Result {
	info, _ := job.Info()
	total := info.OutputBytes
	var b strings.Builder
	fmt.Fprintf(&b, "job %s %s — %s written in all", job.ID, stateText(info), FormatBytes(total))
	if in.Filter != "" {
		fmt.Fprintf(&b, "; lines matching %q", in.Filter)
	}
	fmt.Fprintf(&b, "; bytes %d to %d:\n", from, next)
	if from > off {
		fmt.Fprintf(&b, "[bytes %d to %d were not kept: the file keeps the first %s, memory the last %s]\n",
			off, from, FormatBytes(job.jobs.opts.FileBytes), FormatBytes(int64(job.jobs.opts.RingBytes)))
	}
	text := clean(data)
	switch {
	case len(data) == 0 && in.Filter != "":
		b.WriteString("(no matching lines)")
	case len(data) == 0:
		b.WriteString("(no new output)")
	default:
		b.WriteString(strings.TrimRight(text, "\n"))
	}
	b.WriteString("\n\n")
	if next < total {
		fmt.Fprintf(&b, "[%s more after byte %d: call job_output again with offset %d]", FormatBytes(total-next), next, next)
	} else if job.running() {
		fmt.Fprintf(&b, "[next_offset %d; the job still runs: wait_ms waits for more]", next)
	} else {
		fmt.Fprintf(&b, "[next_offset %d; that is all of it]", next)
	}
	r := tool.Text(b.String())
	meta := map[string]any{"job_id": job.ID, "state": string(info.State), "next_offset": next,
		"output_bytes": total, "output_path": info.OutputPath}
	if info.ExitCode != nil {
		meta["exit_code"] = *info.ExitCode
	}
	r.Metadata = meta
	return r
}

// stateText says where a job stands, in words.
func stateText(info JobInfo) string {
	switch info.State {
	case JobRunning:
		return "is running"
	case JobFailed:
		return "could not run: " + info.Error
	case JobExited:
		return fmt.Sprintf("exited with code %d", *info.ExitCode)
	case JobKilled:
		return fmt.Sprintf("was killed (exit code %d)", *info.ExitCode)
	}
	if info.Error != "" {
		return "was stopped: " + info.Error
	}
	return "was stopped"
}

func (t *jobTools) kill(ctx context.Context, call tool.Call, in jobIDIn) (tool.Result, error) {
	id := strings.TrimSpace(in.ID)
	job, err := t.jobs.Get(id)
	if err != nil {
		return tool.Errorf("%v", err), nil
	}
	if !job.running() {
		info, _ := job.Info()
		return tool.Text(fmt.Sprintf("job %s had already ended: it %s", id, stateText(info))), nil
	}
	if _, err := t.jobs.kill(ctx, id, true); err != nil {
		return tool.Errorf("job %s was sent SIGTERM but has not ended yet (%v); job_list shows whether it has since", id, err), nil
	}
	info, _ := job.Info()
	r := tool.Text(fmt.Sprintf("job %s %s; it wrote %s: job_output {\"id\": %q} shows what it had not shown yet", id, stateText(info), FormatBytes(info.OutputBytes), id))
	r.Metadata = map[string]any{"job_id": id, "state": string(info.State)}
	return r, nil
}

func (t *jobTools) list(ctx context.Context, call tool.Call, in jobListIn) (tool.Result, error) {
	infos := t.jobs.List()
	if len(infos) == 0 {
		return tool.Text("no background jobs in this session"), nil
	}
	var b strings.Builder
	for _, i := range infos {
		fmt.Fprintf(&b, "job %s %s — %s — %s of output in %s\n", i.ID, stateText(i), quoteCommand(i.Command), FormatBytes(i.OutputBytes), i.OutputPath)
	}
	r := tool.Text(strings.TrimRight(b.String(), "\n"))
	r.Metadata = map[string]any{"jobs": len(infos), "running": t.jobs.Running()}
	return r, nil
}

// readOffset is where the last job_output read stopped.
func (job *Job) readOffset() int64 {
	job.mu.Lock()
	defer job.mu.Unlock()
	return job.readTo
}

// setReadOffset is where the next job_output without an offset starts.
func (job *Job) setReadOffset(off int64) {
	job.mu.Lock()
	defer job.mu.Unlock()
	job.readTo = off
}

// waitOutput waits up to d for output past off, the job's end, or ctx.
func (job *Job) waitOutput(ctx context.Context, off int64, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	for {
		changed := job.out.wait()
		if total, _ := job.out.size(); total > off || !job.running() {
			return
		}
		select {
		case <-changed:
		case <-job.done:
			return
		case <-t.C:
			return
		case <-ctx.Done():
			return
		}
	}
}
