package runner

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"

	"github.com/reinhq/rein/exec"
)

// A server's session directory (Config.SessionsDir/<id>: output spills,
// job logs, the plan file, the hooks' transcript) and the sandbox's cache
// directory are made by the first file or command that needs them, not at
// every run's start: a run that runs no command and spills nothing
// creates no directory. Each directory is an inode to allocate, which on a
// busy file system costs more than the rest of a run's set-up (issue 30):
// the cache directory is not inside the session directory but beside the
// sessions (sessionCache), so a run whose command only needs the cache
// makes one directory, not two. The CLI's session directory (no
// Config.Audit) is made at once: its audit files open there.

// sessionCaches is the directory, in the sessions directory, holding the
// sessions' cache directories. A session id never starts with a dot, so
// no session's directory is named so.
const sessionCaches = ".caches"

// sessionCache is the cache directory of the session whose directory is
// sessDir (SessionsDir/<id>): SessionsDir/.caches/<id>.
func sessionCache(sessDir string) string {
	return filepath.Join(filepath.Dir(sessDir), sessionCaches, filepath.Base(sessDir))
}

// cachedSandbox is a server run's sandbox whose cache directory
// (Sandbox.Cache, bound writable into every command) is made before its
// first command runs.
type cachedSandbox struct {
	*exec.Sandbox
	made atomic.Bool
}

// Run makes the cache directory when it was not yet, then runs cmd.
func (c *cachedSandbox) Run(ctx context.Context, cmd exec.Command) (exec.Output, error) {
	if !c.made.Load() {
		// One mkdir when the session's earlier runs made none; MkdirAll
		// (which checks what exists is a directory) otherwise.
		if err := os.Mkdir(c.Cache, 0o700); err != nil {
			if err := os.MkdirAll(c.Cache, 0o700); err != nil {
				return exec.Output{}, fmt.Errorf("sandbox: the session's cache directory %s: %w", c.Cache, err)
			}
		}
		c.made.Store(true)
	}
	return c.Sandbox.Run(ctx, cmd)
}
