package workspace

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"sync"
	"time"
)

// TrustFile is where rein remembers which workspaces the user trusted.
func (p Paths) TrustFile() string { return filepath.Join(p.ConfigDir, "trust.json") }

// TrustRecord is what rein remembers of one workspace directory.
type TrustRecord struct {
	// Fingerprint is the workspace's [Fingerprint] when the user trusted
	// it; empty when the user never did. Trust holds while it matches.
	Fingerprint string `json:"fingerprint,omitempty"`
	// Files are the states of the files it covered ([Manifest.Files]), so
	// that a lost trust names the files that changed. A record written by
	// a rein before fingerprint v2 has none (and its fingerprint matches
	// no workspace: it is asked for again).
	Files map[string]string `json:"files,omitempty"`
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

// maxChanges bounds the files a lost trust names.
const maxChanges = 10

// Changes names what changed since the user trusted the workspace, whose
// files are now m: "changed .rein/start.sh", "added …", "removed …" (a
// few, then how many more); nil when the trust holds or there was none.
// A record of an older rein, without files, says so.
func (r TrustRecord) Changes(m Manifest) []string {
	if r.Fingerprint == "" || r.Trusted(m.Digest) {
		return nil
	}
	if r.Files == nil {
		return []string{"trusted with an older rein, whose fingerprint did not cover the scripts that hooks, actions and MCP servers run nor what linked directories hold"}
	}
	if c := Changes(r.Files, m.Files, maxChanges); len(c) > 0 {
		return c
	}
	return []string{"the fingerprint's scope changed"}
}

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
// are now (m, from [FingerprintFiles]).
func (s *TrustStore) Trust(dir string, m Manifest, now time.Time) error {
	if m.Digest == "" {
		return errors.New("trust: no fingerprint")
	}
	return s.Update(dir, func(r *TrustRecord) {
		r.Fingerprint, r.Files, r.TrustedAt = m.Digest, m.Files, now.UTC()
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
// was trusted as before, moves its trust to after.
func (s *TrustStore) approve(dir, rule string, before, after Manifest) error {
	return s.Update(dir, func(r *TrustRecord) {
		if rule != "" && !slices.Contains(r.Approved, rule) {
			r.Approved = append(r.Approved, rule)
		}
		if before.Digest != "" && after.Digest != "" && r.Trusted(before.Digest) {
			r.Fingerprint, r.Files = after.Digest, after.Files
		}
	})
}
