package redisbus

import (
	"context"
	"errors"
	"sync"

	"github.com/redis/go-redis/v9"

	"github.com/reinhq/rein/eventbus"
)

// session is a Bus's record of a session it follows: the channel it is
// subscribed to, the position of the live feed in the session's stream,
// and the local subscribers. Its lock orders the delivery of live events,
// the start and the end of subscriptions, and catch-ups.
//
// The position is last: the ID of the last event delivered, proven to
// follow the one before (each message names its predecessor, see codec.go).
// A message that does not follow last is not delivered: the bus reads the
// stream from last instead (a catch-up) and breaks the chain (ErrLost for
// every subscriber) if the stream does not follow last either.
type session struct {
	b       *Bus
	id      string
	key     string        // the stream
	channel string        // the pub/sub channel
	ready   chan struct{} // closed once the channel subscription is confirmed

	mu        sync.Mutex
	confirmed bool
	synced    bool      // last is a proven position
	last      int64     // the last event delivered (or the stream's top when synced)
	epoch     int64     // the feed's epoch when the record synced
	gen       int       // counts the syncs: a catch-up read before one is void
	held      []heldMsg // the feed's messages while not synced, up to Buffer
	behind    int64     // the highest ID of a message not delivered
	stale     bool      // a catch-up is due as soon as the record is synced
	queued    bool      // in the syncer's queue
	stuck     int       // catch-ups in a row that found nothing new while behind
	subs      []*sub
	idleTicks int  // sweeps seen without a subscriber
	dropped   bool // removed from the bus: callers take a new record
}

// register adds a subscription being set up (syncing): the events
// delivered until it is finished wait in its pending list. It returns nil
// when the record was dropped.
func (r *session) register(after int64) *sub {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.dropped {
		return nil
	}
	s := &sub{r: r, after: after, base: -1, syncing: true, idx: len(r.subs)}
	if r.synced {
		s.base = r.last
	}
	r.subs = append(r.subs, s)
	r.idleTicks = 0
	r.b.subs.Add(1)
	return s
}

// abandon removes a subscription that could not be set up.
func (r *session) abandon(s *sub) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.end(s, nil)
}

// finish makes s live from the stream's snapshot: the window's events
// after afterID, then those delivered since s registered that come after
// the snapshot. done is false when the snapshot is older than what s
// missed of the live feed: the caller reads another.
func (r *session) finish(ctx context.Context, s *sub, snap snapshot) (done bool, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if s.idx < 0 { // ended while being set up
		if errors.Is(s.err, eventbus.ErrClosed) {
			return false, eventbus.ErrClosed
		}
		return false, errRetry
	}
	if !r.synced {
		r.sync(snap.top)
	}
	// s.pending holds every event delivered after s.base; the snapshot
	// holds those up to its top.
	cut := max(s.after, snap.top)
	if cut < s.base {
		return false, nil
	}
	ch := make(chan *eventbus.Event, len(snap.events)+r.b.buffer)
	for _, ev := range snap.events {
		ch <- ev
	}
	for _, ev := range s.pending {
		if ev.ID > cut {
			ch <- ev
		}
	}
	s.ch, s.after, s.gap, s.syncing, s.pending = ch, cut, snap.gap, false, nil
	if ctx.Done() != nil {
		s.stop = context.AfterFunc(ctx, func() {
			r.mu.Lock()
			defer r.mu.Unlock()
			r.end(s, ctx.Err())
		})
	}
	return true, nil
}

// sync sets the position of an unsynced record to the stream's top; r.mu
// must be held.
func (r *session) sync(top int64) {
	r.synced, r.last, r.stuck, r.epoch = true, top, 0, r.b.epoch.Load()
	r.gen++
	for _, s := range r.subs {
		if s.syncing && s.base < 0 {
			s.base = top
		}
	}
	held := r.held
	r.held = nil
	for _, h := range held {
		r.take(h.prev, h.ev)
	}
	if r.stale || r.behind > r.last {
		r.stale = false
		r.schedule()
	}
}

// onMessage takes an event of the live feed, prev being the ID of the
// stream entry before it. Until the record is synced, the event waits.
func (r *session) onMessage(prev int64, ev *eventbus.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case r.dropped:
	case r.synced:
		r.take(prev, ev)
	case len(r.held) < r.b.buffer:
		r.held = append(r.held, heldMsg{prev, ev})
	default:
		r.behind = max(r.behind, ev.ID) // a catch-up follows the sync
	}
}

// take delivers ev if it follows the record's position, and asks for a
// catch-up if it does not; r.mu must be held.
func (r *session) take(prev int64, ev *eventbus.Event) {
	switch {
	case ev.ID <= r.last:
	case prev == r.last:
		r.deliver(ev)
	default:
		r.behind = max(r.behind, ev.ID)
		r.schedule()
	}
}

// heldMsg is a message of the feed that came before its record synced.
type heldMsg struct {
	prev int64
	ev   *eventbus.Event
}

