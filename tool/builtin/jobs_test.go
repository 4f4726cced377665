package builtin

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/reinhq/rein/exec"
	"github.com/reinhq/rein/tool"
)

// jobsCase is a session with background jobs: bash and the job tools
// over one Jobs, on the host.
type jobsCase struct {
	*bashCase
	jobs  *Jobs
	tools map[string]tool.Tool
	pgids map[string]*atomic.Int64
}

func newJobs(t *testing.T, jopts JobsOptions, bopts BashOptions) *jobsCase {
	t.Helper()
	c := &jobsCase{pgids: map[string]*atomic.Int64{}}
	for _, id := range []string{"1", "2", "3"} {
		c.pgids[id] = &atomic.Int64{}
	}
	jopts.OnStart = func(call tool.Call, id string, pgid int) {
		if p, ok := c.pgids[id]; ok {
			p.Store(int64(pgid))
		}
	}
	if jopts.Dir == "" {
		jopts.Dir = t.TempDir()
	}
	c.jobs = NewJobs(jopts)
	bopts.Jobs = c.jobs
	c.bashCase = newBash(t, bopts)
	c.tools = map[string]tool.Tool{}
	for _, tl := range JobTools(c.jobs) {
		c.tools[tl.Spec().Name] = tl
	}
	t.Cleanup(func() { c.jobs.Close() })
	return c
}

// tool calls a job tool with input.
func (c *jobsCase) tool(name string, input any) tool.Result {
	c.t.Helper()
	raw, err := json.Marshal(input)
	if err != nil {
		c.t.Fatal(err)
	}
	r, err := c.tools[name].Run(context.Background(), tool.Call{ID: "call_x", Name: name, Input: raw})
	if err != nil {
		c.t.Fatalf("%s returned a Go error: %v", name, err)
	}
	return r
}

// waitEnd waits for job id to end.
func (c *jobsCase) waitEnd(id string) *Job {
	c.t.Helper()
	job, err := c.jobs.Get(id)
	if err != nil {
		c.t.Fatal(err)
	}
	select {
	case <-job.Done():
	case <-time.After(time.Minute):
		c.t.Fatalf("job %s did not end", id)
	}
	return job
}

// waitFor calls job_output with wait_ms until its text holds want.
func (c *jobsCase) waitFor(id, want string) tool.Result {
	c.t.Helper()
	var seen strings.Builder
	for range 200 {
		r := c.tool("job_output", map[string]any{"id": id, "wait_ms": 500})
		if r.IsError {
			c.t.Fatalf("job_output: %s", r.TextOf())
		}
		seen.WriteString(r.TextOf())
		if strings.Contains(seen.String(), want) {
			return r
		}
	}
	c.t.Fatalf("job %s never wrote %q; saw:\n%s", id, want, seen.String())
	return tool.Result{}
}

// groupGone waits for a process group to be gone; false if it stays.
func groupGone(pgid int) bool {
	for range 500 {
		if syscall.Kill(-pgid, 0) != nil {
			return true
		}
		time.Sleep(10 * time.Millisecond)
	}
	return false
}

