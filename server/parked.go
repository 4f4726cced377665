package server

import (
	"bytes"
	"context"
	"errors"
	"net"
	"sync"
	"time"

	"github.com/reinhq/rein/eventbus"
)

// A parked stream is an event stream over a hijacked connection whose
// subscription is an [eventbus.Notifier]: while nothing happens it holds no
// goroutine, no heartbeat timer of its own, no write buffer and no channel
// — only its subscription, its socket and this record (issue 30: 10,000
// idle clients cost the collector a goroutine stack, a 256-slot channel
// and a write buffer each otherwise, and every goroutine that ever ran
// leaves its `g` behind). A
// goroutine is started when the subscription has events, when its
// heartbeat is due (a shared wheel, below), when its credential expires or
// when the server closes its streams; it writes what is due, arms the
// subscription's notification again and ends.
type parkedStream struct {
	s    *Server
	st   *eventStream
	sub  eventbus.Notifier
	conn net.Conn
	sw   *sseWriter
	last int64 // the last event id sent
	// wake as a func value, made once: the subscription is re-armed with
	// it at every step.
	onEvent func()
	expiry  *time.Timer // nil without a credential end

	mu      sync.Mutex
	running bool // a goroutine serves the stream (stays true once it ended)
	again   bool // woken while running: step once more
	ping    bool // a heartbeat is due
	slot    int  // the wheel's slot holding the stream
}

// park hands the stream to the wheel and the subscription's notification,
// and returns: from now on goroutines come and go for it. It owns the
// connection and the stream's end.
func (s *Server) park(st *eventStream, sub eventbus.Notifier, conn net.Conn, sw *sseWriter, last int64) {
	p := &parkedStream{s: s, st: st, sub: sub, conn: conn, sw: sw, last: last}
	p.onEvent = p.wake
	sw.releaseBuffer()
	if !st.until.IsZero() {
		p.expiry = time.AfterFunc(st.until.Sub(s.now()), p.wake)
	}
	s.streams.heartbeats(s.cfg.Heartbeat, s.closing).add(p)
	p.wake() // the first step arms the notification (events may wait already)
}

// wake makes sure a goroutine steps the stream once more.
func (p *parkedStream) wake() {
	p.mu.Lock()
	if p.running {
		p.again = true
		p.mu.Unlock()
		return
	}
	p.running = true
	p.mu.Unlock()
	go p.run()
}

// heartbeat marks a heartbeat due and wakes the stream.
func (p *parkedStream) heartbeat() {
	p.mu.Lock()
	p.ping = true
	p.mu.Unlock()
	p.wake()
}

// run steps the stream until nothing more is due, or ends it.
func (p *parkedStream) run() {
	for {
		if p.step() {
			p.finish()
			return // running stays true: nothing starts another goroutine
		}
		p.mu.Lock()
		if !p.again {
			p.running = false
			p.mu.Unlock()
			return
		}
		p.again = false
		p.mu.Unlock()
	}
}

// step writes what is due — the events waiting, a heartbeat — and arms the
// subscription's notification again; end says the stream is over (the
// server closes its streams, the credential expired, a write failed, the
// client left, the subscription ended).
func (p *parkedStream) step() (end bool) {
	s, st, sw := p.s, p.st, p.sw
	sw.takeBuffer()
	defer sw.releaseBuffer()
	if !st.until.IsZero() && !s.now().Before(st.until) {
		_ = sw.comment(expiredComment)
		return true
	}
	ctx := context.Background()
	evs, ended := p.sub.Take(nil)
	for _, ev := range evs {
		if !st.until.IsZero() && !s.now().Before(st.until) {
			_ = sw.comment(expiredComment) // after the events framed so far
			return true
		}
		if ev.ID > p.last { // ids up to last were sent from the store
			s.frameEvent(ctx, sw, ev)
			p.last = ev.ID
		}
		if sw.buf.Len() >= batchBytes && sw.write() != nil {
			return true
		}
	}
	if sw.write() != nil {
		return true
	}
	// The server closes its streams once its runs have ended: what the
	// bus delivered before (a run's done event) is written first.
	select {
	case <-s.closing:
		return true
	default:
	}
	if ended {
		if err := p.sub.Err(); err != nil && !errors.Is(err, eventbus.ErrSlow) {
			s.log.WarnContext(ctx, "sse: subscription ended", "session_id", st.sessionID, "caller", st.caller, "err", err)
		}
		return true // a slow client reconnects with Last-Event-ID
	}
	p.mu.Lock()
	ping := p.ping
	p.ping = false
	p.mu.Unlock()
	if ping && (sw.comment("ping") != nil || clientLeft(p.conn)) {
		return true
	}
	p.sub.Notify(p.onEvent)
	return false
}

