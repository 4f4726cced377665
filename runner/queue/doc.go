// Package queue is the run queue of the server (SPEC API-3, API-5): it
// says which sessions have work and hands each session to one holder at a
// time, across processes, with a lease and a fencing token.
//
// # Model
//
// The ledger (session.Ledger) is the truth: a message posted to a session
// is a queued run there before the API answers 202. A queue message says
// only "session S has work"; [Queue.Enqueue] sends one after the run is
// stored, and coalesces with a message of S still waiting. [Queue.Take]
// gives a [Lease] on a session with work, oldest message first; while it
// holds, the worker runs S's queued runs from the ledger one at a time,
// oldest first — that keeps the order per session — then reads the ledger
// once more and calls [Lease.Done] with more set if queued runs remain:
//
//	for {
//		l, err := q.Take(ctx) // ErrUnavailable: pause, then retry
//		...
//		// Any run of l.SessionID still marked running was cut off: its
//		// holder lost the lease (no one else can hold it now). Mark it
//		// interrupted and heal the session, with l.Token.
//		for run := oldestQueued(l.SessionID); run != nil; run = oldestQueued(l.SessionID) {
//			execute(run, l) // every store write carries l.Token; stop when l.Lost() closes
//			if l.Err() != nil { break }
//		}
//		l.Done(ctx, hasQueued(l.SessionID))
//	}
//
// A lease lasts Options.TTL and renews itself; a holder that dies stops
// renewing and the session is handed to another after the TTL. When
// renewals fail for a TTL, or the queue learns another holder may have the
// session, [Lease.Lost] is closed: the holder must stop writing at once
// and call Done (which then re-enqueues the session whatever more says,
// for the next holder to heal it). Lost can only be noticed late (a
// paused process notices nothing), so the store is the last guard: each
// write carries the lease's token, strictly increasing per session across
// holders, processes and restarts ([TokenFloor]), and the store refuses a
// token below the highest it has seen for the session.
//
// # An Enqueue that meets a lease
//
// A message of S may arrive while S is leased: the holder may already have
// read the ledger, so dropping the message could strand the run. The queue
// never drops it: the Take that meets it hands it to the holder instead,
// by marking S dirty (and acknowledging the message), and Done enqueues S
// again when the mark is set, atomically with the release; the mark is
// cleared when a new lease of S begins, since its holder reads the ledger
// afresh. So every Enqueue made after a lease began leads to a later lease
// of the session: an Enqueue before the release's atomic step either finds
// its message waiting (taken after the release) or already turned into the
// mark (read by the release); one after it finds S free. The cost is at
// most one needless lease, whose holder finds nothing queued.
//
// # Backends
//
// [Memory] is the in-process queue of embedded mode; runner/queue/
// redisqueue carries the same contract across processes over Redis
// Streams. Both pass the conformance suite in runner/queue/queuetest.
package queue
