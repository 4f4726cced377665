package server

import (
	"strings"
	"testing"
)

// TestTraceParent_OBS3: a valid W3C traceparent is kept (as version 00),
// anything malformed is dropped.
func TestTraceParent_OBS3(t *testing.T) {
	const ok = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	cases := []struct{ in, want string }{
		{ok, ok},
		{"  " + ok + " ", ok},
		{"01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", ok},
		{"cc-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra", ok},
		{"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00", strings.TrimSuffix(ok, "01") + "00"},
		{"", ""},
		{"ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", ""},          // forbidden version
		{"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra", ""},    // version 00 has four fields
		{"cc-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01extra", ""},     // a later version's extra needs a dash
		{"00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01", ""},          // uppercase
		{"00-00000000000000000000000000000000-00f067aa0ba902b7-01", ""},          // zero trace id
		{"00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01", ""},          // zero parent id
		{"00-4bf92f3577b34da6a3ce929d0e0e473-600f067aa0ba902b7-01", ""},          // misplaced dash
		{"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-0g", ""},          // bad flags
		{"00_4bf92f3577b34da6a3ce929d0e0e4736_00f067aa0ba902b7_01", ""},          // wrong separators
		{"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7", ""},             // short
		{"0-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01\n", ""},         // short version
		{"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01" + "\x00", ""}, // trailing NUL
		{strings.Repeat("a", 600), ""},
	}
	for _, c := range cases {
		if got := traceParent(c.in); got != c.want {
			t.Errorf("traceParent(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// FuzzTraceParent: the parser never panics, and what it keeps is a
// well-formed version-00 value it keeps unchanged.
func FuzzTraceParent(f *testing.F) {
	f.Add("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
	f.Add("cc-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-x")
	f.Add("ff-00000000000000000000000000000000-0000000000000000-00")
	f.Add("")
	f.Fuzz(func(t *testing.T, s string) {
		got := traceParent(s)
		if got == "" {
			return
		}
		if len(got) != 55 || !strings.HasPrefix(got, "00-") || traceParent(got) != got {
			t.Fatalf("traceParent(%q) = %q: not a stable version-00 value", s, got)
		}
	})
}
