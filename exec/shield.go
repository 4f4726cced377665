package exec

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
)

// shield protects one sandboxed run (see [Sandbox]): it scans the
// workspace before the run for the [ProtectedNames], turns them into
// bubblewrap options, makes the placeholders that keep missing entries from
// being created, and after the run moves aside what the command created
// that could run code on the host.
type shield struct {
	writable []string
	hide     func(string) bool
	limit    int
	before   *scan
	args     []string
	// covered are the directories the options already keep read-only or
	// hidden, so a pointer into one is not bound writable again.
	covered []string
	// links are the protected entries of git directories that are symbolic
	// links, with their identity and whether they resolved: the check after
	// the run moves aside one that was replaced or came to resolve.
	links map[string]linkState
	made  []string
	// bound and hidden are the paths already given an option; mounts
	// counts the mounts.
	bound, hidden map[string]bool
	mounts        int
	// notes are for the command's output.
	notes []string
	// res resolves links while the run is prepared; nil after (see
	// resolver).
	res *resolver
}

type linkState struct {
	id       fileID
	resolved bool
}

// DefaultMaxMounts bounds the mounts the shield gives bubblewrap, which
// sets each up in time growing with the mounts already made: 100 cost
// about 10 ms, 400 about a second, 800 two and a half.
const DefaultMaxMounts = 200

// shieldOptions configure newShield.
type shieldOptions struct {
	// writable are the writable directories, the workspace first; dir is
	// the command's working directory.
	writable []string
	dir      string
	// hide and hidePaths say what to cover (see Sandbox.Hide, HidePaths).
	hide      func(string) bool
	hidePaths []string
	// limit bounds the scans; maxMounts the mounts.
	limit, maxMounts int
	// res resolves links for the preparation; nil resolves afresh.
	res *resolver
}

// newShield scans the workspace (writable[0]) and prepares the bubblewrap
// options that protect and hide what it found. The caller must call
// release once the run is over.
//
// The git directories of the repositories the command runs in (those
// whose work tree holds dir), and the workspace's own, keep their objects,
// refs and index writable, so git add and commit work there, with their
// GitProtected entries read-only; every other git directory is read-only
// whole, which takes one mount instead of eight. Beyond maxMounts the run
// is refused; sensitive files beyond it are left uncovered, with a note.
func newShield(o shieldOptions) (*shield, error) {
	if o.limit <= 0 {
		o.limit = DefaultMaxScan
	}
	if o.maxMounts <= 0 {
		o.maxMounts = DefaultMaxMounts
	}
	ws := o.writable[0]
	before, err := scanTree(ws, o.hide, o.limit)
	if err != nil {
		return nil, fmt.Errorf("cannot scan the workspace for the files to protect: %w; run rein in a narrower directory, or turn the sandbox off", err)
	}
	sh := &shield{writable: o.writable, hide: o.hide, limit: o.limit, before: before,
		links: map[string]linkState{}, bound: map[string]bool{}, hidden: map[string]bool{}, res: o.res}
	sh.covered = append(append(sh.covered, before.gitDirs...), before.configs...)
	for _, h := range before.hidden {
		if h.dir {
			sh.covered = append(sh.covered, h.path)
		}
	}
	if err := sh.protect(ws, o.dir, o.maxMounts); err != nil {
		sh.release()
		return nil, err
	}
	sh.hideAll(o.hidePaths, o.maxMounts)
	return sh, nil
}