// TOOL-8: a job started in the background returns its id at once; a later
// command reaches it; its output is read; the model is told when it ends,
// once.
func TestJobBackground_TOOL8(t *testing.T) {
	c := newJobs(t, JobsOptions{}, BashOptions{})
	stop := filepath.Join(c.call.WorkDir, "stop")
	r := c.run(context.Background(), map[string]any{"command": "echo ready; while [ ! -e stop ]; do sleep 0.02; done; echo finished; exit 7",
		"run_in_background": true, "description": "waits for stop"})
	if r.IsError || r.Metadata["job_id"] != "1" || !strings.Contains(r.TextOf(), "Started background job 1") {
		t.Fatalf("start: %v %q %v", r.IsError, r.TextOf(), r.Metadata)
	}
	c.waitFor("1", "ready")
	if n := c.jobs.Notices(); n != nil {
		t.Fatalf("a running job gave a notice: %q", n)
	}
	list := c.tool("job_list", map[string]any{})
	if !strings.Contains(list.TextOf(), "job 1 is running") || !strings.Contains(list.TextOf(), "`echo ready;") {
		t.Fatalf("job_list: %q", list.TextOf())
	}
	// A later command reaches the running job.
	if r := c.run(context.Background(), "touch "+stop); r.IsError {
		t.Fatalf("touch: %q", r.TextOf())
	}
	c.waitEnd("1")
	out := c.tool("job_output", map[string]any{"id": "1"})
	if !strings.Contains(out.TextOf(), "job 1 exited with code 7") || !strings.Contains(out.TextOf(), "finished") ||
		strings.Contains(out.TextOf(), "ready") || out.Metadata["exit_code"] != 7 {
		t.Fatalf("job_output after the end (new output only): %q %v", out.TextOf(), out.Metadata)
	}
	n := c.jobs.Notices()
	if len(n) != 1 || !strings.Contains(n[0], "Background job 1 (`echo ready;") || !strings.Contains(n[0], "exited with code 7") ||
		!strings.Contains(n[0], "no human input occurred") || !strings.HasPrefix(n[0], "<system-reminder>") {
		t.Fatalf("notice: %q", n)
	}
	if again := c.jobs.Notices(); again != nil {
		t.Fatalf("a job's end was told twice: %q", again)
	}
	info := c.jobs.List()[0]
	data, err := os.ReadFile(info.OutputPath)
	if err != nil || string(data) != "ready\nfinished\n" {
		t.Fatalf("output file %s: %q %v", info.OutputPath, data, err)
	}
}

// TOOL-8: output from an offset, with a filter, in bounded pieces.
func TestJobOutputOffsetFilter_TOOL8(t *testing.T) {
	c := newJobs(t, JobsOptions{}, BashOptions{})
	c.run(context.Background(), map[string]any{"command": "seq 1 1000", "run_in_background": true})
	c.waitEnd("1")
	// "seq 1 1000": lines 1..9 are 2 bytes, 10..99 3, 100..999 4, 1000 5.
	off := 9*2 + 90*3 // the offset of "100\n"
	r := c.tool("job_output", map[string]any{"id": "1", "offset": off, "filter": "^99"})
	want := "990\n991\n992\n993\n994\n995\n996\n997\n998\n999"
	if !strings.Contains(r.TextOf(), want) || strings.Contains(r.TextOf(), "\n99\n") || r.Metadata["next_offset"] != int64(3893) {
		t.Fatalf("filtered from %d: %q %v", off, r.TextOf(), r.Metadata)
	}
	// Without a filter, max_bytes cuts; next_offset continues exactly.
	r = c.tool("job_output", map[string]any{"id": "1", "offset": 0, "max_bytes": 10})
	if !strings.Contains(r.TextOf(), "bytes 0 to 10:\n1\n2\n3\n4\n5") || r.Metadata["next_offset"] != int64(10) ||
		!strings.Contains(r.TextOf(), "call job_output again with offset 10") {
		t.Fatalf("first piece: %q %v", r.TextOf(), r.Metadata)
	}
	r = c.tool("job_output", map[string]any{"id": "1", "max_bytes": 4})
	if !strings.Contains(r.TextOf(), "bytes 10 to 14:\n6\n7") {
		t.Fatalf("next piece continues from the last read: %q", r.TextOf())
	}
	// Filtered lines stop at max_bytes, at a line's start; a line longer
	// than max_bytes is cut.
	r = c.tool("job_output", map[string]any{"id": "1", "offset": 0, "filter": "^[0-9]+$", "max_bytes": 12})
	if !strings.Contains(r.TextOf(), "bytes 0 to 12:\n1\n2\n3\n4\n5\n6") || r.Metadata["next_offset"] != int64(12) {
		t.Fatalf("filtered piece: %q %v", r.TextOf(), r.Metadata)
	}
	c.run(context.Background(), map[string]any{"command": "head -c 100000 /dev/zero | tr '\\0' x; echo", "run_in_background": true})
	c.waitEnd("2")
	r = c.tool("job_output", map[string]any{"id": "2", "offset": 0, "filter": "x", "max_bytes": 1000})
	if x := strings.Repeat("x", 1000); !strings.Contains(r.TextOf(), x) || strings.Contains(r.TextOf(), x+"x") {
		t.Fatalf("a long line: want max_bytes (1000) of it, got %d bytes", len(r.TextOf()))
	}
	for _, bad := range []struct {
		in   map[string]any
		want string
	}{
		{map[string]any{"id": "1", "filter": "("}, "not a valid regular expression"},
		{map[string]any{"id": "1", "filter": strings.Repeat("a", JobFilterMaxLen+1)}, "more than the 512 allowed"},
		{map[string]any{"id": "1", "offset": -1}, "offset -1 is negative"},
		{map[string]any{"id": "1", "max_bytes": -5}, "max_bytes -5 is negative"},
		{map[string]any{"id": "1", "wait_ms": 60000}, "wait_ms 60000 is out of range"},
		{map[string]any{"id": "9"}, `no job "9" in this session; its jobs are: 1, 2`},
	} {
		r := c.tool("job_output", bad.in)
		if !r.IsError || !strings.Contains(r.TextOf(), bad.want) {
			t.Errorf("%v: %v %q, want an error with %q", bad.in, r.IsError, r.TextOf(), bad.want)
		}
	}
}