// deliver hands ev, which follows r.last, to the subscribers; r.mu must be
// held.
func (r *session) deliver(ev *eventbus.Event) {
	r.last = ev.ID
	// Backwards, so removing subs[i] (the last one takes its place) never
	// skips a subscriber.
	for i := len(r.subs) - 1; i >= 0; i-- {
		s := r.subs[i]
		switch {
		case s.syncing:
			if len(s.pending) >= r.b.buffer {
				r.end(s, eventbus.ErrSlow) // its Subscribe starts over
				continue
			}
			s.pending = append(s.pending, ev)
		case ev.ID <= s.after:
		default:
			select {
			case s.ch <- ev:
			default:
				r.b.slow.Add(1)
				r.end(s, eventbus.ErrSlow)
			}
		}
	}
}

// schedule queues r for a catch-up, or marks one due if r is not synced;
// r.mu must be held.
func (r *session) schedule() {
	switch {
	case r.dropped, r.queued:
	case !r.synced:
		r.stale = true
	default:
		r.queued = true
		r.b.enqueue(r)
	}
}

// catchUp applies what a catch-up read from the stream after from, the
// record's position in its sync gen: the stream's top (none when it is
// empty) and its entries, a full page or not. The feed may have delivered
// more since.
func (r *session) catchUp(gen int, from int64, top, entries []redis.XMessage, full bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.dropped || !r.synced || r.gen != gen {
		return
	}
	var topID int64
	if len(top) > 0 {
		topID, _ = parseStreamID(top[0].ID)
	}
	if topID < from {
		r.breakChain("the stream ends before the last event delivered")
		return
	}
	last := r.last
	for _, m := range entries {
		prev, ev, err := entryEvent(r.id, m)
		switch {
		case err != nil:
			r.b.log.Warn("redisbus: corrupt stream entry", "session_id", r.id, "err", err)
			r.breakChain("corrupt entry")
			return
		case ev.ID <= r.last:
			continue
		case prev != r.last:
			r.breakChain("the stream no longer holds the events after the last one delivered")
			return
		}
		r.deliver(ev)
	}
	if r.last > last {
		r.b.catchUps.Add(1)
		r.stuck = 0
	}
	switch {
	case full:
		r.schedule() // more to read
	case r.behind > r.last:
		// A message newer than the read: read again, unless the stream
		// never shows it.
		if r.last == last {
			if r.stuck++; r.stuck > 3 {
				r.breakChain("the stream does not hold an event the live feed announced")
				return
			}
		}
		r.schedule()
	}
}

// breakChain ends every subscription with ErrLost and forgets the
// position: the next subscription syncs the record again; r.mu must be
// held.
func (r *session) breakChain(why string) {
	if len(r.subs) > 0 {
		r.b.log.Warn("redisbus: events may have been lost: ending the session's subscriptions",
			"session_id", r.id, "reason", why, "subscribers", len(r.subs))
	}
	for len(r.subs) > 0 {
		r.end(r.subs[len(r.subs)-1], ErrLost)
	}
	r.synced, r.last, r.behind, r.stale, r.stuck, r.held = false, 0, 0, false, 0, nil
}

// drop ends the subscriptions with err and marks the record dropped.
func (r *session) drop(err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.dropped = true
	for len(r.subs) > 0 {
		r.end(r.subs[len(r.subs)-1], err)
	}
}

// end ends s with err unless it has ended; r.mu must be held.
func (r *session) end(s *sub, err error) {
	i := s.idx
	if i < 0 {
		return
	}
	last := len(r.subs) - 1
	r.subs[i] = r.subs[last]
	r.subs[i].idx = i
	r.subs[last] = nil
	r.subs = r.subs[:last]
	s.idx = -1
	s.err = err
	s.pending = nil
	if s.ch != nil {
		close(s.ch)
	}
	if s.stop != nil {
		s.stop()
	}
	r.b.subs.Add(-1)
	if errors.Is(err, ErrLost) {
		r.b.lost.Add(1)
	}
}

// sub is a subscription to a [Bus]. Its mutable fields are guarded by its
// session's lock.
type sub struct {
	r       *session
	ch      chan *eventbus.Event // nil while syncing
	after   int64                // events up to it are not delivered
	gap     int64
	syncing bool
	base    int64             // while syncing: the record's position when s joined it; -1 unknown
	pending []*eventbus.Event // while syncing: events delivered since base
	idx     int               // position in r.subs; -1 once ended
	err     error
	stop    func() bool // stops the context's AfterFunc; nil without one
}

// Events implements [eventbus.Subscription].
func (s *sub) Events() <-chan *eventbus.Event { return s.ch }

// Gap implements [eventbus.Subscription].
func (s *sub) Gap() int64 { return s.gap }

// Err implements [eventbus.Subscription].
func (s *sub) Err() error {
	s.r.mu.Lock()
	defer s.r.mu.Unlock()
	return s.err
}

// Close implements [eventbus.Subscription].
func (s *sub) Close() {
	s.r.mu.Lock()
	defer s.r.mu.Unlock()
	s.r.end(s, nil)
}
