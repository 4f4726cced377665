package queue

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// Memory is the in-process [Queue] of embedded mode: the model of the
// package documentation, in memory, for the one process that enqueues and
// runs. Tokens come from one counter floored by [TokenFloor], so they keep
// increasing across restarts of the process.
type Memory struct {
	opts Options

	mu      sync.Mutex
	waiting []waiter             // messages not taken yet, oldest first
	marked  map[string]time.Time // sessions with a waiting message: when it was enqueued
	holds   map[string]*hold     // leases by session, expired ones included until reclaimed
	dirty   map[string]bool      // sessions whose message met their lease
	last    int64                // the last token granted
	wake    chan struct{}        // closed (and replaced) when a Take may find work
	closed  bool

	done chan struct{}
	wg   sync.WaitGroup
}

var _ Queue = (*Memory)(nil)

// waiter is one waiting message.
type waiter struct {
	sid string
	at  time.Time
}

// hold is the state of one lease.
type hold struct {
	token    int64
	deadline time.Time
	enqueued time.Time // of the message that led to it
}

// NewMemory returns an empty in-process queue; it calls opts.Resync in the
// background to enqueue the sessions the ledger has queued runs for.
func NewMemory(opts Options) (*Memory, error) {
	o, err := opts.WithDefaults()
	if err != nil {
		return nil, fmt.Errorf("queue: %w", err)
	}
	q := &Memory{opts: o, marked: map[string]time.Time{}, holds: map[string]*hold{}, dirty: map[string]bool{},
		wake: make(chan struct{}), done: make(chan struct{})}
	if o.Resync != nil {
		q.wg.Add(1)
		go func() {
			defer q.wg.Done()
			RunResync(q.done, o, q.Enqueue)
		}()
	}
	return q, nil
}

// Enqueue implements [Queue].
func (q *Memory) Enqueue(ctx context.Context, sessionID string) error {
	if err := CheckSessionID(sessionID); err != nil {
		return fmt.Errorf("queue: enqueue: %w", err)
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("queue: enqueue %s: %w", sessionID, err)
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		return fmt.Errorf("queue: enqueue %s: %w", sessionID, ErrClosed)
	}
	q.enqueueLocked(sessionID)
	return nil
}

// enqueueLocked adds a message for sid unless one waits already.
func (q *Memory) enqueueLocked(sid string) {
	if _, ok := q.marked[sid]; ok {
		return
	}
	now := q.opts.Now()
	q.marked[sid] = now
	q.waiting = append(q.waiting, waiter{sid: sid, at: now})
	q.wakeLocked()
}

func (q *Memory) wakeLocked() {
	close(q.wake)
	q.wake = make(chan struct{})
}

// Take implements [Queue]. Leases whose holders stopped renewing are
// reclaimed first, then waiting messages are taken oldest first; a message
// of a session leased meanwhile marks it dirty, and the lease's Done
// enqueues it again.
func (q *Memory) Take(ctx context.Context) (*Lease, error) {
	for {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("queue: take: %w", err)
		}
		q.mu.Lock()
		if q.closed {
			q.mu.Unlock()
			return nil, fmt.Errorf("queue: take: %w", ErrClosed)
		}
		g, ok, next := q.grantLocked()
		if ok {
			q.wg.Add(1) // the lease's goroutine, before Close waits
		}
		wake := q.wake
		q.mu.Unlock()
		if ok {
			k := &memKeeper{q: q, sid: g.SessionID, token: g.Token}
			return NewLease(g, k, q.opts, Scope{Done: q.done, WG: &q.wg}), nil
		}
		if err := q.wait(ctx, wake, next); err != nil {
			return nil, fmt.Errorf("queue: take: %w", err)
		}
	}
}

// wait waits for wake, for next (when positive) or for the end of ctx.
func (q *Memory) wait(ctx context.Context, wake <-chan struct{}, next time.Duration) error {
	var timeout <-chan time.Time
	if next > 0 {
		t := time.NewTimer(next)
		defer t.Stop()
		timeout = t.C
	}
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-wake:
	case <-timeout:
	}
	return nil
}

