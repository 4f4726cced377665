package runner

import (
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
	"github.com/reinhq/rein/tool/mcptool"
)

// MCPReviews keeps what the user decided about flagged servers (SPEC MCP-2),
// in the user's configuration directory: the acceptances (mcp-accepted.json,
// written only by `rein mcp accept`) and the last screening of each flagged
// server a run met (mcp-flagged.json, a record for `rein mcp list`; losing it
// loses nothing but that note). An acceptance holds the [mcptool.Screening.Hash] of
// what was flagged: a changed or new flagged text is not accepted.
type MCPReviews struct {
	// Dir is the user's configuration directory; empty keeps nothing (no
	// server is accepted, nothing is recorded).
	Dir string

	mu sync.Mutex
}

// MCPAcceptance is one accepted screening of a server.
type MCPAcceptance struct {
	Server   string            `json:"server"`
	Hash     string            `json:"hash"`
	At       time.Time         `json:"at"`
	Findings []mcptool.Finding `json:"findings"`
}

// MCPFlagged is the last screening of a server that a run withheld.
type MCPFlagged struct {
	Server   string            `json:"server"`
	Hash     string            `json:"hash"`
	At       time.Time         `json:"at"`
	Findings []mcptool.Finding `json:"findings"`
}

// reviewFile is the format of both files.
type reviewFile[T any] struct {
	Version int `json:"version"`
	Entries []T `json:"entries"`
}

// maxReviewFile bounds what is read of either file.
const maxReviewFile = 4 << 20

func (r *MCPReviews) acceptedPath() string { return filepath.Join(r.Dir, "mcp-accepted.json") }
func (r *MCPReviews) flaggedPath() string  { return filepath.Join(r.Dir, "mcp-flagged.json") }

// Accepted reports whether the user accepted the server's screening of
// that hash. A file that cannot be read accepts nothing.
func (r *MCPReviews) Accepted(server, hash string) bool {
	if r == nil || r.Dir == "" || hash == "" {
		return false
	}
	list, err := readReviews[MCPAcceptance](r.acceptedPath())
	if err != nil {
		return false
	}
	return slices.ContainsFunc(list, func(a MCPAcceptance) bool { return a.Server == server && a.Hash == hash })
}

// Acceptances lists the recorded acceptances, oldest first.
func (r *MCPReviews) Acceptances() ([]MCPAcceptance, error) {
	if r == nil || r.Dir == "" {
		return nil, nil
	}
	return readReviews[MCPAcceptance](r.acceptedPath())
}

// Accept records that the user accepts the server as screened. Earlier
// acceptances of the server are replaced: a server has one accepted state.
func (r *MCPReviews) Accept(server string, s mcptool.Screening, now time.Time) error {
	if r == nil || r.Dir == "" {
		return errors.New("cannot tell your config directory to record the acceptance in: set HOME or REIN_CONFIG_DIR")
	}
	if !s.Flagged() {
		return fmt.Errorf("the MCP server %s has nothing flagged to accept", server)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	list, err := readReviews[MCPAcceptance](r.acceptedPath())
	if err != nil {
		return err
	}
	list = slices.DeleteFunc(list, func(a MCPAcceptance) bool { return a.Server == server })
	list = append(list, MCPAcceptance{Server: server, Hash: s.Hash, At: now.UTC(), Findings: s.Findings})
	return writeReviews(r.acceptedPath(), list)
}

// Revoke forgets the server's acceptance; it reports whether there was one.
func (r *MCPReviews) Revoke(server string) (bool, error) {
	if r == nil || r.Dir == "" {
		return false, nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	list, err := readReviews[MCPAcceptance](r.acceptedPath())
	if err != nil {
		return false, err
	}
	n := len(list)
	list = slices.DeleteFunc(list, func(a MCPAcceptance) bool { return a.Server == server })
	if len(list) == n {
		return false, nil
	}
	return true, writeReviews(r.acceptedPath(), list)
}

// RecordFlagged notes the screening of a server a run withheld, for
// `rein mcp list`. An unflagged screening forgets the server's note.
func (r *MCPReviews) RecordFlagged(server string, s mcptool.Screening, now time.Time) error {
	if r == nil || r.Dir == "" {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	list, err := readReviews[MCPFlagged](r.flaggedPath())
	if err != nil {
		list = nil // a damaged note is replaced
	}
	i := slices.IndexFunc(list, func(f MCPFlagged) bool { return f.Server == server })
	switch {
	case !s.Flagged() && i < 0:
		return nil
	case !s.Flagged():
		list = slices.Delete(list, i, i+1)
	case i >= 0 && list[i].Hash == s.Hash:
		return nil
	case i >= 0:
		list[i] = MCPFlagged{Server: server, Hash: s.Hash, At: now.UTC(), Findings: s.Findings}
	default:
		list = append(list, MCPFlagged{Server: server, Hash: s.Hash, At: now.UTC(), Findings: s.Findings})
	}
	return writeReviews(r.flaggedPath(), list)
}

// LastFlagged returns the last screening a run withheld the server for.
func (r *MCPReviews) LastFlagged(server string) (MCPFlagged, bool) {
	if r == nil || r.Dir == "" {
		return MCPFlagged{}, false
	}
	list, err := readReviews[MCPFlagged](r.flaggedPath())
	if err != nil {
		return MCPFlagged{}, false
	}
	i := slices.IndexFunc(list, func(f MCPFlagged) bool { return f.Server == server })
	if i < 0 {
		return MCPFlagged{}, false
	}
	return list[i], true
}

// readReviews reads one file; a missing file is an empty list.
func readReviews[T any](path string) ([]T, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var doc reviewFile[T]
	dec := json.NewDecoder(&limited{f: f, n: maxReviewFile})
	if err := dec.Decode(&doc); err != nil {
		return nil, fmt.Errorf("%s is damaged (%v): remove it and accept the servers again (rein mcp accept NAME)", path, err)
	}
	if doc.Version != 1 {
		return nil, fmt.Errorf("%s has version %d; this rein reads version 1", path, doc.Version)
	}
	return doc.Entries, nil
}

// writeReviews replaces one file whole.
func writeReviews[T any](path string, list []T) error {
	data, err := json.MarshalIndent(reviewFile[T]{Version: 1, Entries: list}, "", "  ")
	if err != nil {
		return err
	}
	if err := atomicfile.Write(path, append(data, '\n'), 0o600); err != nil {
		return fmt.Errorf("record in %s: %w", path, err)
	}
	return nil
}

// limited reads at most n bytes, then fails (a file grown huge is damage).
type limited struct {
	f *os.File
	n int64
}

func (l *limited) Read(p []byte) (int, error) {
	if l.n <= 0 {
		return 0, fmt.Errorf("larger than %d bytes", maxReviewFile)
	}
	if int64(len(p)) > l.n {
		p = p[:l.n]
	}
	n, err := l.f.Read(p)
	l.n -= int64(n)
	return n, err
}