// TOOL-8: job_kill stops the job's whole process group; the model is not
// told of an end it caused.
func TestJobKill_TOOL8(t *testing.T) {
	c := newJobs(t, JobsOptions{}, BashOptions{})
	c.run(context.Background(), map[string]any{"command": "echo up; sleep 1000 & sleep 1000", "run_in_background": true})
	c.waitFor("1", "up")
	pgid := int(c.pgids["1"].Load())
	if pgid <= 0 {
		t.Fatal("the job's process group was not reported")
	}
	r := c.tool("job_kill", map[string]any{"id": "1"})
	if r.IsError || !strings.Contains(r.TextOf(), "job 1 was killed") {
		t.Fatalf("job_kill: %q", r.TextOf())
	}
	if !groupGone(pgid) {
		t.Fatalf("process group %d survived job_kill", pgid)
	}
	if n := c.jobs.Notices(); n != nil {
		t.Fatalf("a killed job gave a notice: %q", n)
	}
	if r := c.tool("job_kill", map[string]any{"id": "1"}); r.IsError || !strings.Contains(r.TextOf(), "had already ended") {
		t.Fatalf("second job_kill: %q", r.TextOf())
	}
	// The user stopping a job (terminal UI, API) is told to the model.
	c.run(context.Background(), map[string]any{"command": "sleep 1000", "run_in_background": true})
	if _, err := c.jobs.Kill(context.Background(), "2"); err != nil {
		t.Fatal(err)
	}
	if n := c.jobs.Notices(); len(n) != 1 || !strings.Contains(n[0], "Background job 2 (`sleep 1000`) was stopped by the user") {
		t.Fatalf("notice of a job the user stopped: %q", n)
	}
}

// TOOL-8: at the limit a new job is refused with what to do.
func TestJobLimit_TOOL8(t *testing.T) {
	c := newJobs(t, JobsOptions{Max: 2}, BashOptions{})
	for i := range 2 {
		if r := c.run(context.Background(), map[string]any{"command": "sleep 1000", "run_in_background": true}); r.IsError {
			t.Fatalf("job %d: %q", i+1, r.TextOf())
		}
	}
	r := c.run(context.Background(), map[string]any{"command": "sleep 1000", "run_in_background": true})
	if !r.IsError || !strings.Contains(r.TextOf(), "2 background jobs are running, the most this session allows (jobs.max_per_session)") ||
		!strings.Contains(r.TextOf(), "job_kill") {
		t.Fatalf("third job: %v %q", r.IsError, r.TextOf())
	}
	c.tool("job_kill", map[string]any{"id": "1"})
	if r := c.run(context.Background(), map[string]any{"command": "true", "run_in_background": true}); r.IsError || r.Metadata["job_id"] != "3" {
		t.Fatalf("after a kill there is room: %q %v", r.TextOf(), r.Metadata)
	}
	off := newJobs(t, JobsOptions{Max: -1}, BashOptions{})
	if r := off.run(context.Background(), map[string]any{"command": "true", "run_in_background": true}); !r.IsError ||
		!strings.Contains(r.TextOf(), "background jobs are off") {
		t.Fatalf("jobs off: %q", r.TextOf())
	}
}

