package cli

import (
	"log/slog"

	"github.com/reinhq/rein/gateway"
	"github.com/reinhq/rein/runner"
	"github.com/reinhq/rein/server"
)

// The runner's service is the runtime of both fronts that start runs.
var (
	_ server.Runtime  = (*runner.Service)(nil)
	_ gateway.Runtime = (*runner.Service)(nil)
)

// serveTenancy is how the process confines its runs' tools (SPEC API-9):
// every caller of a server with authentication, and every caller of a
// worker (which cannot tell), is another person than the operator; no tool
// reaches the data directory, the roots beyond a run's workspace, or the
// file holding the tokens' secret (under /etc, say, which runs see). It
// logs how commands will run, loudly when unconfined, and returns that
// for /ready ("" for an API process, which runs none).
func serveTenancy(o *serveOptions, auth server.Auth, dataDir string, roots []string, logger *slog.Logger) (*runner.Tenancy, string) {
	t := &runner.Tenancy{RemoteCallers: o.mode == modeWorker || auth.Configured(), AllowUnconfined: o.allowUnconfined,
		Hidden: append([]string{dataDir}, roots...)}
	if o.jwtSecretFile != "" {
		t.Hidden = append(t.Hidden, o.jwtSecretFile)
	}
	if o.mode == modeAPI {
		return t, ""
	}
	commands, why := t.Commands()
	switch commands {
	case runner.CommandsConfined:
		logger.Info("commands run confined: each run's tools see its workspace and the system's directories only")
	case runner.CommandsRefused:
		logger.Warn("commands are refused: no sandbox can confine what they read here; install bubblewrap and allow user namespaces, "+
			"or accept unconfined commands with --allow-unconfined-commands", "reason", why.Error())
	case runner.CommandsUnconfined:
		logger.Warn("commands run UNCONFINED (--allow-unconfined-commands): callers' commands can read whatever this process's user can, "+
			"the data directory and other workspaces included", "reason", why.Error())
	default:
		logger.Warn("commands run unconfined: no sandbox can confine reads here; only the operator (loopback, no authentication) calls", "reason", why.Error())
	}
	return t, commands
}
