package builtin

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/reinhq/rein/exec"
	"github.com/reinhq/rein/tool"
)

// Defaults of background jobs (SPEC TOOL-8).
const (
	// JobsDefaultMax is how many jobs of a session may run at once.
	JobsDefaultMax = 16
	// JobsDefaultRing is how many of a job's newest output bytes are kept
	// in memory.
	JobsDefaultRing = 1 << 20
	// JobsDefaultFile is how many bytes of a job's output its file keeps;
	// past it the job is stopped, as a foreground command is (TOOL-4).
	JobsDefaultFile = exec.DefaultMaxSpill
	// jobsKeepEnded is how many ended jobs are still listed.
	jobsKeepEnded = 64
)

// ErrJobsClosed is returned by a start once the session's jobs were
// closed.
var ErrJobsClosed = errors.New("the session's jobs are closed: the session ended")

// JobsOptions configures a session's [Jobs]. The zero value means the
// defaults.
type JobsOptions struct {
	// Dir is where each job's output file goes: the session's directory;
	// "" means os.TempDir()/rein.
	Dir string
	// Max bounds the jobs running at once; 0 means JobsDefaultMax; negative
	// means no background jobs at all.
	Max int
	// RingBytes bounds the output kept in memory per job; 0 means
	// JobsDefaultRing.
	RingBytes int
	// FileBytes bounds the output kept in a job's file and so the output a
	// job may write: past it the job is stopped. 0 means JobsDefaultFile.
	FileBytes int64
	// OnStart, when set, is told each job's process group as it starts,
	// for the session journal, so a crash leaves it findable (SPEC SESS-1).
	OnStart func(call tool.Call, jobID string, pgid int)
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// Jobs are one session's background jobs (SPEC TOOL-8): commands that run
// on while the conversation goes on, started by bash with
// run_in_background or moved there when they reach their timeout. Their
// output is kept in a bounded ring and a capped file; job_output,
// job_kill and job_list reach them, [Jobs.Notices] tells the model when one
// ends, and [Jobs.Close] stops them all when the session ends. Jobs of one
// session are invisible to every other: each session has its own Jobs.
// Safe for concurrent use.
type Jobs struct {
	opts JobsOptions

	mu     sync.Mutex
	jobs   []*Job // in start order
	seq    int
	lastID int // the last visible job's id
	closed bool
	wg     sync.WaitGroup
}

// NewJobs returns the jobs of one session.
func NewJobs(opts JobsOptions) *Jobs {
	if opts.Max == 0 {
		opts.Max = JobsDefaultMax
	}
	if opts.RingBytes <= 0 {
		opts.RingBytes = JobsDefaultRing
	}
	if opts.FileBytes <= 0 {
		opts.FileBytes = JobsDefaultFile
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Dir == "" {
		opts.Dir = filepath.Join(os.TempDir(), "rein")
	}
	return &Jobs{opts: opts}
}

// JobState is where a job stands.
type JobState string

// The states of a job.
const (
	JobRunning JobState = "running"
	JobExited  JobState = "exited"  // ended on its own; see ExitCode
	JobKilled  JobState = "killed"  // stopped by job_kill
	JobStopped JobState = "stopped" // stopped because the session ended, or its output passed the limit
	JobFailed  JobState = "failed"  // could not be run at all
)

// Job is one background job.
type Job struct {
	// ID is the job's id in its session: "1", "2", …
	ID string
	// Command is the command line; Description what the model said it does.
	Command, Description string
	// CallID is the bash call that started it.
	CallID  string
	Started time.Time

	out    *jobOutput
	cancel context.CancelFunc
	done   chan struct{}
	jobs   *Jobs
	// started is closed once the command started (its group journaled)
	// or failed to.
	started   chan struct{}
	startOnce sync.Once

	mu      sync.Mutex
	pgid    int
	visible bool // a background job, listed and noticed (not a foreground command still waited on)
	state   JobState
	ended   time.Time
	result  exec.Output
	err     error
	killed  bool // by job_kill, or by the user when byUser
	byUser  bool
	noticed bool  // its end was told to the model
	readTo  int64 // where the last job_output read ended
}

// JobInfo is a snapshot of a job, for job_list, the terminal UI and the
// API.
type JobInfo struct {
	ID          string    `json:"id"`
	Command     string    `json:"command"`
	Description string    `json:"description,omitempty"`
	State       JobState  `json:"state"`
	ExitCode    *int      `json:"exit_code,omitempty"`
	PGID        int       `json:"pgid,omitempty"`
	Started     time.Time `json:"started"`
	Ended       time.Time `json:"ended,omitzero"`
	// OutputBytes is what it wrote; OutputPath the file that keeps it.
	OutputBytes int64  `json:"output_bytes"`
	OutputPath  string `json:"output_path"`
	// Error says why it could not run, or what stopped it.
	Error string `json:"error,omitempty"`
}

// Max returns how many jobs may run at once (negative: none).
func (j *Jobs) Max() int { return j.opts.Max }

// start runs cmd through backend as a job: at once in the background when
// visible, else as a foreground command the bash tool waits on and may
// move to the background ([Jobs.promote]). It fails when the session's
// jobs are closed or, for a visible job, at the limit.
func (j *Jobs) start(backend exec.Backend, call tool.Call, cmd exec.Command, command, desc string, visible bool) (*Job, error) {
	job, err := j.launch(backend, call, cmd, command, desc, visible)
	if err != nil {
		return nil, err
	}
	// Its process group is journaled before the call's result is: a
	// crash right after leaves it findable.
	<-job.started
	return job, nil
}

// launch registers the job and starts its command in a goroutine.
func (j *Jobs) launch(backend exec.Backend, call tool.Call, cmd exec.Command, command, desc string, visible bool) (*Job, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.closed {
		return nil, ErrJobsClosed
	}
	if visible {
		if err := j.roomLocked(); err != nil {
			return nil, err
		}
	}
	j.seq++
	name := fmt.Sprintf("job-%d-%s.log", j.seq, safeName(call.ID))
	// A foreground command's file is made when its output outgrows the
	// ring or it moves to the background (promote); a background job's
	// path is shown at once.
	out := newLazyJobOutput(filepath.Join(j.opts.Dir, name), j.opts.RingBytes, j.opts.FileBytes)
	if visible {
		if err := out.materialize(); err != nil {
			return nil, fmt.Errorf("the job's output file: %w", err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	job := &Job{Command: command, Description: desc, CallID: call.ID, Started: j.opts.Now(),
		out: out, cancel: cancel, done: make(chan struct{}), started: make(chan struct{}), jobs: j, visible: visible, state: JobRunning}
	if visible {
		job.ID = j.nextIDLocked()
	}
	j.jobs = append(j.jobs, job)
	j.pruneLocked()
	cmd.Stream = out
	if cmd.MaxOutput <= 0 || cmd.MaxOutput > j.opts.FileBytes {
		// The file keeps what the command may write: no byte is lost
		// below the limit.
		cmd.MaxOutput = j.opts.FileBytes
	}
	onStart := cmd.OnStart
	cmd.OnStart = func(pgid int) {
		job.mu.Lock()
		job.pgid = pgid
		id := job.ID
		job.mu.Unlock()
		if onStart != nil {
			onStart(pgid)
		}
		if id != "" && j.opts.OnStart != nil {
			j.opts.OnStart(call, id, pgid)
		}
		job.startOnce.Do(func() { close(job.started) })
	}
	j.wg.Add(1)
	go func() {
		defer j.wg.Done()
		res, err := backend.Run(ctx, cmd)
		job.finish(res, err, j.opts.Now())
	}()
	return job, nil
}

// roomLocked says whether one more job may run. Callers hold j.mu.
func (j *Jobs) roomLocked() error {
	if j.opts.Max < 0 {
		return errors.New("background jobs are off in this session (jobs.max_per_session is negative)")
	}
	n := 0
	for _, x := range j.jobs {
		if x.isRunningVisible() {
			n++
		}
	}
	if n >= j.opts.Max {
		return fmt.Errorf("%d background jobs are running, the most this session allows (jobs.max_per_session); "+
			"stop one with job_kill (job_list shows them) or wait for one to end", n)
	}
	return nil
}

// nextIDLocked numbers the visible jobs 1, 2, …, never again the same
// in a session. Callers hold j.mu.
func (j *Jobs) nextIDLocked() string {
	j.lastID++
	return strconv.Itoa(j.lastID)
}

// pruneLocked forgets the oldest ended jobs beyond jobsKeepEnded, once
// their end was told (their files stay). Callers hold j.mu.
func (j *Jobs) pruneLocked() {
	ended := 0
	for _, x := range j.jobs {
		if !x.running() {
			ended++
		}
	}
	if ended <= jobsKeepEnded {
		return
	}
	drop := func(untold bool) {
		j.jobs = slices.DeleteFunc(j.jobs, func(x *Job) bool {
			if ended > jobsKeepEnded && !x.running() && (untold || x.told()) {
				ended--
				x.out.close()
				return true
			}
			return false
		})
	}
	drop(false)
	if ended > 4*jobsKeepEnded {
		// Nobody asks for notices (a library caller without them): the
		// oldest ended jobs go anyway, so memory and files stay bounded.
		drop(true)
	}
}

// promote makes a foreground job a background one, with an id, when there
// is room; it fails at the limit or once the jobs are closed.
func (j *Jobs) promote(job *Job) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.closed {
		return ErrJobsClosed
	}
	if err := j.roomLocked(); err != nil {
		return err
	}
	if err := job.out.materialize(); err != nil { // its path is shown
		return fmt.Errorf("the job's output file: %w", err)
	}
	id := j.nextIDLocked()
	job.mu.Lock()
	job.ID, job.visible = id, true
	pgid := job.pgid
	job.mu.Unlock()
	if pgid > 0 && j.opts.OnStart != nil {
		j.opts.OnStart(tool.Call{ID: job.CallID, Name: "bash"}, id, pgid)
	}
	return nil
}

// forget drops a foreground job the bash tool finished with.
func (j *Jobs) forget(job *Job) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.jobs = slices.DeleteFunc(j.jobs, func(x *Job) bool { return x == job })
}

// Get returns the visible job with the id, or an error naming the ids
// there are.
func (j *Jobs) Get(id string) (*Job, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	var ids []string
	for _, x := range j.jobs {
		x.mu.Lock()
		xid, vis := x.ID, x.visible
		x.mu.Unlock()
		if !vis {
			continue
		}
		if xid == id {
			return x, nil
		}
		ids = append(ids, xid)
	}
	if len(ids) == 0 {
		return nil, fmt.Errorf("no job %q: this session has no background jobs", id)
	}
	return nil, fmt.Errorf("no job %q in this session; its jobs are: %s (job_list shows them)", id, joinIDs(ids))
}

func joinIDs(ids []string) string {
	if len(ids) > 20 {
		return fmt.Sprintf("%s, … (%d in all)", joinIDs(ids[len(ids)-20:]), len(ids))
	}
	s := ""
	for i, id := range ids {
		if i > 0 {
			s += ", "
		}
		s += id
	}
	return s
}

// List returns the visible jobs, oldest first.
func (j *Jobs) List() []JobInfo {
	j.mu.Lock()
	jobs := slices.Clone(j.jobs)
	j.mu.Unlock()
	var out []JobInfo
	for _, x := range jobs {
		if info, ok := x.Info(); ok {
			out = append(out, info)
		}
	}
	return out
}

// Kill stops a job for the user (the terminal UI, the API): SIGTERM to
// its process group, SIGKILL after the backend's delay; it waits until
// the job ended or ctx is done. The model is told at its next turn that
// the user stopped it.
func (j *Jobs) Kill(ctx context.Context, id string) (*Job, error) {
	return j.kill(ctx, id, false)
}

// kill stops a job; byModel says job_kill asked, and the model is not
// told of an end it caused.
func (j *Jobs) kill(ctx context.Context, id string, byModel bool) (*Job, error) {
	job, err := j.Get(id)
	if err != nil {
		return nil, err
	}
	job.mu.Lock()
	if job.state == JobRunning {
		job.killed, job.byUser = true, !byModel
	}
	job.mu.Unlock()
	job.cancel()
	select {
	case <-job.done:
	case <-ctx.Done():
		return job, ctx.Err()
	}
	return job, nil
}

// Close stops every job of the session and waits for them to end: the
// session ended (SPEC TOOL-8). Starting jobs fails afterwards. It is safe
// to call more than once.
func (j *Jobs) Close() error {
	j.mu.Lock()
	j.closed = true
	jobs := slices.Clone(j.jobs)
	j.mu.Unlock()
	for _, x := range jobs {
		x.cancel()
	}
	j.wg.Wait()
	var errs []error
	for _, x := range jobs {
		if err := x.out.close(); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// Running reports how many visible jobs run now.
func (j *Jobs) Running() int {
	j.mu.Lock()
	defer j.mu.Unlock()
	n := 0
	for _, x := range j.jobs {
		if x.isRunningVisible() {
			n++
		}
	}
	return n
}

// finish records the end of the job's command.
func (job *Job) finish(res exec.Output, err error, now time.Time) {
	job.mu.Lock()
	defer job.mu.Unlock()
	defer job.startOnce.Do(func() { close(job.started) })
	job.result, job.err, job.ended = res, err, now
	switch {
	case err != nil:
		job.state = JobFailed
	case job.killed:
		job.state = JobKilled
	case res.Cancelled || res.OutputLimited:
		job.state = JobStopped
	default:
		job.state = JobExited
	}
	close(job.done)
}

func (job *Job) running() bool {
	select {
	case <-job.done:
		return false
	default:
		return true
	}
}

func (job *Job) isRunningVisible() bool {
	job.mu.Lock()
	vis := job.visible
	job.mu.Unlock()
	return vis && job.running()
}

func (job *Job) told() bool {
	job.mu.Lock()
	defer job.mu.Unlock()
	return job.noticed || job.killed && !job.byUser || !job.visible
}

// startErr is why the job's command could not be run, nil when it runs
// (or ran).
func (job *Job) startErr() error {
	job.mu.Lock()
	defer job.mu.Unlock()
	return job.err
}

// Done is closed when the job's command ended.
func (job *Job) Done() <-chan struct{} { return job.done }

// Info returns a snapshot of the job; false for a foreground command not
// (yet) moved to the background.
func (job *Job) Info() (JobInfo, bool) {
	total, _ := job.out.size()
	job.mu.Lock()
	defer job.mu.Unlock()
	if !job.visible {
		return JobInfo{}, false
	}
	info := JobInfo{ID: job.ID, Command: job.Command, Description: job.Description, State: job.state,
		PGID: job.pgid, Started: job.Started, Ended: job.ended, OutputBytes: total, OutputPath: job.out.path}
	if job.state == JobExited || job.state == JobKilled || job.state == JobStopped {
		code := job.result.ExitCode
		info.ExitCode = &code
	}
	switch {
	case job.err != nil:
		info.Error = job.err.Error()
	case job.result.OutputLimited:
		info.Error = fmt.Sprintf("its output passed the limit of %s, so it was stopped", FormatBytes(job.result.OutputLimit))
	case job.state == JobStopped:
		info.Error = "stopped because the session ended"
	}
	return info, true
}
