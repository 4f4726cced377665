package exec

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
)

// ProtectedNames are the entries a sandboxed command may read but not
// change, wherever they are under the workspace: git's repositories, and
// rein's and Claude Code's settings, hooks and agents. Each decides what
// runs on the host later — a git hook or core.fsmonitor at the user's next
// git command, a rein or Claude Code hook at the next session.
var ProtectedNames = []string{".git", ".rein", ".claude"}

// GitProtected are the entries of a git directory (a .git directory, the
// directory a .git file points to, or a bare repository) that stay read-only
// in the sandbox: the config files and the pointer to another one
// (commondir), the hooks, the attributes in info/, and the nested
// repositories of submodules (modules/) and linked worktrees (worktrees/).
// The rest (objects, refs, index, HEAD, logs) stays writable, so git add,
// commit and checkout work inside the sandbox; git config, remote add,
// submodule and worktree changes do not.
var GitProtected = []string{"config", "config.worktree", "commondir", "hooks", "info", "modules", "worktrees"}

// HomeProtected are paths at the top of each writable directory kept
// read-only when present: they run code on the host when a writable
// directory is a home directory (shell start-up files, git's user
// configuration, rein's user settings and profiles, ssh).
var HomeProtected = []string{
	".config/rein", ".config/git", ".gitconfig", ".ssh",
	".bashrc", ".bash_profile", ".bash_login", ".bash_logout", ".profile",
	".zshrc", ".zshenv", ".zprofile", ".zlogin", ".config/fish",
}

// DefaultMaxScan bounds the entries the sandbox's scan of the workspace
// visits before each command (and again after it): a workspace above it
// is refused rather than half protected.
const DefaultMaxScan = 2_000_000

// fileID identifies a file across renames.
type fileID struct{ dev, ino uint64 }

func idOf(fi fs.FileInfo) (fileID, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return fileID{}, false
	}
	return fileID{uint64(st.Dev), uint64(st.Ino)}, true
}

// lstatID returns the identity of path itself (a symlink is not followed).
func lstatID(path string) (fileID, bool) {
	fi, err := os.Lstat(path)
	if err != nil {
		return fileID{}, false
	}
	return idOf(fi)
}

// hiddenEntry is a file or directory the sandbox covers.
type hiddenEntry struct {
	path string
	dir  bool
}

// scan is what a walk of a workspace found.
type scan struct {
	root string
	// gitDirs are the .git directories and the bare-looking repositories;
	// gitFiles the .git files (gitdir: pointers) and gitLinks the .git
	// symbolic links.
	gitDirs, gitFiles, gitLinks []string
	// configs are the .rein and .claude entries.
	configs []string
	// hidden are the entries Hide matched.
	hidden []hiddenEntry
	// seen holds the identity of every entry above but the hidden ones, so
	// the check after a command can tell the new from the moved.
	seen map[fileID]bool
	// unreadable counts directories the walk could not list.
	unreadable int
	entries    int
}

// errScanLimit is returned by scanTree when the tree has more entries than
// the limit.
var errScanLimit = errors.New("too many files")

// scanTree walks root without following symbolic links, and without going
// into git directories, .rein, .claude or hidden entries, collecting what
// the sandbox protects and hides. hide, when set, is asked about every
// entry by absolute path. It visits at most limit entries. Directories are
// read by up to scanWorkers goroutines at once; the lists come out sorted.
func scanTree(root string, hide func(string) bool, limit int) (*scan, error) {
	return scanTreeWith(&walker{hide: hide}, root, limit)
}

// scanDirs is scanTree asking hide about directories only: enough to walk
// the same tree when the hidden files themselves do not matter.
func scanDirs(root string, hide func(string) bool, limit int) (*scan, error) {
	return scanTreeWith(&walker{hide: hide, dirsOnly: true}, root, limit)
}

func scanTreeWith(w *walker, root string, limit int) (*scan, error) {
	w.s, w.limit, w.sem = &scan{root: root, seen: map[fileID]bool{}}, int64(limit), make(chan struct{}, scanWorkers())
	ents, err := readDir(root)
	if err != nil {
		return nil, err
	}
	w.dir(root, ents)
	w.wg.Wait()
	if w.err != nil {
		return nil, w.err
	}
	s := w.s
	s.entries = int(w.count.Load())
	for _, l := range [][]string{s.gitDirs, s.gitFiles, s.gitLinks, s.configs} {
		slices.Sort(l)
	}
	slices.SortFunc(s.hidden, func(a, b hiddenEntry) int { return strings.Compare(a.path, b.path) })
	return s, nil
}

// scanWorkers is how many directories a scan reads at once.
func scanWorkers() int { return min(8, max(2, runtime.GOMAXPROCS(0))) }

