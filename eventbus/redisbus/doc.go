// Package redisbus is the [eventbus.Bus] of production (SPEC API-2, API-5):
// an event a worker process publishes reaches the SSE subscribers of every
// API process connected to the same Redis (go-redis v9, Redis 5 or later,
// standalone), with the contract the conformance suite in eventbus/bustest
// checks.
//
// # Model
//
// Each session has a Redis stream, "<prefix>s:<session>", whose entry IDs
// are the event IDs ("<id>-0"), and a pub/sub channel, "<prefix>c:<session>".
// Publish runs one Lua script: XADD with MAXLEN ~ Window (a bounded backlog;
// XADD's own ID check rejects an event not above the last one, across
// processes), PEXPIRE Idle, and PUBLISH of the same message on the channel.
// Each message carries the ID of the entry before it, so a receiver can
// prove that what it delivers follows what it delivered.
//
// A Bus follows the sessions its process has subscribers for: one pub/sub
// connection subscribed to their channels, read by one goroutine that
// hands each event to the session's local subscribers without waiting
// (a full subscriber is cut off with [eventbus.ErrSlow], as in
// [eventbus.Memory]). A process with 10,000 subscribers over 1,000 sessions
// holds that one connection plus its pool. Subscribe first makes sure the
// process is subscribed to the session's channel, then reads the last
// Window entries after afterID from the stream in one MULTI (which also
// gives the Gap); live events delivered meanwhile wait in the new
// subscription and follow its replay with neither a gap nor a duplicate.
//
// # Why streams and pub/sub
//
// Streams give what pub/sub lacks: IDs, an ordering check shared by every
// process, a bounded backlog to replay and to catch up from. Reading them
// live with XREAD BLOCK, though, costs one round trip carrying every
// followed key each time any of them moves, and a new session must
// interrupt the blocked read; one blocked connection per subscription
// would not scale to 10,000. Pub/sub delivers each event once to every
// process that follows its session, over one connection, and SUBSCRIBE
// adds a session without interrupting anything. So events are read live
// from pub/sub, and from the stream only to replay and to repair.
//
// # Failures
//
// Every Redis call is bounded by Options.Timeout: with Redis away, Publish
// and Subscribe fail after it rather than hang. The feed pings Redis when
// it is silent and replaces a connection that does not answer; go-redis
// redials the pool. Whenever the feed resubscribes (a new connection) or a
// message does not follow the last one delivered, the session catches up
// from its stream: the entries after the last delivered one, checked link
// by link. When the stream cannot prove the continuity — Redis restarted
// (seen by its run_id changing, or by a stream that no longer holds what
// was delivered; it runs without persistence) or the process missed more
// than a stream holds — the session's subscriptions end with [ErrLost]; a
// subscriber resubscribes after the last event it got, and the new
// subscription's Gap says what Redis no longer holds ([eventbus.GapUnknown]
// for a stream that is gone), to be read from the ledger.
//
// A session's stream outlives its last publish by Idle; a process keeps the
// streams its subscribers read alive, and unsubscribes from a session a
// sweep after its last subscriber left.
package redisbus
