package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/reinhq/rein/permission"
	"github.com/reinhq/rein/runner/queue"
	"github.com/reinhq/rein/session"
)

// The split service (SPEC API-5): API processes store a posted message as a
// queued run and enqueue its session on a shared [queue.Queue]; workers
// take a session's lease from the queue and run its queued runs one at a
// time, oldest first, writing with the lease's fencing token, so a worker
// whose lease ran out can no longer write. Cancellations and permission
// answers reach the worker running a run through a [Broadcaster]. A
// process may be both (rein serve with Redis): it serves HTTP and works.

// Broadcaster carries small messages to every process of a split
// deployment, the sender's included: eventbus/redisbus's Bus is one. A
// message reaches the processes listening when it is sent.
type Broadcaster interface {
	// Broadcast sends msg to every listener and returns how many got it.
	Broadcast(ctx context.Context, msg []byte) (int, error)
	// Listen calls deliver with each message until ctx ends. It calls
	// ready once it listens: every message broadcast after ready returns
	// reaches deliver, until Listen returns.
	Listen(ctx context.Context, ready func(), deliver func(msg []byte)) error
}

// signal is a cancellation or a permission answer on its way to the
// process running the run, or the reply to an answer.
type signal struct {
	RunID string `json:"run_id,omitempty"`
	// Cancel cancels the run; otherwise CallID's question is answered.
	Cancel  bool                `json:"cancel,omitempty"`
	CallID  string              `json:"call_id,omitempty"`
	Verdict *permission.Verdict `json:"verdict,omitempty"`
	// Answer, instead of Verdict, answers CallID's ask_user question.
	Answer *string `json:"answer,omitempty"`
	// Declined, with Answer, says the user chose not to answer.
	Declined bool `json:"declined,omitempty"`
	// ID names an answer; the process running its run replies with
	// ReplyTo set to it and Taken saying whether the question was pending.
	ID      string `json:"id,omitempty"`
	ReplyTo string `json:"reply_to,omitempty"`
	Taken   bool   `json:"taken,omitempty"`
	// StopJobs names a deleted session whose background jobs the worker
	// holding them stops (SPEC TOOL-8), and whose files each worker
	// removes (forgetSession).
	StopJobs string `json:"stop_jobs,omitempty"`
}

// replyWait bounds how long Answer waits for the process running a run to
// say whether it took the answer.
const replyWait = 3 * time.Second

// answerRemote sends an answer (sig: a Verdict or an Answer for a run's
// call) to the process running the run and waits for its reply: nil when
// the question was pending there, ErrNotFound when it was not or no
// process replied in time.
func (s *Service) answerRemote(ctx context.Context, sig signal) error {
	runID, callID := sig.RunID, sig.CallID
	id := session.NewID()
	sig.ID = id
	reply := make(chan bool, 1)
	s.mu.Lock()
	s.replies[id] = reply
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.replies, id)
		s.mu.Unlock()
	}()
	if err := s.awaitListener(ctx); err != nil {
		return err
	}
	if err := s.signal(ctx, sig); err != nil {
		return err
	}
	select {
	case taken := <-reply:
		if taken {
			return nil
		}
	case <-time.After(replyWait):
	case <-ctx.Done():
		return ctx.Err()
	}
	return fmt.Errorf("run %s has no pending question for call %s: %w", runID, callID, session.ErrNotFound)
}

// split says the service enqueues runs on a shared queue.
func (s *Service) split() bool { return s.cfg.Queue != nil }

// enqueueShared hands a stored queued run's session to the shared queue.
// When the queue cannot take it, the run is marked failed — nothing of it
// ran, and the caller is told to send the message again — and the error
// wraps session.ErrUnavailable (the server's 503).
func (s *Service) enqueueShared(ctx context.Context, run *session.Run) error {
	err := s.cfg.Queue.Enqueue(ctx, run.SessionID)
	if err == nil {
		return nil
	}
	run.Status, run.Reason, run.EndedAt = session.RunFailed, "error", s.cfg.Now()
	run.Error = fmt.Sprintf("the run queue did not take the run (%v); nothing ran: send the message again", err)
	if uerr := s.cfg.Ledger.UpdateRun(context.WithoutCancel(ctx), run); uerr != nil {
		// Left queued in the ledger: the queue's resync finds it later.
		s.cfg.Logger.Warn("a run the queue refused stays queued", "run_id", run.ID, "err", uerr)
	}
	if errors.Is(err, queue.ErrUnavailable) {
		return fmt.Errorf("%w: %v", session.ErrUnavailable, err)
	}
	return err
}

