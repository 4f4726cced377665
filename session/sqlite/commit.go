package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"sync"
)

// maxBatch caps the writes one transaction commits: a batch stays small
// enough that its first writer does not wait long for the last.
const maxBatch = 64

// errClosed answers a write after Close.
var errClosed = errors.New("sqlite: the store is closed")

// writeReq is one write waiting for its batch: fn runs in the batch's
// transaction, and done gets its outcome once that transaction is
// committed (or not).
type writeReq struct {
	ctx  context.Context
	fn   func(ctx context.Context, tx *txn) error
	done chan error    // buffered: the committer never waits for the caller
	lead chan struct{} // buffered: the write's caller is to commit the next batches
	// promoted: lead was sent (under committer.mu).
	promoted bool
}

// committer is the store's one writer (group commit, SPEC API-2, SESS-1).
// A write while no commit is in progress is committed at once by its own
// caller, which becomes the leader; writes arriving meanwhile queue, and
// when its commit ends the leader hands the queue to the first of them,
// whose caller commits every write waiting (up to maxBatch) in one
// transaction, each in a savepoint of its own, and answers each; and so
// on until nothing waits. A write returns only after the transaction
// that holds it is committed, so an acknowledged write is exactly as
// durable as when every write was a transaction of its own (Options.Sync
// decides); what the batch saves is the commits, each one an fsync of the
// log under SyncFull, that concurrent sessions used to wait for one after
// another. A lone writer pays nothing for it: no other goroutine is
// involved.
type committer struct {
	w *writeConn // the connection the batches are written on (only the leader uses it)

	mu      sync.Mutex
	idle    *sync.Cond // signalled when busy turns false
	pending []*writeReq
	busy    bool // a leader is committing
	closed  bool
}

// newCommitter returns the writer of db, holding one of its connections
// from now on: a write never waits for the pool (whose other connections
// readers may hold while they wait for a write).
func newCommitter(ctx context.Context, db *sql.DB) (*committer, error) {
	c := &committer{w: &writeConn{db: db}}
	c.idle = sync.NewCond(&c.mu)
	if err := c.w.open(ctx); err != nil {
		return nil, err
	}
	return c, nil
}

// write queues fn and waits for the commit of its batch, committing it
// itself when no other commit is in progress. A ctx that ends while fn
// still waits for its turn withdraws it (ctx's error is returned, nothing
// was written); once a batch has taken it, write waits for that batch's
// outcome, which is then the truth.
func (c *committer) write(ctx context.Context, fn func(ctx context.Context, tx *txn) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	r := &writeReq{ctx: ctx, fn: fn, done: make(chan error, 1), lead: make(chan struct{}, 1)}
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return errClosed
	}
	c.pending = append(c.pending, r)
	if !c.busy {
		c.busy = true
		c.mu.Unlock()
		return c.commitAll(r)
	}
	c.mu.Unlock()
	select {
	case err := <-r.done:
		return err
	case <-r.lead:
		return c.commitAll(r)
	case <-ctx.Done():
	}
	c.mu.Lock()
	if i := slices.Index(c.pending, r); i >= 0 && !r.promoted {
		c.pending = slices.Delete(c.pending, i, i+1)
		c.mu.Unlock()
		return ctx.Err()
	}
	c.mu.Unlock()
	select { // taken into a batch, or made the leader: it must lead
	case err := <-r.done:
		return err
	case <-r.lead:
		return c.commitAll(r)
	}
}

// commitAll is the leader's part: it commits batches of the waiting
// writes until its own (r) is answered, then hands the rest to the first
// write still waiting, or ends the commit in progress.
func (c *committer) commitAll(r *writeReq) error {
	for {
		c.mu.Lock()
		n := min(len(c.pending), maxBatch)
		batch := slices.Clone(c.pending[:n])
		c.pending = slices.Delete(c.pending, 0, n)
		c.mu.Unlock()
		if n > 0 {
			c.commit(batch)
		}
		select {
		case err := <-r.done:
			c.mu.Lock()
			if len(c.pending) > 0 {
				next := c.pending[0]
				next.promoted = true
				next.lead <- struct{}{}
			} else {
				c.busy = false
				c.idle.Broadcast()
			}
			c.mu.Unlock()
			return err
		default: // its write waits for a later batch (more than maxBatch were queued)
		}
	}
}

// close refuses writes from now on, waits until the writes queued are
// committed and gives the writer's connection back to the pool.
func (c *committer) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = true
	for c.busy {
		c.idle.Wait()
	}
	c.w.close()
}

// waiting is how many writes wait for a batch (tests).
func (c *committer) waiting() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.pending)
}

// commit runs the batch's writes in one transaction and answers each. A
// write whose fn fails is rolled back to its savepoint and gets its own
// error; the others go on. When the transaction itself fails (BEGIN, a
// savepoint that cannot be rolled back to because SQLite abandoned the
// transaction, COMMIT), nothing of the batch is stored and every write
// in it gets that error: none is acknowledged without its commit.
func (c *committer) commit(batch []*writeReq) {
	errs := make([]error, len(batch))
	answer := func(txErr error) {
		for i, r := range batch {
			if errs[i] == nil {
				errs[i] = txErr
			}
			r.done <- errs[i]
		}
	}
	ctx := context.Background()
	w := c.w
	if err := w.begin(ctx); err != nil {
		answer(err)
		return
	}
	tx := &txn{w: w}
	rollback := func() { _ = w.check(w.exec(ctx, `ROLLBACK`)) }
	fail := func(err error) {
		rollback()
		answer(batchErr(len(batch), err))
	}
	// One write alone needs no savepoint: its failure rolls back the
	// transaction.
	savepoints := len(batch) > 1
	stored := 0
	for i, r := range batch {
		if err := r.ctx.Err(); err != nil {
			errs[i] = err // its caller gave up before its turn: not written
			continue
		}
		if savepoints {
			if _, err := tx.ExecContext(ctx, `SAVEPOINT write`); err != nil {
				fail(err)
				return
			}
		}
		// The batch's writes must not be interrupted by one caller's
		// cancellation (SQLite may abandon the whole transaction).
		errs[i] = r.fn(context.WithoutCancel(r.ctx), tx)
		if errs[i] == nil {
			stored++
		} else if savepoints {
			if _, err := tx.ExecContext(ctx, `ROLLBACK TO write`); err != nil {
				fail(fmt.Errorf("rolling back a failed write (%v): %w", errs[i], err))
				return
			}
		}
		if savepoints {
			if _, err := tx.ExecContext(ctx, `RELEASE write`); err != nil {
				fail(err)
				return
			}
		}
	}
	if stored == 0 {
		rollback()
		answer(nil) // every write has its own error
		return
	}
	if err := w.check(w.exec(ctx, `COMMIT`)); err != nil {
		// SQLite may keep the transaction open after a failed COMMIT
		// (SQLITE_BUSY): it must not be committed by the next batch.
		rollback()
		answer(batchErr(len(batch), err))
		return
	}
	answer(nil)
}

// batchErr is the error of every write in a batch of n whose transaction
// failed with err.
func batchErr(n int, err error) error {
	if n == 1 {
		return err
	}
	return fmt.Errorf("the transaction of %d writes holding this one failed, none of them was stored: %w", n, err)
}
