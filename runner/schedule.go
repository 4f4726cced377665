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
		s.runQueued(id)
		release()
	}
}

// runQueued executes a queued run unless it was cancelled meanwhile.
func (s *Service) runQueued(id string) {
	// Starting and cancelling are one at a time, so a run Cancel finds
	// queued never starts, and one it finds started gets its ctx cancelled.
	s.startMu.Lock()
	run, err := s.cfg.Ledger.GetRun(context.Background(), id)
	if err != nil {
		s.startMu.Unlock()
		s.cfg.Logger.Error("a queued run vanished", "run_id", id, "err", err)
		return
	}
	if run.Status != session.RunQueued {
		s.startMu.Unlock()
		return // cancelled while it waited
	}
	ctx, cancel := context.WithCancel(s.base)
	l := &live{cancel: cancel, approver: newRemoteApprover()}
	s.mu.Lock()
	s.running[id] = l
	s.mu.Unlock()
	s.startMu.Unlock()
	defer func() {
		cancel()
		s.mu.Lock()
		delete(s.running, id)
		s.mu.Unlock()
	}()
	s.execute(ctx, run, l.approver)
}
