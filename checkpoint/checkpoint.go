// Package checkpoint keeps the checkpoints of a session's prompts (SPEC
// CLI-6): before a prompt's file tools first change a file, the file's
// content (or its absence) is saved, so the code can be put back as it was
// before any prompt. A store lives in a directory of the session's own
// (never the user's .git): an append-only index, one JSON record a line,
// and the saved contents by their SHA-256. It survives a resume, as the
// session's directory does.
//
// What is not tracked cannot be restored, and the store says so: changes
// made by shell commands (the bash tool, the user's ! commands), by
// sub-agents, and files over [MaxFileSize].
package checkpoint

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/reinhq/rein/internal/atomicfile"
)

// MaxFileSize is the largest file a checkpoint saves; a larger one is
// listed as not restorable.
const MaxFileSize = 32 << 20

// Point is one prompt's checkpoint.
type Point struct {
	// Seq numbers the checkpoints of a session from 1.
	Seq int `json:"seq"`
	// Prompt is the prompt's text, cut to a line; Time when it was sent.
	Prompt string    `json:"prompt"`
	Time   time.Time `json:"time"`
	// Mark is where the conversation stood before the prompt, for the
	// front end (the session's last entry, say).
	Mark int64 `json:"mark"`
	// Files are the files the prompt's file tools changed, each with the
	// content it had before.
	Files []File `json:"files,omitempty"`
	// Shell lists the shell commands run during the prompt: their effects
	// cannot be restored.
	Shell []string `json:"shell,omitempty"`
}

// File is a file as it was before a prompt changed it.
type File struct {
	Path string `json:"path"`
	// Blob is the SHA-256 of the saved content; empty when the file did
	// not exist (restoring removes it).
	Blob string `json:"blob,omitempty"`
	Mode uint32 `json:"mode,omitempty"`
	// Untracked says why the file cannot be restored (too large, not a
	// regular file); empty when it can.
	Untracked string `json:"untracked,omitempty"`
}

// record is one line of the index.
type record struct {
	Kind  string `json:"kind"` // begin, file, shell
	Seq   int    `json:"seq"`
	Point *Point `json:"point,omitempty"`
	File  *File  `json:"file,omitempty"`
	Shell string `json:"shell,omitempty"`
}

// Store is a session's checkpoints. Its methods are safe for concurrent
// use.
type Store struct {
	dir    string
	mu     sync.Mutex
	points []Point
	seen   map[string]bool // files saved in the current checkpoint
}

// Open opens (creating it) the store in dir and reads its index; a
// truncated last line (a crash while writing it) is dropped.
func Open(dir string) (*Store, error) {
	if err := os.MkdirAll(filepath.Join(dir, "blobs"), 0o700); err != nil {
		return nil, fmt.Errorf("checkpoint: %w", err)
	}
	s := &Store{dir: dir, seen: map[string]bool{}}
	data, err := os.ReadFile(s.index())
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("checkpoint: %w", err)
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	for sc.Scan() {
		var r record
		if json.Unmarshal(sc.Bytes(), &r) != nil {
			continue // a torn line
		}
		s.apply(r)
	}
	return s, nil
}

// index is the index file's path.
func (s *Store) index() string { return filepath.Join(s.dir, "index.jsonl") }

// apply adds a record to the points read.
func (s *Store) apply(r record) {
	switch r.Kind {
	case "begin":
		if r.Point != nil && (len(s.points) == 0 || r.Point.Seq > s.points[len(s.points)-1].Seq) {
			s.points = append(s.points, *r.Point)
			s.seen = map[string]bool{}
		}
	case "file":
		if n := len(s.points); n > 0 && r.File != nil && s.points[n-1].Seq == r.Seq && !s.seen[r.File.Path] {
			s.points[n-1].Files = append(s.points[n-1].Files, *r.File)
			s.seen[r.File.Path] = true
		}
	case "shell":
		if n := len(s.points); n > 0 && s.points[n-1].Seq == r.Seq {
			s.points[n-1].Shell = append(s.points[n-1].Shell, r.Shell)
		}
	}
}

// append writes a record to the index and applies it.
func (s *Store) append(r record) error {
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	f, err := os.OpenFile(s.index(), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	_, werr := f.Write(append(b, '\n'))
	serr := f.Sync()
	if cerr := f.Close(); werr == nil {
		werr = cmpErr(serr, cerr)
	}
	if werr != nil {
		return fmt.Errorf("checkpoint: %w", werr)
	}
	s.apply(r)
	return nil
}

// cmpErr is the first non-nil error.
func cmpErr(errs ...error) error {
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}

// Begin starts the checkpoint of a new prompt and returns its number.
func (s *Store) Begin(prompt string, mark int64, now time.Time) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	seq := 1
	if n := len(s.points); n > 0 {
		seq = s.points[n-1].Seq + 1
	}
	p := Point{Seq: seq, Prompt: prompt, Time: now, Mark: mark}
	return seq, s.append(record{Kind: "begin", Seq: seq, Point: &p})
}

