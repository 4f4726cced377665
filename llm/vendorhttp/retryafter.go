package vendorhttp

import (
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// MaxRetryAfter bounds a Retry-After wait: a longer one reads as
// MaxRetryAfter.
const MaxRetryAfter = 24 * time.Hour

// ParseRetryAfter reads the Retry-After header of an HTTP reply (RFC 9110,
// section 10.2.3): delay-seconds, decimals accepted as some vendors send
// them, or an HTTP-date, as a wait from now, at most MaxRetryAfter. ok is
// false when v is empty, negative or neither form; a date in the past is a
// wait of 0. It is the one parser of the vendors' replies (FromHTTP), rein's
// server's (client) and an OTLP collector's (telemetry).
func ParseRetryAfter(v string, now time.Time) (d time.Duration, ok bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil {
		if s < 0 || math.IsNaN(s) {
			return 0, false
		}
		return time.Duration(min(s, MaxRetryAfter.Seconds()) * float64(time.Second)), true
	}
	if t, err := http.ParseTime(v); err == nil {
		return min(max(0, t.Sub(now)), MaxRetryAfter), true
	}
	return 0, false
}