func (sh *shield) protect(ws, dir string, maxMounts int) error {
	s := sh.before
	// Hidden first: a hidden entry that is protected too stays hidden (the
	// cover is read-only).
	for _, h := range s.hidden {
		sh.bound[h.path] = true
	}
	for _, g := range s.gitDirs {
		var err error
		if g == filepath.Join(ws, ".git") || ownsDir(g, dir) {
			err = sh.gitDir(g, 0)
		} else {
			sh.ro(g)
		}
		if err != nil {
			return err
		}
	}
	for _, f := range s.gitFiles {
		sh.ro(f)
		if t, ok := gitdirOf(f); ok {
			if err := sh.target(t); err != nil {
				return err
			}
		}
	}
	for _, l := range s.gitLinks {
		if t, err := sh.res.evalSymlinks(l); err == nil {
			if err := sh.target(t); err != nil {
				return err
			}
		}
	}
	for _, c := range s.configs {
		sh.roResolved(c)
	}
	for _, name := range []string{".rein", ".claude"} {
		// Missing, or another run's placeholder (which the scan, done
		// before it was made, did not see): this run keeps it read-only
		// too. An entry of the user's own was protected by the scan.
		if err := sh.placeholder(filepath.Join(ws, name), placeholderMissing); err != nil {
			return err
		}
	}
	for _, w := range sh.writable {
		for _, rel := range HomeProtected {
			p := filepath.Join(w, filepath.FromSlash(rel))
			if _, err := sh.res.lstat(p); err == nil {
				sh.roResolved(p)
			}
		}
	}
	// The user's own: a writable directory may hold them deeper than its
	// top (sandbox.writable: [~/.config] holds ~/.config/rein).
	if home, err := os.UserHomeDir(); err == nil && filepath.IsAbs(home) {
		for _, rel := range HomeProtected {
			p := filepath.Join(home, filepath.FromSlash(rel))
			if real, err := sh.res.evalSymlinks(p); err == nil && withinAny(sh.writable, real) {
				sh.roResolved(p)
			}
		}
	}
	if sh.mounts > maxMounts {
		return fmt.Errorf("the workspace holds %d git repositories and %d .rein or .claude directories: protecting them takes %d mounts, more than the sandbox's %d; run rein in a narrower directory, or turn the sandbox off",
			len(s.gitDirs)+len(s.gitFiles), len(s.configs), sh.mounts, maxMounts)
	}
	return nil
}

// hideAll covers the hidden entries and hidePaths, as many as maxMounts
// allows; a note counts the others.
func (sh *shield) hideAll(hidePaths []string, maxMounts int) {
	entries := slices.Clone(sh.before.hidden)
	for _, p := range append(reinDataDirs(sh.before.configs), hidePaths...) {
		real, err := sh.res.evalSymlinks(p)
		if err != nil {
			continue
		}
		if fi, err := sh.res.stat(real); err == nil {
			entries = append(entries, hiddenEntry{real, fi.IsDir()})
		}
	}
	left := 0
	for _, h := range entries {
		if slices.ContainsFunc(sh.writable, func(w string) bool { return within(h.path, w) }) {
			continue // covering it would cover the workspace
		}
		if sh.mounts >= maxMounts {
			left++
			continue
		}
		sh.hideEntry(h)
	}
	if left > 0 {
		sh.notes = append(sh.notes, fmt.Sprintf("the sandbox left %d sensitive files readable: covering them would take more than %d mounts", left, maxMounts))
	}
}

// ReinData is the directory of a .rein that holds rein's own data (the
// history mirror, the knowledge base): no tool may read or write it, so
// the sandbox covers it in every workspace it finds a .rein in, in every
// mode (SPEC API-9). rein's own writers are not tools and are not
// affected.
const ReinData = "data"

// reinDataDirs are the data directories of the .rein entries of configs.
func reinDataDirs(configs []string) []string {
	var out []string
	for _, c := range configs {
		if filepath.Base(c) == ".rein" {
			out = append(out, filepath.Join(c, ReinData))
		}
	}
	return out
}

// ownsDir reports whether git directory g is the repository of directory
// dir: dir is in g's work tree (the parent of a .git), or in g itself.
func ownsDir(g, dir string) bool {
	if filepath.Base(g) == ".git" {
		return within(filepath.Dir(g), dir)
	}
	return within(g, dir)
}

