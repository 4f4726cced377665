package workspace

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"sync"
	"time"
)

// TrustFiles are the workspace files, relative to its root, whose content
// decides what the workspace brings that needs trust (SPEC PERM-5): their
// digest is the workspace's fingerprint. They hold its settings, hooks and
// MCP servers (.rein/mcp.yaml, .mcp.json).
var TrustFiles = []string{
	".rein/settings.yaml", ".rein/settings.local.yaml", ".rein/hooks.yaml", ".rein/mcp.yaml",
	".claude/settings.json", ".mcp.json",
}

// TrustDirs are the workspace directories, relative to its root, walked
// into the fingerprint: agents, skills and actions (see
// [LoadDefinitions]).
var TrustDirs = []string{".rein/agents", ".rein/skills", ".rein/actions", ".claude/agents", ".claude/skills"}

// The bounds of a fingerprint: a workspace beyond them cannot be trusted.
const (
	maxTrustEntries = 4096
	maxTrustBytes   = 64 << 20
	maxTrustDepth   = 16
)

// ErrTooLarge is wrapped by the error of a workspace whose trust-relevant
// files exceed the bounds of a fingerprint.
var ErrTooLarge = errors.New("too many or too large files to fingerprint")

// Fingerprint returns the digest ("sha256:…") of the workspace's
// trust-relevant files ([TrustFiles], and every file under [TrustDirs]):
// each one's path, kind and content, missing ones included, so adding,
// changing or removing any of them changes it. Symbolic links are read
// through; a linked directory inside a walked one counts by its target's
// path only.
// It fails on a file it cannot read and beyond a few thousand files or
// 64 MiB.
func Fingerprint(root string) (string, error) {
	fp := &fingerprinter{h: sha256.New(), root: root}
	io.WriteString(fp.h, "rein trust v1\x00")
	for _, rel := range TrustFiles {
		if err := fp.file(rel); err != nil {
			return "", err
		}
	}
	for _, rel := range TrustDirs {
		if err := fp.dir(rel); err != nil {
			return "", err
		}
	}
	return "sha256:" + hex.EncodeToString(fp.h.Sum(nil)), nil
}

// fingerprinter hashes entries in a fixed order, counting what it read.
type fingerprinter struct {
	h       hash.Hash
	root    string
	entries int
	bytes   int64
}

// entry hashes one record: the path, its kind and a payload, each
// length-prefixed so no two sequences of records hash alike.
func (fp *fingerprinter) entry(rel, kind string, payload []byte) error {
	fp.entries++
	fp.bytes += int64(len(payload))
	if fp.entries > maxTrustEntries || fp.bytes > maxTrustBytes {
		return fmt.Errorf("workspace %s: %w (at most %d files, %d MiB)", fp.root, ErrTooLarge, maxTrustEntries, maxTrustBytes>>20)
	}
	for _, s := range [][]byte{[]byte(filepath.ToSlash(rel)), []byte(kind), payload} {
		io.WriteString(fp.h, strconv.Itoa(len(s))+":")
		fp.h.Write(s)
	}
	return nil
}

// file hashes a file of the workspace by its content, as the loaders read
// it.
func (fp *fingerprinter) file(rel string) error {
	return fp.read(rel, filepath.Join(fp.root, rel))
}

// read hashes the file at p under the name rel.
func (fp *fingerprinter) read(rel, p string) error {
	fi, err := os.Stat(p)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fp.entry(rel, "missing", nil)
	case err != nil:
		return fmt.Errorf("fingerprint: %w", err)
	case !fi.Mode().IsRegular():
		return fp.entry(rel, "other "+fi.Mode().Type().String(), nil)
	case fi.Size() > maxTrustBytes:
		return fmt.Errorf("workspace %s: %s: %w", fp.root, rel, ErrTooLarge)
	}
	data, err := os.ReadFile(p)
	if err != nil {
		return fmt.Errorf("fingerprint: %w", err)
	}
	return fp.entry(rel, "file", data)
}

// dir hashes every entry under a directory, in lexical order.
func (fp *fingerprinter) dir(rel string) error {
	top := filepath.Join(fp.root, rel)
	fi, err := os.Stat(top)
	if errors.Is(err, fs.ErrNotExist) {
		return fp.file(rel)
	}
	if err != nil {
		return fmt.Errorf("fingerprint: %w", err)
	}
	if !fi.IsDir() {
		return fp.file(rel)
	}
	rootReal, rerr := filepath.EvalSymlinks(fp.root)
	if real, err := filepath.EvalSymlinks(top); err == nil && rerr == nil && real != filepath.Join(rootReal, rel) {
		if err := fp.entry(rel, "link", []byte(real)); err != nil {
			return err
		}
		top = real // a linked directory is walked where it points
	}
	return filepath.WalkDir(top, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return fmt.Errorf("fingerprint: %w", err)
		}
		sub, _ := filepath.Rel(top, p)
		r := filepath.Join(rel, sub)
		switch {
		case d.IsDir():
			if depth(r) > maxTrustDepth {
				return fmt.Errorf("workspace %s: %s: %w (deeper than %d)", fp.root, r, ErrTooLarge, maxTrustDepth)
			}
			return fp.entry(r, "dir", nil)
		case d.Type()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return fmt.Errorf("fingerprint: %w", err)
			}
			if err := fp.entry(r, "link", []byte(target)); err != nil {
				return err
			}
			if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() {
				return fp.read(r, p)
			}
			return nil
		}
		return fp.read(r, p)
	})
}

