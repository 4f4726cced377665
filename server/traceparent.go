package server

import "strings"

// traceParent checks a W3C traceparent header (Trace Context, level 1) and
// returns it as a version-00 value, or "" when it is malformed — a bad
// header is ignored, never an error: the run's trace then starts a new
// one. The format is version-traceid-parentid-flags in lowercase hex: a
// version other than ff (a later version may carry more fields after a
// dash: the first four are read), a trace id of 32 digits and a parent id
// of 16, neither all zeros, and 2 digits of flags.
func traceParent(h string) string {
	h = strings.TrimSpace(h)
	if len(h) < 55 || len(h) > 512 {
		return ""
	}
	version := h[:2]
	if !lowerHex(version) || version == "ff" {
		return ""
	}
	if version == "00" && len(h) != 55 || version != "00" && len(h) > 55 && h[55] != '-' {
		return ""
	}
	if h[2] != '-' || h[35] != '-' || h[52] != '-' {
		return ""
	}
	trace, parent, flags := h[3:35], h[36:52], h[53:55]
	if !lowerHex(trace) || !lowerHex(parent) || !lowerHex(flags) || allZero(trace) || allZero(parent) {
		return ""
	}
	return "00-" + trace + "-" + parent + "-" + flags
}

// lowerHex reports whether s is digits and a-f only.
func lowerHex(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

func allZero(s string) bool { return strings.Trim(s, "0") == "" }
