package redisbus

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/reinhq/rein/eventbus"
	"github.com/reinhq/rein/internal/redisconn"
)

// Options configure a [Bus]. The zero value means the defaults. Every
// process sharing a prefix must use the same Window and Idle.
type Options struct {
	// Prefix starts every key and channel name the bus uses (default
	// "rein:bus:"), so that deployments and tests can share a Redis.
	Prefix string
	// Window is how many events of a session a subscription can replay
	// (default [DefaultWindow]). Streams are trimmed approximately, so
	// Redis holds a little more; a process that lost its live feed can
	// catch up from that slack.
	Window int
	// Buffer is how many live events a subscriber may have waiting before
	// it is cut off with [eventbus.ErrSlow] (default
	// [eventbus.DefaultBuffer]). A subscription's buffer holds its replay
	// on top of this.
	Buffer int
	// Idle is how long a session's stream outlives its last publish when
	// no process subscribes to it (default [eventbus.DefaultIdle]); then
	// Redis forgets it, its window and its last published ID. A process
	// with subscribers keeps the streams they read alive.
	Idle time.Duration
	// Timeout bounds every Redis call (default 5s): a Publish or a
	// Subscribe while Redis is unreachable fails after it. The live feed
	// pings Redis after Timeout of silence and reconnects after twice it.
	Timeout time.Duration
	// Logger receives the bus's warnings: lost connections, corrupt
	// messages, subscriptions ended because events were lost (default:
	// discard).
	Logger *slog.Logger
}

// Defaults of [Options].
const (
	DefaultPrefix  = "rein:bus:"
	DefaultWindow  = 1024
	DefaultTimeout = 5 * time.Second
)

// ErrLost ends a subscription when the bus cannot prove that the events it
// would deliver next follow the last one it delivered: Redis restarted (it
// runs without persistence, so its streams are gone), or this process
// missed more events than a stream holds while its connection was down.
// It wraps [eventbus.ErrSlow] because the remedy is the same: resubscribe
// after the last event received; the new subscription's Gap says what
// Redis no longer has.
var ErrLost = fmt.Errorf("redisbus: events may have been lost (Redis restarted or the live feed fell too far behind): %w", eventbus.ErrSlow)

// Bus is an [eventbus.Bus] over Redis, shared by every process connected
// to the same Redis with the same prefix. See the package documentation.
type Bus struct {
	rdb                    *redis.Client
	prefix                 string
	window, buffer         int
	idle, timeout, sweepAt time.Duration
	log                    *slog.Logger

	// cmdMu orders the SUBSCRIBE and UNSUBSCRIBE commands with the
	// changes of sessions they go with, and guards ps.
	cmdMu sync.Mutex
	ps    *redis.PubSub

	mu          sync.RWMutex
	sessions    map[string]*session // by session ID; nil once closed
	outstanding map[string]int      // SUBSCRIBE commands not confirmed yet, by channel
	closed      bool

	// The syncer's work, guarded by qmu.
	qmu      sync.Mutex
	queue    []*session
	runCheck bool
	wake     chan struct{}

	runID string       // Redis's run_id; the syncer's after New
	epoch atomic.Int64 // counts the losses of the live feed
	done  chan struct{}
	wg    sync.WaitGroup

	subs                                           atomic.Int64
	published, received, slow, lost, catchUps, rec atomic.Uint64
}

var _ eventbus.Bus = (*Bus)(nil)

// New connects to the Redis at url (redis://[user:password@]host:port/db,
// rediss:// for TLS, unix:///path; go-redis's query options such as
// pool_size apply) and returns a bus over it. It fails when Redis does not
// answer a PING within the timeout.
func New(ctx context.Context, url string, opts Options) (*Bus, error) {
	b := newBus(opts)
	// Publish is not idempotent: it retries by itself (see Publish).
	rdb, err := redisconn.Dial(ctx, url, "redisbus", "rein-eventbus", b.timeout)
	if err != nil {
		return nil, err
	}
	b.rdb = rdb
	pctx, cancel := context.WithTimeout(ctx, b.timeout)
	defer cancel()
	if b.runID, err = redisconn.RunID(pctx, rdb); err != nil {
		b.log.Warn("redisbus: cannot read Redis's run_id: restarts are found by the event chain only", "err", err)
	}
	b.ps = b.rdb.Subscribe(context.WithoutCancel(ctx))
	b.wg.Add(2)
	go b.read()
	go b.sync()
	return b, nil
}

