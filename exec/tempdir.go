package exec

import (
	"fmt"
	"os"
	"path/filepath"
)

// privateTemp is the temporary directory of a command whose Sandbox has
// no TempDir: made by bubblewrap in the command's private /tmp (a tmpfs of
// its own, gone with the command), so nothing is created, bound or removed
// on the host (issue 30: a directory created and removed on the host's
// disk for every command of a server's runs).
const privateTemp = "/tmp/rein-tmp"

// tempDir returns the command's temporary directory: Sandbox.TempDir, the
// session's, made (mode 0700) if missing — before the first command, and
// again should a command remove it — with its links resolved; when
// TempDir is "", privateTemp, which only the sandbox has.
func (s *Sandbox) tempDir(res *resolver) (string, error) {
	if s.TempDir == "" {
		return privateTemp, nil
	}
	if err := os.MkdirAll(s.TempDir, 0o700); err != nil {
		return "", fmt.Errorf("the session's temporary directory %s: %w", s.TempDir, err)
	}
	return res.realDir(s.TempDir)
}

// tempArgs are bubblewrap's options that give the command tmp: the
// session's bound writable at its own path, or privateTemp made in the
// private /tmp (mode 0700). They come after the tmpfs on /tmp.
func (s *Sandbox) tempArgs(tmp string) []string {
	if s.TempDir == "" {
		return []string{"--perms", "0700", "--dir", tmp}
	}
	return []string{"--bind", tmp, tmp}
}

// tempEnv points every variable programs read for a temporary directory at
// dir: TMPDIR, TMP and TEMP, Go's GOTMPDIR (go build's work directories)
// and zsh's TMPPREFIX (here-documents, which ignore TMPDIR).
func tempEnv(dir string) []string {
	return []string{"TMPDIR=" + dir, "TMP=" + dir, "TEMP=" + dir, "GOTMPDIR=" + dir,
		"TMPPREFIX=" + filepath.Join(dir, "zsh")}
}
