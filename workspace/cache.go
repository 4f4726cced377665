package workspace

import (
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// A Cache keeps what [Load] returned and serves it again while nothing it
// depends on changed: a server loads its workspace's configuration at
// every run, and most runs find it as the last one did (issue 30).
//
// Never stale: each Load under a cache records every path it read,
// listed or looked for and found missing — each component of each path,
// and through each symbolic link — and every variable it read. A result is
// served again only when every one of those paths still has the state it
// had and every variable the same value. A state is missing, or the same
// device, inode, type and mode, owner, links, size, modification and
// change time to the nanosecond; of a directory Load only passed through
// (did not list), the same device, inode, type, mode and owner: the
// entries looked up in it are recorded themselves. A file edited, created, deleted, renamed or
// replaced by a link, a directory whose listing changed, a link pointed
// elsewhere: each changes a state recorded, so the next Load reads again.
// A result is not kept when a path it recorded changed less than
// [CacheSettle] before the Load began: the file system's clock ticks
// coarsely, so an edit in the same tick could leave every state as it was.
//
// The result served is shared by every caller: it must not be modified.
type Cache struct {
	mu      sync.Mutex
	entries map[string]*cacheEntry
	seq     uint64
	// now and settle are the clock and CacheSettle; tests change them.
	now    func() time.Time
	settle time.Duration
	// hits counts the results served again (tests).
	hits atomic.Int64
}

// CacheSettle is how long before a Load a recorded path must have last
// changed for the result to be kept: above the coarsest timestamp tick of
// the file systems rein runs on (a jiffy on ext4, XFS and btrfs; 1 s on
// ext3's small inodes, 2 s on FAT).
const CacheSettle = 3 * time.Second

// maxCacheEntries bounds a cache: one entry per workspace, caller and
// set of options.
const maxCacheEntries = 256

// cacheEntry is one result with what revalidates it.
type cacheEntry struct {
	loaded *Loaded
	files  []pathState
	env    []envValue
	used   uint64
}

// pathState is a path with its state when the result was read.
type pathState struct {
	path  string
	state fileState
}

// envValue is a variable with its value when the result was read.
type envValue struct{ name, value string }

// fileState is what revalidation compares of a path; the zero state is a
// missing path.
type fileState struct {
	exists bool
	// partial marks the state of a directory a path passes through:
	// only its identity is compared (see identity).
	partial            bool
	dev, ino, nlink    uint64
	mode, uid, gid     uint32
	size, mtime, ctime int64
}

// NewCache returns an empty cache.
func NewCache() *Cache {
	return &Cache{entries: map[string]*cacheEntry{}, now: time.Now, settle: CacheSettle}
}

// Load is [Load] through the cache: the result of an earlier Load with
// the same tenant and options when nothing it depends on changed since,
// else a fresh one. tenant names whose load it is (a server's caller):
// results are never shared across tenants. Options.Getenv must be the
// same environment for every call of a cache (the variables Load read
// are compared, not the function). WorkDir and Root must be absolute; a
// relative one loads every time, and so does a nil cache.
func (c *Cache) Load(tenant string, opts Options) (*Loaded, error) {
	if c == nil || !filepath.IsAbs(opts.WorkDir) || opts.Root != "" && !filepath.IsAbs(opts.Root) {
		return Load(opts)
	}
	key := cacheKey(tenant, opts)
	c.mu.Lock()
	e := c.entries[key]
	c.mu.Unlock()
	if e != nil {
		ok := e.valid(opts.Getenv)
		c.mu.Lock()
		switch {
		case ok:
			c.seq++
			e.used = c.seq
		case c.entries[key] == e:
			delete(c.entries, key)
		}
		c.mu.Unlock()
		if ok {
			c.hits.Add(1)
			return e.loaded, nil
		}
	}
	start := c.now()
	t := newTrace()
	l, err := load(opts, t)
	if err != nil {
		return nil, err
	}
	if e, ok := t.entry(start.Add(-c.settle)); ok {
		e.loaded = l
		c.store(key, e)
	}
	return l, nil
}

// store keeps e under key, dropping the least recently used entry when
// the cache is full.
func (c *Cache) store(key string, e *cacheEntry) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.entries[key]; !ok && len(c.entries) >= maxCacheEntries {
		oldest := ""
		for k, x := range c.entries {
			if oldest == "" || x.used < c.entries[oldest].used {
				oldest = k
			}
		}
		delete(c.entries, oldest)
	}
	c.seq++
	e.used = c.seq
	c.entries[key] = e
}