// Track saves path (absolute) as it is now in the current checkpoint,
// unless it was saved there already: call it before a file tool changes
// the file. Without a current checkpoint it does nothing.
func (s *Store) Track(path string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := len(s.points)
	if real, err := filepath.EvalSymlinks(path); err == nil {
		path = real // the tools write through links: the target is what changes
	}
	if n == 0 || s.seen[path] {
		return nil
	}
	f := File{Path: path}
	fi, err := os.Lstat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		// Absent: restoring removes it.
	case err != nil:
		return fmt.Errorf("checkpoint: %w", err)
	case !fi.Mode().IsRegular():
		f.Untracked = "not a regular file (" + fi.Mode().Type().String() + ")"
	case fi.Size() > MaxFileSize:
		f.Untracked = fmt.Sprintf("over %d MiB", MaxFileSize>>20)
	default:
		data, err := os.ReadFile(path)
		if err != nil {
			return fmt.Errorf("checkpoint: %w", err)
		}
		sum := sha256.Sum256(data)
		f.Blob, f.Mode = hex.EncodeToString(sum[:]), uint32(fi.Mode().Perm())
		blob := filepath.Join(s.dir, "blobs", f.Blob)
		if _, err := os.Stat(blob); err != nil {
			if err := atomicfile.Write(blob, data, 0o600); err != nil {
				return fmt.Errorf("checkpoint: %w", err)
			}
		}
	}
	return s.append(record{Kind: "file", Seq: s.points[n-1].Seq, File: &f})
}

// NoteShell records that a shell command ran in the current checkpoint.
func (s *Store) NoteShell(command string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := len(s.points)
	if n == 0 {
		return nil
	}
	return s.append(record{Kind: "shell", Seq: s.points[n-1].Seq, Shell: command})
}

// Points returns the checkpoints, oldest first.
func (s *Store) Points() []Point {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := slices.Clone(s.points)
	for i := range out {
		out[i].Files = slices.Clone(out[i].Files)
		out[i].Shell = slices.Clone(out[i].Shell)
	}
	return out
}

// Changes are what restoring to a checkpoint does and cannot do.
type Changes struct {
	// Restored are the files put back, Removed those deleted (they did not
	// exist before).
	Restored, Removed []string
	// Untracked are the files that could not be saved, with why.
	Untracked []File
	// Shell are the shell commands run since: their effects stay.
	Shell []string
}

// Plan says what restoring the code to before checkpoint seq would do,
// without doing it: for each file changed by that prompt or a later one,
// its content before the first of them.
func (s *Store) Plan(seq int) (Changes, []File, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var ch Changes
	var files []File
	seen := map[string]bool{}
	found := false
	for _, p := range s.points {
		if p.Seq < seq {
			continue
		}
		found = found || p.Seq == seq
		ch.Shell = append(ch.Shell, p.Shell...)
		for _, f := range p.Files {
			if seen[f.Path] {
				continue
			}
			seen[f.Path] = true
			switch {
			case f.Untracked != "":
				ch.Untracked = append(ch.Untracked, f)
			case f.Blob == "":
				ch.Removed = append(ch.Removed, f.Path)
				files = append(files, f)
			default:
				ch.Restored = append(ch.Restored, f.Path)
				files = append(files, f)
			}
		}
	}
	if !found {
		return Changes{}, nil, fmt.Errorf("checkpoint: no checkpoint %d", seq)
	}
	return ch, files, nil
}

// Restore puts the files back as they were before checkpoint seq (see
// [Store.Plan]); every saved content is checked before any file is
// written, so a damaged store changes nothing.
func (s *Store) Restore(seq int) (Changes, error) {
	ch, files, err := s.Plan(seq)
	if err != nil {
		return Changes{}, err
	}
	contents := make(map[string][]byte, len(files))
	for _, f := range files {
		if f.Blob == "" {
			continue
		}
		data, err := os.ReadFile(filepath.Join(s.dir, "blobs", f.Blob))
		if err != nil {
			return Changes{}, fmt.Errorf("checkpoint: the saved content of %s: %w", f.Path, err)
		}
		if sum := sha256.Sum256(data); hex.EncodeToString(sum[:]) != f.Blob {
			return Changes{}, fmt.Errorf("checkpoint: the saved content of %s is damaged: nothing was restored", f.Path)
		}
		contents[f.Path] = data
	}
	for _, f := range files {
		if f.Blob == "" {
			if err := os.Remove(f.Path); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return ch, fmt.Errorf("checkpoint: remove %s: %w", f.Path, err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(f.Path), 0o755); err != nil {
			return ch, fmt.Errorf("checkpoint: %w", err)
		}
		if err := atomicfile.Write(f.Path, contents[f.Path], fs.FileMode(f.Mode)|0o200); err != nil {
			return ch, fmt.Errorf("checkpoint: restore %s: %w", f.Path, err)
		}
	}
	return ch, nil
}

// CopyTo copies the checkpoints before seq into the store in dir (a
// conversation rewound into a new session keeps its earlier checkpoints).
func (s *Store) CopyTo(dir string, seq int) (*Store, error) {
	dst, err := Open(dir)
	if err != nil {
		return nil, err
	}
	for _, p := range s.Points() {
		if p.Seq >= seq {
			break
		}
		files, shell := p.Files, p.Shell
		p.Files, p.Shell = nil, nil
		if err := dst.append(record{Kind: "begin", Seq: p.Seq, Point: &p}); err != nil {
			return nil, err
		}
		for _, f := range files {
			if f.Blob != "" {
				data, err := os.ReadFile(filepath.Join(s.dir, "blobs", f.Blob))
				if err != nil {
					return nil, fmt.Errorf("checkpoint: %w", err)
				}
				if err := atomicfile.Write(filepath.Join(dst.dir, "blobs", f.Blob), data, 0o600); err != nil {
					return nil, fmt.Errorf("checkpoint: %w", err)
				}
			}
			if err := dst.append(record{Kind: "file", Seq: p.Seq, File: &f}); err != nil {
				return nil, err
			}
		}
		for _, c := range shell {
			if err := dst.append(record{Kind: "shell", Seq: p.Seq, Shell: c}); err != nil {
				return nil, err
			}
		}
	}
	return dst, nil
}
