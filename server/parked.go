package server

import (
	"bytes"
	"context"
	"errors"
	"net"
	"slices"
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
// leaves its `g` behind). It is stepped when the subscription has events,
// when its heartbeat is due (a shared wheel, below), when its credential
// expires or when the server closes its streams: a step writes what is
// due and arms the subscription's notification again.
//
// A stream over a socket is taken out of the runtime's network poller at
// park (rawSocket: its connection is closed, a duplicate of its descriptor
// kept) and stepped by the server's writer pool, without waiting on the
// socket; when the socket cannot take all that is due (a slow client), the
// rest is written by a goroutine of the stream's own, which steps it until
// it is idle again. A stream over another connection (TLS, a pipe) keeps
// it, and is stepped by a goroutine started for each wake, whose writes
// may wait.
type parkedStream struct {
	s    *Server
	st   *eventStream
	sub  eventbus.Notifier
	conn net.Conn   // nil when raw is not: the connection was closed at park
	raw  *rawSocket // nil: no socket to write without waiting
	sw   *sseWriter // its buffer; for a raw stream nothing else (see park)
	last int64      // the last event id sent
	// rest holds the events a step took and could not frame because the
	// socket was full; the next step sends them first.
	rest []*eventbus.Event
	// wake as a func value, made once: the subscription is re-armed with
	// it at every step.
	onEvent func()
	expiry  *time.Timer // nil without a credential end

	mu      sync.Mutex
	running bool // a step is queued or running (stays true once the stream ended)
	again   bool // woken while running: step once more
	ping    bool // a heartbeat is due
	slot    int  // the wheel's slot holding the stream
}

// park hands the stream to the wheel and the subscription's notification,
// and returns: from now on it is stepped when something is due. It owns
// the connection and the stream's end.
func (s *Server) park(st *eventStream, sub eventbus.Notifier, conn net.Conn, sw *sseWriter, last int64) {
	p := &parkedStream{s: s, st: st, sub: sub, sw: sw, last: last}
	if p.raw = detachSocket(conn); p.raw == nil {
		p.conn = conn
	} else {
		// Nothing may reach the closed connection (nor keep it in memory):
		// the raw socket's writes are the stream's from now on.
		sw.out, sw.setDeadline, sw.left = nil, nil, nil
	}
	p.onEvent = p.wake
	sw.releaseBuffer()
	if !st.until.IsZero() {
		p.expiry = time.AfterFunc(st.until.Sub(s.now()), p.wake)
	}
	s.streams.heartbeats(s.cfg.Heartbeat, s.closing).add(p)
	p.wake() // the first step arms the notification (events may wait already)
}

// wake makes sure the stream is stepped once more.
func (p *parkedStream) wake() {
	p.mu.Lock()
	if p.running {
		p.again = true
		p.mu.Unlock()
		return
	}
	p.running = true
	p.mu.Unlock()
	if p.raw == nil {
		go p.run(true, nil)
		return
	}
	p.s.streams.writers.submit(p)
}

// heartbeat marks a heartbeat due and wakes the stream.
func (p *parkedStream) heartbeat() {
	p.mu.Lock()
	p.ping = true
	p.mu.Unlock()
	p.wake()
}

// stepResult is what a step left to do.
type stepResult int

const (
	stepIdle    stepResult = iota // all written, the notification armed
	stepEnd                       // the stream is over; the buffer holds its last words
	stepBlocked                   // the socket is full: the buffer and rest hold what is due
)

// run steps the stream until nothing more is due, or ends it; block says
// its writes may wait (a goroutine of the stream's own), or not (a writer
// of the pool, which hands a blocked stream to a goroutine of its own).
// taken, when not nil, is the caller's scratch slice for the events a step
// takes (a writer's, reused from stream to stream).
func (p *parkedStream) run(block bool, taken *[]*eventbus.Event) {
	for {
		switch p.step(block, taken) {
		case stepEnd:
			if block || p.sw.buf.Len() == 0 {
				p.end()
			} else {
				go p.end()
			}
			return // running stays true: nothing steps the stream again
		case stepBlocked:
			go p.resume()
			return
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

// resume writes what a blocked step left, waiting for the socket (within
// sseWriteTimeout), then steps the stream on until it is idle.
func (p *parkedStream) resume() {
	if _, err := p.flush(true); err != nil {
		p.rest = nil
		p.sw.releaseBuffer()
		p.finish()
		return
	}
	p.run(true, nil)
}

// end writes the stream's last words (an expiry comment), if any, and
// ends it.
func (p *parkedStream) end() {
	_, _ = p.flush(true)
	p.rest = nil
	p.sw.releaseBuffer()
	p.finish()
}

// flush sends the buffer: whole, waiting for the socket (within
// sseWriteTimeout) if block or without a raw socket, else what the socket
// takes now (blocked: the rest stays in the buffer).
func (p *parkedStream) flush(block bool) (blocked bool, err error) {
	sw := p.sw
	switch {
	case p.raw == nil:
		return false, sw.write()
	case sw.buf.Len() == 0:
		return false, nil
	case block:
		err := p.raw.writeAll(sw.buf.Bytes(), time.Now().Add(sseWriteTimeout))
		sw.buf.Reset()
		return false, err
	}
	n, blocked, err := p.raw.tryWrite(sw.buf.Bytes())
	sw.buf.Next(n)
	if sw.buf.Len() == 0 {
		sw.buf.Reset()
	}
	return blocked, err
}

// step writes what is due — the events waiting, a heartbeat — and arms the
// subscription's notification again (stepIdle). It ends the stream
// (stepEnd) when the server closes its streams, the credential expired, a
// write failed, the client left or the subscription ended; unless block,
// it stops when the socket is full (stepBlocked).
func (p *parkedStream) step(block bool, taken *[]*eventbus.Event) stepResult {
	s, st, sw := p.s, p.st, p.sw
	expired := func() bool { return !st.until.IsZero() && !s.now().Before(st.until) }
	fail := func() stepResult { // a write failed: nothing more can be sent
		p.rest = nil
		sw.releaseBuffer()
		return stepEnd
	}
	if expired() {
		sw.takeBuffer()
		sw.addComment(expiredComment)
		return stepEnd
	}
	// The server closes its streams once its runs have ended: what the bus
	// delivered before (a run's done event) is written first. Seen closed
	// before the Take below, every event published before the close is
	// among those taken.
	var closing bool
	select {
	case <-s.closing:
		closing = true
	default:
	}
	ctx := context.Background()
	evs, ended := p.rest, false
	p.rest = nil
	switch {
	case len(evs) == 0:
		var dst []*eventbus.Event
		if taken != nil {
			dst = (*taken)[:0]
		}
		evs, ended = p.sub.Take(dst)
		if taken != nil {
			defer clear(evs) // the scratch holds no event past the step
			*taken = evs[:0]
		}
	case closing: // a blocked step's rest, then what the bus delivered since
		var more []*eventbus.Event
		more, ended = p.sub.Take(nil)
		evs = append(evs, more...) // rest is the stream's own (see below)
	}
	if len(evs) == 1 && sw.buf.Len() == 0 && p.raw != nil && !block {
		switch r, ok := p.sendOne(evs[0]); {
		case r == stepEnd:
			return fail()
		case ok:
			evs = nil
		case r == stepBlocked:
			return stepBlocked
		}
	}
	if len(evs) > 0 {
		sw.takeBuffer()
	}
	for i, ev := range evs {
		if expired() {
			sw.addComment(expiredComment) // after the events framed so far
			return stepEnd
		}
		if ev.ID > p.last { // ids up to last were sent from the store
			s.frameEvent(ctx, sw, ev)
			p.last = ev.ID
		}
		if sw.buf.Len() >= batchBytes {
			switch blocked, err := p.flush(block); {
			case err != nil:
				return fail()
			case blocked:
				p.rest = slices.Clone(evs[i+1:]) // evs may be a writer's scratch
				return stepBlocked
			}
		}
	}
	switch blocked, err := p.flush(block); {
	case err != nil:
		return fail()
	case blocked:
		return stepBlocked // ended is found again by the next Take
	}
	if closing {
		return stepEnd
	}
	if ended {
		if err := p.sub.Err(); err != nil && !errors.Is(err, eventbus.ErrSlow) {
			s.log.WarnContext(ctx, "sse: subscription ended", "session_id", st.sessionID, "caller", st.caller, "err", err)
		}
		return stepEnd // a slow client reconnects with Last-Event-ID
	}
	p.mu.Lock()
	ping := p.ping
	p.ping = false
	p.mu.Unlock()
	if ping {
		sw.takeBuffer()
		sw.addComment("ping")
		switch blocked, err := p.flush(block); {
		case err != nil || p.left():
			return fail()
		case blocked:
			return stepBlocked
		}
	}
	sw.releaseBuffer()
	p.sub.Notify(p.onEvent)
	return stepIdle
}

// sendOne writes ev's frame, from the server's cache, straight to the raw
// socket without waiting (step's common case: one event, nothing else
// due), with no copy into the stream's buffer. ok false with stepIdle:
// the frame is not cached, step frames it as usual. stepBlocked: the
// socket took part of it, the buffer holds the rest; stepEnd: the write
// failed.
//
// Issue 30: one event to 1,000 clients took and returned a pooled buffer
// and copied the frame into it for each client.
func (p *parkedStream) sendOne(ev *eventbus.Event) (r stepResult, ok bool) {
	if ev.ID <= p.last { // sent from the store
		return stepIdle, true
	}
	b, cached := p.s.streams.frames.cached(ev)
	if !cached {
		return stepIdle, false
	}
	p.last = ev.ID
	n, blocked, err := p.raw.tryWrite(b)
	switch {
	case err != nil:
		return stepEnd, false
	case blocked:
		p.sw.takeBuffer()
		p.sw.buf.Write(b[n:])
		return stepBlocked, false
	}
	return stepIdle, true
}

// left reports whether the client closed its end of the connection.
func (p *parkedStream) left() bool {
	if p.raw != nil {
		return p.raw.left()
	}
	return clientLeft(p.conn)
}

// finish ends the stream: off the wheel, its subscription closed and its
// slot freed, its connection closed.
func (p *parkedStream) finish() {
	p.s.streams.heartbeats(p.s.cfg.Heartbeat, p.s.closing).remove(p)
	if p.expiry != nil {
		p.expiry.Stop()
	}
	if p.raw != nil {
		p.raw.close()
	} else {
		p.conn.Close()
	}
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