// cacheKey encodes everything of the options Load's result depends on
// but the environment (revalidated by value), with the tenant.
func cacheKey(tenant string, o Options) string {
	var b strings.Builder
	field := func(s string) {
		b.WriteString(strconv.Itoa(len(s)))
		b.WriteByte(':')
		b.WriteString(s)
	}
	field(tenant)
	field(o.WorkDir)
	field(o.Root)
	field(o.ClaudeManagedDir)
	field(strconv.FormatBool(o.WithoutUser))
	field(strconv.FormatBool(o.StrictMCP))
	field(strconv.Itoa(len(o.Flags)))
	for _, k := range slices.Sorted(maps.Keys(o.Flags)) {
		field(k)
		field(o.Flags[k])
	}
	field(strconv.Itoa(len(o.MCPConfigs)))
	for _, m := range o.MCPConfigs {
		field(m.Source)
		field(string(m.Data))
	}
	return b.String()
}

// identity is the state of a directory a path passes through: which
// directory it is, and who may search it. What it lists is not compared:
// the entries looked up in it are recorded themselves (a link's and a
// file's state is always compared whole, so an inode number used again
// is told by its change time).
func (s fileState) identity() fileState {
	return fileState{exists: s.exists, partial: true, dev: s.dev, ino: s.ino, mode: s.mode, uid: s.uid, gid: s.gid}
}

// valid reports whether every variable and path e recorded is as it was.
func (e *cacheEntry) valid(getenv func(string) string) bool {
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	for _, v := range e.env {
		if getenv(v.name) != v.value {
			return false
		}
	}
	for _, f := range e.files {
		s, err := lstatState(f.path)
		if err != nil {
			return false
		}
		if f.state.partial && s.isDirState() {
			s = s.identity()
		}
		if s != f.state {
			return false
		}
	}
	return true
}

// entry returns the states of every path the trace recorded, each
// component of each and through each link, with its variables; ok is
// false when the result cannot be kept: a path could not be read again
// (or was relative), or one changed after settled.
func (t *trace) entry(settled time.Time) (*cacheEntry, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.unsure || t.env["HOME"] == "" { // without HOME, Load asked the process
		return nil, false
	}
	w := &walker{states: map[string]fileState{}, full: map[string]bool{}}
	for p := range t.paths {
		w.walk(p, 0, true)
	}
	for p := range t.lookups {
		w.walk(p, 0, false)
	}
	for _, g := range t.globs {
		for _, d := range globDirs(g) {
			w.walk(d, 0, true)
		}
	}
	if w.unsure {
		return nil, false
	}
	e := &cacheEntry{}
	limit := settled.UnixNano()
	for p, s := range w.states {
		if s.isDirState() && !w.full[p] {
			s = s.identity()
		} else if s.exists && s.ctime >= limit {
			return nil, false
		}
		e.files = append(e.files, pathState{p, s})
	}
	slices.SortFunc(e.files, func(a, b pathState) int { return strings.Compare(a.path, b.path) })
	for n, v := range t.env {
		e.env = append(e.env, envValue{n, v})
	}
	return e, true
}

// maxLinks bounds the links followed resolving one path, as the kernel
// does.
const maxLinks = 40

// walker records the state of every component of the paths it walks,
// following links, each path once. full are the paths walked to (links
// followed): the others are directories passed through.
type walker struct {
	states map[string]fileState
	full   map[string]bool
	unsure bool
}

// state returns the state of p, read once.
func (w *walker) state(p string) (fileState, bool) {
	if s, ok := w.states[p]; ok {
		return s, true
	}
	s, err := lstatState(p)
	if err != nil {
		w.unsure = true
		return s, false
	}
	w.states[p] = s
	return s, true
}

// walk records each component of the absolute, clean path p, from the
// root down, following a link where it leads (links counts those
// followed); it stops at a missing component or one that is not a
// directory. With full, what p leads to is compared whole, even a
// directory (its listing was read).
func (w *walker) walk(p string, links int, full bool) {
	if links > maxLinks {
		w.unsure = true
		return
	}
	if _, ok := w.state("/"); !ok || p == "/" {
		return
	}
	for i := 1; ; {
		j := strings.IndexByte(p[i:], '/')
		prefix := p
		if j >= 0 {
			prefix = p[:i+j]
		}
		s, ok := w.state(prefix)
		if !ok {
			return
		}
		if !s.exists {
			return
		}
		if s.isLink() {
			target, err := os.Readlink(prefix)
			if err != nil {
				w.unsure = true
				return
			}
			if !filepath.IsAbs(target) {
				target = filepath.Join(filepath.Dir(prefix), target)
			}
			w.walk(filepath.Clean(target+p[len(prefix):]), links+1, full)
			return
		}
		if j < 0 {
			if full {
				w.full[p] = true
			}
			return
		}
		if !s.isDirState() {
			return
		}
		i += j + 1
	}
}

// globDirs returns the directories filepath.Glob lists for pattern: its
// directory part, or every match of it when that has wildcards too.
func globDirs(pattern string) []string {
	dir, _ := filepath.Split(pattern)
	dir = filepath.Clean(dir)
	if !strings.ContainsAny(dir, `*?[\`) {
		return []string{dir}
	}
	matches, _ := filepath.Glob(dir)
	return append(matches, globDirs(dir)...)
}