// TOOL-8: a foreground command that reaches its timeout is moved to the
// background, not killed; sleep and git are not; with the setting off
// the command is killed as before.
func TestJobMovedAtTimeout_TOOL8(t *testing.T) {
	c := newJobs(t, JobsOptions{}, BashOptions{BackgroundOnTimeout: true})
	r := c.run(context.Background(), map[string]any{"command": "echo started; while [ ! -e stop ]; do sleep 0.02; done; echo later", "timeout": 0.3})
	if r.IsError || r.Metadata["job_id"] != "1" || !strings.Contains(r.TextOf(), "did not complete within its 0.3 s timeout and was moved to the background as job 1") ||
		!strings.Contains(r.TextOf(), "started") {
		t.Fatalf("moved: %v %q %v", r.IsError, r.TextOf(), r.Metadata)
	}
	pgid := int(c.pgids["1"].Load())
	if pgid <= 0 || syscall.Kill(-pgid, 0) != nil {
		t.Fatalf("the moved job does not run (pgid %d)", pgid)
	}
	c.run(context.Background(), "touch stop")
	c.waitEnd("1")
	if n := c.jobs.Notices(); len(n) != 1 || !strings.Contains(n[0], "Background job 1") || !strings.Contains(n[0], "exited with code 0") {
		t.Fatalf("notice: %q", n)
	}
	if out := c.tool("job_output", map[string]any{"id": "1"}); !strings.Contains(out.TextOf(), "later") || strings.Contains(out.TextOf(), "started") {
		t.Fatalf("job_output starts after what the bash result showed: %q", out.TextOf())
	}

	// A quick command is a plain foreground command: no job, same result.
	if r := c.run(context.Background(), "echo quick; exit 2"); r.TextOf() != "quick\n\nexit code 2" || !r.IsError || r.Metadata["job_id"] != nil {
		t.Fatalf("quick: %q %v", r.TextOf(), r.Metadata)
	}
	if len(c.jobs.List()) != 1 {
		t.Fatalf("a foreground command stayed listed: %v", c.jobs.List())
	}
	for _, cmd := range []string{"sleep 1000", "git --version >/dev/null; sleep 1000"} {
		r := c.run(context.Background(), map[string]any{"command": cmd, "timeout": 0.2})
		if !r.IsError || r.Metadata["timed_out"] != true || r.Metadata["job_id"] != nil {
			t.Errorf("%q was moved, not timed out: %q %v", cmd, r.TextOf(), r.Metadata)
		}
	}
	off := newJobs(t, JobsOptions{}, BashOptions{})
	r = off.run(context.Background(), map[string]any{"command": "echo x; while :; do sleep 0.02; done", "timeout": 0.2})
	if !r.IsError || r.Metadata["timed_out"] != true || !strings.Contains(r.TextOf(), "command timed out after 0.2 s") {
		t.Fatalf("setting off: %q %v", r.TextOf(), r.Metadata)
	}
	// At the limit it is killed at its timeout, and told why.
	full := newJobs(t, JobsOptions{Max: 1}, BashOptions{BackgroundOnTimeout: true})
	full.run(context.Background(), map[string]any{"command": "sleep 1000", "run_in_background": true})
	r = full.run(context.Background(), map[string]any{"command": "echo y; while :; do sleep 0.02; done", "timeout": 0.2})
	if !r.IsError || r.Metadata["timed_out"] != true || !strings.Contains(r.TextOf(), "it was not moved to the background: 1 background jobs are running") {
		t.Fatalf("at the limit: %q %v", r.TextOf(), r.Metadata)
	}
}

// TOOL-8: a foreground command run as a job gives the same result as
// before, big output included (spilled to a file in the session dir).
func TestJobForegroundOutputSpilled_TOOL8(t *testing.T) {
	c := newJobs(t, JobsOptions{}, BashOptions{BackgroundOnTimeout: true, OutputCap: 1000})
	r := c.run(context.Background(), "seq 1 200000")
	checkCapped(t, r, c.call, seqOutput(200000))
}

