// Package eventbus fans a session's events out from the one goroutine that
// publishes them (the run of that session, in runner/) to any number of
// subscribers (SSE handlers, the gateway), by sequence number (SPEC API-2,
// API-5).
//
// # Model
//
// Every session has a stream of [Event] values whose IDs the publisher
// assigns and which increase per session (the runner numbers them
// durable<<20 | k: a durable event has k = 0, the deltas after it k = 1, 2,
// …; IDs need not be contiguous). A [Bus] keeps, per session, a window of
// the most recent events and a set of subscribers. [Bus.Publish] appends to
// the window and hands the event to every subscriber without ever waiting
// for one: a subscriber whose buffer is full is cut off ([ErrSlow]) and
// reconnects from the last event it got. [Bus.Subscribe] with an afterID
// replays what the window still holds after that ID and then continues
// live, with neither a gap nor a duplicate between the two.
//
// The bus is not the record: durable events are persisted by the runner in
// the session ledger before they are published, deltas are never stored. A
// subscription says through [Subscription.Gap] which IDs it cannot replay,
// and a caller that must deliver every durable event reads those from the
// ledger, after subscribing (so nothing published in between is missed) and
// before forwarding the subscription's events:
//
//	sub, err := bus.Subscribe(ctx, sessionID, after)
//	if err != nil { ... }
//	defer sub.Close()
//	last := after
//	if gap := sub.Gap(); gap > 0 {
//		evs, err := ledger.Events(ctx, sessionID, after, 0)
//		if err != nil { ... }
//		for _, ev := range evs {
//			if ev.ID > gap {
//				break
//			}
//			send(ev)
//			last = ev.ID
//		}
//	}
//	for ev := range sub.Events() {
//		if ev.ID <= last {
//			continue // already sent from the ledger (only when gap == GapUnknown)
//		}
//		send(ev)
//		last = ev.ID
//	}
//	// sub.Err() says why the stream ended.
//
// A subscriber that serves many idle subscriptions (an SSE server with
// thousands of quiet clients) need not block a goroutine on each: a
// [Notifier] (the in-memory bus's subscriptions are) calls a function when
// events wait or the subscription ended, and [Notifier.Take] hands them
// over without a channel; until its first Events() call such a
// subscription holds only the events waiting, in a slice that grows as
// they come.
//
// # Backends
//
// [Memory] is the bus of embedded mode (one process). eventbus/redisbus
// carries the same contract across processes for production. Every backend
// passes the conformance suite in eventbus/bustest.
package eventbus
