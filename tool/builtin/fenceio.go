package builtin

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/reinhq/rein/exec"
)

// readOpened reads path for a workspace's fence without a window between
// the check and the read (SPEC API-9): a command of the same caller (a
// second session, a parallel sub-agent) can swap a link in the workspace
// between the fence's look at a path and the backend's open of it, and
// send the read to the data directory or another workspace. So the file is
// opened first, the fence judges the real path of what was opened, and
// the backend then reads that open file (through its /proc/self/fd name,
// so its own checks, such as the sandbox's hidden files, see the real path
// too).
func (fb fencedBackend) readOpened(ctx context.Context, path string) ([]byte, error) {
	f, err := openRegular(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	real, ok := exec.OpenedPath(f)
	if !ok {
		// No /proc (not Linux): the backend reads by path, after the
		// fence's look at it.
		return fb.Backend.ReadFile(ctx, path)
	}
	if filepath.Clean(real) != real || !filepath.IsAbs(real) {
		return nil, fmt.Errorf("%w: %s opened as %q, not a clean absolute path", ErrFenced, path, real)
	}
	if err := fb.f.Check(real); err != nil {
		return nil, fmt.Errorf("%w (it was swapped for a link after the check: %s is %s now)", err, path, real)
	}
	fdp := exec.FDPath(f)
	data, err := fb.Backend.ReadFile(ctx, fdp)
	if err != nil {
		return nil, renamedError{msg: strings.ReplaceAll(err.Error(), fdp, path), err: err}
	}
	return data, nil
}

// opened reports whether the fence lets through the file f has open,
// judged by its real path as the kernel reports it (false when it cannot
// say).
func (f Fence) opened(file *os.File) bool {
	real, ok := exec.OpenedPath(file)
	return !ok || f.Check(real) == nil // no /proc: the walk's look stands
}

// openRegular opens path for reading without blocking and refuses what is
// not a regular file: opening a FIFO a command made in the workspace
// would wait for a writer for ever, holding the run (and its slot of the
// server's --max-concurrent) past any cancel.
func openRegular(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err == nil && !fi.Mode().IsRegular() {
		err = fmt.Errorf("%s is not a regular file (%s): only files can be read; a FIFO or a device would block or never end", path, fi.Mode().Type())
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// readDir lists the directory abs sorted by name, as os.ReadDir does;
// behind a workspace's fence (a Root), only once the directory it opened
// is judged by its real path, so a link swapped in after the fence or the
// walk looked lists nothing of what lies beyond.
func (f Fence) readDir(abs string) ([]fs.DirEntry, error) {
	if f.Root == "" {
		return os.ReadDir(abs)
	}
	d, err := os.Open(abs)
	if err != nil {
		return nil, err
	}
	defer d.Close()
	real, ok := exec.OpenedPath(d)
	if !ok {
		return os.ReadDir(abs) // no /proc: by path, after the fence's look
	}
	if err := f.Check(real); err != nil {
		return nil, fmt.Errorf("%w (it was swapped for a link after the check: %s is %s now)", err, abs, real)
	}
	entries, err := d.ReadDir(-1)
	slices.SortFunc(entries, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	return entries, err
}

// renamedError is a backend's error with the descriptor path it was given
// replaced by the path the tool was asked for.
type renamedError struct {
	msg string
	err error
}

func (e renamedError) Error() string { return e.msg }
func (e renamedError) Unwrap() error { return e.err }