// finish ends the stream: off the wheel, its subscription closed and its
// slot freed, its connection closed.
func (p *parkedStream) finish() {
	p.s.streams.heartbeats(p.s.cfg.Heartbeat, p.s.closing).remove(p)
	if p.expiry != nil {
		p.expiry.Stop()
	}
	p.conn.Close()
	p.st.end()
	if p.s.cfg.OnSSE != nil {
		p.s.cfg.OnSSE(-1)
	}
}

// wheelSlots is how many groups the heartbeat wheel spreads the parked
// streams over: one group is visited every heartbeat/wheelSlots, so 10,000
// streams wake ~160 at a time, not all at once.
const wheelSlots = 64

// wheel sends the parked streams their heartbeats: one goroutine and one
// ticker for all of them, running only while a stream is parked. A stream
// joins the slot visited last, so its first heartbeat comes one heartbeat
// (less at most one tick) after it parked. When the server closes its
// streams the wheel wakes every one of them (they end) and stops; a
// stream parked later starts it again, and it wakes that one at once.
type wheel struct {
	every   time.Duration
	closing <-chan struct{}

	mu      sync.Mutex
	slots   [wheelSlots]map[*parkedStream]struct{} // nil while empty
	n       int
	cur     int // the slot visited last
	running bool
}

func newWheel(every time.Duration, closing <-chan struct{}) *wheel {
	return &wheel{every: every, closing: closing}
}

func (w *wheel) add(p *parkedStream) {
	w.mu.Lock()
	defer w.mu.Unlock()
	p.slot = w.cur
	if w.slots[p.slot] == nil {
		w.slots[p.slot] = map[*parkedStream]struct{}{}
	}
	w.slots[p.slot][p] = struct{}{}
	w.n++
	if !w.running {
		w.running = true
		go w.run()
	}
}

func (w *wheel) remove(p *parkedStream) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if _, ok := w.slots[p.slot][p]; ok {
		delete(w.slots[p.slot], p)
		if w.n--; w.n == 0 {
			w.slots = [wheelSlots]map[*parkedStream]struct{}{} // a map does not shrink: 10,000 streams gone leave none behind
		}
	}
}

// run visits a slot every tick, until no stream is left or the server
// closes its streams.
func (w *wheel) run() {
	t := time.NewTicker(max(w.every/wheelSlots, 1))
	defer t.Stop()
	var due []*parkedStream
	for {
		select {
		case <-w.closing:
			w.mu.Lock()
			due = due[:0]
			for i := range w.slots {
				for p := range w.slots[i] {
					due = append(due, p)
				}
			}
			w.running = false
			w.mu.Unlock()
			for _, p := range due {
				p.wake()
			}
			return
		case <-t.C:
		}
		w.mu.Lock()
		if w.n == 0 {
			w.running = false
			w.mu.Unlock()
			return
		}
		w.cur = (w.cur + 1) % wheelSlots
		due = due[:0]
		for p := range w.slots[w.cur] {
			due = append(due, p)
		}
		w.mu.Unlock()
		for _, p := range due {
			p.heartbeat()
		}
		clear(due) // hold no stream past its visit
	}
}

// bufferPool holds the write buffers of streams between their writes
// (*[]byte): an idle stream keeps none (issue 30). Buffers larger than
// maxPooledBuffer (a replay's or a burst's) are left to the collector.
var bufferPool sync.Pool

const maxPooledBuffer = 2 * batchBytes

// takeBuffer gives sw a buffer from the pool if it has none.
func (sw *sseWriter) takeBuffer() {
	if sw.buf.Cap() > 0 {
		return
	}
	if b, ok := bufferPool.Get().(*[]byte); ok {
		sw.buf = *bytes.NewBuffer((*b)[:0])
	}
}

// releaseBuffer gives sw's buffer back to the pool; what it holds unsent
// is dropped (a write failed and the stream ends).
func (sw *sseWriter) releaseBuffer() {
	sw.buf.Reset()
	if c := sw.buf.Cap(); c > 0 && c <= maxPooledBuffer {
		b := sw.buf.AvailableBuffer()
		bufferPool.Put(&b)
	}
	sw.buf = bytes.Buffer{}
}
