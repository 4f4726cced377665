package redisqueue

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/reinhq/rein/internal/redisconn"
	"github.com/reinhq/rein/runner/queue"
)

// Options configure a [Queue]. The zero value means the defaults. Every
// process sharing a prefix must use the same TTL.
type Options struct {
	queue.Options
	// Prefix starts every key the queue uses (default [DefaultPrefix]), so
	// that deployments and tests can share a Redis.
	Prefix string
	// Timeout bounds every Redis call (default [DefaultTimeout]): with
	// Redis away, Enqueue, Take and Stats fail after it with
	// [queue.ErrUnavailable] rather than hang.
	Timeout time.Duration
}

// Defaults of [Options].
const (
	DefaultPrefix  = "rein:queue:"
	DefaultTimeout = 5 * time.Second
)

// Lifetimes of the keys besides the leases, refreshed on use: a session's
// marker and dirty flag live until their message is taken or the lease
// released, and the fence while the session is leased; these bound what an
// abandoned session leaves in Redis.
const (
	markTTL  = 24 * time.Hour
	fenceTTL = 24 * time.Hour
	// group is the consumer group of the stream.
	group = "workers"
	// sweepIdle is how long a consumer with nothing pending stays in the
	// group after its last read; sweepEvery how often the sweep runs.
	sweepIdle  = time.Hour
	sweepEvery = 10 * time.Minute
)

// Queue is a [queue.Queue] over Redis Streams, shared by every process
// connected to the same Redis with the same prefix. See the package
// documentation.
type Queue struct {
	rdb     *redis.Client
	opts    queue.Options
	prefix  string
	timeout time.Duration
	poll    time.Duration // how long one XREADGROUP blocks
	idle    time.Duration // min idle time of a message reclaimed
	check   time.Duration // how often Redis's run_id is checked
	stream  string

	mu        sync.Mutex
	closed    bool
	cursor    string    // of XAUTOCLAIM
	reclaimAt time.Time // when the next XAUTOCLAIM is due

	reader   chan struct{} // held by the Take that reads
	lostData chan struct{} // a Take saw the stream or group gone
	done     chan struct{}
	wg       sync.WaitGroup
}

var _ queue.Queue = (*Queue)(nil)

// New connects to the Redis at url (redis://[user:password@]host:port/db,
// rediss:// for TLS, unix:///path; go-redis's query options such as
// pool_size apply) and returns a queue over it. It fails when Redis does
// not answer a PING within the timeout. It calls opts.Resync in the
// background (see [queue.Options]).
func New(ctx context.Context, url string, opts Options) (*Queue, error) {
	q, err := newQueue(opts)
	if err != nil {
		return nil, err
	}
	// Retries are explicit: only the idempotent steps retry (see call).
	if q.rdb, err = redisconn.Dial(ctx, url, "redisqueue", "rein-queue", q.timeout); err != nil {
		return nil, err
	}
	pctx, cancel := context.WithTimeout(ctx, q.timeout)
	defer cancel()
	if err := q.ensureGroup(pctx); err != nil {
		_ = q.rdb.Close()
		return nil, fmt.Errorf("redisqueue: creating the consumer group of %s: %w", q.stream, err)
	}
	runID, err := redisconn.RunID(pctx, q.rdb)
	if err != nil {
		q.opts.Logger.Warn("redisqueue: cannot read Redis's run_id: a restart is found when a Take meets "+
			"the stream gone", "err", err)
	}
	q.wg.Add(1)
	go q.watch(runID)
	return q, nil
}

func newQueue(opts Options) (*Queue, error) {
	o, err := opts.Options.WithDefaults()
	if err != nil {
		return nil, fmt.Errorf("redisqueue: %w", err)
	}
	q := &Queue{opts: o, prefix: opts.Prefix, timeout: opts.Timeout, cursor: "0-0",
		reader: make(chan struct{}, 1), lostData: make(chan struct{}, 1), done: make(chan struct{})}
	if q.prefix == "" {
		q.prefix = DefaultPrefix
	}
	if q.timeout <= 0 {
		q.timeout = DefaultTimeout
	}
	q.poll = min(max(o.TTL/4, 10*time.Millisecond), time.Second)
	q.idle = o.TTL + max(o.TTL/10, 10*time.Millisecond)
	q.check = min(max(o.TTL/3, 50*time.Millisecond), 5*time.Second)
	q.stream = q.prefix + "q"
	return q, nil
}

func (q *Queue) key(kind, sid string) string { return q.prefix + kind + ":" + sid }

// Enqueue implements [queue.Queue]: one script (XADD unless a message of
// the session waits), retried once if the connection fails.
func (q *Queue) Enqueue(ctx context.Context, sessionID string) error {
	if err := queue.CheckSessionID(sessionID); err != nil {
		return fmt.Errorf("redisqueue: enqueue: %w", err)
	}
	err := q.call(ctx, true, func(ctx context.Context) error {
		return enqueueScript().Run(ctx, q.rdb, []string{q.stream, q.key("waiting", sessionID)},
			sessionID, markTTL.Milliseconds()).Err()
	})
	if err != nil {
		return fmt.Errorf("redisqueue: enqueue %s: %w", sessionID, err)
	}
	return nil
}

