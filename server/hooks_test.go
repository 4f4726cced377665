package server

import "time"

// Limiter exposes the rate limiter to the tests of package server_test.
type Limiter struct{ l *limiter }

// NewLimiter returns a limiter of r requests a second, burst b, tracking at
// most maxKeys keys.
func NewLimiter(r float64, b, maxKeys int) Limiter { return Limiter{newLimiter(r, b, maxKeys)} }

// Allow takes a token of key's bucket at now.
func (l Limiter) Allow(key string, now time.Time) (bool, time.Duration) { return l.l.allow(key, now) }

// Size returns how many keys are tracked.
func (l Limiter) Size() int {
	l.l.mu.Lock()
	defer l.l.mu.Unlock()
	return len(l.l.buckets)
}
