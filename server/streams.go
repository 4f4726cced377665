package server

import (
	"context"
	"fmt"
	"net/http"
	"runtime/debug"
	"strconv"
	"sync"
	"time"

	"github.com/danielgtaylor/huma/v2"
)

// The defaults of the stream caps (SPEC API-9).
const (
	DefaultMaxStreamsPerCaller = 32
	DefaultMaxStreams          = 1024
)

// streamRetryAfter is the Retry-After of a refused stream, in seconds: a
// stream is long-lived, so a slot frees when a client leaves, not soon.
const streamRetryAfter = 10

// When many clients leave, the memory their streams held (goroutine
// stacks, buffers, subscriptions) is free in the Go runtime but still the
// process's: with no allocation going on no collection runs, and the
// runtime returns free pages to the system slowly. Once at least
// returnMin streams have ended and at most half of the most recently open
// are left, the memory is returned (returnFreeMemory: collections, then
// every free page) returnDelay later, so that a crowd leaving over a few
// heartbeats is one return, not thousands (issue 30: RSS back near idle
// after 10,000 clients left).
const (
	returnMin   = 256
	returnDelay = 2 * time.Second
)

// streamCaps counts the open event streams, per caller and in all, and
// refuses one beyond either cap (SPEC API-9): one caller cannot hold the
// server's sockets and subscriptions, and all callers together stay within
// what the process was sized for. A cap of zero or less is no cap.
type streamCaps struct {
	perCaller, total int
	// returnMemory gives free memory back to the system (see returnMin).
	returnMemory func()

	mu    sync.Mutex
	open  map[string]int
	inAll int
	peak  int  // the most streams open since memory was last returned
	due   bool // a return is scheduled
	// idle are closed when no stream is open (see waitIdle).
	idle []chan struct{}

	wheelOnce sync.Once
	wheel     *wheel // the parked streams' heartbeats (see parkedStream)

	frames  frameCache // the frames of the bus's latest events
	writers writerPool // steps the parked streams that are due
}

// heartbeats returns the wheel of the parked streams' heartbeats, made at
// the first call with the server's heartbeat interval and closing channel.
func (c *streamCaps) heartbeats(every time.Duration, closing <-chan struct{}) *wheel {
	c.wheelOnce.Do(func() { c.wheel = newWheel(every, closing) })
	return c.wheel
}

func newStreamCaps(perCaller, total int) *streamCaps {
	return &streamCaps{perCaller: perCaller, total: total, open: map[string]int{}, returnMemory: returnFreeMemory}
}

// returnFreeMemory gives the process's free memory back to the system. It
// collects twice: the first collection moves what the sync.Pools hold
// (net/http's and huma's buffers and readers, the streams' write buffers,
// taken by the crowd's requests) to their victim caches, the second frees
// those, and with them the spans they kept in use (issue 30: 1.3 MiB more
// of the heap returned after 10,000 clients left, bench/server).
func returnFreeMemory() {
	debug.FreeOSMemory()
	debug.FreeOSMemory()
}

// acquire takes a stream slot of caller's, or returns the 429 that says
// which cap is reached and how to raise it. The release function gives the
// slot back; it may be called more than once.
func (c *streamCaps) acquire(caller string) (release func(), err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case c.perCaller > 0 && c.open[caller] >= c.perCaller:
		return nil, tooManyStreams(fmt.Sprintf(
			"too many open event streams: the caller %q has %d open, the most a caller may (--max-streams-per-caller); close one (one stream per session serves every run of it) or have the operator raise the cap",
			caller, c.open[caller]))
	case c.total > 0 && c.inAll >= c.total:
		return nil, tooManyStreams(fmt.Sprintf(
			"too many open event streams: the server holds %d, the most it may (--max-streams); retry later or have the operator raise the cap",
			c.inAll))
	}
	c.open[caller]++
	c.inAll++
	c.peak = max(c.peak, c.inAll)
	var once sync.Once
	return func() {
		once.Do(func() {
			c.mu.Lock()
			defer c.mu.Unlock()
			c.inAll--
			if c.open[caller]--; c.open[caller] <= 0 {
				delete(c.open, caller)
			}
			if c.inAll == 0 {
				for _, ch := range c.idle {
					close(ch)
				}
				c.idle = nil
			}
			if !c.due && c.peak-c.inAll >= returnMin && c.inAll <= c.peak/2 {
				c.due = true
				time.AfterFunc(returnDelay, c.giveBack)
			}
		})
	}, nil
}

// waitIdle returns once no stream is open, or ctx's error when it ends
// first.
func (c *streamCaps) waitIdle(ctx context.Context) error {
	c.mu.Lock()
	if c.inAll == 0 {
		c.mu.Unlock()
		return nil
	}
	ch := make(chan struct{})
	c.idle = append(c.idle, ch)
	c.mu.Unlock()
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// giveBack returns free memory to the system, and counts the streams open
// now as the new peak.
func (c *streamCaps) giveBack() {
	c.returnMemory()
	c.mu.Lock()
	defer c.mu.Unlock()
	c.due, c.peak = false, c.inAll
}

func tooManyStreams(detail string) error {
	return huma.ErrorWithHeaders(huma.NewError(http.StatusTooManyRequests, detail),
		http.Header{"Retry-After": {strconv.Itoa(streamRetryAfter)}})
}
