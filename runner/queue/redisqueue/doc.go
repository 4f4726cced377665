// Package redisqueue is the run queue of production (SPEC API-5): the
// [queue.Queue] contract across every process connected to the same Redis
// (go-redis v9, Redis 6.2 or later, standalone, eviction policy
// noeviction) with the same prefix; the conformance suite in
// runner/queue/queuetest checks it.
//
// # Keys
//
//	<prefix>q            the stream of messages (field s: the session id),
//	                     with the consumer group "workers"
//	<prefix>waiting:<S>  ID of S's waiting message (coalescing)
//	<prefix>lease:<S>    "<token> <consumer> <message ID>", PX TTL
//	<prefix>fence:<S>    the last token granted for S
//	<prefix>dirty:<S>    a message of S met its lease
//
// Every step is one Lua script, atomic. Enqueue adds a message unless S's
// marker names one still in the stream. Take reads one message with
// XREADGROUP BLOCK (or reclaims one, below), then the take script either
// grants the lease — SET NX in effect, token = max(fence+1, Redis TIME in
// ms × 1000) — or, S being leased, acknowledges the message and marks S
// dirty. Renew is a compare-and-PEXPIRE that also XCLAIMs the lease's
// message to its holder, resetting its idle time. Done is a compare-and-DEL
// with XACK, and XADD when more or dirty. Acknowledged messages are
// deleted (XDEL) at once, so the stream holds only what waits or is held:
// it needs no trimming and never grows past the work in flight.
//
// # Failures
//
// A holder that dies leaves its message pending. Any Take reclaims, with
// XAUTOCLAIM, a message idle longer than the TTL plus a tenth, since
// renewals keep a live holder's message fresh: by then its lease has run
// out, and the reclaimer takes the session with a higher token. A message
// read just before its reader died is reclaimed the same way.
//
// Every Redis call is bounded by Options.Timeout. With Redis away, Enqueue,
// Take and Stats fail with [queue.ErrUnavailable] (a refused or broken
// connection, no answer in time, a server loading its data) and work again
// once it answers; leases keep renewing in the background and are lost if
// Redis stays away for a TTL. Only idempotent steps are retried (once):
// Enqueue (coalesced), Renew, Done (a second run at worst enqueues once
// more) and Stats; go-redis's own retries are off. A Take whose script
// failed leaves its message pending, reclaimed after the TTL.
//
// Redis runs without persistence: a restart loses the stream, the leases
// and the fences. Each queue watches Redis's run_id (INFO server), and a
// Take that finds the stream or its group gone (NOGROUP) recreates them;
// either way the queue calls Options.Resync and enqueues the sessions the
// ledger has queued runs for. A holder's next renewal takes its lost lease
// back, with its token, if no one took the session since (its fence is
// gone or still its token), re-adding its message if that is gone too;
// otherwise the lease is lost. Until that renewal, another process may
// take the session (Redis forgot the lease): the old holder learns it at
// most RenewEvery later, and the store's token check keeps its writes out
// meanwhile. Tokens keep increasing across the restart through their
// Redis TIME floor, as long as Redis's clock does not go back.
//
// Consumers are named per process (Options.Consumer); Close leaves the
// group unless the consumer holds pending messages, and every queue drops,
// now and then, the consumers idle for an hour that hold none.
package redisqueue