// gitDir protects git directory g: it is bound on itself, so it cannot be
// moved aside and replaced, and its GitProtected entries are read-only;
// missing ones get a harmless placeholder, so they cannot be created. A
// commondir pointing to another git directory inside the writable
// directories protects that one too.
func (sh *shield) gitDir(g string, depth int) error {
	if depth > 4 || sh.bound[g] {
		return nil
	}
	sh.bound[g] = true
	sh.args = append(sh.args, "--bind", g, g)
	sh.mounts++
	for _, name := range GitProtected {
		p := filepath.Join(g, name)
		fi, err := os.Lstat(p)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			if err := sh.placeholder(p, gitPlaceholder[name]); err != nil {
				return err
			}
		case err != nil:
			return fmt.Errorf("cannot protect %s: %w", p, err)
		case fi.Mode()&fs.ModeSymlink != 0:
			st := linkState{}
			st.id, _ = idOf(fi)
			if real, err := filepath.EvalSymlinks(p); err == nil {
				st.resolved = true
				if withinAny(sh.writable, real) && !withinAny(sh.covered, real) {
					sh.ro(real)
				}
			}
			sh.links[p] = st
		default:
			sh.ro(p)
		}
	}
	if t, ok := commondirOf(g); ok && t != g {
		return sh.targetDepth(t, depth+1)
	}
	return nil
}

// target protects the git directory a .git file or link points to, when it
// lies in the writable directories and nothing protects it yet.
func (sh *shield) target(t string) error { return sh.targetDepth(t, 1) }

func (sh *shield) targetDepth(t string, depth int) error {
	real, err := filepath.EvalSymlinks(t)
	if err != nil {
		return nil // missing: the check after the run vets it if it appears
	}
	if !withinAny(sh.writable, real) || withinAny(sh.covered, real) {
		return nil
	}
	if fi, err := os.Stat(real); err != nil || !fi.IsDir() {
		return nil
	}
	sh.covered = append(sh.covered, real)
	if id, ok := lstatID(real); ok {
		sh.before.seen[id] = true
	}
	return sh.gitDir(real, depth)
}

// ro keeps p read-only.
func (sh *shield) ro(p string) {
	if sh.bound[p] {
		return
	}
	sh.bound[p] = true
	sh.args = append(sh.args, "--ro-bind", p, p)
	sh.mounts++
}

// roResolved keeps p read-only, or what it links to when that is writable.
func (sh *shield) roResolved(p string) {
	real, err := sh.res.evalSymlinks(p)
	if err != nil {
		return
	}
	if real != p && (!withinAny(sh.writable, real) || withinAny(sh.covered, real)) {
		return // read-only already
	}
	sh.ro(real)
}

// hideEntry covers a file with /dev/null (reading it fails: bubblewrap
// mounts binds nodev) and a directory with an empty read-only tmpfs.
func (sh *shield) hideEntry(h hiddenEntry) {
	if sh.hidden[h.path] {
		return
	}
	sh.hidden[h.path] = true
	sh.mounts++
	if h.dir {
		sh.args = append(sh.args, "--tmpfs", h.path, "--remount-ro", h.path)
		return
	}
	sh.args = append(sh.args, "--ro-bind", "/dev/null", h.path)
}

// placeholder makes missing entry p for the run and keeps it read-only. A
// directory the user cannot write to needs no placeholder: the sandboxed
// command, with the same user and no capabilities, cannot create p either.
// Of kind placeholderMissing, an entry that exists and is no run's
// placeholder is left alone.
func (sh *shield) placeholder(p string, kind placeholderKind) error {
	err := acquirePlaceholder(p, kind)
	switch {
	case errors.Is(err, errPresent):
		return nil
	case errors.Is(err, fs.ErrPermission) || errors.Is(err, syscall.EROFS):
		return nil
	case err != nil:
		return fmt.Errorf("cannot protect %s: %w", p, err)
	}
	sh.made = append(sh.made, p)
	if id, ok := lstatID(p); ok {
		sh.before.seen[id] = true // what only rein could put in it is not new
	}
	sh.ro(p)
	return nil
}

// release removes the placeholders made for the run (when no other run
// uses them).
func (sh *shield) release() {
	for _, p := range sh.made {
		releasePlaceholder(p)
	}
	sh.made = nil
}

// gitdirOf reads the directory a .git file points to ("gitdir: PATH",
// relative to the file's directory).
func gitdirOf(file string) (string, bool) {
	data, err := readSmall(file)
	if err != nil {
		return "", false
	}
	line, _, _ := strings.Cut(string(data), "\n")
	rest, ok := strings.CutPrefix(strings.TrimSpace(line), "gitdir:")
	if !ok {
		return "", false
	}
	return absFrom(filepath.Dir(file), strings.TrimSpace(rest)), true
}

