// Package mirror keeps the history mirror of rein serve (SPEC API-6): a
// copy of each project workspace's sessions in the workspace itself, at
// [File], a session store of session/sqlite's schema that any rein tool or
// sqlite3 can read beside the project. The server's store stays the truth;
// the runner's service tells the mirror when a session changed
// ([Mirror.Notify]) and never waits on it.
package mirror

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/reinhq/rein/internal/sqlitedb"
	"github.com/reinhq/rein/session"
)

// How it works. The server's store is the truth; each
// project workspace gets a copy of its sessions in <dir>/.rein/data/history.db,
// a session store of the same schema (session/sqlite), so any rein tool and
// sqlite3 can read it beside the project. The runner calls [Mirror.Notify]
// when a run ends; Notify only marks the session dirty and wakes one syncer
// goroutine, so a run never waits on the mirror. The syncer copies what is
// new: the metadata, and the entries after the mirror's last seq (its
// cursor; the store numbers entries 1, 2, 3 … and so does the mirror's
// Append, so seqs stay identical). A copy that disagrees with the store is
// dropped and copied again. A mirror that cannot be written (a lock held by
// another process, a full disk, a permission error) keeps the work dirty and
// is retried with capped, jittered exponential backoff, logged once per
// streak; a mirror file deleted or replaced is opened anew and the
// workspace's sessions copied again. [Mirror.Rebuild] recreates a mirror
// from the store into a temporary file renamed over the old one.

// File is where a project workspace keeps its history mirror,
// relative to the workspace's directory.
const File = ".rein/data/history.db"

// DB is a mirror database: a session store the mirror writes into
// (session/sqlite in rein serve), closed when idle.
type DB interface {
	session.Store
	Close() error
}

// Config configures a [Mirror]. Store, Ledger and Open are required;
// zero values of the others mean the defaults. Time comes from the time
// package (tests run in testing/synctest).
type Config struct {
	// Store is the truth the mirror copies from; Ledger tells each
	// session's workspace.
	Store  session.Store
	Ledger session.Ledger
	// Open opens the mirror database at path, creating it when missing.
	Open func(path string) (DB, error)
	// MaxOpen bounds the mirror databases kept open (default 8); the least
	// recently used is closed beyond it.
	MaxOpen int
	// IdleClose closes a mirror database unused this long (default 1 min),
	// so a rebuild or a backup from another process finds it closed.
	IdleClose time.Duration
	// Backoff is the wait before the next attempt after failures failures
	// in a row (from 1); default [Backoff].
	Backoff func(failures int) time.Duration
	// Batch is how many entries one append copies (default 128).
	Batch int
	// Gather is how long the syncer waits, once a Notify woke it, before
	// copying (default 1 s; negative: not at all): the sessions of runs
	// ending together share the mirror's commits, and a session the server
	// created and ran meanwhile is copied once rather than twice.
	Gather time.Duration
	Logger *slog.Logger
}

// Backoff is the default retry schedule: 1 s doubled per failure up
// to 5 minutes, less up to a fifth at random so mirrors failing together
// do not retry together.
func Backoff(failures int) time.Duration {
	d := time.Second
	for i := 1; i < failures && d < 5*time.Minute; i++ {
		d *= 2
	}
	d = min(d, 5*time.Minute)
	return d - time.Duration(rand.Int64N(int64(d)/5+1))
}

// Stats says how the mirror is doing, for health checks and tests.
type Stats struct {
	// Dirty counts the sessions waiting to be copied; Open the mirror
	// databases open.
	Dirty, Open int
	// Synced counts the sessions copied since the start and Entries their
	// entries; Skipped the sessions not mirrored (no project workspace, no
	// .rein directory); Retries the failed attempts retried; Resets the
	// copies dropped and made again.
	Synced, Entries, Skipped, Retries, Resets int64
	// LastError is the newest failure, at LastErrorAt.
	LastError   string
	LastErrorAt time.Time
}

// RebuildResult is what [Mirror.Rebuild] wrote.
type RebuildResult struct {
	Path              string
	Sessions, Entries int
	// Skipped lists the sessions whose log could not be copied with its
	// seqs (a log with gaps in the store), left out of the mirror.
	Skipped []string
}

