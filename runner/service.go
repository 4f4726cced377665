package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/reinhq/rein/eventbus"
	"github.com/reinhq/rein/llm"
	"github.com/reinhq/rein/permission"
	"github.com/reinhq/rein/runner/queue"
	"github.com/reinhq/rein/session"
	"github.com/reinhq/rein/workspace"
)

// ErrClosed is returned by [Service.Submit] once the service shuts down;
// it wraps [session.ErrShuttingDown], which the fronts answer with
// "retry later".
var ErrClosed = fmt.Errorf("runner: %w", session.ErrShuttingDown)

// ServiceConfig configures a [Service]. Zero fields take the defaults.
type ServiceConfig struct {
	Sessions session.Store
	Ledger   session.Ledger
	Bus      eventbus.Bus
	// Resolve turns model strings into models (the front end picks the
	// adapters).
	Resolve Resolver
	// ResolveEmbedder resolves the knowledge base's embedding models.
	ResolveEmbedder EmbedderResolver
	// DataDir holds a directory per session (spilled command output).
	DataDir string
	// MaxConcurrent bounds the sessions running at once (default 16).
	// Runs of one session always run one at a time (SPEC API-3).
	MaxConcurrent int
	// AllowBypass lets a caller ask for permission mode bypass.
	AllowBypass bool
	// Observer, when set, sees what every run does (metrics, traces; see
	// [NewTelemetry]).
	Observer Observer
	Getenv   func(string) string
	Logger   *slog.Logger
	Now      func() time.Time
	// UserAgent names rein to web servers (web_fetch).
	UserAgent string
	// Mirror, when set, copies the sessions of project workspaces into
	// their history mirrors after each run (SPEC API-6, package mirror);
	// Shutdown closes it.
	Mirror Mirror
	// Queue, when set, splits the service across processes (SPEC API-5):
	// Submit stores the run and enqueues its session there instead of
	// running it here, and [Service.Work] runs the sessions it takes from
	// it. Without it runs are scheduled in this process.
	Queue queue.Queue
	// UserMemory shows the user's own memory (profile and notes) to runs:
	// for the gateway, whose chats are its user's (with its allowlist); a
	// server's callers are other people, so it leaves it false.
	UserMemory bool
	// Persona, when set, returns the persona section every run's system
	// prompt gets (GW-1); read at each run's start, so edits apply to the
	// next run.
	Persona func() string
	// Broadcast carries cancellations and permission answers to the
	// process running a run; a split service needs it.
	Broadcast Broadcaster
	// Tenancy, when set, confines every run's tools to its workspace
	// (SPEC API-9): rein serve and rein worker set it.
	Tenancy *Tenancy
	// KnowledgeBases, when set, keeps the knowledge bases of the project
	// workspaces in a shared database (rein serve and rein worker with
	// --database-url wire kb/postgres), one namespace per caller and
	// workspace ([KBNamespace]); nil keeps each in its directory's
	// KBFile. See [Service.KnowledgeBase].
	KnowledgeBases KBNamespaces
}

// Mirror is what the service needs of the history mirror (package
// mirror): to hear that a session changed, and to be closed once the runs
// ended. Notify must not wait on a disk or a database.
type Mirror interface {
	Notify(sessionID string)
	Close(ctx context.Context) error
}

// Service runs the messages posted to sessions (docs/architecture.md, "How
// a message becomes a run"): Submit stores a queued run — durable before it returns,
// the server's 202 promise — and schedules it; runs of one session execute
// one at a time in submission order, different sessions concurrently up to
// MaxConcurrent (SPEC API-3). Each run loads and heals its session, drives
// the agent through a [Conversation], stores each durable event in the ledger
// and publishes every event (deltas too) on the bus with the session's
// next event id, and ends with its state and audit records. Runs never
// depend on the request that posted them: a dropped client cancels nothing.
type Service struct {
	cfg  ServiceConfig
	slot chan struct{} // MaxConcurrent tokens

	// startMu makes starting a queued run and cancelling it exclusive.
	startMu sync.Mutex
	// mcp holds the MCP connections runs share, stopped by Shutdown.
	mcp MCPPool

	mu       sync.Mutex
	sessions map[string]*lane // the sessions with runs queued or running
	running  map[string]*live // by run id
	closed   bool
	base     context.Context
	stop     context.CancelFunc
	wg       sync.WaitGroup
	closing  chan struct{}        // closed by Close
	replies  map[string]chan bool // answers sent to other processes, by signal id
	// listening ends the listener of broadcast signals (split service).
	listening context.CancelFunc
	// listened is closed once the listener listens (awaitListener), at
	// once without a Broadcaster.
	listened  chan struct{}
	heardOnce sync.Once
	// heldJobs are the sessions' background jobs, which outlive their
	// runs (servicejobs.go).
	heldJobs *jobRegistry
	// loads keeps the workspaces' configurations while their files are
	// unchanged (workspaceload.go).
	loads *workspace.Cache
}

