package exec

import (
	"fmt"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strings"
	"sync"
)

// pinWorkspace opens the confined sandbox's workspace for the command's
// bind (SPEC API-9). The workspace is given as the run found it, without
// links; a caller who also opened its parent directory can swap it for a
// link to another caller's directory while the run goes on, and a bind by
// path would mount that one. So the workspace must still resolve to itself,
// and the directory opened must be it (its real path read back from the
// descriptor); bubblewrap then binds the open directory (--bind-fd) where
// it supports that.
func (s *Sandbox) pinWorkspace(res *resolver) (*os.File, error) {
	ws := filepath.Clean(s.Workspace)
	if real, err := res.realDir(ws); err != nil {
		return nil, fmt.Errorf("workspace %s: %w", ws, err)
	} else if real != ws {
		return nil, fmt.Errorf("%w: the workspace %s is now a link to %s, swapped in during the run; no command runs there: open the workspace again",
			ErrPathChanged, ws, real)
	}
	f, err := os.Open(ws)
	if err != nil {
		return nil, fmt.Errorf("workspace %s: %w", ws, err)
	}
	if real, ok := OpenedPath(f); ok && real != ws {
		f.Close()
		return nil, fmt.Errorf("%w: the workspace %s is now %s", ErrPathChanged, ws, real)
	}
	return f, nil
}

// bindPinned rewrites the workspace's "--bind ws ws" in args to bind the
// open directory on descriptor fd instead, when bubblewrap can.
func bindPinned(args []string, ws string, fd int, bwrap string) []string {
	if !bindFDSupported(bwrap) {
		return args
	}
	for i := 0; i+2 < len(args); i++ {
		if args[i] == "--bind" && args[i+1] == ws && args[i+2] == ws {
			out := append(args[:i:i], "--bind-fd", fmt.Sprint(fd), ws)
			return append(out, args[i+3:]...)
		}
	}
	return args
}

var (
	bindFDOnce sync.Once
	bindFDOK   bool
)

// bindFDSupported reports whether bubblewrap has --bind-fd (0.5 and
// later); older ones bind the workspace by path, right after it was
// checked.
func bindFDSupported(bwrap string) bool {
	bindFDOnce.Do(func() {
		out, err := osexec.Command(bwrap, "--help").CombinedOutput()
		bindFDOK = err == nil && strings.Contains(string(out), "--bind-fd")
	})
	return bindFDOK
}