// Stats implements [queue.Queue]: one script reading the stream's length,
// the group's pending count and its oldest undelivered entry.
func (q *Queue) Stats(ctx context.Context) (queue.Stats, error) {
	var res []any
	err := q.call(ctx, true, func(ctx context.Context) (err error) {
		res, err = statsScript().Run(ctx, q.rdb, []string{q.stream}, group).Slice()
		return err
	})
	if err != nil {
		return queue.Stats{}, fmt.Errorf("redisqueue: stats: %w", err)
	}
	st, err := parseStats(res)
	if err != nil {
		return queue.Stats{}, fmt.Errorf("redisqueue: stats: %w", err)
	}
	return st, nil
}

// call runs fn with the timeout, once more if it failed for the
// connection and retry is set, and maps the errors of reaching Redis to
// queue.ErrUnavailable.
func (q *Queue) call(ctx context.Context, retry bool, fn func(context.Context) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if q.isClosed() {
		return queue.ErrClosed
	}
	var err error
	for attempt := 0; attempt < 2; attempt++ {
		cctx, cancel := context.WithTimeout(ctx, q.timeout)
		err = fn(cctx)
		cancel()
		if err == nil || !retry || !retryable(err) || ctx.Err() != nil || q.isClosed() {
			break
		}
	}
	return q.unreachable(ctx, err)
}

// retryable reports whether err is a failure of the connection rather than
// an answer of Redis, the end of the context or a timeout.
func retryable(err error) bool {
	var rerr redis.Error
	if errors.As(err, &rerr) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) ||
		errors.Is(err, redis.ErrClosed) {
		return false
	}
	var nerr net.Error
	return !errors.As(err, &nerr) || !nerr.Timeout()
}

// unreachable maps err: the caller's context's end passes as is, a
// closed queue is queue.ErrClosed, and a failure to reach Redis — a
// refused or broken connection, no answer within the timeout, a server
// loading its data — wraps queue.ErrUnavailable (the server's 503).
// Redis's other refusals pass unchanged.
func (q *Queue) unreachable(ctx context.Context, err error) error {
	var nerr net.Error
	switch {
	case err == nil:
		return nil
	case ctx.Err() != nil:
		return ctx.Err()
	case pastDeadline(ctx):
		return context.DeadlineExceeded
	case q.isClosed() || errors.Is(err, redis.ErrClosed) || errors.Is(err, queue.ErrClosed):
		return queue.ErrClosed
	case errors.As(err, &nerr), errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF),
		errors.Is(err, context.DeadlineExceeded), errors.Is(err, net.ErrClosed), busy(err):
		return fmt.Errorf("%w: Redis at %s: %v", queue.ErrUnavailable, q.rdb.Options().Addr, err)
	}
	return err
}

// pastDeadline reports whether ctx's deadline has passed (its Err may not
// say so yet when a read timed out on the same deadline).
func pastDeadline(ctx context.Context) bool {
	dl, ok := ctx.Deadline()
	return ok && !time.Now().Before(dl)
}

// busy reports whether err is Redis saying it cannot serve now.
func busy(err error) bool {
	for _, p := range []string{"LOADING ", "MASTERDOWN ", "READONLY ", "TRYAGAIN "} {
		if strings.HasPrefix(err.Error(), p) {
			return true
		}
	}
	return false
}

// noGroup reports whether err says the stream or its group is gone.
func noGroup(err error) bool {
	return err != nil && strings.HasPrefix(err.Error(), "NOGROUP ")
}

// ensureGroup creates the stream's consumer group (and the stream) unless
// it exists. A new group starts at the stream's beginning, so messages
// added before it are delivered.
func (q *Queue) ensureGroup(ctx context.Context) error {
	err := q.rdb.XGroupCreateMkStream(ctx, q.stream, group, "0").Err()
	if err != nil && strings.HasPrefix(err.Error(), "BUSYGROUP ") {
		return nil
	}
	return err
}

// Close implements [queue.Queue]: blocked Takes return queue.ErrClosed,
// leases still held are lost (their messages are reclaimed by other
// processes after the TTL), and this consumer leaves the group unless it
// has pending messages. It returns once the queue's goroutines and its
// leases' have stopped.
func (q *Queue) Close() error {
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock()
		return nil
	}
	q.closed = true
	q.mu.Unlock()
	close(q.done)
	q.wg.Wait()
	ctx, cancel := context.WithTimeout(context.Background(), q.timeout)
	defer cancel()
	if err := sweepScript().Run(ctx, q.rdb, []string{q.stream}, group, 0, q.opts.Consumer).Err(); err != nil {
		q.opts.Logger.Debug("redisqueue: leaving the consumer group failed", "err", err)
	}
	return q.rdb.Close() // fails the blocked reads at once
}

func (q *Queue) isClosed() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.closed
}

// logger returns the queue's logger.
func (q *Queue) logger() *slog.Logger { return q.opts.Logger }
