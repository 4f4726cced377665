package workspace

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
)

// TrustFiles are the workspace files, relative to its root, whose content
// decides what the workspace brings that needs trust (SPEC PERM-5): they
// are part of its fingerprint. They hold its settings, hooks and MCP
// servers (.rein/mcp.yaml, .mcp.json).
var TrustFiles = []string{
	".rein/settings.yaml", ".rein/settings.local.yaml", ".rein/hooks.yaml", ".rein/mcp.yaml",
	".claude/settings.json", ".claude/settings.local.json", ".mcp.json",
}

// TrustDirs are the workspace directories, relative to its root, walked
// into the fingerprint: agents, skills and actions (see
// [LoadDefinitions]).
var TrustDirs = []string{".rein/agents", ".rein/skills", ".rein/actions", ".claude/agents", ".claude/skills"}

// TrustDirsPresent are workspace directories walked into the fingerprint
// when they exist: the slash commands (.rein/commands, .claude/commands).
// A missing one adds nothing, so the fingerprint of a workspace without
// them is the one recorded before rein read commands: its trust holds.
var TrustDirsPresent = []string{".rein/commands", ".claude/commands"}

// The bounds of a fingerprint: a workspace beyond them cannot be trusted.
const (
	maxTrustEntries = 4096
	maxTrustBytes   = 64 << 20
	maxTrustDepth   = 16
)

// fingerprintVersion starts the digest. v2 added the files hooks, actions
// and MCP servers run, and the content behind linked directories: a v1
// fingerprint never matches, so trust recorded by an older rein is asked
// for again.
const fingerprintVersion = "rein trust v2"

// ErrTooLarge is wrapped by the error of a workspace whose trust-relevant
// files exceed the bounds of a fingerprint.
var ErrTooLarge = errors.New("too many or too large files to fingerprint")

// Manifest is what a workspace's fingerprint covers: each trust-relevant
// file, by its path relative to the root (slash-separated), with the
// digest of its own state. Trust remembers it so that losing trust can
// name the files that changed.
type Manifest struct {
	// Digest is the fingerprint ("sha256:…") over every entry of Files.
	Digest string
	// Files maps each path to its state: "sha256:…" (a file's content),
	// "dir", "missing", "other <type>", or "link <target> " followed by the
	// state of what the link leads to.
	Files map[string]string
}

// Fingerprint returns the digest of [FingerprintFiles].
func Fingerprint(root string) (string, error) {
	m, err := FingerprintFiles(root)
	return m.Digest, err
}

// FingerprintFiles reads every trust-relevant file of the workspace at
// root into a [Manifest]: [TrustFiles] (missing ones included, so adding
// one changes it), every entry under [TrustDirs] — a symbolic link by its
// target and by the content it leads to, a linked directory walked where it
// points — and the files that the workspace's hooks, actions and MCP
// servers run (see [runFiles]): a script named by a trusted declaration is
// covered by its content, so editing it withdraws the trust. It fails on a
// file it cannot read and beyond a few thousand files, 64 MiB, or 16
// levels of directories.
func FingerprintFiles(root string) (Manifest, error) { return fingerprintFiles(root, nil) }

// fingerprintFiles is FingerprintFiles recording in t (when not nil) the
// paths it read.
func fingerprintFiles(root string, t *trace) (Manifest, error) {
	fp := &fingerprinter{root: root, files: map[string]string{}, t: t}
	for _, rel := range TrustFiles {
		if err := fp.path(rel); err != nil {
			return Manifest{}, err
		}
	}
	for _, rel := range TrustDirs {
		if err := fp.path(rel); err != nil {
			return Manifest{}, err
		}
	}
	for _, rel := range TrustDirsPresent {
		t.add(filepath.Join(root, rel))
		if _, err := os.Lstat(filepath.Join(root, rel)); err != nil {
			continue
		}
		if err := fp.path(rel); err != nil {
			return Manifest{}, err
		}
	}
	for _, rel := range runFiles(root, t) {
		if _, done := fp.files[rel]; done {
			continue
		}
		if err := fp.path(rel); err != nil {
			return Manifest{}, err
		}
	}
	return Manifest{Digest: digest(fp.files), Files: fp.files}, nil
}