// TOOL-8: closing the session's jobs stops them all, and no job starts
// afterwards.
func TestJobsCloseStopsJobs_TOOL8(t *testing.T) {
	c := newJobs(t, JobsOptions{}, BashOptions{BackgroundOnTimeout: true})
	c.run(context.Background(), map[string]any{"command": "echo a; sleep 1000", "run_in_background": true})
	c.run(context.Background(), map[string]any{"command": "echo b; sleep 1000", "run_in_background": true})
	c.waitFor("1", "a")
	c.waitFor("2", "b")
	p1, p2 := int(c.pgids["1"].Load()), int(c.pgids["2"].Load())
	if err := c.jobs.Close(); err != nil {
		t.Fatal(err)
	}
	if !groupGone(p1) || !groupGone(p2) {
		t.Fatal("a job survived the session's end")
	}
	for _, info := range c.jobs.List() {
		if info.State != JobStopped || info.Error != "stopped because the session ended" {
			t.Errorf("job %s: %s %q", info.ID, info.State, info.Error)
		}
	}
	if r := c.run(context.Background(), map[string]any{"command": "true", "run_in_background": true}); !r.IsError || !strings.Contains(r.TextOf(), "the session ended") {
		t.Fatalf("start after close: %q", r.TextOf())
	}
	// A foreground command still runs, plainly.
	if r := c.run(context.Background(), "echo ok"); r.TextOf() != "ok" {
		t.Fatalf("foreground after close: %q", r.TextOf())
	}
}

