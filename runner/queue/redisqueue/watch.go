package redisqueue

import (
	"context"
	"errors"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/reinhq/rein/internal/redisconn"
	"github.com/reinhq/rein/runner/queue"
)

// watch is the queue's goroutine. It resynchronises from the ledger at
// start and whenever Redis lost its data — its run_id changed (it
// restarted; it runs without persistence) or a Take found the stream or
// its group gone — and now and then drops the consumers of dead processes
// that hold nothing.
func (q *Queue) watch(runID string) {
	defer q.wg.Done()
	q.resync()
	check := time.NewTicker(q.check)
	defer check.Stop()
	sweep := time.NewTicker(sweepEvery)
	defer sweep.Stop()
	for {
		select {
		case <-q.done:
			return
		case <-q.lostData:
			q.logger().Warn("redisqueue: the stream or its consumer group was gone (Redis lost its data): " +
				"re-enqueueing the sessions the ledger has queued runs for")
			q.resync()
		case <-check.C:
			id, err := q.checkRun()
			if err != nil {
				continue // Redis is away: checked again once it answers
			}
			if runID != "" && id != "" && id != runID {
				q.logger().Warn("redisqueue: Redis restarted and lost its data: re-enqueueing the sessions "+
					"the ledger has queued runs for", "run_id", id, "was", runID)
				q.lost(context.Background())
				select {
				case <-q.lostData: // the resync below covers it
				default:
				}
				q.resync()
			}
			if id != "" {
				runID = id
			}
		case <-sweep.C:
			q.sweep()
		}
	}
}

// checkRun returns Redis's run_id; "" when INFO is not allowed.
func (q *Queue) checkRun() (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), q.timeout)
	defer cancel()
	id, err := redisconn.RunID(ctx, q.rdb)
	if rerr := redis.Error(nil); errors.As(err, &rerr) {
		return "", nil
	}
	return id, err
}

// resync enqueues the sessions Options.Resync lists, retrying until it
// succeeds or the queue closes.
func (q *Queue) resync() {
	if q.opts.Resync == nil {
		return
	}
	queue.RunResync(q.done, q.opts, q.Enqueue)
}

// sweep drops the consumers that hold no pending message and have not
// read for sweepIdle.
func (q *Queue) sweep() {
	ctx, cancel := context.WithTimeout(context.Background(), q.timeout)
	defer cancel()
	n, err := sweepScript().Run(ctx, q.rdb, []string{q.stream}, group, sweepIdle.Milliseconds(), "").Int64()
	switch {
	case err != nil:
		q.logger().Debug("redisqueue: sweeping idle consumers failed", "err", err)
	case n > 0:
		q.logger().Info("redisqueue: dropped idle consumers holding nothing", "consumers", n)
	}
}
