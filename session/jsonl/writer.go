package jsonl

import (
	"errors"
	"fmt"
	"os"
	"sync"

	"github.com/reinhq/rein/session"
)

// writer is this process's write access to one session: the flock, the log
// opened for appending, and where the log ends. Its mutex serialises the
// session's writes within the process; the flock excludes other processes.
type writer struct {
	mu   sync.Mutex
	id   string
	lock *os.File // nil when the session is not open for writing
	log  *os.File
	size int64 // bytes of the log, all of them good
	next int64 // seq of the next entry
	base int64 // the meta's seq_base
}

// open takes the lock, truncates a damaged tail and finds the next seq.
func (w *writer) open(s *Store) error {
	lock, err := lockFile(s.path(w.id, lockExt), w.id)
	if err != nil {
		return err
	}
	m, err := s.readMeta(w.id)
	if err != nil {
		if errors.Is(err, session.ErrNotFound) {
			os.Remove(s.path(w.id, lockExt)) // leave no lock of a session that does not exist
		}
		unlockFile(lock)
		return err
	}
	log, size, last, err := openLog(s.path(w.id, logExt))
	if err != nil {
		unlockFile(lock)
		return err
	}
	w.lock, w.log, w.size, w.base = lock, log, size, m.SeqBase
	w.next = max(last, m.SeqBase) + 1
	return nil
}

// openLog opens a log for appending, cutting off a damaged tail (a torn
// or NUL-padded last line) so new lines follow the last good one.
func openLog(path string) (f *os.File, size, last int64, err error) {
	f, err = os.OpenFile(path, os.O_RDWR|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return nil, 0, 0, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, 0, 0, err
	}
	size, last, err = goodTail(f, st.Size())
	if err == nil && size < st.Size() {
		if err = f.Truncate(size); err == nil {
			err = f.Sync()
		}
	}
	if err != nil {
		f.Close()
		return nil, 0, 0, fmt.Errorf("%s: %w", path, err)
	}
	return f, size, last, nil
}

// close releases the files and the lock.
func (w *writer) close() error {
	if w.lock == nil {
		return nil
	}
	err := w.log.Close()
	if lerr := unlockFile(w.lock); err == nil {
		err = lerr
	}
	w.lock, w.log = nil, nil
	return err
}

// append writes encoded lines with one write and fsyncs them. On failure
// the log is cut back to where it was, so no partial batch stays behind.
func (w *writer) append(lines []byte) error {
	n, err := w.log.Write(lines)
	if err == nil {
		err = w.log.Sync()
	}
	if err != nil {
		if n > 0 {
			if terr := w.log.Truncate(w.size); terr != nil {
				// The log's end is unknown now: reopen before writing again.
				w.close()
			}
		}
		return err
	}
	w.size += int64(len(lines))
	return nil
}

// unappend takes back the last n bytes append wrote, which could not be
// made durable after all.
func (w *writer) unappend(n int) {
	w.size -= int64(n)
	if err := w.log.Truncate(w.size); err != nil {
		w.close() // the log's end is unknown now: reopen before writing again
	}
}

// replace atomically replaces the log with lines whose last seq is last,
// recording last as the meta's seq_base first so seqs are never reused.
func (w *writer) replace(s *Store, lines []byte, last int64) error {
	m, err := s.readMeta(w.id)
	if err != nil {
		return err
	}
	if last > m.SeqBase {
		m.SeqBase = last
		if err := s.writeMeta(m); err != nil {
			return err
		}
	}
	tmp, err := writeTemp(s.dir, w.id+logExt, lines)
	if err != nil {
		return err
	}
	if err := os.Rename(tmp, s.path(w.id, logExt)); err != nil {
		os.Remove(tmp)
		return err
	}
	if err := syncDir(s.dir); err != nil {
		return err
	}
	log, err := os.OpenFile(s.path(w.id, logExt), os.O_RDWR|os.O_APPEND, 0o600)
	if err != nil {
		w.close()
		return err
	}
	w.log.Close()
	w.log, w.size, w.base, w.next = log, int64(len(lines)), m.SeqBase, last+1
	return nil
}

var _ session.Locker = (*Store)(nil)