var (
	// errSkip: the session is not mirrored (not an error to retry).
	errSkip = errors.New("not mirrored")
	// errMismatch: the mirror's seqs and the store's disagree.
	errMismatch = errors.New("the mirror's seqs disagree with the store's")
	// errGapped: the store's log cannot be copied with its seqs.
	errGapped = errors.New("the store's log has gaps in its seqs")
)

const (
	syncTimeout = 2 * time.Minute // bounds one copy (a session, or copyBatch's sessions)
	maxFillers  = 100_000         // seqs skipped at the head of a rewritten log
	maxCached   = 4096            // workspaces and checked sessions remembered
	maxBatch    = 64              // sessions copied at once
	// fillerReason marks the placeholders a reset appends before rewriting
	// a log whose seqs start above 1 (see copyShifted).
	fillerReason = "rein history mirror: placeholder for seqs the store no longer holds"
)

// Mirror copies sessions of project workspaces into their history mirrors;
// see [File]. Its methods are safe for concurrent use; Notify and
// the statistics never wait on a disk or a database.
type Mirror struct {
	cfg       Config
	wake      chan struct{}
	quit      chan struct{}
	done      chan struct{}
	base      context.Context
	cancel    context.CancelFunc
	closeOnce sync.Once

	mu      sync.Mutex // guards the fields below; never held across I/O
	dirty   map[string]*pending
	failing map[string]int // failures in a row, by workspace directory ("" before one is known)
	closing bool
	stats   Stats

	// work: one copy at a time (the syncer, Rebuild); guards the fields
	// below. While copyBatch's copies run at once, each also takes mu to
	// change checked and broken.
	work    sync.Mutex
	open    map[string]*openDB
	spaces  map[string]*session.Workspace
	warned  map[string]bool // directories skipped, warned once
	checked map[string]bool // sessions whose mirrored head was checked since their mirror opened
	broken  map[string]bool // sessions whose log cannot be mirrored with its seqs
}

// pending is a dirty session.
type pending struct {
	dir        string    // its workspace's directory, once known
	since, due time.Time // dirty since; next attempt
	gen        uint64    // bumped by every Notify
}

// openDB is an open mirror database.
type openDB struct {
	db   DB
	path string
	info os.FileInfo // of the file opened, to notice it deleted or replaced
	used time.Time
}

