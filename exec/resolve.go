package exec

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"syscall"
)

// resolver resolves symbolic links as filepath.EvalSymlinks does, for the
// preparation of one sandboxed command: it remembers each existing path it
// looked at (its Lstat, and where a link points), so the dozens of paths
// the preparation resolves — the workspace and the writable directories
// several times, the system directories, the hidden paths, the protected
// files of the home directory, most of them under the same few
// directories — cost one lstat(2) per distinct component instead of one
// per component of every call (issue 30: ~800 stat calls a run in the
// server, EvalSymlinks 9 % of its CPU).
//
// What it remembers is what the same calls one after another would have
// seen, as of the moment each component was first looked at: a command
// has not run yet, and a path changed by someone else meanwhile could
// have changed just after an unremembered look as well. Only what exists
// is remembered: a missing entry is looked up again each time, so the
// placeholders the shield creates are seen at once. It is not safe for
// concurrent use and lives for one preparation; the check after the
// command looks at the file system afresh. A nil *resolver remembers
// nothing.
type resolver struct {
	lstats map[string]fs.FileInfo
	links  map[string]string
}

func newResolver() *resolver {
	return &resolver{lstats: map[string]fs.FileInfo{}, links: map[string]string{}}
}

// lstat is os.Lstat, remembered when it succeeds.
func (r *resolver) lstat(p string) (fs.FileInfo, error) {
	if r == nil {
		return os.Lstat(p)
	}
	if fi, ok := r.lstats[p]; ok {
		return fi, nil
	}
	fi, err := os.Lstat(p)
	if err == nil {
		r.lstats[p] = fi
	}
	return fi, err
}

// stat is os.Stat: the path resolved, then its entry's Lstat.
func (r *resolver) stat(p string) (fs.FileInfo, error) {
	if r == nil {
		return os.Stat(p)
	}
	real, err := r.evalSymlinks(p)
	if err != nil {
		return nil, err
	}
	return r.lstat(real)
}

// readlink is os.Readlink, remembered when it succeeds.
func (r *resolver) readlink(p string) (string, error) {
	if r == nil {
		return os.Readlink(p)
	}
	if t, ok := r.links[p]; ok {
		return t, nil
	}
	t, err := os.Readlink(p)
	if err == nil {
		r.links[p] = t
	}
	return t, err
}

// realDir is the absolute form of d with its links resolved.
func (r *resolver) realDir(d string) (string, error) {
	a, err := filepath.Abs(d)
	if err != nil {
		return "", err
	}
	return r.evalSymlinks(a)
}

// evalSymlinks is filepath.EvalSymlinks (its Unix walk, step by step)
// over the remembered lstat and readlink.
func (r *resolver) evalSymlinks(path string) (string, error) {
	if r == nil || runtime.GOOS == "windows" || !filepath.IsAbs(path) {
		return filepath.EvalSymlinks(path)
	}
	const sep = string(filepath.Separator)
	volLen := 1 // the leading separator
	vol := path[:volLen]
	dest := vol
	linksWalked := 0
	for start, end := volLen, volLen; start < len(path); start = end {
		for start < len(path) && os.IsPathSeparator(path[start]) {
			start++
		}
		end = start
		for end < len(path) && !os.IsPathSeparator(path[end]) {
			end++
		}
		switch {
		case end == start:
			continue // the loop ends: no more components
		case path[start:end] == ".":
			continue
		case path[start:end] == "..":
			// Back up to the previous component if there is one.
			var i int
			for i = len(dest) - 1; i >= volLen; i-- {
				if os.IsPathSeparator(dest[i]) {
					break
				}
			}
			if i < volLen || dest[i+1:] == ".." {
				if len(dest) > volLen {
					dest += sep
				}
				dest += ".."
			} else {
				dest = dest[:i]
			}
			continue
		}
		if len(dest) > 0 && !os.IsPathSeparator(dest[len(dest)-1]) {
			dest += sep
		}
		dest += path[start:end]
		fi, err := r.lstat(dest)
		if err != nil {
			return "", err
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			if !fi.Mode().IsDir() && end < len(path) {
				return "", syscall.ENOTDIR
			}
			continue
		}
		linksWalked++
		if linksWalked > 255 {
			return "", errors.New("EvalSymlinks: too many links")
		}
		link, err := r.readlink(dest)
		if err != nil {
			return "", err
		}
		path = link + path[end:]
		if len(link) > 0 && os.IsPathSeparator(link[0]) {
			dest, end = sep, 1 // an absolute link starts again at the root
		} else {
			// A relative link replaces the last component of dest.
			var i int
			for i = len(dest) - 1; i >= volLen; i-- {
				if os.IsPathSeparator(dest[i]) {
					break
				}
			}
			if i < volLen {
				dest = vol
			} else {
				dest = dest[:i]
			}
			end = 0
		}
	}
	return filepath.Clean(dest), nil
}
