package cli

import (
	"bytes"
	"log/slog"
	"slices"
	"strings"
	"testing"

	"github.com/reinhq/rein/exec"
	"github.com/reinhq/rein/runner"
	"github.com/reinhq/rein/server"
)

// API-9: whose callers are remote, what no tool reaches, and what /ready
// and the log say about commands, by process mode and authentication.
func TestServeTenancy_API9(t *testing.T) {
	confined := (&exec.Sandbox{}).Available() == nil
	jwt := server.Auth{HS256Secret: bytes.Repeat([]byte("k"), 32)}
	for _, c := range []struct {
		name       string
		o          serveOptions
		auth       server.Auth
		remote     bool
		commands   string // when no sandbox confines reads
		unconfined bool
	}{
		{"loopback, no authentication", serveOptions{mode: modeAll}, server.Auth{}, false, runner.CommandsOperator, false},
		{"JWT callers", serveOptions{mode: modeAll, jwtSecretFile: "/etc/rein/jwt.key"}, jwt, true, runner.CommandsRefused, false},
		{"JWT callers, unconfined allowed", serveOptions{mode: modeAll, allowUnconfined: true}, jwt, true, runner.CommandsUnconfined, true},
		{"a worker cannot tell its callers", serveOptions{mode: modeWorker}, server.Auth{}, true, runner.CommandsRefused, false},
		{"an API process runs no commands", serveOptions{mode: modeAPI}, jwt, true, "", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			var log bytes.Buffer
			ten, commands := serveTenancy(&c.o, c.auth, "/srv/rein-data", []string{"/srv/a", "/srv/b"}, slog.New(slog.NewTextHandler(&log, nil)))
			if ten.RemoteCallers != c.remote || ten.AllowUnconfined != c.unconfined {
				t.Errorf("tenancy %+v", ten)
			}
			hidden := []string{"/srv/rein-data", "/srv/a", "/srv/b"}
			if c.o.jwtSecretFile != "" {
				hidden = append(hidden, c.o.jwtSecretFile)
			}
			if !slices.Equal(ten.Hidden, hidden) {
				t.Errorf("hidden %v", ten.Hidden)
			}
			want := c.commands
			if confined && want != "" {
				want = runner.CommandsConfined
			}
			if commands != want {
				t.Errorf("commands %q, want %q", commands, want)
			}
			if want == runner.CommandsRefused && !strings.Contains(log.String(), "--allow-unconfined-commands") {
				t.Errorf("the log does not say how to allow commands:\n%s", log.String())
			}
		})
	}
}
