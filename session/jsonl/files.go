package jsonl

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/reinhq/rein/session"
)

// meta is the content of <id>.meta.json.
type meta struct {
	session.Session
	// SeqBase is the highest seq the log ever held, so seqs are not reused
	// after a Rewrite shortened it.
	SeqBase int64 `json:"seq_base,omitempty"`
}

func (s *Store) path(id, ext string) string { return filepath.Join(s.dir, id+ext) }

const (
	logExt  = ".jsonl"
	metaExt = ".meta.json"
	lockExt = ".lock"
)

// readMeta reads the metadata of session id; a missing file is
// session.ErrNotFound.
func (s *Store) readMeta(id string) (*meta, error) {
	b, err := os.ReadFile(s.path(id, metaExt))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, session.ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	var m meta
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("%s: %w", s.path(id, metaExt), err)
	}
	return &m, nil
}

// writeMeta replaces the metadata of a session atomically.
func (s *Store) writeMeta(m *meta) error {
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	tmp, err := writeTemp(s.dir, m.ID+metaExt, b)
	if err != nil {
		return err
	}
	if err := os.Rename(tmp, s.path(m.ID, metaExt)); err != nil {
		os.Remove(tmp)
		return err
	}
	return syncDir(s.dir)
}

// createMeta publishes the metadata of a new session; an existing one is
// session.ErrExists. The link is atomic, also across processes.
func (s *Store) createMeta(m *meta) error {
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	tmp, err := writeTemp(s.dir, m.ID+metaExt, b)
	if err != nil {
		return err
	}
	defer os.Remove(tmp)
	if err := os.Link(tmp, s.path(m.ID, metaExt)); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return session.ErrExists
		}
		return err
	}
	return nil
}

// writeTemp writes data to a new temporary file in dir, fsynced unless empty, and
// returns its path.
func writeTemp(dir, name string, data []byte) (string, error) {
	f, err := os.CreateTemp(dir, "."+name+".tmp*")
	if err != nil {
		return "", err
	}
	_, err = f.Write(data)
	if err == nil && len(data) > 0 {
		// An empty file has no data to make durable; the directory's
		// fsync after the rename makes its name so.
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(f.Name())
		return "", err
	}
	return f.Name(), nil
}

// syncDir fsyncs a directory, making renames and new names in it durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}

// encodeEntries encodes entries as log lines.
func encodeEntries(entries []session.Entry) ([]byte, error) {
	var buf []byte
	for i := range entries {
		b, err := json.Marshal(&entries[i])
		if err != nil {
			return nil, fmt.Errorf("%w: entry %d: %v", session.ErrInvalid, i, err)
		}
		buf = append(append(buf, b...), '\n')
	}
	return buf, nil
}
