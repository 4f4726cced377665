package mcpserver

import (
	"context"
	"fmt"
	"sync"
)

// holds are the sessions this server's runs are bound to, each with its
// run. The session store's lock keeps other processes out of a session,
// not a second run of this one, so the server keeps its own: a session
// runs one run at a time.
type holds struct {
	mu sync.Mutex
	m  map[string]*flight
}

// hold makes f the run of session id. A run of id still going is an
// error, unless it was cancelled (its client got no result saying when it
// let the session go): then hold waits for it to end, or for ctx.
func (s *Server) hold(ctx context.Context, id string, f *flight) error {
	for {
		s.holds.mu.Lock()
		h := s.holds.m[id]
		if h == nil {
			if s.holds.m == nil {
				s.holds.m = map[string]*flight{}
			}
			s.holds.m[id] = f
			s.holds.mu.Unlock()
			return nil
		}
		s.holds.mu.Unlock()
		if !h.cancelled() {
			return fmt.Errorf("session %s is running: another call drives it; wait for that call's result (or cancel it), then continue the session", id)
		}
		select {
		case <-h.ended:
		case <-ctx.Done():
			return fmt.Errorf("session %s: waiting for its cancelled run to end: %w", id, ctx.Err())
		}
	}
}

// holdNew makes f the run of the session it has just created.
func (s *Server) holdNew(id string, f *flight) {
	s.holds.mu.Lock()
	defer s.holds.mu.Unlock()
	if s.holds.m == nil {
		s.holds.m = map[string]*flight{}
	}
	s.holds.m[id] = f
}

// release ends f's hold of session id ("" when the run made none).
func (s *Server) release(id string, f *flight) {
	s.holds.mu.Lock()
	defer s.holds.mu.Unlock()
	if id != "" && s.holds.m[id] == f {
		delete(s.holds.m, id)
	}
}
