package jsonl

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"iter"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/reinhq/rein/session"
)

// ErrClosed is returned by a store used for writing after Close.
var ErrClosed = errors.New("jsonl: store closed")

// Store is a session.Store keeping each session in files of one directory;
// see the package documentation for the layout and the guarantees.
type Store struct {
	dir string
	now func() time.Time

	mu      sync.Mutex
	writers map[string]*writer
	closed  bool
	// creating holds, per session Create made in this process, the
	// directory fsync that makes its new names durable while it runs (see
	// Create); the session's next write waits for it.
	creating map[string]*dirSync
	syncDir  func(dir string) error // the fsync of Create's directory: syncDir; tests hold it
}

// dirSync is a directory fsync running on its own goroutine: err is its
// result once done is closed.
type dirSync struct {
	done chan struct{}
	err  error
}

var _ session.Store = (*Store)(nil)

// New returns a store rooted at dir, creating the directory (mode 0700)
// when it does not exist.
func New(dir string) (*Store, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("jsonl: %w", err)
	}
	return &Store{dir: dir, now: time.Now, writers: map[string]*writer{}, creating: map[string]*dirSync{}, syncDir: syncDir}, nil
}

// Dir returns the store's directory.
func (s *Store) Dir() string { return s.dir }

// Close releases every session this process holds open for writing.
func (s *Store) Close() error {
	s.mu.Lock()
	s.closed = true
	ws := make([]*writer, 0, len(s.writers))
	for _, w := range s.writers {
		ws = append(ws, w)
	}
	ids := make([]string, 0, len(s.creating))
	for id := range s.creating {
		ids = append(ids, id)
	}
	s.mu.Unlock()
	var errs []error
	for _, id := range ids {
		errs = append(errs, errorf(id, "create", s.created(id)))
	}
	for _, w := range ws {
		w.mu.Lock()
		errs = append(errs, w.close())
		w.mu.Unlock()
	}
	return errors.Join(errs...)
}

// Acquire takes the write lock of session id for this process (see
// session.Locker); the lock is kept until Release or Close.
func (s *Store) Acquire(id string) error {
	w, err := s.writer(id, "acquire")
	if err != nil {
		return err
	}
	w.mu.Unlock()
	return nil
}

