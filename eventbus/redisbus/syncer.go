package redisbus

import (
	"context"
	"errors"
	"math"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/reinhq/rein/internal/redisconn"
)

// The syncer is the Bus's second goroutine: it does the Redis reads the
// feed must not wait for. It catches records up from their streams, checks
// whether Redis restarted after the feed lost its connection, keeps the
// streams of followed sessions alive and unsubscribes from sessions no one
// follows any more.

// Sizes of the syncer's work.
const (
	catchUpBatch = 64  // records read in one pipeline
	catchUpPage  = 512 // entries read per record and round
	expireBatch  = 512 // PEXPIRE commands in one pipeline
)

// sync is the syncer's goroutine.
func (b *Bus) sync() {
	defer b.wg.Done()
	tick := time.NewTicker(b.sweepAt)
	defer tick.Stop()
	var backoff time.Duration
	for {
		select {
		case <-b.done:
			return
		case <-b.wake:
		case <-tick.C:
			b.sweep()
		}
		if err := b.work(); err != nil {
			if backoff == 0 {
				b.log.Warn("redisbus: reading from Redis failed: retrying", "err", err)
			}
			if !b.pause(&backoff) {
				return
			}
			b.signal()
			continue
		}
		backoff = 0
	}
}

// work checks Redis's run_id if the feed reconnected, then catches up the
// queued records, a few batches at a time so that Close and the sweeps
// are not kept waiting.
func (b *Bus) work() error {
	if b.takeRunCheck() {
		if err := b.checkRun(); err != nil {
			b.qmu.Lock()
			b.runCheck = true
			b.qmu.Unlock()
			return err
		}
	}
	for range 16 {
		batch := b.take(catchUpBatch)
		if len(batch) == 0 {
			return nil
		}
		if err := b.catchUp(batch); err != nil {
			return err
		}
	}
	b.signal() // more next round
	return nil
}

// checkRun ends with ErrLost every subscription of a record synced before
// the feed was last lost, if Redis restarted: it runs without persistence,
// so whatever the streams held is gone.
func (b *Bus) checkRun() error {
	ctx, cancel := context.WithTimeout(context.Background(), b.timeout)
	defer cancel()
	epoch := b.epoch.Load()
	id, err := redisconn.RunID(ctx, b.rdb)
	var rerr redis.Error
	switch {
	case errors.As(err, &rerr):
		return nil // INFO is not allowed: the chains of events still tell
	case err != nil:
		return err
	case id == "":
		return nil
	case b.runID != "" && id != b.runID:
		b.log.Warn("redisbus: Redis restarted: its streams are gone; ending the subscriptions that read them",
			"run_id", id, "was", b.runID)
		b.mu.RLock()
		records := make([]*session, 0, len(b.sessions))
		for _, r := range b.sessions {
			records = append(records, r)
		}
		b.mu.RUnlock()
		for _, r := range records {
			r.mu.Lock()
			if r.epoch < epoch { // synced before the feed was lost: maybe from the old Redis
				r.breakChain("Redis restarted")
			}
			r.mu.Unlock()
		}
	}
	b.runID = id
	return nil
}

// catchUp reads the stream of each record after its position, in one
// pipeline, and applies what it read.
func (b *Bus) catchUp(batch []*session) error {
	type job struct {
		r        *session
		gen      int
		from     int64
		top, rng *redis.XMessageSliceCmd
	}
	ctx, cancel := context.WithTimeout(context.Background(), b.timeout)
	defer cancel()
	pipe := b.rdb.Pipeline()
	jobs := make([]job, 0, len(batch))
	for _, r := range batch {
		r.mu.Lock()
		r.queued = false
		ok, gen, from := r.synced && !r.dropped && r.last < math.MaxInt64, r.gen, r.last
		if !r.synced {
			r.stale = true
		}
		r.mu.Unlock()
		if ok {
			jobs = append(jobs, job{r: r, gen: gen, from: from, top: pipe.XRevRangeN(ctx, r.key, "+", "-", 1),
				rng: pipe.XRangeN(ctx, r.key, streamID(from+1), "+", catchUpPage)})
		}
	}
	if len(jobs) == 0 {
		return nil
	}
	if _, err := pipe.Exec(ctx); err != nil {
		for _, j := range jobs {
			j.r.mu.Lock()
			j.r.schedule()
			j.r.mu.Unlock()
		}
		return err
	}
	for _, j := range jobs {
		entries := j.rng.Val()
		j.r.catchUp(j.gen, j.from, j.top.Val(), entries, len(entries) == catchUpPage)
	}
	return nil
}