func newBus(opts Options) *Bus {
	b := &Bus{prefix: opts.Prefix, window: opts.Window, buffer: opts.Buffer, idle: opts.Idle,
		timeout: opts.Timeout, log: opts.Logger, sessions: map[string]*session{}, outstanding: map[string]int{},
		wake: make(chan struct{}, 1), done: make(chan struct{})}
	if b.prefix == "" {
		b.prefix = DefaultPrefix
	}
	if b.window <= 0 {
		b.window = DefaultWindow
	}
	if b.buffer <= 0 {
		b.buffer = eventbus.DefaultBuffer
	}
	if b.idle <= 0 {
		b.idle = eventbus.DefaultIdle
	}
	if b.timeout <= 0 {
		b.timeout = DefaultTimeout
	}
	if b.log == nil {
		b.log = slog.New(slog.DiscardHandler)
	}
	b.sweepAt = min(max(b.idle/4, 10*time.Millisecond), time.Minute)
	return b
}

// Stats are figures for metrics.
type Stats struct {
	// Sessions is the number of sessions this process follows.
	Sessions int
	// Subscribers is the number of live subscriptions in this process.
	Subscribers int
	// Published counts the events this process published.
	Published uint64
	// Received counts the events that reached this process live.
	Received uint64
	// Slow counts the subscriptions cut off with [eventbus.ErrSlow].
	Slow uint64
	// Lost counts the subscriptions ended with [ErrLost].
	Lost uint64
	// CatchUps counts the reads of a stream that filled a hole in the
	// live feed.
	CatchUps uint64
	// Reconnects counts the times the live feed lost its connection.
	Reconnects uint64
}

// Stats returns the bus's current figures.
func (b *Bus) Stats() Stats {
	b.mu.RLock()
	n := len(b.sessions)
	b.mu.RUnlock()
	return Stats{Sessions: n, Subscribers: int(b.subs.Load()), Published: b.published.Load(),
		Received: b.received.Load(), Slow: b.slow.Load(), Lost: b.lost.Load(), CatchUps: b.catchUps.Load(),
		Reconnects: b.rec.Load()}
}

func (b *Bus) streamKey(sid string) string { return b.prefix + "s:" + sid }
func (b *Bus) channel(sid string) string   { return b.prefix + "c:" + sid }

// Publish implements [eventbus.Bus]. It is one round trip to Redis,
// bounded by the timeout; a failure of the connection is retried once.
func (b *Bus) Publish(ctx context.Context, e eventbus.Event) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("redisbus: publish %s/%d: %w", e.SessionID, e.ID, err)
	}
	if e.SessionID == "" {
		return fmt.Errorf("redisbus: publish %d: %w: empty session id", e.ID, eventbus.ErrInvalid)
	}
	if b.isClosed() {
		return fmt.Errorf("redisbus: publish %s/%d: %w", e.SessionID, e.ID, eventbus.ErrClosed)
	}
	if e.ID <= 0 {
		return fmt.Errorf("redisbus: publish %s/%d: %w: ids start at 1", e.SessionID, e.ID, eventbus.ErrOutOfOrder)
	}
	ctx, cancel := context.WithTimeout(ctx, b.timeout)
	defer cancel()
	keys := []string{b.streamKey(e.SessionID), b.channel(e.SessionID)}
	body := encode(&e)
	for attempt := 0; ; attempt++ {
		res, err := publishScript().Run(ctx, b.rdb, keys, streamID(e.ID), b.window, body, b.idle.Milliseconds()).Slice()
		if err != nil {
			if attempt == 0 && retryable(err) && ctx.Err() == nil && !b.isClosed() {
				continue
			}
			if b.isClosed() {
				err = eventbus.ErrClosed
			}
			return fmt.Errorf("redisbus: publish %s/%d: %w", e.SessionID, e.ID, b.unreachable(err))
		}
		ok, prev, err := publishResult(res)
		switch {
		case err != nil:
			return fmt.Errorf("redisbus: publish %s/%d: %w", e.SessionID, e.ID, err)
		case !ok && (attempt == 0 || prev != e.ID):
			return fmt.Errorf("redisbus: publish %s/%d: %w: the last published is %d",
				e.SessionID, e.ID, eventbus.ErrOutOfOrder, prev)
		}
		// Appended now, or by the first attempt whose reply was lost.
		b.published.Add(1)
		return nil
	}
}

