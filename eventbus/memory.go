package eventbus

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// Options configure a [Memory] bus. The zero value means the defaults.
type Options struct {
	// Window is how many events are retained per session for replay
	// (default 4096).
	Window int
	// Buffer is how many live events a subscriber may have waiting before
	// it is cut off with [ErrSlow] (default 1024). A subscription's buffer
	// holds its replay on top of this.
	Buffer int
	// Idle is how long a session may go with no subscriber and no publish
	// before the bus forgets it: its window and its last published ID
	// (default 10 minutes). Idle sessions are dropped by a sweep that runs
	// when the bus makes a new session record, at most every Idle/4: the
	// only time the bus grows is also the only time it sweeps, and the
	// publish path never reads the clock while someone listens.
	Idle time.Duration
	// Now is the clock (default time.Now).
	Now func() time.Time
}

// Defaults of [Options].
const (
	DefaultWindow = 4096
	DefaultBuffer = 1024
	DefaultIdle   = 10 * time.Minute
)

// Memory is the in-memory [Bus] of embedded mode: one process, nothing
// shared with another. Each session has a ring of its last Window events and
// a list of subscribers, under a lock of its own; each subscriber is a
// buffered channel the publisher sends to without waiting. No goroutine runs
// in the background: one runs only to end a subscription whose context is
// done.
type Memory struct {
	window, buffer int
	idle           time.Duration
	now            func() time.Time

	mu        sync.RWMutex
	sessions  map[string]*memSession // nil once closed
	closed    bool
	nextSweep atomic.Int64 // unix nanoseconds

	subs      atomic.Int64
	published atomic.Uint64
	slow      atomic.Uint64
}

var _ Bus = (*Memory)(nil)

// NewMemory returns an empty in-memory bus.
func NewMemory(opts Options) *Memory {
	m := &Memory{window: opts.Window, buffer: opts.Buffer, idle: opts.Idle, now: opts.Now,
		sessions: map[string]*memSession{}}
	if m.window <= 0 {
		m.window = DefaultWindow
	}
	if m.buffer <= 0 {
		m.buffer = DefaultBuffer
	}
	if m.idle <= 0 {
		m.idle = DefaultIdle
	}
	if m.now == nil {
		m.now = time.Now
	}
	m.nextSweep.Store(m.now().Add(m.sweepEvery()).UnixNano())
	return m
}

// Stats are figures for metrics.
type Stats struct {
	// Sessions is the number of sessions the bus holds state for.
	Sessions int
	// Subscribers is the number of live subscriptions.
	Subscribers int
	// Published counts the events published since the bus was made.
	Published uint64
	// Slow counts the subscriptions cut off with [ErrSlow].
	Slow uint64
}

// Stats returns the bus's current figures.
func (m *Memory) Stats() Stats {
	m.mu.RLock()
	n := len(m.sessions)
	m.mu.RUnlock()
	return Stats{Sessions: n, Subscribers: m.Subscribers(), Published: m.published.Load(), Slow: m.slow.Load()}
}

// Subscribers returns the number of live subscriptions, over all sessions.
func (m *Memory) Subscribers() int { return int(m.subs.Load()) }

// Publish implements [Bus].
func (m *Memory) Publish(ctx context.Context, e Event) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("eventbus: publish %s/%d: %w", e.SessionID, e.ID, err)
	}
	if e.SessionID == "" {
		return fmt.Errorf("eventbus: publish %d: %w: empty session id", e.ID, ErrInvalid)
	}
	ev := &e
	for {
		s, err := m.session(e.SessionID)
		if err != nil {
			return fmt.Errorf("eventbus: publish %s/%d: %w", e.SessionID, e.ID, err)
		}
		last, ok, err := s.publish(ev)
		switch {
		case !ok:
			continue // dropped by a sweep meanwhile: take the new record
		case err != nil:
			return fmt.Errorf("eventbus: publish %s/%d: %w: the last published is %d", e.SessionID, e.ID, err, last)
		}
		m.published.Add(1)
		return nil
	}
}

// Subscribe implements [Bus].
func (m *Memory) Subscribe(ctx context.Context, sessionID string, afterID int64) (Subscription, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("eventbus: subscribe %s: %w", sessionID, err)
	}
	if sessionID == "" || afterID < 0 {
		return nil, fmt.Errorf("eventbus: subscribe %q after %d: %w: need a session id and afterID >= 0",
			sessionID, afterID, ErrInvalid)
	}
	for {
		s, err := m.session(sessionID)
		if err != nil {
			return nil, fmt.Errorf("eventbus: subscribe %s: %w", sessionID, err)
		}
		if sub := s.subscribe(ctx, afterID); sub != nil {
			return sub, nil
		}
	}
}

// Close implements [Bus].
func (m *Memory) Close() error {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return nil
	}
	m.closed = true
	sessions := m.sessions
	m.sessions = nil
	m.mu.Unlock()
	for _, s := range sessions {
		s.drop(ErrClosed)
	}
	return nil
}

// session returns the session's record, making one (after a sweep, if one
// is due) if there is none.
func (m *Memory) session(id string) (*memSession, error) {
	m.mu.RLock()
	s, closed := m.sessions[id], m.closed
	m.mu.RUnlock()
	switch {
	case closed:
		return nil, ErrClosed
	case s != nil:
		return s, nil
	}
	now := m.now()
	m.maybeSweep(now)
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return nil, ErrClosed
	}
	if s = m.sessions[id]; s == nil {
		s = &memSession{m: m, active: now}
		m.sessions[id] = s
	}
	return s, nil
}

func (m *Memory) sweepEvery() time.Duration { return max(m.idle/4, 1) }

// maybeSweep drops the idle sessions when a sweep is due.
func (m *Memory) maybeSweep(now time.Time) {
	if now.UnixNano() < m.nextSweep.Load() {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed || now.UnixNano() < m.nextSweep.Load() {
		return
	}
	m.nextSweep.Store(now.Add(m.sweepEvery()).UnixNano())
	for id, s := range m.sessions {
		if s.dropIfIdle(now, m.idle) {
			delete(m.sessions, id)
		}
	}
}