// New starts a mirror's syncer; [Mirror.Close] stops it.
func New(cfg Config) (*Mirror, error) {
	if cfg.Store == nil || cfg.Ledger == nil || cfg.Open == nil {
		return nil, errors.New("runner: Config needs Store, Ledger and Open")
	}
	if cfg.MaxOpen <= 0 {
		cfg.MaxOpen = 8
	}
	if cfg.IdleClose <= 0 {
		cfg.IdleClose = time.Minute
	}
	if cfg.Backoff == nil {
		cfg.Backoff = Backoff
	}
	if cfg.Batch <= 0 {
		cfg.Batch = 128
	}
	if cfg.Gather == 0 {
		cfg.Gather = time.Second
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	base, cancel := context.WithCancel(context.Background())
	m := &Mirror{cfg: cfg, wake: make(chan struct{}, 1), quit: make(chan struct{}), done: make(chan struct{}),
		base: base, cancel: cancel, dirty: map[string]*pending{}, failing: map[string]int{},
		open: map[string]*openDB{}, spaces: map[string]*session.Workspace{}, warned: map[string]bool{},
		checked: map[string]bool{}, broken: map[string]bool{}}
	go m.loop()
	return m, nil
}

// Notify marks the session's history changed. It returns at once: it
// never touches a disk or a database. A nil Mirror ignores it, as does one
// closing.
func (m *Mirror) Notify(sessionID string) {
	if m == nil || sessionID == "" {
		return
	}
	m.mark(sessionID, "")
	select {
	case m.wake <- struct{}{}:
	default:
	}
}

// mark adds a session to the dirty set (coalescing) with its directory
// when known.
func (m *Mirror) mark(id, dir string) {
	now := time.Now()
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closing {
		return
	}
	p := m.dirty[id]
	if p == nil {
		p = &pending{since: now, due: now}
		m.dirty[id] = p
	}
	p.gen++
	if dir != "" {
		p.dir = dir
	}
}

// Lag is how long the oldest dirty session has waited; 0 when the mirrors
// are up to date.
func (m *Mirror) Lag() time.Duration {
	if m == nil {
		return 0
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	var oldest time.Time
	for _, p := range m.dirty {
		if oldest.IsZero() || p.since.Before(oldest) {
			oldest = p.since
		}
	}
	if oldest.IsZero() {
		return 0
	}
	return time.Since(oldest)
}

// Stats returns the mirror's counters.
func (m *Mirror) Stats() Stats {
	if m == nil {
		return Stats{}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	s := m.stats
	s.Dirty = len(m.dirty)
	return s
}

// Close stops the syncer after one last attempt at every dirty session,
// given up when ctx ends, and closes the mirror databases. It reports the
// sessions left uncopied: they are copied when their workspace's mirror is
// next opened (or by a rebuild). Later calls return at once.
func (m *Mirror) Close(ctx context.Context) error {
	if m == nil {
		return nil
	}
	m.closeOnce.Do(func() {
		m.mu.Lock()
		m.closing = true
		m.mu.Unlock()
		close(m.quit)
	})
	stop := context.AfterFunc(ctx, m.cancel)
	defer stop()
	<-m.done
	m.cancel()
	if n := m.Stats().Dirty; n > 0 {
		return fmt.Errorf("history mirror: %d session(s) not copied before closing; they are copied when their workspace's mirror is next opened (or by rein mirror rebuild)", n)
	}
	return nil
}

// loop is the syncer: it copies the dirty sessions that are due, then
// sleeps until woken, the next is due, or a mirror has been idle long
// enough to close. Woken by a Notify, it first waits Gather, so the
// sessions of runs ending together are copied together (see copyBatch).
func (m *Mirror) loop() {
	defer close(m.done)
	for {
		for ids := m.due(false); len(ids) > 0; ids = ids[min(len(ids), maxBatch):] {
			select {
			case <-m.quit:
				m.drain()
				return
			default:
			}
			m.copyBatch(ids[:min(len(ids), maxBatch)])
		}
		timer := time.NewTimer(m.nextWait())
		select {
		case <-m.wake:
			if !m.gather() {
				timer.Stop()
				m.drain()
				return
			}
		case <-timer.C:
			m.closeIdle()
		case <-m.quit:
			timer.Stop()
			m.drain()
			return
		}
		timer.Stop()
	}
}

// gather waits Gather after a Notify woke the syncer; false when the
// mirror is closing meanwhile.
func (m *Mirror) gather() bool {
	if m.cfg.Gather <= 0 {
		return true
	}
	t := time.NewTimer(m.cfg.Gather)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-m.quit:
		return false
	}
}

// drain makes one last attempt at every dirty session — but those of a
// mirror that just failed — then closes the mirror databases.
func (m *Mirror) drain() {
	defer m.closeAll()
	failed := map[string]bool{}
	for _, id := range m.due(true) {
		if m.base.Err() != nil {
			return
		}
		m.mu.Lock()
		p := m.dirty[id]
		skip := p == nil || p.dir != "" && failed[p.dir]
		m.mu.Unlock()
		if skip {
			continue
		}
		if dir, err := m.process(id, true); err != nil && !errors.Is(err, errSkip) {
			failed[dir] = true
		}
	}
}

// due lists the dirty sessions due now (all of them), oldest first.
func (m *Mirror) due(all bool) []string {
	now := time.Now()
	m.mu.Lock()
	defer m.mu.Unlock()
	var ids []string
	for id, p := range m.dirty {
		if all || !p.due.After(now) {
			ids = append(ids, id)
		}
	}
	slices.SortFunc(ids, func(a, b string) int { return m.dirty[a].since.Compare(m.dirty[b].since) })
	return ids
}

// nextWait is how long the syncer may sleep: until the next dirty session
// is due or the next idle mirror is to be closed.
func (m *Mirror) nextWait() time.Duration {
	now := time.Now()
	next := now.Add(time.Hour)
	m.mu.Lock()
	for _, p := range m.dirty {
		if p.due.Before(next) {
			next = p.due
		}
	}
	m.mu.Unlock()
	m.work.Lock()
	for _, h := range m.open {
		if t := h.used.Add(m.cfg.IdleClose); t.Before(next) {
			next = t
		}
	}
	m.work.Unlock()
	return max(next.Sub(now), 0)
}

// job is the copy of one dirty session.
type job struct {
	id   string
	gen  uint64 // the session's gen when its copy began
	dir  string // its workspace's directory, when known
	h    *openDB
	sess *session.Session // from the store; nil when the store no longer has it
	n    int              // entries copied
	err  error
}

// process copies one dirty session and settles its state; it returns the
// session's directory, when known, and the failure.
func (m *Mirror) process(id string, last bool) (string, error) {
	j, ok := m.start(id)
	if !ok {
		return "", nil
	}
	ctx, cancel := context.WithTimeout(m.base, syncTimeout)
	m.work.Lock()
	m.locate(ctx, j)
	if j.err == nil {
		m.apply(ctx, j)
	}
	m.work.Unlock()
	cancel()
	m.settle(j.id, j.gen, j.dir, j.n, j.err, last)
	return j.dir, j.err
}

// copyBatch copies dirty sessions together: each one's mirror is found in
// turn, then the copies run at once, at most maxBatch, so the writes into
// a mirror — a session/sqlite store in rein serve — share its group
// commits instead of each paying a commit (an fsync) of its own.
func (m *Mirror) copyBatch(ids []string) {
	ctx, cancel := context.WithTimeout(m.base, syncTimeout)
	defer cancel()
	m.work.Lock()
	var jobs []*job
	for _, id := range ids {
		if j, ok := m.start(id); ok {
			m.locate(ctx, j)
			jobs = append(jobs, j)
		}
	}
	var wg sync.WaitGroup
	var later []*job
	for _, j := range jobs {
		switch {
		case j.err == nil && m.open[j.dir] != j.h:
			// its mirror was closed since it was found (another
			// session's handle evicted it): due again at the next pass.
			later = append(later, j)
		case j.err == nil:
			wg.Go(func() { m.apply(ctx, j) })
		}
	}
	wg.Wait()
	m.work.Unlock()
	for _, j := range jobs {
		if !slices.Contains(later, j) {
			m.settle(j.id, j.gen, j.dir, j.n, j.err, false)
		}
	}
}

// start begins the copy of a dirty session; false when it is not dirty.
func (m *Mirror) start(id string) (*job, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	p := m.dirty[id]
	if p == nil {
		return nil, false
	}
	return &job{id: id, gen: p.gen, dir: p.dir}, true
}

// settle records the outcome of a copy: done (unless notified meanwhile),
// or failed and due again after the backoff, which the other sessions of
// the same mirror wait out too.
func (m *Mirror) settle(id string, gen uint64, dir string, n int, err error, last bool) {
	now := time.Now()
	m.mu.Lock()
	defer m.mu.Unlock()
	p := m.dirty[id]
	if p == nil { // not possible: only the syncer removes sessions
		return
	}
	if dir != "" {
		p.dir = dir
	}
	if err == nil || errors.Is(err, errSkip) {
		if err != nil {
			m.stats.Skipped++
		} else {
			m.stats.Synced++
			m.stats.Entries += int64(n)
			for _, key := range []string{dir, ""} { // its mirror's streak, and the store's
				if f := m.failing[key]; f > 0 {
					m.cfg.Logger.Info("history mirror: copying again", "dir", key, "failures", f)
					delete(m.failing, key)
				}
			}
		}
		if p.gen == gen {
			delete(m.dirty, id)
		}
		return
	}
	m.stats.LastError, m.stats.LastErrorAt = err.Error(), now
	if last {
		return
	}
	m.failing[dir]++
	f := m.failing[dir]
	delay := m.cfg.Backoff(f)
	if f == 1 {
		m.cfg.Logger.Warn("history mirror: copy failed; retrying with backoff (runs are not affected)",
			"session_id", id, "dir", dir, "retry_in", delay.String(), "err", err)
	}
	m.stats.Retries++
	due := now.Add(delay)
	p.due = due
	for _, q := range m.dirty {
		if (dir == "" || q.dir == dir) && q.due.Before(due) {
			q.due = due
		}
	}
}

// locate reads the session from the store and opens its mirror, under
// work (the syncer's state is not shared while it runs): it sets j.dir,
// j.h and j.sess, or j.err (errSkip when the session is not mirrored).
func (m *Mirror) locate(ctx context.Context, j *job) {
	sess, err := m.cfg.Store.Get(ctx, j.id)
	if errors.Is(err, session.ErrNotFound) {
		if j.dir == "" {
			j.err = errSkip
			return
		}
		j.h, j.err = m.handle(ctx, j.dir, j.id)
		return
	}
	if err != nil {
		j.err = fmt.Errorf("history mirror: session %s: read the store: %w", j.id, err)
		return
	}
	dir, err := m.dirOf(ctx, sess)
	if err != nil {
		j.err = err
		return
	}
	j.dir = dir
	if m.broken[j.id] {
		j.err = errSkip
		return
	}
	j.sess = sess
	j.h, j.err = m.handle(ctx, dir, j.id)
}

// apply brings the located session's copy up to date: removed from the
// mirror when the store no longer has it, else copied. Several run at once
// (copyBatch): it shares the syncer's state under mu only.
func (m *Mirror) apply(ctx context.Context, j *job) {
	if j.sess == nil {
		if err := j.h.db.Delete(ctx, j.id); err != nil && !errors.Is(err, session.ErrNotFound) {
			j.err = fmt.Errorf("history mirror %s: %w", j.h.path, err)
		}
		return
	}
	n, err := m.copySession(ctx, j.h.db, j.sess)
	j.n = n
	switch {
	case errors.Is(err, errGapped):
		m.mu.Lock()
		m.broken[j.id] = true
		m.mu.Unlock()
		m.cfg.Logger.Warn("history mirror: session left out: its seqs cannot be kept (rein mirror rebuild retries it)",
			"session_id", j.id, "dir", j.dir, "err", err)
		j.err = errSkip
	case err != nil:
		j.err = fmt.Errorf("history mirror %s: session %s: %w", j.h.path, j.id, err)
	}
}

// dirOf returns the directory of the session's project workspace, or
// errSkip when it has none.
func (m *Mirror) dirOf(ctx context.Context, sess *session.Session) (string, error) {
	if sess.Workspace == "" {
		return "", errSkip
	}
	ws := m.spaces[sess.Workspace]
	if ws == nil {
		w, err := m.cfg.Ledger.GetWorkspace(ctx, sess.Workspace)
		if errors.Is(err, session.ErrNotFound) {
			return "", errSkip
		}
		if err != nil {
			return "", fmt.Errorf("history mirror: workspace %s: %w", sess.Workspace, err)
		}
		if len(m.spaces) >= maxCached {
			clear(m.spaces)
		}
		m.spaces[w.ID], ws = w, w
	}
	if ws.Kind != session.WorkspaceProject || ws.Dir == "" {
		return "", errSkip
	}
	return ws.Dir, nil
}

// handle returns the open mirror of dir, opening it when needed: when it
// is opened (again: the file was deleted or replaced), every session of
// the workspace is marked dirty but current, which is being copied.
func (m *Mirror) handle(ctx context.Context, dir, current string) (*openDB, error) {
	path := filepath.Join(dir, File)
	if h := m.open[dir]; h != nil {
		fi, err := os.Lstat(path)
		if err == nil && os.SameFile(fi, h.info) {
			h.used = time.Now()
			return h, nil
		}
		m.cfg.Logger.Warn("history mirror: the file was deleted or replaced; copying the workspace's sessions again", "path", path)
		m.closeHandle(dir)
	}
	if reason := mirrorUnusable(dir); reason != "" {
		if !m.warned[dir] {
			m.warned[dir] = true
			m.cfg.Logger.Warn("history mirror: workspace skipped", "dir", dir, "reason", reason)
		}
		return nil, fmt.Errorf("%w: %s", errSkip, reason)
	}
	delete(m.warned, dir)
	db, err := m.cfg.Open(path)
	if err != nil {
		return nil, fmt.Errorf("history mirror: open %s: %w", path, err)
	}
	fi, err := os.Lstat(path)
	if err == nil && !fi.Mode().IsRegular() { // swapped for a link since checked
		err = fmt.Errorf("%w: %s is not a regular file", errSkip, path)
	}
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("history mirror: open %s: %w", path, err)
	}
	h := &openDB{db: db, path: path, info: fi, used: time.Now()}
	m.open[dir] = h
	clear(m.checked)
	m.evict()
	m.sweep(ctx, dir, db, current)
	return h, nil
}

// mirrorUnusable says why dir cannot hold a mirror ("" when it can),
// creating .rein/data (with a .gitignore keeping the history out of git)
// when .rein exists. Links are refused: a workspace must not point the
// server's writes elsewhere.
func mirrorUnusable(dir string) string {
	rein := filepath.Join(dir, ".rein")
	fi, err := os.Lstat(rein)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return "it has no .rein directory (create one, e.g. with rein init, to keep a history mirror)"
	case err != nil:
		return err.Error()
	case !fi.IsDir():
		return ".rein is not a directory (a link or a file)"
	}
	data := filepath.Join(rein, "data")
	if fi, err = os.Lstat(data); errors.Is(err, os.ErrNotExist) {
		if err := os.Mkdir(data, 0o700); err != nil {
			return fmt.Sprintf(".rein is not writable: %v", err)
		}
		_ = os.WriteFile(filepath.Join(data, ".gitignore"), []byte("# rein's history mirror: never commit it\n*\n"), 0o600)
	} else if err != nil || !fi.IsDir() {
		return ".rein/data is not a directory (a link or a file)"
	}
	if err := sqlitedb.CheckFiles(filepath.Join(dir, File)); err != nil {
		return err.Error()
	}
	f, err := os.CreateTemp(data, ".probe-*")
	if err != nil {
		return fmt.Sprintf(".rein/data is not writable: %v", err)
	}
	f.Close()
	os.Remove(f.Name())
	return ""
}

