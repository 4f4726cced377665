package redisqueue

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/reinhq/rein/runner/queue"
)

// Take implements [queue.Queue]. One Take of the process reads at a time:
// each round reclaims, at most every poll, one message idle longer than
// the TTL (its holder stopped renewing), else blocks for up to poll (a
// quarter of the TTL, at most a second) in XREADGROUP for a new message;
// then the take script grants the lease or, when the session is leased,
// hands the message to its holder. A lost connection returns
// queue.ErrUnavailable; a stream or group found gone is recreated and the
// ledger resynchronised. go-redis cannot interrupt a blocked read, so the
// reading Take returns up to a poll after ctx ends (the waiting ones at
// once).
func (q *Queue) Take(ctx context.Context) (*queue.Lease, error) {
	regrouped := false
	for {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("redisqueue: take: %w", err)
		}
		if q.isClosed() {
			return nil, fmt.Errorf("redisqueue: take: %w", queue.ErrClosed)
		}
		msg, err := q.read(ctx)
		if noGroup(err) && !regrouped {
			regrouped = true
			q.lost(ctx)
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("redisqueue: take: %w", q.unreachable(ctx, err))
		}
		if msg == nil || q.isClosed() {
			continue // a message read as the queue closes is reclaimed by others
		}
		l, err := q.grant(ctx, msg)
		if err != nil {
			return nil, fmt.Errorf("redisqueue: take: %w", q.unreachable(ctx, err))
		}
		if l != nil {
			return l, nil
		}
	}
}

// read waits for the reader's turn, then returns the next message. One
// Take of the process reads at a time, so that blocked reads hold one
// connection of the pool, not one per worker slot (which would starve the
// scripts of the leases); the others wait here, where ctx and Close end
// the wait at once.
func (q *Queue) read(ctx context.Context) (*redis.XMessage, error) {
	select {
	case q.reader <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-q.done:
		return nil, queue.ErrClosed
	}
	defer func() { <-q.reader }()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return q.next(ctx)
}

// next returns a message reclaimed or read for this consumer, or nil when
// none came within the poll.
func (q *Queue) next(ctx context.Context) (*redis.XMessage, error) {
	if start, ok := q.reclaimDue(); ok {
		cctx, cancel := context.WithTimeout(ctx, q.timeout)
		msgs, cursor, err := q.rdb.XAutoClaim(cctx, &redis.XAutoClaimArgs{Stream: q.stream, Group: group,
			MinIdle: q.idle, Start: start, Count: 1, Consumer: q.opts.Consumer}).Result()
		cancel()
		if err != nil {
			q.reclaimFailed()
			return nil, err
		}
		q.reclaimed(cursor)
		if len(msgs) > 0 {
			q.opts.Logger.Info("redisqueue: reclaimed a message whose holder stopped renewing",
				"message", msgs[0].ID, "session_id", msgs[0].Values["s"])
			return &msgs[0], nil
		}
	}
	block := q.poll
	if dl, ok := ctx.Deadline(); ok {
		// Let Redis answer before the caller's deadline: a read that
		// times out costs its connection.
		if block = min(block, time.Until(dl)-time.Millisecond); block < time.Millisecond {
			<-ctx.Done()
			return nil, ctx.Err()
		}
	}
	cctx, cancel := context.WithTimeout(ctx, block+q.timeout)
	defer cancel()
	res, err := q.rdb.XReadGroup(cctx, &redis.XReadGroupArgs{Group: group, Consumer: q.opts.Consumer,
		Streams: []string{q.stream, ">"}, Count: 1, Block: block}).Result()
	switch {
	case errors.Is(err, redis.Nil):
		return nil, nil
	case err != nil:
		return nil, err
	}
	for _, s := range res {
		if len(s.Messages) > 0 {
			return &s.Messages[0], nil
		}
	}
	return nil, nil
}

// reclaimDue says whether an XAUTOCLAIM is due, and from which cursor;
// it is due at most every poll, and at once while the last one found more.
func (q *Queue) reclaimDue() (string, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	now := time.Now()
	if now.Before(q.reclaimAt) {
		return "", false
	}
	q.reclaimAt = now.Add(q.poll)
	return q.cursor, true
}

// reclaimed records the cursor XAUTOCLAIM returned: "0-0" when it scanned
// the whole pending list; else the next one is due at once.
func (q *Queue) reclaimed(cursor string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if cursor == "" {
		cursor = "0-0"
	}
	q.cursor = cursor
	if cursor != "0-0" {
		q.reclaimAt = time.Time{}
	}
}

func (q *Queue) reclaimFailed() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.cursor = "0-0"
}