// Release closes session id for writing and gives its lock back.
func (s *Store) Release(id string) error {
	s.mu.Lock()
	w := s.writers[id]
	s.mu.Unlock()
	cerr := errorf(id, "create", s.created(id))
	if w == nil {
		return cerr
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return errors.Join(cerr, errorf(id, "release", w.close()))
}

// writer returns the session's writer, open and locked (w.mu held).
func (s *Store) writer(id, op string) (*writer, error) {
	if err := session.ValidID(id); err != nil {
		return nil, fmt.Errorf("session: %s: %w", op, err)
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil, errorf(id, op, ErrClosed)
	}
	w := s.writers[id]
	if w == nil {
		w = &writer{id: id}
		s.writers[id] = w
	}
	s.mu.Unlock()
	w.mu.Lock()
	if w.lock == nil {
		if err := w.open(s); err != nil {
			w.mu.Unlock()
			if errors.Is(err, session.ErrLocked) {
				return nil, err // already names the session
			}
			return nil, errorf(id, op, err)
		}
	}
	return w, nil
}

func errorf(id, op string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("session %s: %s: %w", id, op, err)
}

// Create implements session.Store.
func (s *Store) Create(_ context.Context, sess *session.Session) error {
	if sess == nil {
		return fmt.Errorf("session: create: %w: nil session", session.ErrInvalid)
	}
	if sess.ID == "" {
		sess.ID = session.NewID()
	}
	if err := session.ValidID(sess.ID); err != nil {
		return fmt.Errorf("session: create: %w", err)
	}
	now := s.now()
	if sess.CreatedAt.IsZero() {
		sess.CreatedAt = now
	}
	if sess.UpdatedAt.IsZero() {
		sess.UpdatedAt = sess.CreatedAt
	}
	if err := s.publish(&meta{Session: *sess}, nil); err != nil {
		return errorf(sess.ID, "create", err)
	}
	// The directory's fsync, which makes the new names durable, runs
	// while the caller goes on (it takes the lock, builds the session's
	// tools: issue 30, CLI-1); the session's next Append, Update, Rewrite,
	// Delete or Release waits for it, so nothing written to the session
	// is reported durable before its names are. The metadata's content was
	// fsynced before its link, so a crash at any instant still leaves the
	// session whole (an empty log) or gone.
	d := &dirSync{done: make(chan struct{})}
	s.mu.Lock()
	s.creating[sess.ID] = d
	s.mu.Unlock()
	go func() {
		defer close(d.done)
		d.err = s.syncDir(s.dir)
	}()
	return nil
}

// created waits for the directory fsync Create left running for session
// id, if any, and returns its error (once: a later call returns nil).
func (s *Store) created(id string) error {
	s.mu.Lock()
	d := s.creating[id]
	s.mu.Unlock()
	if d == nil {
		return nil
	}
	<-d.done
	s.mu.Lock()
	if s.creating[id] == d {
		delete(s.creating, id)
	}
	s.mu.Unlock()
	if d.err != nil {
		return fmt.Errorf("fsync of the directory: %w", d.err)
	}
	return nil
}

// publish creates a session from its metadata and the lines of its log:
// the log is written aside, the metadata linked into place (failing when
// the id is taken), then the log renamed into place, replacing any left
// over by a Delete that crashed. The caller fsyncs the directory.
func (s *Store) publish(m *meta, lines []byte) error {
	tmp, err := writeTemp(s.dir, m.ID+logExt, lines)
	if err != nil {
		return err
	}
	defer os.Remove(tmp)
	if err := s.createMeta(m); err != nil {
		return err
	}
	return os.Rename(tmp, s.path(m.ID, logExt))
}

// publishSynced is publish, then the directory's fsync.
func (s *Store) publishSynced(m *meta, lines []byte) error {
	if err := s.publish(m, lines); err != nil {
		return err
	}
	return syncDir(s.dir)
}

// Get implements session.Store.
func (s *Store) Get(_ context.Context, id string) (*session.Session, error) {
	if err := session.ValidID(id); err != nil {
		return nil, fmt.Errorf("session: get: %w", err)
	}
	m, err := s.readMeta(id)
	if err != nil {
		return nil, errorf(id, "get", err)
	}
	return &m.Session, nil
}

// List implements session.Store. It reads every metadata file of the
// directory; files that cannot be read are left out.
func (s *Store) List(_ context.Context, opts session.ListOptions) ([]*session.Session, string, error) {
	dir, err := os.ReadDir(s.dir)
	if err != nil {
		return nil, "", fmt.Errorf("session: list: %w", err)
	}
	var all []*session.Session
	for _, d := range dir {
		id, ok := strings.CutSuffix(d.Name(), metaExt)
		if !ok || session.ValidID(id) != nil {
			continue
		}
		if m, err := s.readMeta(id); err == nil {
			all = append(all, &m.Session)
		}
	}
	page, next, err := session.Page(all, opts)
	if err != nil {
		return nil, "", fmt.Errorf("session: list: %w", err)
	}
	return page, next, nil
}

// Update implements session.Store.
func (s *Store) Update(_ context.Context, sess *session.Session) error {
	if sess == nil {
		return fmt.Errorf("session: update: %w: nil session", session.ErrInvalid)
	}
	if err := s.created(sess.ID); err != nil {
		return errorf(sess.ID, "update", err)
	}
	w, err := s.writer(sess.ID, "update")
	if err != nil {
		return err
	}
	defer w.mu.Unlock()
	m, err := s.readMeta(sess.ID)
	if err != nil {
		return errorf(sess.ID, "update", err)
	}
	created := m.CreatedAt
	m.Session = *sess
	m.CreatedAt = created
	if m.UpdatedAt.IsZero() {
		m.UpdatedAt = s.now()
	}
	return errorf(sess.ID, "update", s.writeMeta(m))
}

// Delete implements session.Store. It takes the session's lock, so a
// session open in another process is not deleted under it.
func (s *Store) Delete(_ context.Context, id string) error {
	if err := s.created(id); err != nil {
		return errorf(id, "delete", err)
	}
	w, err := s.writer(id, "delete")
	if err != nil {
		return err
	}
	defer w.mu.Unlock()
	err = os.Remove(s.path(id, metaExt))
	if err == nil {
		err = syncDir(s.dir)
	}
	if err == nil {
		err = os.Remove(s.path(id, logExt))
		if errors.Is(err, fs.ErrNotExist) {
			err = nil
		}
	}
	if err == nil {
		os.Remove(s.path(id, lockExt))
	}
	if cerr := w.close(); err == nil {
		err = cerr
	}
	return errorf(id, "delete", err)
}

// Append implements session.Store: one write and one fsync per call.
func (s *Store) Append(_ context.Context, id string, entries ...session.Entry) (int64, error) {
	w, err := s.writer(id, "append")
	if err != nil {
		return 0, err
	}
	defer w.mu.Unlock()
	entries = append([]session.Entry(nil), entries...)
	last, err := session.PrepareAppend(entries, w.next, s.now())
	if err != nil {
		return 0, errorf(id, "append", err)
	}
	if len(entries) == 0 {
		return w.next - 1, nil
	}
	lines, err := encodeEntries(entries)
	if err != nil {
		return 0, errorf(id, "append", err)
	}
	if err := w.append(lines); err != nil {
		return 0, errorf(id, "append", err)
	}
	// A new session's first entries are durable once its names are too:
	// the directory's fsync Create started has run beside this one.
	if err := s.created(id); err != nil {
		w.unappend(len(lines))
		return 0, errorf(id, "append", err)
	}
	w.next = last + 1
	return last, nil
}

// Rewrite implements session.Store.
func (s *Store) Rewrite(_ context.Context, id string, entries []session.Entry) error {
	if err := s.created(id); err != nil {
		return errorf(id, "rewrite", err)
	}
	w, err := s.writer(id, "rewrite")
	if err != nil {
		return err
	}
	defer w.mu.Unlock()
	entries = append([]session.Entry(nil), entries...)
	last, err := session.PrepareAppend(entries, w.next, s.now())
	if err != nil {
		return errorf(id, "rewrite", err)
	}
	lines, err := encodeEntries(entries)
	if err != nil {
		return errorf(id, "rewrite", err)
	}
	return errorf(id, "rewrite", w.replace(s, lines, last))
}

// Fork implements session.Store. The parent is only read, so it may be
// open in another process.
func (s *Store) Fork(ctx context.Context, id string, atSeq int64) (*session.Session, error) {
	var all []session.Entry
	for e, err := range s.Entries(ctx, id, 0) {
		if err != nil {
			return nil, err
		}
		if e.Seq != 0 {
			all = append(all, e)
		}
	}
	parent, err := s.readMeta(id)
	if err != nil {
		return nil, errorf(id, "fork", err)
	}
	kept := session.ForkEntries(all, atSeq)
	child := session.ForkSession(&parent.Session, kept, s.now())
	lines, err := encodeEntries(kept)
	if err != nil {
		return nil, errorf(id, "fork", err)
	}
	if err := s.publishSynced(&meta{Session: *child}, lines); err != nil {
		return nil, errorf(id, "fork", err)
	}
	return child, nil
}

// Entries implements session.Store. Damaged lines are yielded as heal
// entries with Seq 0 (see the package documentation). While this process
// writes the session, only what its appends completed is read.
func (s *Store) Entries(ctx context.Context, id string, afterSeq int64) iter.Seq2[session.Entry, error] {
	return func(yield func(session.Entry, error) bool) {
		if err := session.ValidID(id); err != nil {
			yield(session.Entry{}, fmt.Errorf("session: entries: %w", err))
			return
		}
		f, r, err := s.openRead(id)
		if err != nil {
			yield(session.Entry{}, errorf(id, "entries", err))
			return
		}
		if f == nil {
			return
		}
		defer f.Close()
		if err := scanLog(ctx, r, afterSeq, yield); err != nil {
			if errors.Is(err, session.ErrUnreadable) {
				err = fmt.Errorf("%s: %w", s.path(id, logExt), err)
			}
			yield(session.Entry{}, errorf(id, "entries", err))
		}
	}
}

// openRead opens a session's log for reading: nil when the session exists
// with no log yet, session.ErrNotFound when it does not exist. While this
// process has the session open for writing, the reader stops where its
// appends completed, so it never sees half a line being written.
func (s *Store) openRead(id string) (*os.File, io.Reader, error) {
	if _, err := os.Stat(s.path(id, metaExt)); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil, session.ErrNotFound
		}
		return nil, nil, err
	}
	s.mu.Lock()
	w := s.writers[id]
	s.mu.Unlock()
	if w != nil {
		w.mu.Lock()
		defer w.mu.Unlock()
	}
	f, err := os.Open(s.path(id, logExt))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	if w != nil && w.lock != nil {
		return f, io.LimitReader(f, w.size), nil
	}
	return f, f, nil
}