// publishResult reads the reply of publishScript.
func publishResult(res []any) (ok bool, prev int64, err error) {
	if len(res) != 2 {
		return false, 0, fmt.Errorf("unexpected reply %v", res)
	}
	n, _ := res[0].(int64)
	s, _ := res[1].(string)
	prev, err = parseStreamID(s)
	return n == 1, prev, err
}

// retryable reports whether err is a failure of the connection rather than
// an answer of Redis or the end of the context.
func retryable(err error) bool {
	var rerr redis.Error
	if errors.As(err, &rerr) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) ||
		errors.Is(err, redis.ErrClosed) {
		return false
	}
	var nerr net.Error
	return !errors.As(err, &nerr) || !nerr.Timeout()
}

// Subscribe implements [eventbus.Bus]. The first subscription of a session
// in this process subscribes to its channel; every subscription then
// reads the session's window from its stream (one round trip each).
func (b *Bus) Subscribe(ctx context.Context, sessionID string, afterID int64) (eventbus.Subscription, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("redisbus: subscribe %s: %w", sessionID, err)
	}
	if sessionID == "" || afterID < 0 {
		return nil, fmt.Errorf("redisbus: subscribe %q after %d: %w: need a session id and afterID >= 0",
			sessionID, afterID, eventbus.ErrInvalid)
	}
	for attempt := 0; ; attempt++ {
		sub, err := b.subscribe(ctx, sessionID, afterID)
		if errors.Is(err, errRetry) && attempt < 5 {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("redisbus: subscribe %s after %d: %w", sessionID, afterID, b.unreachable(err))
		}
		return sub, nil
	}
}

// Ping checks that Redis answers (readiness).
func (b *Bus) Ping(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, b.timeout)
	defer cancel()
	return b.unreachable(b.rdb.Ping(ctx).Err())
}

// unreachable wraps an error of reaching Redis — a refused or broken
// connection, no answer within the timeout, a server loading its data —
// with eventbus.ErrUnavailable, so callers answer "try again later" (the
// server's 503). Redis's own refusals and a closed bus pass unchanged.
func (b *Bus) unreachable(err error) error {
	var nerr net.Error
	switch {
	case err == nil, errors.Is(err, eventbus.ErrClosed), errors.Is(err, context.Canceled):
		return err
	case errors.As(err, &nerr), errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF),
		errors.Is(err, context.DeadlineExceeded), strings.HasPrefix(err.Error(), "LOADING "):
		return fmt.Errorf("%w: Redis at %s: %v", eventbus.ErrUnavailable, b.rdb.Options().Addr, err)
	}
	return err
}

// errRetry says a subscription attempt met a change of the session's
// record (dropped, resynchronised) and is to be made again.
var errRetry = errors.New("the session's record kept changing while subscribing")

// subscribe makes one attempt at a subscription.
func (b *Bus) subscribe(ctx context.Context, sid string, after int64) (*sub, error) {
	r, err := b.record(sid)
	if err != nil {
		return nil, err
	}
	s := r.register(after)
	if s == nil {
		return nil, errRetry
	}
	if err := b.waitReady(ctx, r); err != nil {
		r.abandon(s)
		b.forget(r)
		return nil, err
	}
	for range 3 {
		snap, err := b.snapshot(ctx, r, after)
		if err != nil {
			r.abandon(s)
			return nil, err
		}
		done, err := r.finish(ctx, s, snap)
		if err != nil || done {
			return s, err
		}
	}
	r.abandon(s)
	return nil, errRetry
}

// record returns the session's record, making one and subscribing to its
// channel if there is none.
func (b *Bus) record(sid string) (*session, error) {
	b.mu.RLock()
	r, closed := b.sessions[sid], b.closed
	b.mu.RUnlock()
	switch {
	case closed:
		return nil, eventbus.ErrClosed
	case r != nil:
		return r, nil
	}
	b.cmdMu.Lock()
	defer b.cmdMu.Unlock()
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return nil, eventbus.ErrClosed
	}
	if r = b.sessions[sid]; r != nil {
		b.mu.Unlock()
		return r, nil
	}
	r = &session{b: b, id: sid, key: b.streamKey(sid), channel: b.channel(sid), ready: make(chan struct{})}
	b.sessions[sid] = r
	b.outstanding[r.channel]++
	b.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), b.timeout)
	defer cancel()
	if err := b.ps.Subscribe(ctx, r.channel); err != nil {
		// go-redis replaced the connection, or could not make one: no
		// confirmation will come. The next Subscribe starts afresh.
		b.mu.Lock()
		if n := b.outstanding[r.channel]; n > 1 {
			b.outstanding[r.channel] = n - 1
		} else {
			delete(b.outstanding, r.channel)
		}
		delete(b.sessions, sid)
		b.mu.Unlock()
		r.mu.Lock()
		r.dropped = true
		r.mu.Unlock()
		return nil, fmt.Errorf("subscribing to %s: %w", r.channel, err)
	}
	return r, nil
}

