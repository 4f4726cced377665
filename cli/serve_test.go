package cli

import (
	"strings"
	"testing"
)

// SPEC API-8: rein serve refuses, before it opens anything, browser
// allow-list entries that would let any web page drive it, and stream caps
// that would refuse every stream; each error names the flag and what to
// write instead.
func TestServeBrowserFlagsRefused(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"--allowed-origin '*'", []string{"--allowed-origin", "*"}, "--allowed-origin: origin \"*\": a wildcard"},
		{"--allowed-origin null", []string{"--allowed-origin", "null"}, "names no one"},
		{"--allowed-origin with a path", []string{"--allowed-origin", "https://app.example.com/x"}, "scheme://host[:port]"},
		{"--allowed-host wildcard", []string{"--allowed-host", "*.example.com"}, "--allowed-host: host \"*.example.com\": wildcards"},
		{"--allowed-host as a URL", []string{"--allowed-host", "https://rein.example.com"}, "not a URL"},
		{"--cors-credentials without an origin", []string{"--cors-credentials"}, "--cors-credentials needs --allowed-origin"},
		{"--max-streams-per-caller 0", []string{"--max-streams-per-caller", "0"}, "at least 1"},
		{"--max-streams -1", []string{"--max-streams", "-1"}, "at least 1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			te := newTestEnv(t)
			args := append([]string{"serve", "--addr", "127.0.0.1:0", "--root", te.ws, "--data-dir", t.TempDir()}, tc.args...)
			_, stderr := te.mustRun(ExitUsage, args...)
			if !strings.Contains(stderr, tc.want) {
				t.Errorf("stderr %q does not say %q", stderr, tc.want)
			}
		})
	}
}