// commondirOf reads git directory g's commondir, relative to g.
func commondirOf(g string) (string, bool) {
	data, err := readSmall(filepath.Join(g, "commondir"))
	if err != nil {
		return "", false
	}
	s := strings.TrimSpace(string(data))
	if s == "" {
		return "", false
	}
	return absFrom(g, s), true
}

func absFrom(dir, p string) string {
	if !filepath.IsAbs(p) {
		p = filepath.Join(dir, p)
	}
	return filepath.Clean(p)
}

// readSmall reads a regular file of at most 64 KiB.
func readSmall(p string) ([]byte, error) {
	fi, err := os.Lstat(p)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() || fi.Size() > 64<<10 {
		return nil, fmt.Errorf("%s: not a small regular file", p)
	}
	return os.ReadFile(p)
}

// placeholderKind is what a placeholder is: a directory or a file, and the
// file's content.
type placeholderKind struct {
	file    bool
	content string
	// onlyMissing: an existing entry that is no run's placeholder is not
	// taken (errPresent).
	onlyMissing bool
}

// errPresent: the entry exists and is not a placeholder (onlyMissing).
var errPresent = errors.New("present")

var (
	placeholderDir = placeholderKind{}
	// placeholderMissing is a directory placeholder made only where
	// nothing is, or shared with the runs already holding one.
	placeholderMissing = placeholderKind{onlyMissing: true}
	// gitPlaceholder is what stands for each missing GitProtected entry:
	// empty directories, an empty config, and a commondir naming the git
	// directory itself — each means to git what the missing entry means.
	gitPlaceholder = map[string]placeholderKind{
		"config":          {file: true},
		"config.worktree": {file: true},
		"commondir":       {file: true, content: ".\n"},
		"hooks":           placeholderDir,
		"info":            placeholderDir,
		"modules":         placeholderDir,
		"worktrees":       placeholderDir,
	}
)

// placeholders counts the runs using each placeholder, so the last one
// removes it, and remembers which ones were made for the runs.
var placeholders = struct {
	sync.Mutex
	refs map[string]int
	made map[string]placeholderKind
}{refs: map[string]int{}, made: map[string]placeholderKind{}}

// acquirePlaceholder makes sure p exists for the run, creating it when
// missing.
func acquirePlaceholder(p string, kind placeholderKind) error {
	placeholders.Lock()
	defer placeholders.Unlock()
	if placeholders.refs[p] == 0 {
		if _, err := os.Lstat(p); kind.onlyMissing && err == nil {
			return errPresent // decided under the lock: no run's placeholder comes or goes meanwhile
		}
		var err error
		if kind.file {
			var f *os.File
			f, err = os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
			if err == nil {
				_, err = f.WriteString(kind.content)
				if cerr := f.Close(); err == nil {
					err = cerr
				}
				if err != nil {
					os.Remove(p)
				}
			}
		} else {
			err = os.Mkdir(p, 0o755)
		}
		switch {
		case err == nil:
			placeholders.made[p] = kind
		case !errors.Is(err, fs.ErrExist):
			return err
		}
	}
	placeholders.refs[p]++
	return nil
}

// releasePlaceholder ends a run's use of p; the last run removes it if it
// was made for the runs and is as it was made.
func releasePlaceholder(p string) {
	placeholders.Lock()
	defer placeholders.Unlock()
	if placeholders.refs[p]--; placeholders.refs[p] > 0 {
		return
	}
	delete(placeholders.refs, p)
	kind, ok := placeholders.made[p]
	if !ok {
		return
	}
	delete(placeholders.made, p)
	if kind.file {
		if data, err := readSmall(p); err != nil || string(data) != kind.content {
			return
		}
	}
	os.Remove(p) // a directory is kept when something was put in it
}

// held reports whether p is a placeholder a run is using.
func held(p string) bool {
	placeholders.Lock()
	defer placeholders.Unlock()
	return placeholders.refs[p] > 0
}