// digest hashes the entries in path order, each length-prefixed so that
// no two sets of entries hash alike.
func digest(files map[string]string) string {
	h := sha256.New()
	io.WriteString(h, fingerprintVersion+"\x00")
	for _, rel := range slices.Sorted(maps.Keys(files)) {
		for _, s := range []string{rel, files[rel]} {
			io.WriteString(h, strconv.Itoa(len(s))+":"+s)
		}
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}

// fingerprinter records entries, counting what it read.
type fingerprinter struct {
	root  string
	files map[string]string
	bytes int64
	// walking are the directories being walked, so a link back up a tree
	// is recorded, not followed.
	walking []os.FileInfo
	buf     []byte // for reading, shared by the files
	t       *trace // records the paths read
}

// record sets the state of rel, within the bounds.
func (fp *fingerprinter) record(rel, state string) error {
	fp.files[filepath.ToSlash(rel)] = state
	if len(fp.files) > maxTrustEntries {
		return fmt.Errorf("workspace %s: %w (at most %d files)", fp.root, ErrTooLarge, maxTrustEntries)
	}
	return nil
}

// path records the workspace path rel and, for a directory, everything
// under it.
func (fp *fingerprinter) path(rel string) error {
	return fp.entry(rel, filepath.Join(fp.root, rel), 0)
}

// entry records the file at p under the name rel; depth counts the
// directories above it in the walk.
func (fp *fingerprinter) entry(rel, p string, depth int) error {
	fp.t.add(p)
	fi, err := os.Lstat(p)
	switch {
	case errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrInvalid) || isNotDir(err):
		return fp.record(rel, "missing")
	case err != nil:
		return fmt.Errorf("fingerprint: %w", err)
	}
	link := ""
	if fi.Mode()&fs.ModeSymlink != 0 {
		target, err := os.Readlink(p)
		if err != nil {
			return fmt.Errorf("fingerprint: %w", err)
		}
		link = "link " + target + " "
		if fi, err = os.Stat(p); err != nil {
			return fp.record(rel, link+"missing") // a dangling link, or a loop of links
		}
	}
	switch {
	case fi.IsDir():
		return fp.dir(rel, p, link, fi, depth)
	case !fi.Mode().IsRegular():
		return fp.record(rel, link+"other "+fi.Mode().Type().String())
	}
	sum, err := fp.hash(rel, p, fi.Size())
	if err != nil {
		return err
	}
	return fp.record(rel, link+sum)
}

// isNotDir reports the error of a path through a file (a/b where a is a
// file): the path does not exist.
func isNotDir(err error) bool { return errors.Is(err, syscall.ENOTDIR) }

// hash returns the digest of the content of the file at p.
func (fp *fingerprinter) hash(rel, p string, size int64) (string, error) {
	if fp.bytes+size > maxTrustBytes {
		return "", fmt.Errorf("workspace %s: %s: %w (at most %d MiB in all)", fp.root, rel, ErrTooLarge, maxTrustBytes>>20)
	}
	f, err := os.Open(p)
	if err != nil {
		return "", fmt.Errorf("fingerprint: %w", err)
	}
	defer f.Close()
	h := sha256.New()
	if fp.buf == nil {
		fp.buf = make([]byte, 32<<10)
	}
	n, err := io.CopyBuffer(h, io.LimitReader(f, maxTrustBytes-fp.bytes+1), fp.buf)
	if err != nil {
		return "", fmt.Errorf("fingerprint: %s: %w", rel, err)
	}
	if fp.bytes += n; fp.bytes > maxTrustBytes {
		return "", fmt.Errorf("workspace %s: %s: %w (at most %d MiB in all)", fp.root, rel, ErrTooLarge, maxTrustBytes>>20)
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil)), nil
}

// dir records a directory (reached through a link when link is set) and
// walks it, in lexical order; a linked directory is walked where it
// points, a link back into a directory being walked is recorded only.
func (fp *fingerprinter) dir(rel, p, link string, fi os.FileInfo, depth int) error {
	if depth >= maxTrustDepth {
		return fmt.Errorf("workspace %s: %s: %w (deeper than %d)", fp.root, rel, ErrTooLarge, maxTrustDepth)
	}
	if slices.ContainsFunc(fp.walking, func(w os.FileInfo) bool { return os.SameFile(w, fi) }) {
		return fp.record(rel, link+"cycle")
	}
	if err := fp.record(rel, link+"dir"); err != nil {
		return err
	}
	entries, err := os.ReadDir(p)
	if err != nil {
		return fmt.Errorf("fingerprint: %w", err)
	}
	if len(entries) > maxTrustEntries {
		return fmt.Errorf("workspace %s: %s: %w (at most %d files)", fp.root, rel, ErrTooLarge, maxTrustEntries)
	}
	fp.walking = append(fp.walking, fi)
	defer func() { fp.walking = fp.walking[:len(fp.walking)-1] }()
	for _, e := range entries {
		if err := fp.entry(filepath.Join(rel, e.Name()), filepath.Join(p, e.Name()), depth+1); err != nil {
			return err
		}
	}
	return nil
}

// Changes names what differs between the files of a trusted manifest
// (was) and those now, one line each, sorted: "changed .rein/start.sh",
// "added …", "removed …"; at most limit lines, the last saying how many
// more there are.
func Changes(was, now map[string]string, limit int) []string {
	var out []string
	for rel, cur := range now {
		old, ok := was[rel]
		if !ok {
			old = "missing"
		}
		switch {
		case old == cur:
		case old == "missing":
			out = append(out, "added "+rel)
		case cur == "missing":
			out = append(out, "removed "+rel)
		default:
			out = append(out, "changed "+rel)
		}
	}
	for rel, old := range was {
		if _, ok := now[rel]; !ok && old != "missing" {
			out = append(out, "removed "+rel)
		}
	}
	slices.SortFunc(out, func(a, b string) int { // each path once: a total order
		_, pa, _ := strings.Cut(a, " ")
		_, pb, _ := strings.Cut(b, " ")
		return strings.Compare(pa, pb)
	})
	if limit > 0 && len(out) > limit {
		out = append(out[:limit-1], fmt.Sprintf("and %d more", len(out)-limit+1))
	}
	return out
}