// sweep marks dirty every session of the store in dir and every session
// of its mirror (those the store no longer has are removed), except
// current.
func (m *Mirror) sweep(ctx context.Context, dir string, db DB, current string) {
	ids := map[string]bool{}
	for _, src := range []session.Store{m.cfg.Store, db} {
		list, err := listSessions(ctx, src, dir)
		if err != nil {
			m.cfg.Logger.Warn("history mirror: listing the workspace's sessions failed; some may stay behind until they run", "dir", dir, "err", err)
		}
		for _, s := range list {
			ids[s.ID] = true
		}
	}
	delete(ids, current)
	for id := range ids {
		m.mark(id, dir)
	}
}

// listSessions returns every session of store in dir.
func listSessions(ctx context.Context, store session.Store, dir string) ([]*session.Session, error) {
	seen := map[string]bool{}
	var out []*session.Session
	cursor := ""
	for {
		page, next, err := store.List(ctx, session.ListOptions{WorkDir: dir, Limit: 500, Cursor: cursor})
		if err != nil {
			return out, err
		}
		for _, s := range page {
			if !seen[s.ID] {
				seen[s.ID] = true
				out = append(out, s)
			}
		}
		if next == "" || len(page) == 0 {
			return out, nil
		}
		cursor = next
	}
}

