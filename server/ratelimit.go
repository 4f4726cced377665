package server

import (
	"math"
	"slices"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// maxLimited bounds how many callers the rate limiter tracks at once.
const maxLimited = 10000

// limiter rate-limits requests per key (a caller, or the address of a
// request without one): a token bucket each. The map stays bounded: a
// bucket idle long enough to have refilled is the same as a new one and is
// dropped when the map is full; when every bucket is busy the least recently
// used go.
type limiter struct {
	limit rate.Limit
	burst int
	max   int
	// full is how long an empty bucket takes to refill.
	full time.Duration

	mu      sync.Mutex
	buckets map[string]*bucket
}

type bucket struct {
	lim  *rate.Limiter
	seen time.Time
}

// newLimiter returns a limiter of r requests a second with the burst b; nil
// (no limit) when r is negative.
func newLimiter(r float64, b, maxKeys int) *limiter {
	if r < 0 {
		return nil
	}
	full := time.Duration(math.Ceil(float64(b) / r * float64(time.Second)))
	return &limiter{limit: rate.Limit(r), burst: b, max: maxKeys, full: full, buckets: map[string]*bucket{}}
}

// allow takes a token of key's bucket at now. When there is none it returns
// false and how long until there is.
func (l *limiter) allow(key string, now time.Time) (bool, time.Duration) {
	if l == nil {
		return true, 0
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	b := l.buckets[key]
	if b == nil {
		if len(l.buckets) >= l.max {
			l.evict(now)
		}
		b = &bucket{lim: rate.NewLimiter(l.limit, l.burst)}
		l.buckets[key] = b
	}
	b.seen = now
	if b.lim.AllowN(now, 1) {
		return true, 0
	}
	need := 1 - b.lim.TokensAt(now)
	return false, time.Duration(math.Ceil(need / float64(l.limit) * float64(time.Second)))
}

// evict makes room: it drops the buckets that have refilled, then, if the
// map is still over three quarters full, the least recently used until it
// is not. l.mu is held.
func (l *limiter) evict(now time.Time) {
	for k, b := range l.buckets {
		if now.Sub(b.seen) >= l.full {
			delete(l.buckets, k)
		}
	}
	keep := l.max * 3 / 4
	if len(l.buckets) <= keep {
		return
	}
	keys := make([]string, 0, len(l.buckets))
	for k := range l.buckets {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b string) int { return l.buckets[a].seen.Compare(l.buckets[b].seen) })
	for _, k := range keys[:len(keys)-keep] {
		delete(l.buckets, k)
	}
}

// retryAfter renders a wait as the seconds of a Retry-After header, at
// least 1.
func retryAfter(d time.Duration) int {
	return max(1, int(math.Ceil(d.Seconds())))
}