// walker is one scan in progress.
type walker struct {
	s        *scan
	hide     func(string) bool
	dirsOnly bool // hide is asked about directories only
	limit    int64
	count    atomic.Int64
	sem      chan struct{}
	wg       sync.WaitGroup
	mu       sync.Mutex // guards s and err
	err      error
}

// visit reads directory dir and scans it; a directory that cannot be read
// is counted.
func (w *walker) visit(dir string) {
	ents, err := readDir(dir)
	if err != nil {
		w.mu.Lock()
		w.s.unreadable++
		w.mu.Unlock()
		return
	}
	if looksLikeGitDir(ents) {
		w.mu.Lock()
		w.s.addGitDir(dir)
		w.mu.Unlock()
		return
	}
	w.dir(dir, ents)
}

// dir scans the entries of dir, going into its subdirectories in another
// goroutine when one is free, else in this one.
func (w *walker) dir(dir string, ents []fs.DirEntry) {
	if n := w.count.Add(int64(len(ents))); n > w.limit {
		w.mu.Lock()
		if w.err == nil {
			w.err = fmt.Errorf("%w: more than %d entries under %s", errScanLimit, w.limit, w.s.root)
		}
		w.mu.Unlock()
		return
	}
	var subdirs []string
	local := &scan{seen: map[fileID]bool{}} // merged into w.s below
	if dir == w.s.root && looksLikeGitDir(ents) {
		local.addGitDir(dir) // a bare repository as the workspace: protect its entries, walk the rest
	}
	for _, e := range ents {
		name := e.Name()
		p := filepath.Join(dir, name)
		if w.hide != nil && (!w.dirsOnly || e.IsDir()) && w.hide(p) {
			local.addHidden(p, e.Type())
			continue
		}
		switch {
		case name == ".git" && e.IsDir():
			local.addGitDir(p)
		case name == ".git" && e.Type()&fs.ModeSymlink != 0:
			local.gitLinks = append(local.gitLinks, p)
			local.mark(p)
		case name == ".git" && e.Type().IsRegular():
			local.gitFiles = append(local.gitFiles, p)
			local.mark(p)
		case name == ".rein" || name == ".claude":
			local.configs = append(local.configs, p)
			local.mark(p)
		case e.IsDir():
			subdirs = append(subdirs, p)
		}
	}
	w.mu.Lock()
	s := w.s
	s.gitDirs = append(s.gitDirs, local.gitDirs...)
	s.gitFiles = append(s.gitFiles, local.gitFiles...)
	s.gitLinks = append(s.gitLinks, local.gitLinks...)
	s.configs = append(s.configs, local.configs...)
	s.hidden = append(s.hidden, local.hidden...)
	for id := range local.seen {
		s.seen[id] = true
	}
	stop := w.err != nil
	w.mu.Unlock()
	for _, p := range subdirs {
		if stop {
			return
		}
		select {
		case w.sem <- struct{}{}:
			w.wg.Add(1)
			go func() {
				defer w.wg.Done()
				defer func() { <-w.sem }()
				w.visit(p)
			}()
		default:
			w.visit(p)
		}
	}
}

func (s *scan) addGitDir(p string) {
	s.gitDirs = append(s.gitDirs, p)
	s.mark(p)
}

func (s *scan) mark(p string) {
	if id, ok := lstatID(p); ok {
		s.seen[id] = true
	}
}

// addHidden records a hidden entry; a symbolic link hides its target, when
// that exists.
func (s *scan) addHidden(p string, t fs.FileMode) {
	if t&fs.ModeSymlink != 0 {
		real, err := filepath.EvalSymlinks(p)
		if err != nil {
			return
		}
		fi, err := os.Stat(real)
		if err != nil {
			return
		}
		s.hidden = append(s.hidden, hiddenEntry{real, fi.IsDir()})
		return
	}
	if t.IsDir() || t.IsRegular() {
		s.hidden = append(s.hidden, hiddenEntry{p, t.IsDir()})
	}
}

// readDir lists a directory in the order the file system gives (no sort,
// no stat: the types come with the entries).
func readDir(dir string) ([]fs.DirEntry, error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return f.ReadDir(-1)
}

// looksLikeGitDir reports whether a directory's entries make it a git
// directory as git's discovery sees one: HEAD, objects and refs. Git would
// use such a directory as a bare repository, and run what its config says.
func looksLikeGitDir(ents []fs.DirEntry) bool {
	var head, objects, refs bool
	for _, e := range ents {
		switch e.Name() {
		case "HEAD":
			head = !e.IsDir()
		case "objects":
			objects = e.IsDir() || e.Type()&fs.ModeSymlink != 0
		case "refs":
			refs = e.IsDir() || e.Type()&fs.ModeSymlink != 0
		}
	}
	return head && objects && refs
}

// withinAny reports whether path is inside one of dirs (see within).
func withinAny(dirs []string, path string) bool {
	for _, d := range dirs {
		if within(d, path) {
			return true
		}
	}
	return false
}
