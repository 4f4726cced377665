package runner

import (
	"context"

	"github.com/reinhq/rein/session"
)

// enqueue appends a run to its session's lane, starting the lane's
// goroutine when the session had nothing queued or running.
func (s *Service) enqueue(run *session.Run) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return
	}
	l, busy := s.sessions[run.SessionID]
	if !busy {
		l = &lane{}
		s.sessions[run.SessionID] = l
	}
	l.queue = append(l.queue, run.ID)
	if !busy {
		s.wg.Add(1)
		go s.drain(run.SessionID, l)
	}
}

// drain runs the session's queued runs one at a time, each once a slot of
// MaxConcurrent is free, until the lane is empty.
func (s *Service) drain(sessionID string, l *lane) {
	defer s.wg.Done()
	for {
		held := false
		select {
		case s.slot <- struct{}{}:
			held = true
		case <-s.base.Done():
		}
		release := func() {
			if held {
				<-s.slot
			}
		}
		s.mu.Lock()
		if len(l.queue) == 0 || s.closed {
			// Shutting down leaves the rest queued in the ledger for the
			// next start.
			delete(s.sessions, sessionID)
			s.mu.Unlock()
			release()
			return
		}
		id := l.queue[0]
		l.queue = l.queue[1:]
		s.mu.Unlock()
		s.runQueued(s.base, id)
		release()
	}
}

// runQueued executes a queued run unless it was cancelled meanwhile;
// parent carries the run's context (a worker's fencing token).
func (s *Service) runQueued(parent context.Context, id string) {
	// Starting and cancelling are one at a time in a process, so a run
	// Cancel finds queued never starts, and one it finds started gets its
	// ctx cancelled. Across processes the run is registered before its
	// state is read, so a cancel signal sent after the ledger said
	// cancelled finds it here.
	s.startMu.Lock()
	ctx, cancel := context.WithCancel(parent)
	l := &live{cancel: cancel, approver: newRemoteApprover()}
	s.mu.Lock()
	s.running[id] = l
	s.mu.Unlock()
	defer func() {
		cancel()
		s.mu.Lock()
		delete(s.running, id)
		s.mu.Unlock()
	}()
	run, err := s.cfg.Ledger.GetRun(context.WithoutCancel(ctx), id)
	if err != nil {
		s.startMu.Unlock()
		s.cfg.Logger.Error("a queued run vanished", "run_id", id, "err", err)
		return
	}
	s.startMu.Unlock()
	if run.Status != session.RunQueued {
		return // cancelled while it waited
	}
	s.execute(ctx, run, l.approver)
}