// lane is one session's queue; one goroutine drains it.
type lane struct {
	queue []string // run ids, in submission order
}

// live is a run being executed.
type live struct {
	cancel   context.CancelFunc
	approver *remoteApprover
}

// NewService returns a service; call [Service.Recover] before serving.
func NewService(cfg ServiceConfig) (*Service, error) {
	if cfg.Sessions == nil || cfg.Ledger == nil || cfg.Bus == nil || cfg.Resolve == nil {
		return nil, errors.New("runner: ServiceConfig needs Sessions, Ledger, Bus and Resolve")
	}
	if cfg.MaxConcurrent <= 0 {
		cfg.MaxConcurrent = 16
	}
	if cfg.Getenv == nil {
		cfg.Getenv = os.Getenv
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.DataDir == "" {
		cfg.DataDir = filepath.Join(os.TempDir(), "rein-sessions")
	}
	if cfg.Queue != nil && cfg.Broadcast == nil {
		return nil, errors.New("runner: a ServiceConfig with a Queue needs a Broadcast too (cancellations and answers)")
	}
	base, stop := context.WithCancel(context.Background())
	s := &Service{cfg: cfg, slot: make(chan struct{}, cfg.MaxConcurrent), sessions: map[string]*lane{},
		running: map[string]*live{}, base: base, stop: stop, closing: make(chan struct{}), listening: func() {},
		replies: map[string]chan bool{}, heldJobs: newJobRegistry(cfg.Logger, cfg.Now), loads: workspace.NewCache(),
		listened: make(chan struct{})}
	if cfg.Broadcast != nil {
		var lctx context.Context
		lctx, s.listening = context.WithCancel(context.Background())
		go s.listen(lctx)
	} else {
		s.heard()
	}
	return s, nil
}

// Submit stores a queued run of the session and schedules it. The run is
// durable when Submit returns.
func (s *Service) Submit(ctx context.Context, sub session.Submission) (*session.Run, error) {
	sess, err := s.cfg.Sessions.Get(ctx, sub.SessionID)
	if err != nil {
		return nil, err
	}
	if sub.Caller != sess.Caller {
		return nil, fmt.Errorf("session %s: %w", sub.SessionID, session.ErrNotFound)
	}
	if err := s.checkSubmission(sub); err != nil {
		return nil, err
	}
	if sub.Text == "" && len(sub.Images) == 0 {
		if err := s.checkPending(ctx, sub.SessionID); err != nil {
			return nil, err
		}
	}
	opts, err := json.Marshal(sub)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	closed := s.closed
	s.mu.Unlock()
	if closed {
		return nil, ErrClosed
	}
	run := &session.Run{SessionID: sub.SessionID, Caller: sub.Caller, Prompt: sub.Text, Images: sub.Images, Options: opts}
	if err := s.cfg.Ledger.CreateRun(context.WithoutCancel(ctx), run); err != nil {
		return nil, fmt.Errorf("session %s: queue the run: %w", sub.SessionID, err)
	}
	if s.split() {
		if err := s.enqueueShared(ctx, run); err != nil {
			return nil, err
		}
		return run, nil
	}
	s.enqueue(run)
	return run, nil
}

// checkSubmission validates the overrides: a bad one is ErrInvalid with
// what to send instead.
func (s *Service) checkSubmission(sub session.Submission) error {
	if err := checkImages(sub.Images); err != nil {
		return err
	}
	flags := flags(sub)
	if _, err := workspace.FlagLayer(flags); err != nil {
		return fmt.Errorf("%w: %v", session.ErrInvalid, err)
	}
	if strings.HasPrefix(strings.TrimSpace(sub.Model), "replay:") {
		// A cassette is a file of the server's: a caller must not name one.
		return fmt.Errorf("%w: model %q: replay cassettes cannot be chosen over the API; name a provider/model "+
			"or a profile", session.ErrInvalid, sub.Model)
	}
	if permission.Mode(sub.PermissionMode) == permission.ModeBypass && !s.cfg.AllowBypass {
		return fmt.Errorf("%w: permission_mode bypass is not allowed on this server (rein serve --allow-bypass enables it); "+
			"use default or accept-edits", session.ErrInvalid)
	}
	return nil
}

// checkPending accepts a message without text only when the session's
// conversation waits for the model (SPEC LOOP-9: its last message holds tool
// results).
func (s *Service) checkPending(ctx context.Context, sessionID string) error {
	st, err := session.Load(ctx, s.cfg.Sessions, sessionID)
	if err != nil {
		return err
	}
	n := len(st.Messages)
	if n > 0 && st.Messages[n-1].Role == llm.RoleUser && len(st.Messages[n-1].ToolResults()) > 0 {
		return nil
	}
	return fmt.Errorf("%w: text is empty and the session has nothing to continue: send the message's text", session.ErrInvalid)
}

// flags are the submission's overrides as configuration flags.
func flags(sub session.Submission) map[string]string {
	m := map[string]string{}
	if sub.Model != "" {
		m[workspace.Model] = sub.Model
	}
	if sub.MaxTurns != 0 {
		m[workspace.MaxTurns] = fmt.Sprint(sub.MaxTurns)
	}
	if sub.PermissionMode != "" {
		m[workspace.PermissionMode] = sub.PermissionMode
	}
	return m
}

// Cancel cancels a queued or running run.
func (s *Service) Cancel(ctx context.Context, runID string) (*session.Run, error) {
	s.startMu.Lock()
	defer s.startMu.Unlock()
	run, err := s.cfg.Ledger.GetRun(ctx, runID)
	if err != nil {
		return nil, err
	}
	if run.Status.Final() {
		return nil, fmt.Errorf("run %s already ended (%s): %w", runID, run.Status, session.ErrConflict)
	}
	s.mu.Lock()
	l := s.running[runID]
	s.mu.Unlock()
	if l != nil {
		l.cancel()
		return run, nil
	}
	if run.Status == session.RunQueued {
		// Its lane (or worker) skips it when its turn comes.
		run.Status, run.EndedAt = session.RunCancelled, s.cfg.Now()
		if err := s.cfg.Ledger.UpdateRun(context.WithoutCancel(ctx), run); err != nil {
			return nil, err
		}
	}
	if s.split() {
		// Running in another process, or taken by a worker since it was
		// read: the worker registers a run before it reads its state, so
		// the signal finds it there or the worker finds it cancelled.
		if err := s.signal(ctx, signal{RunID: runID, Cancel: true}); err != nil {
			return nil, err
		}
	}
	return run, nil
}

// Answer answers the pending permission question of callID in run runID.
func (s *Service) Answer(ctx context.Context, runID, callID string, v permission.Verdict) error {
	return s.answerRun(ctx, signal{RunID: runID, CallID: callID, Verdict: &v},
		func(l *live) bool { return l.approver.answer(callID, v) })
}

// AnswerQuestion answers the pending ask_user question of callID in run
// runID (the question event) with answer, or declines it (the user chose
// not to answer; answer is then empty); none pending wraps
// session.ErrNotFound. In a split service the answer reaches the process
// running the run as a permission answer does.
func (s *Service) AnswerQuestion(ctx context.Context, runID, callID, answer string, declined bool) error {
	return s.answerRun(ctx, signal{RunID: runID, CallID: callID, Answer: &answer, Declined: declined},
		func(l *live) bool {
			return l.approver.answerQuestion(callID, questionReply{answer: answer, declined: declined})
		})
}

// answerRun gives a run's pending question its answer: in this process
// when the run runs here (local reports whether the question was
// pending), else, in a split service, as sig to the process running it,
// which replies whether it was pending there. None pending wraps
// session.ErrNotFound.
func (s *Service) answerRun(ctx context.Context, sig signal, local func(*live) bool) error {
	s.mu.Lock()
	l := s.running[sig.RunID]
	s.mu.Unlock()
	if l != nil && local(l) {
		return nil
	}
	if l == nil && s.split() {
		run, err := s.cfg.Ledger.GetRun(ctx, sig.RunID)
		if err != nil {
			return err
		}
		if run.Status == session.RunRunning {
			return s.answerRemote(ctx, sig)
		}
	}
	return fmt.Errorf("run %s has no pending question for call %s: %w", sig.RunID, sig.CallID, session.ErrNotFound)
}

// Queued returns how many runs wait for their turn.
func (s *Service) Queued() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, l := range s.sessions {
		n += len(l.queue)
	}
	return n
}

