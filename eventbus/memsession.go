package eventbus

import (
	"context"
	"sort"
	"sync"
	"sync/atomic"
	"time"
)

// memSession is a [Memory] bus's record of one session. Its lock orders
// every publish, subscribe and end of subscription of the session, so a
// replay and the live events after it never interleave, and a channel is
// never sent to after it was closed.
type memSession struct {
	m *Memory

	mu      sync.Mutex
	ring    ring
	last    int64 // the last published ID; 0 before the first
	subs    []*memSub
	active  time.Time // last publish or last subscriber leaving, when no subscriber is left
	dropped bool      // removed from the bus: callers take a new record
}

// publish appends ev and sends it to the subscribers. ok is false when the
// record was dropped; an out-of-order event returns the last published ID.
func (s *memSession) publish(ev *Event) (last int64, ok bool, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.dropped {
		return 0, false, nil
	}
	if ev.ID <= s.last {
		return s.last, true, ErrOutOfOrder
	}
	s.last = ev.ID
	s.ring.push(ev, s.m.window)
	if len(s.subs) == 0 {
		s.active = s.m.now()
		return ev.ID, true, nil
	}
	// Backwards, so removing subs[i] (the last one takes its place) never
	// skips a subscriber.
	for i := len(s.subs) - 1; i >= 0; i-- {
		sub := s.subs[i]
		if ev.ID <= sub.after {
			continue
		}
		if !sub.deliver(ev) {
			s.m.slow.Add(1)
			s.end(sub, ErrSlow)
		}
	}
	return ev.ID, true, nil
}

// subscribe adds a subscriber after afterID, its replay already in its
// channel; nil when the record was dropped.
func (s *memSession) subscribe(ctx context.Context, afterID int64) *memSub {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.dropped {
		return nil
	}
	first := s.ring.after(afterID)
	replay := s.ring.len() - first
	sub := &memSub{s: s, limit: replay + s.m.buffer, after: afterID, gap: s.gap(afterID), idx: len(s.subs)}
	if replay > 0 {
		sub.q = make([]*Event, 0, replay)
		for i := first; i < s.ring.len(); i++ {
			sub.q = append(sub.q, s.ring.at(i))
		}
	}
	s.subs = append(s.subs, sub)
	s.m.subs.Add(1)
	if ctx.Done() != nil {
		sub.stop = context.AfterFunc(ctx, func() {
			s.mu.Lock()
			defer s.mu.Unlock()
			s.end(sub, ctx.Err())
		})
	}
	return sub
}

// gap is the Gap of a subscription after afterID; s.mu must be held.
func (s *memSession) gap(afterID int64) int64 {
	if s.ring.len() == 0 {
		return GapUnknown
	}
	// The window evicts in order and the record may begin after events
	// the bus never saw: anything below the first held event may be lost.
	if lost := s.ring.at(0).ID - 1; afterID < lost {
		return lost
	}
	return 0
}

// end ends sub with err unless it has ended; s.mu must be held.
func (s *memSession) end(sub *memSub, err error) {
	i := sub.idx
	if i < 0 {
		return
	}
	last := len(s.subs) - 1
	s.subs[i] = s.subs[last]
	s.subs[i].idx = i
	s.subs[last] = nil
	s.subs = s.subs[:last]
	sub.idx = -1
	sub.err = err
	sub.mu.Lock()
	sub.ended = true
	if c := sub.ch.Load(); c != nil {
		close(*c)
	}
	f := sub.disarm()
	sub.mu.Unlock()
	if f != nil {
		f()
	}
	if sub.stop != nil {
		sub.stop()
	}
	s.m.subs.Add(-1)
	if len(s.subs) == 0 {
		s.active = s.m.now()
		if cap(s.subs) > maxKeptSubs {
			s.subs = nil // a crowd's slice goes with the crowd
		}
	}
}

// maxKeptSubs is the most subscriber slots a session without subscribers
// keeps: the slice a crowd of listeners grew is freed when the last one
// leaves (issue 30: 10,000 listeners over 100 sessions left 100 KB).
const maxKeptSubs = 16

// drop ends the subscribers with err and marks the record dropped.
func (s *memSession) drop(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.dropped = true
	for len(s.subs) > 0 {
		s.end(s.subs[len(s.subs)-1], err)
	}
	s.ring = ring{}
}

// dropIfIdle drops the record if it had no subscriber and no publish for
// idle, and says whether it did.
func (s *memSession) dropIfIdle(now time.Time, idle time.Duration) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.subs) > 0 || now.Sub(s.active) < idle {
		return false
	}
	s.dropped = true
	s.ring = ring{}
	return true
}

var _ Notifier = (*memSub)(nil)

