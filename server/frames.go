package server

import (
	"context"
	"sync"

	"github.com/reinhq/rein/eventbus"
)

// frameCacheSize is how many of the bus's latest events a frameCache
// holds the frames of, and maxCachedFrame the largest frame it keeps: at
// most 4 MiB in all. A larger event is framed by each stream, as its
// framing is small beside its write.
const (
	frameCacheSize = 256
	maxCachedFrame = 16 << 10
)

// frameCache holds the SSE frames of the bus's latest events, made once
// and shared by every stream that sends them (issue 30: a burst of 20
// deltas to 1,000 clients was framed 20,000 times, a third of the streams'
// CPU, most of it the scan for line breaks). The bus shares one Event
// between its subscribers and never changes it, so the pointer is the
// key. It is safe for concurrent use; its zero value is empty.
type frameCache struct {
	frames sync.Map // *eventbus.Event → *cachedFrame

	mu   sync.Mutex
	ring [frameCacheSize]*eventbus.Event // the keys, oldest evicted first
	next int
}

type cachedFrame struct {
	b   []byte
	err error
}

// frame returns ev's frame (see sseWriter.event), or the error that says
// it cannot be framed.
func (c *frameCache) frame(ev *eventbus.Event) ([]byte, error) {
	if v, ok := c.frames.Load(ev); ok {
		f := v.(*cachedFrame)
		return f.b, f.err
	}
	var sw sseWriter
	err := sw.event(ev.ID, ev.Type, ev.Data)
	f := &cachedFrame{b: sw.buf.Bytes(), err: err}
	if len(f.b) > maxCachedFrame {
		return f.b, f.err
	}
	if v, loaded := c.frames.LoadOrStore(ev, f); loaded {
		f = v.(*cachedFrame)
		return f.b, f.err
	}
	c.mu.Lock()
	if old := c.ring[c.next]; old != nil {
		c.frames.Delete(old)
	}
	c.ring[c.next] = ev
	c.next = (c.next + 1) % frameCacheSize
	c.mu.Unlock()
	return f.b, f.err
}

// cached returns ev's frame, made if need be, when it can be framed and is
// small enough to be kept (see maxCachedFrame): the caller may write it
// but must not change it.
func (c *frameCache) cached(ev *eventbus.Event) ([]byte, bool) {
	b, err := c.frame(ev)
	if err != nil || len(b) > maxCachedFrame {
		return nil, false
	}
	return b, true
}

// frameEvent adds a bus event's frame to the writer's buffer, from the
// server's cache; one that cannot be framed is logged and skipped.
func (s *Server) frameEvent(ctx context.Context, sw *sseWriter, ev *eventbus.Event) {
	b, err := s.streams.frames.frame(ev)
	if err != nil {
		s.log.WarnContext(ctx, "sse: event skipped", "event_id", ev.ID, "type", ev.Type, "err", err)
		return
	}
	sw.buf.Write(b)
}