// Recover takes up the ledger's live runs after a start: runs that were
// running when the process died are marked interrupted and their sessions
// healed (SPEC API-5, SESS-2); queued runs are scheduled again, in
// submission order. A split service (Queue set) does nothing here: the
// worker that takes a session's lease heals it, and the queue's Resync
// ([PendingSessions]) finds the sessions with runs left.
func (s *Service) Recover(ctx context.Context) error {
	if s.split() {
		return nil
	}
	stale, err := s.cfg.Ledger.ListRuns(ctx, session.RunFilter{Statuses: []session.RunStatus{session.RunRunning}})
	if err != nil {
		return fmt.Errorf("recover: %w", err)
	}
	for _, run := range stale {
		if err := s.interrupt(ctx, run, "the server stopped while the run was going on; its session was healed"); err != nil {
			return err
		}
	}
	queued, err := s.cfg.Ledger.ListRuns(ctx, session.RunFilter{Statuses: []session.RunStatus{session.RunQueued}})
	if err != nil {
		return fmt.Errorf("recover: %w", err)
	}
	for _, run := range queued {
		s.enqueue(run)
	}
	if len(stale)+len(queued) > 0 {
		s.cfg.Logger.Info("recovered runs", "interrupted", len(stale), "queued", len(queued))
	}
	return nil
}

