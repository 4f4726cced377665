package queue

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"
)

// Grant is what a backend grants with a lease.
type Grant struct {
	// SessionID is the session whose queued runs the holder runs, one at
	// a time, oldest first, reading them from the ledger.
	SessionID string
	// Token is the lease's fencing token: strictly increasing per session
	// across holders, processes and restarts of the queue's server (see
	// [TokenFloor]). The store refuses a write carrying a token below the
	// highest it has seen for the session, so a holder whose lease ran out
	// can no longer write.
	Token int64
	// Enqueued is when the message that led to this lease was enqueued:
	// Take's return minus Enqueued is the queue latency.
	Enqueued time.Time
	// Granted is when the lease began on the queue's clock: just before
	// the backend was asked for it, so that the holder's deadline (Granted
	// plus the TTL) never falls after the server's. Zero means now.
	Granted time.Time
}

// Keeper is a backend's side of one lease; [Lease] calls it, one call at a
// time. Backends implement it; holders use the Lease's methods.
type Keeper interface {
	// Renew extends the lease by the TTL. An error wrapping [ErrLeaseLost]
	// says another holder may have the session; any other error says the
	// backend could not tell (the lease holds until its deadline).
	Renew(ctx context.Context) error
	// Release ends the lease and acknowledges its message; more
	// re-enqueues the session (as does an Enqueue that met the lease).
	// Lease calls it once, after the last Renew returned. An error wrapping
	// ErrLeaseLost says another holder had the session: nothing changed,
	// except that more is remembered for that holder.
	Release(ctx context.Context, more bool) error
}

// Scope is what the leases of one queue share.
type Scope struct {
	// Done is closed when the queue closes: its leases are lost.
	Done <-chan struct{}
	// WG, when not nil, counts the leases' goroutines so that Close can
	// wait for them: the backend calls WG.Add(1) before NewLease, under
	// the lock that orders it with Close; the lease calls WG.Done.
	WG *sync.WaitGroup
}

// Lease is the right to run one session's queued runs, until Done or until
// it is lost. It renews itself every Options.RenewEvery; when renewals fail
// for TTL (or the backend says another holder may have the session), Lost
// is closed and the holder must stop writing to the session at once. Its
// methods are safe for concurrent use.
type Lease struct {
	Grant

	keeper Keeper
	ttl    time.Duration
	every  time.Duration
	now    func() time.Time
	log    *slog.Logger
	scope  Scope
	cancel context.CancelFunc // ends the renewer
	exited chan struct{}      // closed when the renewer returns

	callMu sync.Mutex // one call to the keeper at a time

	mu       sync.Mutex
	deadline time.Time // on the clock of now
	err      error     // why the lease was lost; nil while held or released cleanly
	released bool
	ended    bool
	lost     chan struct{}
}

// NewLease starts a lease granted at o.Now(): it holds for o.TTL and renews
// itself through k every o.RenewEvery (o with defaults). It is lost when
// s.Done is closed. Backends call it from Take.
func NewLease(g Grant, k Keeper, o Options, s Scope) *Lease {
	ctx, cancel := context.WithCancel(context.Background())
	l := &Lease{Grant: g, keeper: k, ttl: o.TTL, every: o.RenewEvery, now: o.Now, log: o.Logger,
		scope: s, cancel: cancel, exited: make(chan struct{}), lost: make(chan struct{})}
	if l.Granted.IsZero() {
		l.Granted = l.now()
	}
	l.deadline = l.Granted.Add(l.ttl)
	go l.keep(ctx)
	return l
}

// Lost is closed when the lease ends: lost (renewals failed for TTL, or
// another holder may have the session, or the queue was closed), or
// released by Done. [Lease.Err] says which. A holder watches it while it
// runs and stops writing to the session as soon as it is closed.
func (l *Lease) Lost() <-chan struct{} { return l.lost }

// Err returns nil while the lease holds or after a clean Done, and an
// error wrapping [ErrLeaseLost] once it was lost.
func (l *Lease) Err() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.err
}

