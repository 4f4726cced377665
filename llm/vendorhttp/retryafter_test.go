package vendorhttp

import (
	"net/http"
	"testing"
	"time"
)

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"", 0, false},
		{"soon", 0, false},
		{"-1", 0, false},
		{"NaN", 0, false},
		{"0", 0, true},
		{" 3 ", 3 * time.Second, true},
		{"1.5", 1500 * time.Millisecond, true},
		{"999999999999", MaxRetryAfter, true},
		{"1e300", MaxRetryAfter, true},
		{now.Add(30 * time.Second).Format(http.TimeFormat), 30 * time.Second, true},
		{now.Add(-time.Hour).Format(http.TimeFormat), 0, true},
		{now.Add(100 * time.Hour).Format(http.TimeFormat), MaxRetryAfter, true},
	} {
		if d, ok := ParseRetryAfter(c.in, now); d != c.want || ok != c.ok {
			t.Errorf("ParseRetryAfter(%q) = %v, %v; want %v, %v", c.in, d, ok, c.want, c.ok)
		}
	}
}

func FuzzParseRetryAfter(f *testing.F) {
	for _, s := range []string{"3", "1.5", "-0", "Fri, 01 May 2026 12:00:30 GMT", "+Inf", "1e308"} {
		f.Add(s)
	}
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, s string) {
		if d, ok := ParseRetryAfter(s, now); d < 0 || d > MaxRetryAfter || (!ok && d != 0) {
			t.Errorf("ParseRetryAfter(%q) = %v, %v", s, d, ok)
		}
	})
}