// memSub is a subscription to a [Memory] bus. Its position, error and
// context stop are guarded by its session's lock; what waits for it, its
// notification and its end by its own (taken after the session's), so
// that a subscriber taking its events does not contend with a publisher
// going through a thousand subscribers.
//
// Its events wait in q, a slice that grows as they come and is emptied by
// Take, until the first call to Events(): that makes the channel (of the
// subscription's whole capacity) and moves them into it, and from then on
// they go to the channel. A subscriber that uses Notify and Take never
// holds a channel, and an idle one holds no more than a small slice
// (issue 30: 10,000 idle streams each held a 256-slot channel, 2 KiB of
// pointers the collector scans).
type memSub struct {
	s     *memSession
	limit int // the most events that may wait: replay + buffer
	after int64
	gap   int64
	idx   int // position in s.subs; -1 once ended
	err   error
	stop  func() bool // stops the context's AfterFunc; nil without one

	ch    atomic.Pointer[chan *Event] // nil until Events() is called; made under mu
	mu    sync.Mutex
	q     []*Event // the waiting events, while ch is nil
	ended bool
	// notify is called once when the subscription next has something to
	// receive (see Notify); nil when none is armed.
	notify func()
}

// deliver queues ev for the subscriber and fires its notification; false
// when its buffer is full. The session's lock must be held.
func (sub *memSub) deliver(ev *Event) bool {
	sub.mu.Lock()
	if c := sub.ch.Load(); c != nil {
		select {
		case *c <- ev:
		default:
			sub.mu.Unlock()
			return false
		}
	} else {
		if len(sub.q) >= sub.limit {
			sub.mu.Unlock()
			return false
		}
		sub.q = append(sub.q, ev)
	}
	f := sub.disarm()
	sub.mu.Unlock()
	if f != nil {
		f()
	}
	return true
}

// disarm returns the armed notify function, if any, and disarms it;
// sub.mu must be held.
func (sub *memSub) disarm() func() {
	f := sub.notify
	sub.notify = nil
	return f
}

// Notify implements [Notifier].
func (sub *memSub) Notify(f func()) {
	sub.mu.Lock()
	waiting := len(sub.q)
	if c := sub.ch.Load(); c != nil {
		waiting = len(*c)
	}
	if waiting == 0 && !sub.ended {
		sub.notify = f
		sub.mu.Unlock()
		return
	}
	sub.notify = nil
	sub.mu.Unlock()
	f()
}

// maxKeptQueue is the largest queue a subscription keeps after Take
// emptied it; a larger one (a burst's) is left to the collector.
const maxKeptQueue = 16

// Take implements [Notifier].
func (sub *memSub) Take(dst []*Event) ([]*Event, bool) {
	sub.mu.Lock()
	defer sub.mu.Unlock()
	if c := sub.ch.Load(); c != nil {
		for {
			select {
			case ev, ok := <-*c:
				if !ok {
					return dst, true
				}
				dst = append(dst, ev)
			default:
				return dst, false
			}
		}
	}
	dst = append(dst, sub.q...)
	clear(sub.q)
	if cap(sub.q) > maxKeptQueue {
		sub.q = nil
	} else {
		sub.q = sub.q[:0]
	}
	return dst, sub.ended
}

// Events implements [Subscription].
func (sub *memSub) Events() <-chan *Event {
	if c := sub.ch.Load(); c != nil {
		return *c
	}
	sub.mu.Lock()
	defer sub.mu.Unlock()
	if c := sub.ch.Load(); c != nil {
		return *c
	}
	ch := make(chan *Event, max(sub.limit, len(sub.q)))
	for _, ev := range sub.q {
		ch <- ev
	}
	sub.q = nil
	if sub.ended {
		close(ch)
	}
	sub.ch.Store(&ch)
	return ch
}

// Gap implements [Subscription].
func (sub *memSub) Gap() int64 { return sub.gap }

// Err implements [Subscription].
func (sub *memSub) Err() error {
	sub.s.mu.Lock()
	defer sub.s.mu.Unlock()
	return sub.err
}

// Close implements [Subscription].
func (sub *memSub) Close() {
	sub.s.mu.Lock()
	defer sub.s.mu.Unlock()
	sub.s.end(sub, nil)
}

// ring holds the last events of a session, oldest first. It grows up to
// its capacity, then overwrites the oldest.
type ring struct {
	buf  []*Event
	head int // index of the oldest once buf is full; 0 while it grows
}

func (r *ring) len() int { return len(r.buf) }

// at returns the i-th oldest event.
func (r *ring) at(i int) *Event {
	i += r.head
	if i >= len(r.buf) {
		i -= len(r.buf)
	}
	return r.buf[i]
}

func (r *ring) push(ev *Event, capacity int) {
	if len(r.buf) < capacity {
		r.buf = append(r.buf, ev)
		return
	}
	r.buf[r.head] = ev
	if r.head++; r.head == len(r.buf) {
		r.head = 0
	}
}

// after returns the index of the oldest event with an ID above id.
func (r *ring) after(id int64) int {
	return sort.Search(len(r.buf), func(i int) bool { return r.at(i).ID > id })
}