// Renew extends the lease by the TTL now, without waiting for the
// automatic renewal. It returns an error wrapping [ErrLeaseLost] once
// another holder may have the session (then Lost is closed), and
// [ErrUnavailable] when the backend could not be asked: the lease still
// holds until its deadline, and the renewal is tried again.
func (l *Lease) Renew(ctx context.Context) error {
	l.callMu.Lock()
	defer l.callMu.Unlock()
	l.mu.Lock()
	err, released := l.err, l.released
	l.mu.Unlock()
	switch {
	case err != nil:
		return err
	case released:
		return fmt.Errorf("queue: renew %s (token %d): %w: released by Done", l.SessionID, l.Token, ErrLeaseLost)
	}
	sent := l.now()
	err = l.keeper.Renew(ctx)
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case l.err != nil:
		return l.err // lost meanwhile (the deadline passed)
	case err == nil:
		if d := sent.Add(l.ttl); d.After(l.deadline) {
			l.deadline = d
		}
		return nil
	case errors.Is(err, ErrLeaseLost):
		l.loseLocked(fmt.Errorf("queue: renew %s (token %d): %w", l.SessionID, l.Token, err))
		return l.err
	case !l.now().Before(l.deadline):
		l.loseLocked(fmt.Errorf("queue: renew %s (token %d): %w: not renewed within %v: %v",
			l.SessionID, l.Token, ErrLeaseLost, l.ttl, err))
		return l.err
	}
	return fmt.Errorf("queue: renew %s (token %d): %w", l.SessionID, l.Token, err)
}

// Done releases the lease and acknowledges its message; more re-enqueues
// the session: the worker passes true when the ledger still holds queued
// runs of the session. A lease that was lost is released with more set
// whatever the caller says, since its holder was cut off mid-way: the next
// holder finds the session's state in the ledger. Done is idempotent (the
// calls after the first do nothing and return nil). A failure to reach the
// backend leaves the message to be reclaimed after the TTL: nothing is
// lost, the session is only handed out later.
func (l *Lease) Done(ctx context.Context, more bool) error {
	l.mu.Lock()
	if l.released {
		l.mu.Unlock()
		return nil
	}
	l.released = true
	l.mu.Unlock()
	l.cancel()
	<-l.exited
	l.callMu.Lock()
	defer l.callMu.Unlock()
	l.mu.Lock()
	if l.err != nil {
		more = true
	}
	l.mu.Unlock()
	err := l.keeper.Release(ctx, more)
	l.mu.Lock()
	l.endLocked()
	l.mu.Unlock()
	if err != nil {
		return fmt.Errorf("queue: release %s (token %d): %w", l.SessionID, l.Token, err)
	}
	return nil
}

// keep is the lease's goroutine: it renews every l.every (when positive)
// and declares the lease lost once its deadline passes or the queue
// closes.
func (l *Lease) keep(ctx context.Context) {
	defer func() {
		close(l.exited)
		if l.scope.WG != nil {
			l.scope.WG.Done()
		}
	}()
	var tick <-chan time.Time
	if l.every > 0 {
		t := time.NewTicker(l.every)
		defer t.Stop()
		tick = t.C
	}
	for {
		l.mu.Lock()
		left, err := l.deadline.Sub(l.now()), l.err
		l.mu.Unlock()
		if err != nil {
			return
		}
		if left <= 0 {
			l.lose(fmt.Errorf("queue: session %s (token %d): %w: not renewed within %v",
				l.SessionID, l.Token, ErrLeaseLost, l.ttl))
			return
		}
		watch := time.NewTimer(left)
		select {
		case <-ctx.Done():
			watch.Stop()
			return
		case <-l.scope.Done:
			watch.Stop()
			l.lose(fmt.Errorf("queue: session %s (token %d): %w: %w", l.SessionID, l.Token, ErrLeaseLost, ErrClosed))
			return
		case <-watch.C:
		case <-tick:
			watch.Stop()
			rctx, cancel := context.WithTimeout(ctx, left)
			err := l.Renew(rctx)
			cancel()
			if err != nil && !errors.Is(err, ErrLeaseLost) && ctx.Err() == nil {
				l.log.Warn("queue: renewing a lease failed; retrying", "session_id", l.SessionID,
					"token", l.Token, "err", err)
			}
		}
	}
}

func (l *Lease) lose(err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.loseLocked(err)
}

// loseLocked records why the lease was lost and closes Lost.
func (l *Lease) loseLocked(err error) {
	if l.err != nil || l.ended {
		return
	}
	l.err = err
	l.log.Warn("queue: lease lost: the holder must stop writing to the session", "session_id", l.SessionID,
		"token", l.Token, "err", err)
	l.endLocked()
}

func (l *Lease) endLocked() {
	if !l.ended {
		l.ended = true
		close(l.lost)
	}
}
