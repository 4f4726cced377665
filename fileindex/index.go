package fileindex

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
)

// DefaultMaxFiles is how many files and directories an index holds at most
// when [Options.MaxFiles] is zero.
const DefaultMaxFiles = 200_000

// skipDirs are never walked into: version control, and the dependency and
// cache directories whose files nobody means to mention (their paths can
// still be typed in full).
var skipDirs = map[string]bool{
	".git": true, ".hg": true, ".svn": true, "node_modules": true, ".venv": true, "__pycache__": true,
	".mypy_cache": true, ".pytest_cache": true, ".tox": true, ".rein": true,
}

// Options configure an [Index].
type Options struct {
	// Root is the directory indexed. Required.
	Root string
	// Ignore, when set, is asked about every file and directory met (its
	// slash-separated path relative to Root) and leaves out those it
	// reports: the wiring passes the .gitignore matcher here.
	Ignore func(rel string, isDir bool) bool
	// MaxFiles caps the entries kept; 0 means [DefaultMaxFiles].
	MaxFiles int
}

// Index is a workspace's file list. Its methods are safe for concurrent
// use; one Refresh runs at a time, searches alongside it.
type Index struct {
	opts    Options
	refresh sync.Mutex // one refresh at a time

	mu        sync.RWMutex
	dirs      map[string]*dir // by slash path relative to Root ("" is Root)
	entries   []string        // files, and directories with a trailing /
	truncated bool
	refreshed time.Time
}

// dir is what a directory held when it was last read.
type dir struct {
	mod     time.Time
	files   []string // names of the files kept
	subdirs []string // names of the directories walked into
}

// Stats says what a refresh did.
type Stats struct {
	// Entries is how many files and directories the index holds; DirsRead
	// how many directories were read (the others had not changed).
	Entries, DirsRead int
	// Truncated is set when the cap left entries out.
	Truncated bool
}

// New returns an empty index of opts.Root; [Index.Refresh] fills it.
func New(opts Options) *Index {
	if opts.MaxFiles <= 0 {
		opts.MaxFiles = DefaultMaxFiles
	}
	return &Index{opts: opts, dirs: map[string]*dir{}}
}

// Root is the indexed directory.
func (ix *Index) Root() string { return ix.opts.Root }

// Refreshed is when the last refresh ended; zero before the first.
func (ix *Index) Refreshed() time.Time {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	return ix.refreshed
}

// Refresh brings the index up to date with the disk: directories whose
// modification time changed (a file added, removed or renamed in them)
// are read again; the others keep their listing. It returns ctx's error
// when cancelled, leaving the index as it was.
func (ix *Index) Refresh(ctx context.Context) (Stats, error) {
	ix.refresh.Lock()
	defer ix.refresh.Unlock()
	fi, err := os.Stat(ix.opts.Root)
	if err != nil {
		return Stats{}, err
	}
	if !fi.IsDir() {
		return Stats{}, errors.New("fileindex: " + ix.opts.Root + " is not a directory")
	}
	ix.mu.RLock()
	old := ix.dirs
	ix.mu.RUnlock()
	w := walker{ix: ix, ctx: ctx, old: old, dirs: map[string]*dir{}}
	if err := w.walk(""); err != nil {
		return Stats{}, err
	}
	slices.Sort(w.entries)
	ix.mu.Lock()
	ix.dirs, ix.entries, ix.truncated, ix.refreshed = w.dirs, w.entries, w.truncated, time.Now()
	ix.mu.Unlock()
	return Stats{Entries: len(w.entries), DirsRead: w.read, Truncated: w.truncated}, nil
}

// walker is one refresh's walk.
type walker struct {
	ix        *Index
	ctx       context.Context
	old, dirs map[string]*dir
	entries   []string
	read      int
	truncated bool
}

// full reports whether the cap is reached.
func (w *walker) full() bool {
	if len(w.entries) >= w.ix.opts.MaxFiles {
		w.truncated = true
		return true
	}
	return false
}

// walk lists directory rel, from the last listing when it has not changed.
func (w *walker) walk(rel string) error {
	if err := w.ctx.Err(); err != nil {
		return err
	}
	abs := filepath.Join(w.ix.opts.Root, filepath.FromSlash(rel))
	fi, err := os.Lstat(abs)
	if err != nil {
		return nil // gone since its parent was read
	}
	d := w.old[rel]
	if d == nil || !d.mod.Equal(fi.ModTime()) {
		d, err = w.list(rel, abs, fi.ModTime())
		if err != nil {
			return nil // unreadable: left out
		}
	}
	w.dirs[rel] = d
	for _, f := range d.files {
		if w.full() {
			return nil
		}
		w.entries = append(w.entries, path.Join(rel, f))
	}
	for _, s := range d.subdirs {
		if w.full() {
			return nil
		}
		sub := path.Join(rel, s)
		w.entries = append(w.entries, sub+"/")
		if err := w.walk(sub); err != nil {
			return err
		}
	}
	return nil
}

// list reads directory rel.
func (w *walker) list(rel, abs string, mod time.Time) (*dir, error) {
	ents, err := os.ReadDir(abs)
	if err != nil {
		return nil, err
	}
	w.read++
	d := &dir{mod: mod}
	for _, e := range ents {
		name := e.Name()
		p := path.Join(rel, name)
		switch t := e.Type(); {
		case t.IsDir():
			if skipDirs[name] || w.ignored(p, true) {
				continue
			}
			d.subdirs = append(d.subdirs, name)
		case t.IsRegular(), t&fs.ModeSymlink != 0:
			// A symbolic link is listed, never followed: it may lead out
			// of the workspace, or round in a loop.
			if w.ignored(p, false) {
				continue
			}
			d.files = append(d.files, name)
		}
	}
	return d, nil
}

// ignored asks Options.Ignore.
func (w *walker) ignored(rel string, isDir bool) bool {
	return w.ix.opts.Ignore != nil && w.ix.opts.Ignore(rel, isDir)
}

// Entries returns the files and directories (with a trailing /) of the
// index, sorted, and whether the cap left some out.
func (ix *Index) Entries() ([]string, bool) {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	return slices.Clone(ix.entries), ix.truncated
}

// clean is a query as paths are kept: slash-separated, no leading "./".
func clean(q string) string {
	q = filepath.ToSlash(q)
	for strings.HasPrefix(q, "./") {
		q = q[2:]
	}
	return q
}