// grant runs the take script for msg; it returns nil, nil when the
// message gave no lease.
func (q *Queue) grant(ctx context.Context, msg *redis.XMessage) (*queue.Lease, error) {
	sid, _ := msg.Values["s"].(string)
	if err := queue.CheckSessionID(sid); err != nil {
		q.opts.Logger.Warn("redisqueue: dropping a malformed message", "message", msg.ID, "err", err)
		cctx, cancel := context.WithTimeout(ctx, q.timeout)
		defer cancel()
		_, err := q.rdb.TxPipelined(cctx, func(p redis.Pipeliner) error {
			p.XAck(cctx, q.stream, group, msg.ID)
			p.XDel(cctx, q.stream, msg.ID)
			return nil
		})
		return nil, err
	}
	enqueued, err := streamTime(msg.ID)
	if err != nil {
		return nil, err
	}
	keys := []string{q.stream, q.key("waiting", sid), q.key("lease", sid), q.key("dirty", sid), q.key("fence", sid)}
	granted := q.opts.Now()
	cctx, cancel := context.WithTimeout(ctx, q.timeout)
	defer cancel()
	// Not retried: a second run would find the lease of the first and
	// leave the message pending; it is reclaimed after the TTL.
	res, err := takeScript().Run(cctx, q.rdb, keys, group, q.opts.Consumer, msg.ID, q.opts.TTL.Milliseconds(),
		fenceTTL.Milliseconds(), markTTL.Milliseconds()).Slice()
	if err != nil {
		return nil, err
	}
	token, ok, err := parseTake(res)
	if err != nil || !ok {
		return nil, err
	}
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock()
		return nil, queue.ErrClosed // the lease runs out; its message is reclaimed
	}
	q.wg.Add(1) // the lease's goroutine, before Close waits
	q.mu.Unlock()
	k := &keeper{q: q, sid: sid, token: token, msg: msg.ID, value: leaseValue(token, q.opts.Consumer, msg.ID)}
	g := queue.Grant{SessionID: sid, Token: token, Enqueued: enqueued, Granted: granted}
	return queue.NewLease(g, k, q.opts, queue.Scope{Done: q.done, WG: &q.wg}), nil
}

// lost handles a stream or group found gone (Redis lost its data):
// recreate the group and have the watcher resynchronise from the ledger.
func (q *Queue) lost(ctx context.Context) {
	cctx, cancel := context.WithTimeout(ctx, q.timeout)
	defer cancel()
	if err := q.ensureGroup(cctx); err != nil {
		q.opts.Logger.Warn("redisqueue: recreating the consumer group failed", "err", err)
	}
	select {
	case q.lostData <- struct{}{}:
	default:
	}
}

// keeper is the [queue.Keeper] of a Redis lease. Lease calls it one call
// at a time, so its fields need no lock.
type keeper struct {
	q     *Queue
	sid   string
	token int64
	msg   string // the lease's message
	value string // the lease key's value
}

func leaseValue(token int64, consumer, msg string) string {
	return fmt.Sprintf("%d %s %s", token, consumer, msg)
}

// Renew runs the renew script, retried once if the connection fails (it is
// idempotent).
func (k *keeper) Renew(ctx context.Context) error {
	q := k.q
	keys := []string{q.key("lease", k.sid), q.stream, q.key("fence", k.sid)}
	var res []any
	err := q.call(ctx, true, func(ctx context.Context) (err error) {
		res, err = renewScript().Run(ctx, q.rdb, keys, k.value, q.opts.TTL.Milliseconds(), group,
			q.opts.Consumer, k.msg, fmt.Sprint(k.token), fenceTTL.Milliseconds(), k.sid).Slice()
		return err
	})
	if err != nil {
		return err
	}
	code, msg, err := parseRenew(res)
	switch {
	case err != nil:
		return err
	case code == 0:
		return fmt.Errorf("%w: the lease ran out and another holder may have taken the session", queue.ErrLeaseLost)
	case code == 2:
		q.opts.Logger.Warn("redisqueue: Redis had lost a lease no one else took since: taken back",
			"session_id", k.sid, "token", k.token, "message", msg)
		k.msg = msg
		k.value = leaseValue(k.token, q.opts.Consumer, msg)
	}
	return nil
}

// Release runs the done script, retried once if the connection fails (a
// second run finds the lease gone and at worst enqueues the session once
// more).
func (k *keeper) Release(ctx context.Context, more bool) error {
	q := k.q
	keys := []string{q.key("lease", k.sid), q.stream, q.key("waiting", k.sid), q.key("dirty", k.sid)}
	flag := "0"
	if more {
		flag = "1"
	}
	var code int64
	err := q.call(ctx, true, func(ctx context.Context) (err error) {
		code, err = doneScript().Run(ctx, q.rdb, keys, k.value, group, k.msg, flag, k.sid,
			markTTL.Milliseconds(), markTTL.Milliseconds()).Int64()
		return err
	})
	switch {
	case err != nil:
		return err
	case code == 0:
		return fmt.Errorf("%w: another holder has the session", queue.ErrLeaseLost)
	}
	return nil
}
