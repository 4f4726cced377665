package runner

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/reinhq/rein/exec"
	"github.com/reinhq/rein/tool/builtin"
)

// Tenancy is how a server confines its runs' tools (SPEC API-9): a run's
// tools see its workspace and the system's read-only directories, nothing
// of the server's data, of other workspaces or of the operator's home.
// Commands run in a bubblewrap sandbox built from an allow-list
// (exec.Sandbox.ConfineReads), whatever the sandbox setting says; the file
// and search tools refuse every path outside the workspace
// (builtin.Fence), whatever is approved.
type Tenancy struct {
	// RemoteCallers says the callers are other people than the operator:
	// the server authenticates them (JWT, trusted proxy), or, for a worker,
	// cannot tell. Without a sandbox that confines reads their commands
	// (bash, actions) are refused unless AllowUnconfined; the operator's
	// own (a loopback server without authentication) run unconfined with
	// a note.
	RemoteCallers bool
	// AllowUnconfined lets remote callers' commands run without such a
	// sandbox (rein serve --allow-unconfined-commands): the operator
	// accepts that they read what the server's user can.
	AllowUnconfined bool
	// Hidden are files and directories no tool reaches even when a
	// workspace or a system directory holds them: the server's data
	// directory, the roots (but the one a run's workspace lies in), the
	// tokens' secret.
	Hidden []string
}

// Tenancy's answers to "how do commands run here", for /ready and the
// start-up log.
const (
	CommandsConfined   = "confined"            // in a sandbox that confines reads
	CommandsRefused    = "refused"             // remote callers' commands refused
	CommandsUnconfined = "unconfined"          // remote callers' commands run unconfined: the operator allowed it
	CommandsOperator   = "unconfined-loopback" // only the operator calls, unconfined
)

// Commands reports how the runs' commands will run on this host, and, when
// not confined, why not.
func (t Tenancy) Commands() (string, error) {
	err := (&exec.Sandbox{}).Available()
	switch {
	case err == nil:
		return CommandsConfined, nil
	case !t.RemoteCallers:
		return CommandsOperator, err
	case t.AllowUnconfined:
		return CommandsUnconfined, err
	}
	return CommandsRefused, err
}

// fence is what the file tools of a run in workspace root may reach.
func (t *Tenancy) fence(root string) builtin.Fence {
	if t == nil {
		return builtin.Fence{}
	}
	return builtin.Fence{Root: root, Hidden: t.Hidden}
}

// tenantBackend is where a server's run executes commands: the confined
// sandbox when bubblewrap runs here; else, for remote callers, a backend
// refusing every command unless the operator allowed them unconfined;
// else the host, said loudly.
func (s *Setup) tenantBackend(local exec.Local, sessDir string) (exec.Backend, error) {
	t := s.cfg.Tenancy
	cache := ""
	if sessDir != "" {
		cache = sessionCache(sessDir)
	}
	sb := &exec.Sandbox{Workspace: s.ws.Root, Local: local, Landlock: exec.SelfHelper(), ConfineReads: true,
		Cache: cache, GoModCache: goModCache(s.cfg.Getenv), Hide: s.sandboxHide(),
		HidePaths: append(homeCredentials(s.cfg.Loaded.Paths.Home), t.Hidden...)}
	err := sb.Available()
	switch {
	case err == nil && cache != "":
		return &cachedSandbox{Sandbox: sb}, nil
	case err == nil:
		return sb, nil
	case t.RemoteCallers && !t.AllowUnconfined:
		return &refusing{Local: local, why: err}, nil
	case t.RemoteCallers:
		s.note("sandbox: bubblewrap cannot run here (%v); the operator allowed commands unconfined (--allow-unconfined-commands): "+
			"they can read whatever the server's user can", err)
	default:
		s.note("sandbox: bubblewrap cannot run here (%v); commands run on the host, unconfined, as the operator's own. "+
			"Install bubblewrap (apt-get install bubblewrap)", err)
	}
	if exec.LandlockABI() > 0 {
		return &exec.Confined{Workspace: s.ws.Root, Local: local}, nil
	}
	return &local, nil
}

// goModCache is the host's Go module cache, shown read-only to confined
// commands so a module's dependencies build offline: GOMODCACHE, else
// GOPATH's first entry's pkg/mod, else ~/go/pkg/mod; "" when none exists.
// It holds downloaded modules' sources; an operator whose cache holds
// private modules sets GOMODCACHE to another directory.
func goModCache(getenv func(string) string) string {
	dir := getenv("GOMODCACHE")
	if dir == "" {
		if gp := filepath.SplitList(getenv("GOPATH")); len(gp) > 0 && gp[0] != "" {
			dir = filepath.Join(gp[0], "pkg", "mod")
		} else if home := getenv("HOME"); home != "" {
			dir = filepath.Join(home, "go", "pkg", "mod")
		}
	}
	if fi, err := os.Stat(dir); dir == "" || err != nil || !fi.IsDir() {
		return ""
	}
	return dir
}

// ErrCommandsRefused is what a refused command's error wraps.
var ErrCommandsRefused = errors.New("this server runs commands only in a sandbox that confines what they read")

// refusing is the backend of a remote caller's run on a host where no
// sandbox can confine reads: every command is refused with what the
// operator can do; the file operations are the host's (the file tools'
// fence bounds them).
type refusing struct {
	exec.Local
	why error
}

// Name implements exec.Backend.
func (r *refusing) Name() string { return "refused" }

// Run implements exec.Backend: it refuses.
func (r *refusing) Run(context.Context, exec.Command) (exec.Output, error) {
	return exec.Output{}, fmt.Errorf("%w, and none can run here (%v): no command runs for remote callers. "+
		"The operator can install bubblewrap (apt-get install bubblewrap) and allow unprivileged user namespaces, "+
		"or restart rein serve with --allow-unconfined-commands to accept unconfined commands", ErrCommandsRefused, r.why)
}
