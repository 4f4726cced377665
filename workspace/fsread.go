package workspace

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
)

// The bounds of reading definitions: a cloned repository must not make
// rein read without end.
const (
	maxDefBytes   = 1 << 20 // per file
	maxDirEntries = 1000    // per directory
)

// errOutside is the error of a file a symbolic link takes outside the
// root it must stay in.
var errOutside = errors.New("a symbolic link takes it outside the workspace: not read (a repository must not bring files from elsewhere into the prompt; copy the file in instead)")

// scope is where one layer's files are read from: the real path they
// must resolve inside ("" for anywhere: the user's own files), and the
// problems met.
type scope struct {
	origin Origin
	root   string
	probs  []Problem
	// refuse, when set, names the variables the layer's declarations may
	// not receive: rein's credentials, for a workspace (see [isCredential]).
	refuse func(string) bool
	// t records the paths read (see [Cache]); nil records nothing.
	t *trace
}

// newScope returns the scope of a layer whose files must stay inside
// root ("" for anywhere).
func newScope(origin Origin, root string, t *trace) *scope {
	s := &scope{origin: origin, t: t}
	t.lookup(root)
	if root != "" {
		s.root = realPath(root)
	}
	return s
}

// realPath is p with symbolic links resolved, or p cleaned when it
// cannot be.
func realPath(p string) string {
	if abs, err := filepath.Abs(p); err == nil {
		p = abs
	}
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return filepath.Clean(p)
}

// problem records what is wrong at path:line.
func (s *scope) problem(path string, line int, format string, args ...any) {
	s.probs = append(s.probs, Problem{Path: path, Line: line, Msg: fmt.Sprintf(format, args...)})
}

// add records problems met elsewhere.
func (s *scope) add(ps []Problem) { s.probs = append(s.probs, ps...) }

// within reports whether real lies inside root.
func within(real, root string) bool {
	if root == "" {
		return true
	}
	return real == root || strings.HasPrefix(real, root+string(filepath.Separator)) ||
		(strings.HasSuffix(root, string(filepath.Separator)) && strings.HasPrefix(real, root))
}

// resolve returns the real path of the entry name of a directory whose
// real path is dirReal; link says whether the entry is a symbolic link.
// It fails for an entry that resolves outside the root.
func (s *scope) resolve(dirReal, name string, link bool) (string, error) {
	p := filepath.Join(dirReal, name)
	s.t.add(p)
	if !link {
		return p, nil
	}
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		return "", err
	}
	if !within(real, s.root) {
		return "", errOutside
	}
	return real, nil
}

// dir lists the directory at path, sorted by name and bounded; ok is
// false when it is missing or cannot be read (a problem says why, but for
// a missing one). real is its path with links resolved.
func (s *scope) dir(path string) (real string, entries []fs.DirEntry, ok bool) {
	if path == "" {
		return "", nil, false
	}
	s.t.add(path)
	real, err := filepath.EvalSymlinks(path)
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil, false
	}
	if err != nil {
		s.problem(path, 0, "cannot read: %v", err)
		return "", nil, false
	}
	if !within(real, s.root) {
		s.problem(path, 0, "%v", errOutside)
		return "", nil, false
	}
	if fi, err := os.Stat(real); err != nil || !fi.IsDir() {
		s.problem(path, 0, "not a directory: remove it or make it a directory")
		return "", nil, false
	}
	f, err := os.Open(real)
	if err != nil {
		s.problem(path, 0, "cannot read: %v", err)
		return "", nil, false
	}
	defer f.Close()
	entries, err = f.ReadDir(maxDirEntries + 1)
	if err != nil && !errors.Is(err, io.EOF) {
		s.problem(path, 0, "cannot read: %v", err)
	}
	slices.SortFunc(entries, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	if len(entries) > maxDirEntries {
		entries = entries[:maxDirEntries]
		s.problem(path, 0, "more than %d entries: only %d are read; split the directory or remove what is not used", maxDirEntries, maxDirEntries)
	}
	return real, entries, true
}