// forget drops r if its subscription to the channel was never confirmed
// and no one waits for it, so that the next Subscribe sends a new one.
func (b *Bus) forget(r *session) {
	b.cmdMu.Lock()
	defer b.cmdMu.Unlock()
	b.mu.Lock()
	r.mu.Lock()
	drop := !r.confirmed && len(r.subs) == 0 && !r.dropped && b.sessions[r.id] == r
	if drop {
		r.dropped = true
		delete(b.sessions, r.id)
	}
	r.mu.Unlock()
	b.mu.Unlock()
	if !drop {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), b.timeout)
	defer cancel()
	_ = b.ps.Unsubscribe(ctx, r.channel)
}

// waitReady waits until r's channel subscription is confirmed.
func (b *Bus) waitReady(ctx context.Context, r *session) error {
	t := time.NewTimer(b.timeout)
	defer t.Stop()
	select {
	case <-r.ready:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-b.done:
		return eventbus.ErrClosed
	case <-t.C:
		// Redis that does not confirm in time is as good as down: the
		// caller answers "try again later" (SPEC API-5).
		return fmt.Errorf("%w: no confirmation from Redis of the subscription to %s within %v", eventbus.ErrUnavailable, r.channel, b.timeout)
	}
}

// snapshot is what a subscription reads of its session's stream.
type snapshot struct {
	events []*eventbus.Event // the window's events after afterID, oldest first
	top    int64             // the stream's last ID; 0 when it is empty
	gap    int64
}

// snapshot reads the session's window after afterID, atomically.
func (b *Bus) snapshot(ctx context.Context, r *session, after int64) (snapshot, error) {
	ctx, cancel := context.WithTimeout(ctx, b.timeout)
	defer cancel()
	var xlen *redis.IntCmd
	var top, rng *redis.XMessageSliceCmd
	read := func(p redis.Pipeliner) error {
		xlen = p.XLen(ctx, r.key)
		top = p.XRevRangeN(ctx, r.key, "+", "-", 1)
		if after < math.MaxInt64 {
			rng = p.XRevRangeN(ctx, r.key, "+", streamID(after+1), int64(b.window))
		}
		return nil
	}
	var err error
	for attempt := 0; attempt < 2; attempt++ {
		if _, err = b.rdb.TxPipelined(ctx, read); err == nil || !retryable(err) {
			break
		}
	}
	if err != nil {
		return snapshot{}, fmt.Errorf("reading the stream %s: %w", r.key, err)
	}
	var snap snapshot
	if t := top.Val(); len(t) > 0 {
		if snap.top, err = parseStreamID(t[0].ID); err != nil {
			return snapshot{}, err
		}
	}
	var msgs []redis.XMessage
	if rng != nil {
		msgs = rng.Val()
	}
	snap.events = make([]*eventbus.Event, len(msgs))
	for i, m := range msgs {
		_, ev, err := entryEvent(r.id, m)
		if err != nil {
			return snapshot{}, err
		}
		snap.events[len(msgs)-1-i] = ev
	}
	n := xlen.Val()
	switch held := min(n, int64(b.window)); {
	case n == 0:
		snap.gap = eventbus.GapUnknown
	case int64(len(msgs)) == held:
		// The whole window is after afterID: what came before its first
		// event is not held.
		if lost := snap.events[0].ID - 1; after < lost {
			snap.gap = lost
		}
	}
	return snap, nil
}

// Close implements [eventbus.Bus]: it ends the subscriptions, stops the
// bus's goroutines and closes its Redis client.
func (b *Bus) Close() error {
	b.cmdMu.Lock()
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		b.cmdMu.Unlock()
		return nil
	}
	b.closed = true
	sessions := b.sessions
	b.sessions = nil
	b.mu.Unlock()
	ps := b.ps
	b.cmdMu.Unlock()
	close(b.done)
	for _, r := range sessions {
		r.drop(eventbus.ErrClosed)
	}
	_ = ps.Close()
	err := b.rdb.Close() // fails the goroutines' calls in flight at once
	b.wg.Wait()
	return err
}

func (b *Bus) isClosed() bool {
	b.mu.RLock()
	defer b.mu.RUnlock()
	return b.closed
}