// signal sends sig to the process running its run; the service's own
// listener gets it too.
func (s *Service) signal(ctx context.Context, sig signal) error {
	if s.cfg.Broadcast == nil {
		return nil
	}
	b, err := json.Marshal(sig)
	if err != nil {
		return err
	}
	if _, err := s.cfg.Broadcast.Broadcast(ctx, b); err != nil {
		return fmt.Errorf("%w: %v", session.ErrUnavailable, err)
	}
	return nil
}

// listen delivers the broadcast signals to this process's runs until the
// service stops, listening again after a failure.
func (s *Service) listen(ctx context.Context) {
	for ctx.Err() == nil {
		err := s.cfg.Broadcast.Listen(ctx, s.heard, s.deliver)
		if ctx.Err() != nil {
			return
		}
		s.cfg.Logger.Warn("listening for cancellations and answers", "err", err)
		select {
		case <-ctx.Done():
		case <-time.After(time.Second):
		}
	}
}

// heard marks the service's listener ready (see awaitListener).
func (s *Service) heard() { s.heardOnce.Do(func() { close(s.listened) }) }

// awaitListener waits until the service listens for signals, so none sent
// to it from then on is lost: a worker takes no run before — a
// cancellation of a run it took could pass unheard, and the run go on —
// and an answer waits for it before asking for the reply it must hear. A
// service without a Broadcaster has nothing to wait for. While the
// listener cannot subscribe, it says why every second (listen).
func (s *Service) awaitListener(ctx context.Context) error {
	select {
	case <-s.listened:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// deliver applies a signal to the run it names when it runs here.
func (s *Service) deliver(msg []byte) {
	var sig signal
	if err := json.Unmarshal(msg, &sig); err != nil || sig.RunID == "" && sig.ReplyTo == "" && sig.StopJobs == "" {
		s.cfg.Logger.Warn("an unreadable signal was ignored", "err", err)
		return
	}
	s.mu.Lock()
	l := s.running[sig.RunID]
	waiting := s.replies[sig.ReplyTo]
	s.mu.Unlock()
	switch {
	case sig.StopJobs != "":
		s.forgetSession(sig.StopJobs)
	case sig.ReplyTo != "":
		if waiting != nil {
			select {
			case waiting <- sig.Taken:
			default:
			}
		}
	case l == nil: // another process's run
	case sig.Cancel:
		l.cancel()
	case sig.Verdict != nil, sig.Answer != nil:
		var taken bool
		if sig.Verdict != nil {
			taken = l.approver.answer(sig.CallID, *sig.Verdict)
		} else {
			taken = l.approver.answerQuestion(sig.CallID, questionReply{answer: *sig.Answer, declined: sig.Declined})
		}
		if sig.ID != "" {
			if err := s.signal(s.base, signal{ReplyTo: sig.ID, Taken: taken}); err != nil {
				s.cfg.Logger.Warn("the reply to an answer was not sent", "run_id", sig.RunID, "err", err)
			}
		}
	}
}

// Work runs sessions taken from the shared queue until ctx ends or the
// service closes: up to MaxConcurrent sessions at once, each session's
// queued runs one at a time, oldest first. An unreachable queue pauses it
// (1 s, doubling up to 30 s) rather than ending it. Work returns once it
// stopped taking; [Service.Shutdown] waits for the sessions it holds.
func (s *Service) Work(ctx context.Context) error {
	if !s.split() {
		return errors.New("runner: Work needs ServiceConfig.Queue")
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		select {
		case <-s.closing:
			cancel()
		case <-ctx.Done():
		}
	}()
	if s.awaitListener(ctx) != nil {
		return nil
	}
	pause := time.Duration(0)
	for {
		select {
		case s.slot <- struct{}{}:
		case <-ctx.Done():
			return nil
		}
		l, err := s.cfg.Queue.Take(ctx)
		if err != nil {
			<-s.slot
			switch {
			case ctx.Err() != nil, errors.Is(err, queue.ErrClosed):
				return nil
			case !errors.Is(err, queue.ErrUnavailable):
				return err
			}
			pause = min(max(2*pause, time.Second), 30*time.Second)
			s.cfg.Logger.Warn("the run queue is unreachable; taking again later", "err", err, "pause", pause.String())
			select {
			case <-ctx.Done():
				return nil
			case <-time.After(pause):
			}
			continue
		}
		pause = 0
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			<-s.slot
			_ = l.Done(context.WithoutCancel(ctx), true) // for another worker
			return nil
		}
		s.wg.Add(1)
		s.mu.Unlock()
		go func() {
			defer s.wg.Done()
			defer func() { <-s.slot }()
			s.hold(l)
		}()
	}
}

// retryPause is how long a worker keeps a session whose runs stopped on
// an error (the store away) before handing it on.
const retryPause = time.Second

// hold runs the queued runs of a leased session, writing with the lease's
// fencing token: first it takes over the runs a previous holder left
// running (interrupted, the session healed), then it runs the queued ones
// until none is left, the service closes or the lease is lost.
func (s *Service) hold(l *queue.Lease) {
	sid := l.SessionID
	// "fence", not "token": the log redacts the values of keys naming
	// secrets, and a fencing token is none; holders are told apart by it.
	log := s.cfg.Logger.With("session_id", sid, "fence", l.Token)
	if !l.Enqueued.IsZero() {
		log.Debug("session taken", "queue_latency_ms", time.Since(l.Enqueued).Milliseconds())
	}
	ctx, cancel := context.WithCancelCause(session.WithFence(s.base, sid, l.Token))
	defer cancel(nil)
	go func() {
		select {
		case <-l.Lost():
			// The run in progress is cancelled with the lease's error as
			// the cause: it ends interrupted, not cancelled (finish).
			cancel(l.Err())
		case <-ctx.Done():
		}
	}()
	more, err := s.runSession(ctx, l)
	if err != nil {
		log.Warn("the session's runs stopped", "err", err)
		more = true
		if l.Err() == nil {
			// The store most likely does not answer: hand the session on
			// after a pause, not at once, or the workers take it and fail
			// again in a tight loop until the store is back.
			select {
			case <-ctx.Done():
			case <-s.closing:
			case <-time.After(retryPause):
			}
		}
	}
	done, stop := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer stop()
	if err := l.Done(done, more); err != nil {
		log.Warn("the session's lease could not be released; it is handed on after its TTL", "err", err)
	}
}

// runSession is hold's work; more says queued runs remain.
func (s *Service) runSession(ctx context.Context, l *queue.Lease) (more bool, err error) {
	sid := l.SessionID
	stale, err := s.cfg.Ledger.ListRuns(ctx, session.RunFilter{SessionID: sid, Statuses: []session.RunStatus{session.RunRunning}})
	if err != nil {
		return true, err
	}
	for _, run := range stale {
		why := "the worker running it stopped or lost the session; its session was healed"
		if err := s.interrupt(context.WithoutCancel(ctx), run, why); err != nil {
			return true, err
		}
	}
	for {
		if s.isClosed() || l.Err() != nil {
			return true, l.Err()
		}
		runs, err := s.cfg.Ledger.ListRuns(ctx, session.RunFilter{SessionID: sid,
			Statuses: []session.RunStatus{session.RunQueued}, Limit: 1})
		if err != nil {
			return true, err
		}
		if len(runs) == 0 {
			return false, nil
		}
		s.runQueued(ctx, runs[0].ID)
	}
}

// isClosed says Close was called.
func (s *Service) isClosed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed
}

// PendingSessions lists the sessions whose runs wait (queued) or were cut
// off (running) in the ledger: a queue's Resync, so that no run is
// stranded when the queue's server lost its messages.
func PendingSessions(ledger session.Ledger) func(ctx context.Context) ([]string, error) {
	return func(ctx context.Context) ([]string, error) {
		runs, err := ledger.ListRuns(ctx, session.RunFilter{Statuses: []session.RunStatus{session.RunQueued, session.RunRunning}})
		if err != nil {
			return nil, err
		}
		seen := map[string]bool{}
		var ids []string
		for _, r := range runs {
			if !seen[r.SessionID] {
				seen[r.SessionID] = true
				ids = append(ids, r.SessionID)
			}
		}
		return ids, nil
	}
}
