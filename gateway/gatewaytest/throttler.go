package gatewaytest

import (
	"sync"
	"time"
)

// Throttler is the part of a fake platform that answers calls with 429:
// embedded in the fake, it implements Platform's Throttle and Throttled,
// and the fake calls Take where the real platform would refuse a call. It
// has its own lock, so Take may be called with the fake's lock held.
type Throttler struct {
	mu        sync.Mutex
	n         int           // calls still to refuse
	after     time.Duration // the wait each refusal asks for
	throttled int           // calls refused so far
}

// Throttle makes the next n sends or edits fail with 429, asking the bot
// to wait after.
func (t *Throttler) Throttle(n int, after time.Duration) {
	t.mu.Lock()
	t.n, t.after = n, after
	t.mu.Unlock()
}

// Throttled counts the calls answered 429 so far.
func (t *Throttler) Throttled() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.throttled
}

// Take spends one of the refusals Throttle asked for: it reports whether
// this call is to be refused, and the wait to ask for.
func (t *Throttler) Take() (after time.Duration, refuse bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.n <= 0 {
		return 0, false
	}
	t.n--
	t.throttled++
	return t.after, true
}