// closeHandle closes dir's mirror, if open.
func (m *Mirror) closeHandle(dir string) {
	h := m.open[dir]
	if h == nil {
		return
	}
	delete(m.open, dir)
	if err := h.db.Close(); err != nil {
		m.cfg.Logger.Warn("history mirror: close", "path", h.path, "err", err)
	}
	m.mu.Lock()
	m.stats.Open = len(m.open)
	m.mu.Unlock()
}

// evict closes the least recently used mirrors beyond MaxOpen.
func (m *Mirror) evict() {
	for len(m.open) > m.cfg.MaxOpen {
		var oldest string
		for dir, h := range m.open {
			if oldest == "" || h.used.Before(m.open[oldest].used) {
				oldest = dir
			}
		}
		m.closeHandle(oldest)
	}
	m.mu.Lock()
	m.stats.Open = len(m.open)
	m.mu.Unlock()
}

// closeIdle closes the mirrors unused for IdleClose.
func (m *Mirror) closeIdle() {
	m.work.Lock()
	defer m.work.Unlock()
	for dir, h := range m.open {
		if time.Since(h.used) >= m.cfg.IdleClose {
			m.closeHandle(dir)
		}
	}
}

// closeAll closes every mirror.
func (m *Mirror) closeAll() {
	m.work.Lock()
	defer m.work.Unlock()
	for dir := range m.open {
		m.closeHandle(dir)
	}
}
