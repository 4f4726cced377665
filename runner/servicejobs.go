package runner

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/reinhq/rein/session"
	"github.com/reinhq/rein/tool"
	"github.com/reinhq/rein/tool/builtin"
)

// JobInfo is a snapshot of a background job (SPEC TOOL-8), as the API
// lists it.
type JobInfo = builtin.JobInfo

// keepIdleJobs is how many sessions a Service keeps the jobs of when none
// of them runs and no run of the session goes on: past it the least
// recently used are forgotten (their output files stay in the session's
// directory).
const keepIdleJobs = 64

// jobRegistry keeps each session's background jobs (SPEC TOOL-8) in a
// [Service], beyond the run that started them: a job runs on after its
// run, GET /sessions/{id}/jobs lists it, and every later run of the
// session executed by this process gets the same [builtin.Jobs] — its
// job_output, job_kill and job_list reach the job, and its model is told
// when one ended (the notices). Jobs stop when the session is deleted
// ([Service.StopSessionJobs]), when the Service shuts down (after its runs
// ended, [Service.Shutdown]), and a session runs at most
// jobs.max_per_session of them at once, whichever run started them (the
// setting as it was when the session's first run since this process
// started made them; jobs.max_per_session 0 in a later run leaves that
// run without job tools, the jobs running on). Each
// job's process group is journaled by the run that started it, so a crash
// leaves it findable as an orphan ([session.Load]).
type jobRegistry struct {
	logger *slog.Logger
	now    func() time.Time

	mu      sync.Mutex
	closed  bool
	entries map[string]*sessionJobs
}

// sessionJobs are one session's jobs in the registry.
type sessionJobs struct {
	jobs  *builtin.Jobs
	users int       // conversations bound to them now
	used  time.Time // when the last one let go
	// rec is the newest run's recorder: it journals the process group of
	// each job as it starts. Atomic, not under the registry's mu: the
	// jobs call OnStart holding their own lock, which release takes
	// under the registry's.
	rec atomic.Pointer[Recorder]
}

func newJobRegistry(logger *slog.Logger, now func() time.Time) *jobRegistry {
	return &jobRegistry{logger: logger, now: now, entries: map[string]*sessionJobs{}}
}

// acquire returns the session's jobs for a run whose recorder is rec,
// making them with open the first time, and the func the run calls when
// its Conversation closes. It returns nil once the registry closed.
func (r *jobRegistry) acquire(sessionID string, rec *Recorder, open func(onStart func(tool.Call, string, int)) *builtin.Jobs) (*builtin.Jobs, func()) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return nil, func() {}
	}
	e := r.entries[sessionID]
	if e == nil {
		e = &sessionJobs{}
		e.jobs = open(func(call tool.Call, id string, pgid int) {
			if err := e.rec.Load().RecordJob(call.ID, id, pgid); err != nil {
				r.logger.Warn("could not journal a background job's process group", "session_id", sessionID, "job", id, "err", err)
			}
		})
		r.entries[sessionID] = e
	}
	e.users++
	e.rec.Store(rec)
	var once sync.Once
	return e.jobs, func() { once.Do(func() { r.release(e) }) }
}

// release lets go of e after a run and forgets the least recently used
// idle sessions beyond keepIdleJobs.
func (r *jobRegistry) release(e *sessionJobs) {
	r.mu.Lock()
	e.users--
	e.used = r.now()
	var idle []string
	for id, x := range r.entries {
		if x.users == 0 && x.jobs.Running() == 0 {
			idle = append(idle, id)
		}
	}
	var drop []*builtin.Jobs
	if n := len(idle) - keepIdleJobs; n > 0 {
		slices.SortFunc(idle, func(a, b string) int { return r.entries[a].used.Compare(r.entries[b].used) })
		for _, id := range idle[:n] {
			drop = append(drop, r.entries[id].jobs)
			delete(r.entries, id)
		}
	}
	r.mu.Unlock()
	for _, j := range drop {
		r.closeJobs("", j)
	}
}

// list returns the session's jobs, oldest first.
func (r *jobRegistry) list(sessionID string) []JobInfo {
	r.mu.Lock()
	e := r.entries[sessionID]
	r.mu.Unlock()
	if e == nil {
		return nil
	}
	return e.jobs.List()
}

// stop stops the session's jobs and forgets them; it reports whether
// there were any.
func (r *jobRegistry) stop(sessionID string) bool {
	r.mu.Lock()
	e := r.entries[sessionID]
	delete(r.entries, sessionID)
	r.mu.Unlock()
	if e == nil {
		return false
	}
	r.closeJobs(sessionID, e.jobs)
	return true
}

// close stops every session's jobs; later runs get none.
func (r *jobRegistry) close() {
	r.mu.Lock()
	r.closed = true
	entries := r.entries
	r.entries = map[string]*sessionJobs{}
	r.mu.Unlock()
	var wg sync.WaitGroup
	for id, e := range entries {
		wg.Go(func() { r.closeJobs(id, e.jobs) })
	}
	wg.Wait()
}

func (r *jobRegistry) closeJobs(sessionID string, j *builtin.Jobs) {
	if err := j.Close(); err != nil && !errors.Is(err, context.Canceled) {
		r.logger.Warn("closing the background jobs' output files", "session_id", sessionID, "err", err)
	}
}

// SessionJobs returns the background jobs of a session this process holds,
// oldest first: those its runs started, running or ended, until the
// session is deleted or the service shuts down. In split mode the worker
// that ran the run holds them; an API process holds none (see
// [Service.JobsHeldByWorkers]). It backs GET /sessions/{id}/jobs.
func (s *Service) SessionJobs(sessionID string) []JobInfo { return s.heldJobs.list(sessionID) }

// JobsHeldByWorkers reports whether this service only enqueues runs for
// worker processes (split mode, SPEC API-5): background jobs are then
// held, listed and stopped by the worker whose run started them, not here.
func (s *Service) JobsHeldByWorkers() bool { return s.split() }

// StopSessionJobs stops the background jobs of a deleted session and
// forgets them, then removes the files this process kept for it (see
// forgetSession); in split mode it tells the workers to do the same with
// theirs.
func (s *Service) StopSessionJobs(ctx context.Context, sessionID string) error {
	s.forgetSession(sessionID)
	if s.split() {
		return s.signal(ctx, signal{StopJobs: sessionID})
	}
	return nil
}

// forgetSession stops a deleted session's background jobs, then removes
// its session directory and sandbox cache (DataDir/<id>, with the
// commands' spilled output, the jobs' logs, the plan and the hooks'
// transcript, and DataDir/.caches/<id>): what a deleted session leaves on
// this machine. An id no store accepts (session.ValidID: a plain file
// name, not starting with '.') removes nothing; a removal that fails is
// logged.
func (s *Service) forgetSession(sessionID string) {
	s.heldJobs.stop(sessionID)
	if s.cfg.DataDir == "" || session.ValidID(sessionID) != nil {
		return
	}
	dir := filepath.Join(s.cfg.DataDir, sessionID)
	for _, d := range []string{dir, sessionCache(dir)} {
		if err := os.RemoveAll(d); err != nil {
			s.cfg.Logger.Warn("a deleted session's files could not be removed", "session_id", sessionID, "dir", d, "err", err)
		}
	}
}