// Attack rows (TOOL-8): what a hostile or careless model can make a job
// do.
func TestJobAttacks_TOOL8(t *testing.T) {
	t.Run("flood: ring and file stay bounded, the job is stopped", func(t *testing.T) {
		c := newJobs(t, JobsOptions{RingBytes: 4 << 10, FileBytes: 256 << 10}, BashOptions{})
		c.run(context.Background(), map[string]any{"command": "yes flood", "run_in_background": true})
		job := c.waitEnd("1")
		info, _ := job.Info()
		fi, err := os.Stat(info.OutputPath)
		if err != nil || fi.Size() != 256<<10 {
			t.Fatalf("file %v %v, want exactly the cap", fi, err)
		}
		if cap(job.out.ring) > 4<<10 || info.State != JobStopped || !strings.Contains(info.Error, "passed the limit of 256 KiB") {
			t.Fatalf("ring cap %d, state %s %q", cap(job.out.ring), info.State, info.Error)
		}
		if n := c.jobs.Notices(); len(n) != 1 || !strings.Contains(n[0], "was stopped: its output passed the limit of 256 KiB") {
			t.Fatalf("notice: %q", n)
		}
		// The gap between the file's cap and the ring is said, not papered over.
		total := info.OutputBytes
		if total > 256<<10 {
			r := c.tool("job_output", map[string]any{"id": "1", "offset": 256 << 10, "max_bytes": 100})
			if !strings.Contains(r.TextOf(), "were not kept") && total-int64(len(job.out.ring)) > 256<<10 {
				t.Fatalf("gap not reported: %q", r.TextOf())
			}
		}
	})
	t.Run("a catastrophic regex runs in linear time", func(t *testing.T) {
		c := newJobs(t, JobsOptions{}, BashOptions{})
		c.run(context.Background(), map[string]any{"command": "for i in $(seq 200); do printf 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa!\\n'; done", "run_in_background": true})
		c.waitEnd("1")
		r := c.tool("job_output", map[string]any{"id": "1", "offset": 0, "filter": "^(a+)+$"})
		if r.IsError || !strings.Contains(r.TextOf(), "(no matching lines)") {
			t.Fatalf("%q", r.TextOf())
		}
	})
	t.Run("job ids guessed across sessions are not found", func(t *testing.T) {
		a := newJobs(t, JobsOptions{}, BashOptions{})
		b := newJobs(t, JobsOptions{}, BashOptions{})
		a.run(context.Background(), map[string]any{"command": "echo secret; sleep 1000", "run_in_background": true})
		a.waitFor("1", "secret")
		for _, name := range []string{"job_output", "job_kill"} {
			r := b.tool(name, map[string]any{"id": "1"})
			if !r.IsError || !strings.Contains(r.TextOf(), `no job "1": this session has no background jobs`) {
				t.Errorf("%s in another session: %q", name, r.TextOf())
			}
		}
		if r := b.tool("job_list", map[string]any{}); r.TextOf() != "no background jobs in this session" {
			t.Errorf("job_list in another session: %q", r.TextOf())
		}
		if syscall.Kill(-int(a.pgids["1"].Load()), 0) != nil {
			t.Error("the other session's job_kill reached it")
		}
	})
	t.Run("a job that forks and detaches with setsid escapes the process group on the host", func(t *testing.T) {
		// Documented limit (docs/security.md, Background jobs): on the host
		// a process that calls setsid leaves the job's group, so job_kill
		// and the session's end do not reach it; under bubblewrap the
		// sandbox's PID namespace ends it with the job.
		if _, err := os.Stat("/usr/bin/setsid"); err != nil {
			t.Skip("setsid is not installed")
		}
		c := newJobs(t, JobsOptions{}, BashOptions{})
		pidfile := filepath.Join(c.call.WorkDir, "detached.pid")
		c.run(context.Background(), map[string]any{"command": "setsid sh -c 'echo $$ > detached.pid; exec sleep 1000' & echo forked; sleep 1000", "run_in_background": true})
		c.waitFor("1", "forked")
		var pid int
		for range 500 {
			data, _ := os.ReadFile(pidfile)
			if pid, _ = strconv.Atoi(strings.TrimSpace(string(data))); pid > 0 {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		if pid <= 0 {
			out := c.tool("job_output", map[string]any{"id": "1", "offset": 0})
			t.Fatalf("the detached process did not start: %s", out.TextOf())
		}
		defer syscall.Kill(pid, syscall.SIGKILL)
		c.tool("job_kill", map[string]any{"id": "1"})
		if !running(pid) {
			t.Fatal("the detached process was reached: update the documented limit")
		}
	})
}

// TOOL-8: a job whose command cannot be run at all (no sandbox) is not
// started, says why, and leaves nothing listed.
func TestJobBackendFails_TOOL8(t *testing.T) {
	jobs := NewJobs(JobsOptions{Dir: t.TempDir()})
	defer jobs.Close()
	b := NewBash(&exec.Sandbox{Bwrap: "/nonexistent/bwrap"}, BashOptions{Jobs: jobs})
	r, err := b.Run(context.Background(), tool.Call{ID: "c1", Name: "bash", WorkDir: t.TempDir(),
		Input: json.RawMessage(`{"command":"echo hi","run_in_background":true}`)})
	if err != nil || !r.IsError || !strings.Contains(r.TextOf(), "not started: ") || !strings.Contains(r.TextOf(), "bwrap") {
		t.Fatalf("%v %q", err, r.TextOf())
	}
	if len(jobs.List()) != 0 || jobs.Notices() != nil {
		t.Fatalf("a job that never ran is listed: %v", jobs.List())
	}
}

// TOOL-8: the tool's schema says run_in_background only when the session
// has jobs, within a budget.
func TestBashJobsSpec_TOOL8(t *testing.T) {
	plain := NewBash(&exec.Local{}, BashOptions{}).Spec()
	with := NewBash(&exec.Local{}, BashOptions{Jobs: NewJobs(JobsOptions{})}).Spec()
	if strings.Contains(string(plain.InputSchema), "run_in_background") || !strings.Contains(string(with.InputSchema), "run_in_background") {
		t.Fatalf("schemas:\n%s\n%s", plain.InputSchema, with.InputSchema)
	}
	size := len(with.Description) + len(with.InputSchema)
	t.Logf("bash with jobs, description+schema: %d bytes", size)
	if size > 1400 {
		t.Errorf("description+schema is %d bytes; the budget is 1400", size)
	}
	for _, tl := range JobTools(NewJobs(JobsOptions{})) {
		if _, err := tool.NewSet(tool.OriginBuiltin, tl); err != nil {
			t.Fatal(err)
		}
	}
}

// TOOL-4, TOOL-8: a foreground command run as a job keeps the output
// limit of the bash tool: stopped past it, the first part saved, the
// model told, as without jobs.
func TestJobForegroundOutputLimit_TOOL8(t *testing.T) {
	c := newJobs(t, JobsOptions{}, BashOptions{BackgroundOnTimeout: true, OutputCap: 1000, MaxOutput: 1 << 20})
	c.be.KillDelay = 200 * time.Millisecond
	r := c.run(context.Background(), "yes")
	text := r.TextOf()
	path, _ := r.Metadata["output_path"].(string)
	if fi, err := os.Stat(path); err != nil || fi.Size() != 1<<20 {
		t.Fatalf("saved output %s: %v, %v", path, fi, err)
	}
	if !strings.Contains(text, "the output passed the limit of 1 MiB, so the command was stopped; the first 1 MiB are in "+path) ||
		!r.IsError || r.Metadata["output_limited"] != true || !strings.HasPrefix(text, "y\ny\n") || r.Metadata["job_id"] != nil {
		t.Fatalf("%v %v\n%s", r.IsError, r.Metadata, text)
	}
}

// TOOL-8: ended jobs are forgotten beyond a bound (their files stay), so
// a long session's job list, memory and open files stay bounded — once
// told, and even when nobody asks for notices.
func TestJobsPruned_TOOL8(t *testing.T) {
	jobs := NewJobs(JobsOptions{Dir: t.TempDir()})
	defer jobs.Close()
	be := &exec.Local{PipeGrace: 1}
	dir := t.TempDir()
	for i := range 4*jobsKeepEnded + 10 {
		job, err := jobs.start(be, tool.Call{ID: "c" + strconv.Itoa(i)}, exec.Command{Script: "true", Dir: dir}, "true", "", true)
		if err != nil {
			t.Fatal(err)
		}
		<-job.Done()
	}
	jobs.mu.Lock()
	n := len(jobs.jobs)
	jobs.mu.Unlock()
	if n > 4*jobsKeepEnded+1 {
		t.Fatalf("%d ended jobs kept untold, want at most %d", n, 4*jobsKeepEnded+1)
	}
	jobs.Notices()
	jobs.start(be, tool.Call{ID: "last"}, exec.Command{Script: "true", Dir: dir}, "true", "", true)
	jobs.mu.Lock()
	n = len(jobs.jobs)
	jobs.mu.Unlock()
	if n > jobsKeepEnded+1 {
		t.Fatalf("%d jobs kept once told, want at most %d", n, jobsKeepEnded+1)
	}
	if ids := jobs.List(); ids[len(ids)-1].ID != strconv.Itoa(4*jobsKeepEnded+11) {
		t.Errorf("ids went back after pruning: last is %s", ids[len(ids)-1].ID)
	}
}

// TOOL-8, TOOL-5: under bubblewrap a job runs in the sandbox, and a
// process that detached with setsid still dies with the job: the
// sandbox's PID namespace holds it (the documented difference from the
// host, TestJobAttacks_TOOL8).
func TestJobSandboxedDetached_TOOL8(t *testing.T) {
	sb := &exec.Sandbox{}
	if err := sb.Available(); err != nil {
		t.Skip("bubblewrap cannot run here: ", err)
	}
	jobs := NewJobs(JobsOptions{Dir: t.TempDir()})
	defer jobs.Close()
	work := t.TempDir()
	sb.Workspace = work
	b := NewBash(sb, BashOptions{Jobs: jobs})
	marker := "rein-detached-" + strconv.Itoa(os.Getpid())
	in, _ := json.Marshal(map[string]any{"command": "setsid sh -c 'while :; do sleep 0.05; done # " + marker + "' & echo forked; sleep 1000",
		"run_in_background": true})
	r, err := b.Run(context.Background(), tool.Call{ID: "c1", Name: "bash", WorkDir: work, Input: in})
	if err != nil || r.IsError {
		t.Fatalf("%v %q", err, r.TextOf())
	}
	job, _ := jobs.Get("1")
	if !pollProcs(marker, true) {
		t.Fatal("the detached process never ran")
	}
	if _, err := jobs.kill(context.Background(), "1", true); err != nil {
		t.Fatal(err)
	}
	<-job.Done()
	if !pollProcs(marker, false) {
		t.Fatal("the detached process outlived the sandboxed job")
	}
}

// pollProcs waits until an sh whose command line holds marker runs
// (want true) or none does (want false); false if that never happens.
func pollProcs(marker string, want bool) bool {
	for range 1000 {
		found := false
		ents, _ := os.ReadDir("/proc")
		for _, e := range ents {
			if _, err := strconv.Atoi(e.Name()); err != nil {
				continue
			}
			cl, _ := os.ReadFile("/proc/" + e.Name() + "/cmdline")
			// argv[0] "sh": the detached loop, not the job's bash whose
			// command line holds the marker too.
			if strings.HasPrefix(string(cl), "sh\x00") && strings.Contains(string(cl), marker) && running(mustAtoi(e.Name())) {
				found = true
				break
			}
		}
		if found == want {
			return true
		}
		time.Sleep(10 * time.Millisecond)
	}
	return false
}

func mustAtoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}

// TOOL-8, TOOL-7: a job asked to run outside the sandbox runs on the
// outside backend (the permission policy asked the user), and only then;
// without an outside backend it is refused like a foreground command.
func TestJobUnsandboxed_TOOL8(t *testing.T) {
	jobs := NewJobs(JobsOptions{Dir: t.TempDir()})
	defer jobs.Close()
	work := t.TempDir()
	run := func(b tool.Tool, in string) tool.Result {
		r, err := b.Run(context.Background(), tool.Call{ID: "c1", Name: "bash", WorkDir: work, Input: json.RawMessage(in)})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	broken := &exec.Sandbox{Bwrap: "/nonexistent/bwrap"}
	b := NewBash(broken, BashOptions{Jobs: jobs, Unsandboxed: &exec.Local{}})
	if r := run(b, `{"command":"echo out","run_in_background":true,"unsandboxed":true}`); r.IsError || r.Metadata["job_id"] != "1" {
		t.Fatalf("outside: %q", r.TextOf())
	}
	if r := run(b, `{"command":"echo in","run_in_background":true}`); !r.IsError || !strings.Contains(r.TextOf(), "not started") {
		t.Fatalf("inside a broken sandbox: %q", r.TextOf())
	}
	none := NewBash(broken, BashOptions{Jobs: jobs})
	if r := run(none, `{"command":"echo out","run_in_background":true,"unsandboxed":true}`); !r.IsError || !strings.Contains(r.TextOf(), "cannot run outside the sandbox here") {
		t.Fatalf("no outside backend: %q", r.TextOf())
	}
}

// TOOL-8 (issue 30): a foreground command whose output fits the ring
// makes no file, nor the session's directory; one moved to the background
// at its timeout gets its file, holding what it printed before, and so
// does a background job at its start.
func TestJobFileMadeWhenNeeded_TOOL8(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "session")
	c := newJobs(t, JobsOptions{Dir: dir}, BashOptions{BackgroundOnTimeout: true})
	if r := c.run(context.Background(), "echo quick"); r.TextOf() != "quick" || r.IsError {
		t.Fatalf("quick: %q", r.TextOf())
	}
	if _, err := os.Stat(dir); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("a quick command made the session's directory: %v", err)
	}
	r := c.run(context.Background(), map[string]any{"command": "echo before; while [ ! -e stop ]; do sleep 0.02; done; echo after", "timeout": 0.3})
	path, _ := r.Metadata["output_path"].(string)
	if data, err := os.ReadFile(path); err != nil || string(data) != "before\n" {
		t.Fatalf("moved job's file %s: %q, %v (%q)", path, data, err, r.TextOf())
	}
	c.run(context.Background(), "touch stop")
	c.waitEnd("1")
	if data, err := os.ReadFile(path); err != nil || string(data) != "before\nafter\n" {
		t.Fatalf("moved job's file after its end: %q, %v", data, err)
	}
	r = c.run(context.Background(), map[string]any{"command": "sleep 0.2", "run_in_background": true})
	path, _ = r.Metadata["output_path"].(string)
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("a background job's file is missing at its start: %v", err)
	}
}