// read returns the content of the file at real (shown as path), bounded;
// ok is false with a problem when it cannot be read.
func (s *scope) read(path, real string) ([]byte, bool) {
	s.t.add(real)
	data, err := openBounded(real)
	if err != nil {
		s.problem(path, 0, "%v", err)
		return nil, false
	}
	return data, true
}

// readEntry reads the file name of a directory whose real path is
// dirReal, shown as path; link says whether the entry is a symbolic link,
// followed only inside the root. ok is false with a problem when it
// cannot be read.
func (s *scope) readEntry(dirReal, path, name string, link bool) ([]byte, bool) {
	rp, err := s.resolve(dirReal, name, link)
	if err != nil {
		s.problem(path, 0, "%v", err)
		return nil, false
	}
	return s.read(path, rp)
}

// The errors of readRegular.
var (
	errLink       = errors.New("a symbolic link")
	errNotRegular = errors.New("not a regular file: not read")
	errTooBig     = fmt.Errorf("larger than %d MiB: not read; keep definitions short and move long material into files they point to", maxDefBytes>>20)
)

// openBounded reads a regular file of at most maxDefBytes.
func openBounded(real string) ([]byte, error) {
	data, err := readRegular(real, false, maxDefBytes)
	if err != nil && !errors.Is(err, errNotRegular) && !errors.Is(err, errTooBig) {
		return nil, fmt.Errorf("cannot read: %w", err)
	}
	return data, err
}

// readBounded reads the file at path, which must resolve inside root (""
// for anywhere), bounded like every definition file.
func readBounded(path, root string) ([]byte, error) {
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if root != "" && !within(real, realPath(root)) {
		return nil, fmt.Errorf("%s: %w", path, errOutside)
	}
	data, err := openBounded(real)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return data, nil
}

// readIn reads the file name inside a directory whose real path is
// dirReal, following a symbolic link only inside the root; the error
// wraps fs.ErrNotExist when it is missing.
func (s *scope) readIn(dirReal, name string) ([]byte, error) {
	p := filepath.Join(dirReal, name)
	s.t.add(p)
	data, err := readRegular(p, true, maxDefBytes)
	if !errors.Is(err, errLink) {
		if err != nil && !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, errNotRegular) && !errors.Is(err, errTooBig) {
			err = fmt.Errorf("cannot read: %w", err)
		}
		return data, err
	}
	real, err := s.resolve(dirReal, name, true)
	if err != nil {
		return nil, err
	}
	return openBounded(real)
}

// readEach reads the entries of a directory with fn, several at a time,
// and returns what fn loaded in the entries' order, the problems too: fn
// records its problems in its own scope.
func readEach[T any](s *scope, entries []fs.DirEntry, fn func(sub *scope, e fs.DirEntry) (T, bool)) []T {
	type result struct {
		v     T
		ok    bool
		probs []Problem
	}
	res := make([]result, len(entries))
	work := func(i int) {
		sub := &scope{origin: s.origin, root: s.root, refuse: s.refuse, t: s.t}
		v, ok := fn(sub, entries[i])
		res[i] = result{v, ok, sub.probs}
	}
	if workers := min(runtime.GOMAXPROCS(0), 1+len(entries)/16, 8); workers <= 1 {
		for i := range entries {
			work(i)
		}
	} else {
		var next atomic.Int64
		var wg sync.WaitGroup
		for range workers {
			wg.Go(func() {
				for i := int(next.Add(1)) - 1; i < len(entries); i = int(next.Add(1)) - 1 {
					work(i)
				}
			})
		}
		wg.Wait()
	}
	var out []T
	for _, r := range res {
		s.add(r.probs)
		if r.ok {
			out = append(out, r.v)
		}
	}
	return out
}

// readConfig reads a configuration file a repository may ship
// (settings.yaml, models.yaml): a regular file, links followed, of at most
// maxDefBytes, opened without blocking. Errors name the file; a missing
// one wraps fs.ErrNotExist.
func readConfig(path string) ([]byte, error) {
	data, err := readRegular(path, false, maxDefBytes)
	var pe *fs.PathError
	if err != nil && !errors.As(err, &pe) {
		err = fmt.Errorf("%s: %w", path, err)
	}
	return data, err
}