func depth(rel string) int {
	n := 1
	for _, c := range filepath.ToSlash(rel) {
		if c == '/' {
			n++
		}
	}
	return n
}

// TrustFile is where rein remembers which workspaces the user trusted.
func (p Paths) TrustFile() string { return filepath.Join(p.ConfigDir, "trust.json") }

// TrustRecord is what rein remembers of one workspace directory.
type TrustRecord struct {
	// Fingerprint is the workspace's [Fingerprint] when the user trusted
	// it; empty when the user never did. Trust holds while it matches.
	Fingerprint string `json:"fingerprint,omitempty"`
	// TrustedAt is when the user trusted it.
	TrustedAt time.Time `json:"trusted_at,omitzero"`
	// Approved are the allow rules the user granted here by answering
	// "always" (kept in .rein/settings.local.yaml); they apply whether
	// the workspace is trusted or not, since they came from the user.
	Approved []string `json:"approved_rules,omitempty"`
}

// Trusted reports whether the record trusts a workspace whose files now
// have fingerprint fp.
func (r TrustRecord) Trusted(fp string) bool { return r.Fingerprint != "" && r.Fingerprint == fp }

// trustDoc is the trust file.
type trustDoc struct {
	Version    int                    `json:"version"`
	Workspaces map[string]TrustRecord `json:"workspaces"`
}

// TrustStore keeps the user's trust decisions in one small JSON file
// (trust.json in the user's config directory), rewritten atomically
// (a temporary file renamed over it, mode 0600). Records are keyed by the
// workspace root with symbolic links resolved. It is safe for concurrent
// use within a process; two processes writing at once may lose one write.
type TrustStore struct {
	// Path is the file.
	Path string
	mu   sync.Mutex
}

// TrustKey is the key of a workspace directory: absolute, cleaned, with
// symbolic links resolved when it exists.
func TrustKey(dir string) string {
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		return real
	}
	return filepath.Clean(dir)
}

// read loads the file; a missing file is an empty one.
func (s *TrustStore) read() (trustDoc, error) {
	doc := trustDoc{Version: 1, Workspaces: map[string]TrustRecord{}}
	data, err := os.ReadFile(s.Path)
	if errors.Is(err, fs.ErrNotExist) {
		return doc, nil
	}
	if err != nil {
		return doc, fmt.Errorf("trust file: %w", err)
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return doc, fmt.Errorf("trust file %s: not valid (remove it to start over): %w", s.Path, err)
	}
	if doc.Workspaces == nil {
		doc.Workspaces = map[string]TrustRecord{}
	}
	return doc, nil
}

// Get returns the record of the workspace at dir.
func (s *TrustStore) Get(dir string) (TrustRecord, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	doc, err := s.read()
	return doc.Workspaces[TrustKey(dir)], err
}

// TrustEntry is one workspace of the trust file.
type TrustEntry struct {
	Dir string
	TrustRecord
}

// List returns every record, sorted by directory.
func (s *TrustStore) List() ([]TrustEntry, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	doc, err := s.read()
	if err != nil {
		return nil, err
	}
	out := make([]TrustEntry, 0, len(doc.Workspaces))
	for dir, r := range doc.Workspaces {
		out = append(out, TrustEntry{Dir: dir, TrustRecord: r})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Dir < out[j].Dir })
	return out, nil
}

// Update changes the record of dir under the store's lock — and a file
// lock beside it (trust.json.lock), so two rein processes never lose each
// other's write — and writes the file; a record left empty is removed.
func (s *TrustStore) Update(dir string, fn func(r *TrustRecord)) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := os.MkdirAll(filepath.Dir(s.Path), 0o700); err != nil {
		return fmt.Errorf("trust file: %w", err)
	}
	unlock, err := lockFile(s.Path + ".lock")
	if err != nil {
		return fmt.Errorf("trust file: lock: %w", err)
	}
	defer unlock()
	doc, err := s.read()
	if err != nil {
		return err
	}
	key := TrustKey(dir)
	r := doc.Workspaces[key]
	fn(&r)
	if r.Fingerprint == "" && len(r.Approved) == 0 {
		delete(doc.Workspaces, key)
	} else {
		doc.Workspaces[key] = r
	}
	doc.Version = 1
	data, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return err
	}
	if err := WriteFileAtomic(s.Path, append(data, '\n'), 0o600); err != nil {
		return fmt.Errorf("trust file: %w", err)
	}
	return nil
}

// Trust records that the user trusts the workspace at dir as its files
// are now (fingerprint fp).
func (s *TrustStore) Trust(dir, fp string, now time.Time) error {
	if fp == "" {
		return errors.New("trust: no fingerprint")
	}
	return s.Update(dir, func(r *TrustRecord) {
		r.Fingerprint, r.TrustedAt = fp, now.UTC()
	})
}

// Revoke forgets the user's trust in the workspace at dir and the rules
// approved there; it reports whether there was anything to forget.
func (s *TrustStore) Revoke(dir string) (bool, error) {
	had := false
	err := s.Update(dir, func(r *TrustRecord) {
		had = r.Fingerprint != "" || len(r.Approved) > 0
		*r = TrustRecord{}
	})
	return had, err
}

// approve adds rule to the approved rules of dir and, when the workspace
// was trusted with fingerprint before, moves its trust to after.
func (s *TrustStore) approve(dir, rule, before, after string) error {
	return s.Update(dir, func(r *TrustRecord) {
		if rule != "" && !slices.Contains(r.Approved, rule) {
			r.Approved = append(r.Approved, rule)
		}
		if before != "" && after != "" && r.Trusted(before) {
			r.Fingerprint = after
		}
	})
}
