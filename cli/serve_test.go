package cli

import (
	"strings"
	"testing"
)

// SPEC API-8: rein serve refuses, before it opens anything, browser
// allow-list entries that would let any web page drive it, stream caps
// that would refuse every stream, and a PostgreSQL pool size (flag or
// environment) that is not a positive number; each error names the flag
// and what to write instead.
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
		{"--database-max-conns -1", []string{"--database-max-conns", "-1"}, "--database-max-conns -1: want a whole number of connections, at least 1"},
		{"REIN_DATABASE_MAX_CONNS not a number", []string{"env:many"}, `REIN_DATABASE_MAX_CONNS="many": want a whole number`},
		{"REIN_DATABASE_MAX_CONNS zero", []string{"env:0"}, `REIN_DATABASE_MAX_CONNS="0": want`},
		{"REIN_DATABASE_MAX_CONNS negative", []string{"env:-3"}, `REIN_DATABASE_MAX_CONNS="-3": want`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			te := newTestEnv(t)
			if v, ok := strings.CutPrefix(tc.args[0], "env:"); ok {
				te.env["REIN_DATABASE_MAX_CONNS"], tc.args = v, nil
			}
			args := append([]string{"serve", "--addr", "127.0.0.1:0", "--root", te.ws, "--data-dir", t.TempDir()}, tc.args...)
			_, stderr := te.mustRun(ExitUsage, args...)
			if !strings.Contains(stderr, tc.want) {
				t.Errorf("stderr %q does not say %q", stderr, tc.want)
			}
		})
	}
}
