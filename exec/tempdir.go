package exec

import (
	"fmt"
	"os"
	"path/filepath"
)

// tempDir returns the command's temporary directory: Sandbox.TempDir, the
// session's, made (mode 0700) if missing — before the first command, and
// again should a command remove it; when TempDir is "", a fresh one for
// this command alone, which done removes.
func (s *Sandbox) tempDir(res *resolver) (dir string, done func(), err error) {
	done = func() {}
	dir = s.TempDir
	if dir == "" {
		d, err := os.MkdirTemp("", "rein-tmp-")
		if err != nil {
			return "", done, fmt.Errorf("a temporary directory for the command: %w", err)
		}
		dir, done = d, func() { os.RemoveAll(d) }
	} else if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", done, fmt.Errorf("the session's temporary directory %s: %w", dir, err)
	}
	real, err := res.realDir(dir)
	if err != nil {
		done()
		return "", func() {}, err
	}
	return real, done, nil
}

// tempEnv points every variable programs read for a temporary directory at
// dir: TMPDIR, TMP and TEMP, Go's GOTMPDIR (go build's work directories)
// and zsh's TMPPREFIX (here-documents, which ignore TMPDIR).
func tempEnv(dir string) []string {
	return []string{"TMPDIR=" + dir, "TMP=" + dir, "TEMP=" + dir, "GOTMPDIR=" + dir,
		"TMPPREFIX=" + filepath.Join(dir, "zsh")}
}
