package exec

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"sync/atomic"
)

// tmpSeq numbers the temporary files of writeResolved within a process.
var tmpSeq atomic.Int64

// ErrPathChanged is returned when a directory a file operation had checked
// is not the one it opened: a component of the path was swapped for a
// symbolic link in between (by a command of the same run, say), so the
// operation would have landed somewhere nobody checked.
var ErrPathChanged = errors.New("the path changed while it was being used (a directory swapped for a link)")

// writeResolved writes data to path, which the caller has resolved (no
// symbolic link in it) and checked, atomically: a temporary file in the
// same directory, synced and renamed over path. It follows no link: the
// directory is opened once and must be the one path names (its real path,
// as the kernel reports it for the open directory, equals path's
// directory), and the temporary file and the rename are made relative to
// that open directory, so a link swapped into the path after the check
// cannot send the write elsewhere (ErrPathChanged). A link that has
// appeared at path itself is replaced, never written through. An existing
// file keeps its mode (perm applies to new files).
func writeResolved(path string, data []byte, perm fs.FileMode) error {
	dir, base := filepath.Dir(path), filepath.Base(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	d, err := openCheckedDir(dir)
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	defer d.Close()
	if fi, err := d.Lstat(base); err == nil {
		if fi.IsDir() {
			return fmt.Errorf("write %s: is a directory", path)
		}
		if fi.Mode().IsRegular() {
			perm = fi.Mode().Perm()
		}
	}
	if perm == 0 {
		perm = 0o644
	}
	tmp := "." + base + ".tmp-" + strconv.FormatUint(uint64(os.Getpid()), 36) + "-" + strconv.FormatInt(tmpSeq.Add(1), 36)
	f, err := d.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Chmod(perm)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = d.Rename(tmp, base)
	}
	if err != nil {
		_ = d.Remove(tmp)
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// openCheckedDir opens the directory dir (clean and absolute, without
// links) as an [os.Root] and checks that the directory opened is the one
// dir names: its real path, read back from the open descriptor, equals
// dir. Where the system cannot say (no /proc), the open directory must be
// the same file as dir's.
func openCheckedDir(dir string) (*os.Root, error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if real, ok := OpenedPath(f); ok {
		if real != dir {
			return nil, fmt.Errorf("%w: %s is now %s", ErrPathChanged, dir, real)
		}
		return os.OpenRoot(FDPath(f))
	}
	// No /proc: the directory opened must be the one at dir, and the
	// root is opened again by path (a narrower window than none).
	r, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	a, aerr := f.Stat()
	b, berr := r.Stat(".")
	if aerr != nil || berr != nil || !os.SameFile(a, b) {
		r.Close()
		return nil, fmt.Errorf("%w: %s", ErrPathChanged, dir)
	}
	return r, nil
}

// FDPath is the path that names f's open file itself (/proc/self/fd/N on
// Linux): opening it reaches the file f has open, whatever has been
// renamed or linked since, so a check of what f is holds for what is
// opened through it.
func FDPath(f *os.File) string {
	return "/proc/self/fd/" + strconv.FormatUint(uint64(f.Fd()), 10)
}

// OpenedPath returns the real path of the file f has open, as the kernel
// reports it; false where it cannot be read (no /proc) or the file is no
// longer at any path.
func OpenedPath(f *os.File) (string, bool) {
	p, err := os.Readlink(FDPath(f))
	if err != nil || !filepath.IsAbs(p) {
		return "", false
	}
	if _, err := os.Lstat(p); err != nil {
		return "", false // "… (deleted)", or gone
	}
	return p, true
}