// grantLocked grants the next lease, or says how long until a lease
// expires (0: none held).
func (q *Memory) grantLocked() (Grant, bool, time.Duration) {
	now := q.opts.Now()
	var next time.Duration
	reclaim := ""
	for sid, h := range q.holds {
		left := h.deadline.Sub(now)
		switch {
		case left <= 0 && (reclaim == "" || h.deadline.Before(q.holds[reclaim].deadline)):
			reclaim = sid
		case left > 0 && (next == 0 || left < next):
			next = left
		}
	}
	if reclaim != "" {
		return q.grantTo(reclaim, q.holds[reclaim].enqueued, now), true, 0
	}
	for len(q.waiting) > 0 {
		w := q.waiting[0]
		q.waiting[0] = waiter{}
		q.waiting = q.waiting[1:]
		delete(q.marked, w.sid)
		if h := q.holds[w.sid]; h != nil && h.deadline.After(now) {
			q.dirty[w.sid] = true // its holder's Done enqueues it again
			continue
		}
		return q.grantTo(w.sid, w.at, now), true, 0
	}
	return Grant{}, false, next
}

// grantTo makes sid's lease.
func (q *Memory) grantTo(sid string, enqueued, now time.Time) Grant {
	q.last = max(q.last+1, TokenFloor(now))
	q.holds[sid] = &hold{token: q.last, deadline: now.Add(q.opts.TTL), enqueued: enqueued}
	delete(q.dirty, sid) // the new holder reads the ledger afresh
	return Grant{SessionID: sid, Token: q.last, Enqueued: enqueued, Granted: now}
}

// Stats implements [Queue].
func (q *Memory) Stats(ctx context.Context) (Stats, error) {
	if err := ctx.Err(); err != nil {
		return Stats{}, fmt.Errorf("queue: stats: %w", err)
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		return Stats{}, fmt.Errorf("queue: stats: %w", ErrClosed)
	}
	st := Stats{Waiting: len(q.waiting), Leased: len(q.holds)}
	if len(q.waiting) > 0 {
		st.OldestWait = max(q.opts.Now().Sub(q.waiting[0].at), 0)
	}
	return st, nil
}

// Close implements [Queue]: it drops the waiting messages (their runs stay
// queued in the ledger, for Resync at the next start), and returns once
// the leases' goroutines have stopped.
func (q *Memory) Close() error {
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock()
		return nil
	}
	q.closed = true
	q.waiting, q.marked, q.holds, q.dirty = nil, nil, nil, nil
	q.wakeLocked()
	q.mu.Unlock()
	close(q.done)
	q.wg.Wait()
	return nil
}

// memKeeper is the [Keeper] of a Memory lease.
type memKeeper struct {
	q     *Memory
	sid   string
	token int64
}

func (k *memKeeper) Renew(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	q := k.q
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		return ErrClosed
	}
	h := q.holds[k.sid]
	if h == nil || h.token != k.token {
		return fmt.Errorf("%w: the session was taken by another holder", ErrLeaseLost)
	}
	h.deadline = q.opts.Now().Add(q.opts.TTL)
	return nil
}

func (k *memKeeper) Release(ctx context.Context, more bool) error {
	q := k.q
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		return ErrClosed
	}
	if h := q.holds[k.sid]; h != nil && h.token != k.token {
		if more {
			q.dirty[k.sid] = true
		}
		return fmt.Errorf("%w: the session was taken by another holder", ErrLeaseLost)
	} else if h != nil {
		delete(q.holds, k.sid)
	}
	if more || q.dirty[k.sid] {
		delete(q.dirty, k.sid)
		q.enqueueLocked(k.sid)
	}
	return nil
}

// RunResync calls o.Resync until it succeeds or done is closed, retrying with
// a growing pause, and enqueues each session it returns. Backends call it
// at start and when their server lost its data.
func RunResync(done <-chan struct{}, o Options, enqueue func(context.Context, string) error) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		select {
		case <-done:
			cancel()
		case <-ctx.Done():
		}
	}()
	pause := 100 * time.Millisecond
	for {
		err := resyncOnce(ctx, o, enqueue)
		if err == nil || ctx.Err() != nil {
			return
		}
		o.Logger.Warn("queue: resynchronising from the ledger failed; retrying", "err", err, "in", pause)
		select {
		case <-ctx.Done():
			return
		case <-time.After(pause):
		}
		pause = min(pause*2, 30*time.Second)
	}
}

func resyncOnce(ctx context.Context, o Options, enqueue func(context.Context, string) error) error {
	sids, err := o.Resync(ctx)
	if err != nil {
		return fmt.Errorf("listing the sessions with queued runs: %w", err)
	}
	for _, sid := range sids {
		if err := enqueue(ctx, sid); err != nil {
			if CheckSessionID(sid) != nil {
				o.Logger.Warn("queue: the ledger lists a session id the queue refuses; skipped", "err", err)
				continue
			}
			return err
		}
	}
	if len(sids) > 0 {
		o.Logger.Info("queue: resynchronised from the ledger", "sessions", len(sids))
	}
	return nil
}