// sweep keeps the streams of the sessions with subscribers from expiring,
// and unsubscribes from those that had none for a whole sweep interval.
func (b *Bus) sweep() {
	b.mu.RLock()
	records := make([]*session, 0, len(b.sessions))
	for _, r := range b.sessions {
		records = append(records, r)
	}
	b.mu.RUnlock()
	var keys []string
	var idle []*session
	for _, r := range records {
		r.mu.Lock()
		if len(r.subs) > 0 {
			r.idleTicks = 0
			keys = append(keys, r.key)
		} else if r.idleTicks++; r.idleTicks >= 2 {
			idle = append(idle, r)
		}
		r.mu.Unlock()
	}
	for len(keys) > 0 {
		n := min(len(keys), expireBatch)
		if err := b.expire(keys[:n]); err != nil {
			b.log.Warn("redisbus: refreshing the TTL of followed streams failed", "err", err)
			break
		}
		keys = keys[n:]
	}
	for _, r := range idle {
		b.release(r)
	}
}

// expire sets the TTL of the streams at keys to Idle.
func (b *Bus) expire(keys []string) error {
	ctx, cancel := context.WithTimeout(context.Background(), b.timeout)
	defer cancel()
	_, err := b.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for _, k := range keys {
			p.PExpire(ctx, k, b.idle)
		}
		return nil
	})
	return err
}

// release forgets r and unsubscribes from its channel, unless it has a
// subscriber again.
func (b *Bus) release(r *session) {
	b.cmdMu.Lock()
	defer b.cmdMu.Unlock()
	b.mu.Lock()
	if b.closed || b.sessions[r.id] != r {
		b.mu.Unlock()
		return
	}
	r.mu.Lock()
	if len(r.subs) > 0 || r.idleTicks < 2 {
		r.mu.Unlock()
		b.mu.Unlock()
		return
	}
	r.dropped = true
	r.mu.Unlock()
	delete(b.sessions, r.id)
	b.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), b.timeout)
	defer cancel()
	if err := b.ps.Unsubscribe(ctx, r.channel); err != nil {
		b.log.Warn("redisbus: UNSUBSCRIBE failed", "session_id", r.id, "err", err)
	}
}

// enqueue queues r for a catch-up; r.mu is held.
func (b *Bus) enqueue(r *session) {
	b.qmu.Lock()
	b.queue = append(b.queue, r)
	b.qmu.Unlock()
	b.signal()
}

// take removes up to n records from the queue.
func (b *Bus) take(n int) []*session {
	b.qmu.Lock()
	defer b.qmu.Unlock()
	n = min(n, len(b.queue))
	batch := make([]*session, n)
	copy(batch, b.queue)
	b.queue = append(b.queue[:0], b.queue[n:]...)
	return batch
}

// feedLost starts a new epoch of the live feed and asks the syncer to check
// Redis's run_id: the records synced in an earlier epoch may hold
// positions in a Redis that restarted since.
func (b *Bus) feedLost() {
	b.epoch.Add(1)
	b.qmu.Lock()
	b.runCheck = true
	b.qmu.Unlock()
	b.signal()
}

func (b *Bus) takeRunCheck() bool {
	b.qmu.Lock()
	defer b.qmu.Unlock()
	v := b.runCheck
	b.runCheck = false
	return v
}

// signal wakes the syncer.
func (b *Bus) signal() {
	select {
	case b.wake <- struct{}{}:
	default:
	}
}
