package memory

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
	"unicode/utf8"
)

// maxFileBytes bounds what is read of a memory file: a file edited by
// hand into something huge is read truncated, with a warning, rather than
// blowing up the prompt.
const maxFileBytes = 64 << 10

// The errors of reading a memory file.
var (
	errOutside    = errors.New("a symbolic link takes it outside its directory: not read (copy the file in instead)")
	errNotRegular = errors.New("not a regular file: not read")
)

// readFile reads the file name of dir: at most maxFileBytes, cut at a line
// end (truncated says so), invalid UTF-8 replaced. A symbolic link is
// followed only when it stays inside dir. exists is false, with no error,
// when there is no such file.
func readFile(dir, name string) (text string, exists, truncated bool, err error) {
	p := filepath.Join(dir, name)
	f, err := openNoFollow(p)
	if errors.Is(err, errLink) {
		f, err = openLink(dir, p)
	}
	if errors.Is(err, fs.ErrNotExist) {
		return "", false, false, nil
	}
	if err != nil {
		return "", false, false, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return "", true, false, err
	}
	if !fi.Mode().IsRegular() {
		return "", true, false, errNotRegular
	}
	data, err := io.ReadAll(io.LimitReader(f, maxFileBytes+1))
	if err != nil {
		return "", true, false, err
	}
	if len(data) > maxFileBytes {
		data, truncated = data[:maxFileBytes], true
		if i := strings.LastIndexByte(string(data), '\n'); i > 0 {
			data = data[:i+1]
		}
	}
	s := string(data)
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	return s, true, truncated, nil
}

// openLink opens the symbolic link p when it resolves inside dir.
func openLink(dir, p string) (*os.File, error) {
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		return nil, err
	}
	if !within(real, realPath(dir)) {
		return nil, errOutside
	}
	return openNoFollow(real)
}

// realPath is p with symbolic links resolved, or cleaned when it cannot
// be.
func realPath(p string) string {
	if abs, err := filepath.Abs(p); err == nil {
		p = abs
	}
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return filepath.Clean(p)
}

// within reports whether path p lies inside (or is) dir.
func within(p, dir string) bool {
	return p == dir || strings.HasPrefix(p, strings.TrimSuffix(dir, string(filepath.Separator))+string(filepath.Separator))
}

// confined checks that dir, where it exists, does not lead out of root
// through a symbolic link: a repository cannot point its memory
// directory at the user's files.
func confined(dir, root string) error {
	d := dir
	for {
		if _, err := os.Lstat(d); err == nil {
			break
		}
		parent := filepath.Dir(d)
		if parent == d {
			return nil
		}
		d = parent
	}
	if !within(filepath.Clean(d), filepath.Clean(root)) {
		return nil // nothing of dir exists below root yet
	}
	if !within(realPath(d), realPath(root)) {
		return fmt.Errorf("%s: %w", dir, errOutside)
	}
	return nil
}

// writeFile replaces the file name of dir with data atomically: a
// temporary file in dir, written, synced, renamed over the old one, and
// the directory synced. The file is private to the user (0600). A
// symbolic link in its place is replaced, never followed.
func writeFile(dir, name string, data []byte) (err error) {
	tmp, err := os.CreateTemp(dir, "."+name+".*.tmp")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if err = tmp.Chmod(0o600); err != nil {
		return err
	}
	if _, err = tmp.Write(data); err != nil {
		return err
	}
	if err = tmp.Sync(); err != nil {
		return err
	}
	if err = tmp.Close(); err != nil {
		return err
	}
	if err = os.Rename(tmp.Name(), filepath.Join(dir, name)); err != nil {
		return err
	}
	syncDir(dir)
	return nil
}

// syncDir makes a rename in dir durable; where directories cannot be
// synced it does nothing.
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		d.Close()
	}
}

// lockName is the lock file of a memory directory.
const lockName = ".lock"

// lockDir takes the exclusive lock of dir, waiting for another process's
// to end or ctx to be done; unlock releases it.
func lockDir(ctx context.Context, dir string) (unlock func(), err error) {
	f, err := os.OpenFile(filepath.Join(dir, lockName), os.O_CREATE|os.O_RDWR|oNoFollow, 0o600)
	if err != nil {
		return nil, err
	}
	wait := time.Millisecond
	for {
		ok, err := tryLock(f)
		if err != nil {
			f.Close()
			return nil, err
		}
		if ok {
			return func() { unlockFile(f); f.Close() }, nil
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, fmt.Errorf("waiting for the lock of %s: %w", dir, context.Cause(ctx))
		case <-time.After(wait):
		}
		wait = min(2*wait, 50*time.Millisecond)
	}
}