// interrupt marks a run a previous process left running as interrupted
// and heals its session, storing the repairs; why is the run's error.
func (s *Service) interrupt(ctx context.Context, run *session.Run, why string) error {
	st, err := session.Load(ctx, s.cfg.Sessions, run.SessionID)
	switch {
	case errors.Is(err, session.ErrNotFound):
	case err != nil:
		return fmt.Errorf("recover run %s: %w", run.ID, err)
	default:
		if err := session.SaveHeal(ctx, s.cfg.Sessions, run.SessionID, st); err != nil {
			return fmt.Errorf("recover run %s: %w", run.ID, err)
		}
		s.NotifyMirror(run.SessionID)
	}
	run.Status, run.EndedAt = session.RunInterrupted, s.cfg.Now()
	run.Error = why
	return s.cfg.Ledger.UpdateRun(ctx, run)
}

// Close stops accepting runs: Submit returns ErrClosed from now on, and
// runs still queued stay queued in the ledger for the next start. Running
// runs go on; [Service.Shutdown] waits for them.
func (s *Service) Close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.closed {
		close(s.closing)
	}
	s.closed = true
	for _, l := range s.sessions {
		l.queue = nil
	}
}

// Shutdown stops accepting runs, lets running ones finish until ctx is
// done, then cancels them (every tool call still gets its result) and
// waits for them to end. Queued runs stay queued for the next start. Then
// the sessions' background jobs are stopped, the history mirror closed,
// and the MCP servers runs used are stopped last.
func (s *Service) Shutdown(ctx context.Context) error {
	s.Close()
	defer s.mcp.Close()
	defer s.closeMirror(ctx) // once the runs ended
	defer s.listening()      // runs still wait for answers until they end
	defer s.heldJobs.close() // once the runs that could use them ended
	done := make(chan struct{})
	go func() {
		s.wg.Wait()
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
	}
	s.stop()
	<-done
	return ctx.Err()
}

// NotifyMirror tells the service's history mirror that a session changed
// outside a run (created, renamed, forked, deleted through the API); a
// service without a mirror ignores it.
func (s *Service) NotifyMirror(sessionID string) {
	if s.cfg.Mirror != nil {
		s.cfg.Mirror.Notify(sessionID)
	}
}

// closeMirror closes the service's history mirror once its runs ended,
// copying what it can until ctx ends.
func (s *Service) closeMirror(ctx context.Context) {
	if s.cfg.Mirror == nil {
		return
	}
	if err := s.cfg.Mirror.Close(ctx); err != nil {
		s.cfg.Logger.Warn("history mirror", "err", err)
	}
}
