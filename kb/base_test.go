package kb

import (
	"context"
	"errors"
	"hash/fnv"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

var ctx = context.Background()

// write creates files under dir: path → content.
func write(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for p, content := range files {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// fakeEmbedder embeds a text as its terms hashed into 32 dimensions; it
// fails after failAfter calls when failAfter > 0.
type fakeEmbedder struct {
	mu        sync.Mutex
	calls     int
	texts     int
	failAfter int
}

func (e *fakeEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.calls++
	if e.failAfter > 0 && e.calls > e.failAfter {
		return nil, errors.New("model overloaded")
	}
	e.texts += len(texts)
	out := make([][]float32, len(texts))
	for i, text := range texts {
		v := make([]float32, 32)
		for _, term := range Terms(text) {
			h := fnv.New32a()
			h.Write([]byte(term))
			v[h.Sum32()%32]++
		}
		out[i] = v
	}
	return out, nil
}

func newBase(t *testing.T, root string, cfg Config) *Base {
	t.Helper()
	cfg.Root = root
	if cfg.Backend == nil {
		cfg.Backend = NewMemory()
	}
	if cfg.Now == nil {
		cfg.Now = func() time.Time { return time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC) }
	}
	b, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func add(t *testing.T, b *Base, paths ...string) *Report {
	t.Helper()
	rep, err := b.Add(ctx, paths, nil)
	if err != nil {
		t.Fatalf("Add(%v): %v", paths, err)
	}
	return rep
}

func docPaths(t *testing.T, b *Base) []string {
	t.Helper()
	docs, err := b.Documents(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, d := range docs {
		out = append(out, d.Path)
	}
	return out
}

// counts is a Report without its lists, for comparing.
type counts struct{ Added, Updated, Unchanged, Removed, Skipped int }

func countsOf(r *Report) counts {
	return counts{r.Added, r.Updated, r.Unchanged, r.Removed, len(r.Skipped)}
}

func TestAddWalk(t *testing.T) {
	root := t.TempDir()
	write(t, root, map[string]string{
		"README.md":               "# Project\n\nhello world",
		"src/main.go":             "package main\n\nfunc main() {}\n",
		"src/.hidden.go":          "package hidden",
		".env":                    "SECRET=1",
		".git/config":             "[core]",
		"node_modules/x/index.js": "module.exports = 1",
		"vendor/lib/lib.go":       "package lib",
		"build/out.txt":           "generated",
		"bin/tool":                "ELF\x00\x01\x02",
		"big.txt":                 strings.Repeat("x", 3000),
		"latin1.txt":              "caf\xe9 au lait",
		"empty.txt":               "",
	})
	b := newBase(t, root, Config{
		MaxFileSize: 2048,
		Ignore:      func(rel string, isDir bool) bool { return isDir && rel == "build" },
	})
	var progress []Progress
	rep, err := b.Add(ctx, []string{"."}, func(p Progress) { progress = append(progress, p) })
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"README.md", "empty.txt", "src/main.go", "vendor/lib/lib.go"}, docPaths(t, b)); diff != "" {
		t.Errorf("indexed documents (-want +got):\n%s", diff)
	}
	wantSkips := []Skip{
		{Path: "big.txt", Reason: "too large: 2.9 KiB > 2 KiB limit; raise kb.max_file_size to index it"},
		{Path: "bin/tool", Reason: "binary (a NUL byte at byte 3): only text files are indexed"},
		{Path: "latin1.txt", Reason: "not valid UTF-8 at byte 3: convert it to UTF-8 to index it"},
	}
	sort.Slice(rep.Skipped, func(i, j int) bool { return rep.Skipped[i].Path < rep.Skipped[j].Path })
	if diff := cmp.Diff(wantSkips, rep.Skipped); diff != "" {
		t.Errorf("skipped (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(counts{Added: 4, Skipped: 3}, countsOf(rep)); diff != "" {
		t.Errorf("report (-want +got):\n%s", diff)
	}
	if rep.Mode != ModeKeyword || rep.Chunks != 3 {
		t.Errorf("mode %q, %d chunks; want keyword, 3", rep.Mode, rep.Chunks)
	}
	if len(progress) == 0 || progress[len(progress)-1].Done != 7 || progress[len(progress)-1].Total != 7 {
		t.Errorf("progress %+v: want a last call with 7 of 7 done", progress)
	}
}

func TestAddIncremental(t *testing.T) {
	root := t.TempDir()
	write(t, root, map[string]string{"docs/a.md": "alpha", "docs/b.md": "beta", "docs/sub/c.md": "gamma", "other.md": "delta"})
	b := newBase(t, root, Config{})
	if diff := cmp.Diff(counts{Added: 4}, countsOf(add(t, b, "docs", "other.md"))); diff != "" {
		t.Errorf("first add (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(counts{Unchanged: 4}, countsOf(add(t, b, "docs", "other.md"))); diff != "" {
		t.Errorf("second add (-want +got):\n%s", diff)
	}
	write(t, root, map[string]string{"docs/a.md": "alpha changed", "docs/new.md": "epsilon"})
	if err := os.RemoveAll(filepath.Join(root, "docs", "sub")); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(root, "other.md")); err != nil {
		t.Fatal(err)
	}
	// Only docs is walked: other.md stays indexed until a reindex.
	if diff := cmp.Diff(counts{Added: 1, Updated: 1, Unchanged: 1, Removed: 1}, countsOf(add(t, b, "docs"))); diff != "" {
		t.Errorf("add after changes (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"docs/a.md", "docs/b.md", "docs/new.md", "other.md"}, docPaths(t, b)); diff != "" {
		t.Errorf("documents (-want +got):\n%s", diff)
	}
	write(t, root, map[string]string{"docs/b.md": "beta changed", "docs/untracked.md": "not added by a reindex"})
	rep, err := b.Reindex(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(counts{Updated: 1, Unchanged: 2, Removed: 1}, countsOf(rep)); diff != "" {
		t.Errorf("reindex (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"docs/a.md", "docs/b.md", "docs/new.md"}, docPaths(t, b)); diff != "" {
		t.Errorf("documents after the reindex (-want +got):\n%s", diff)
	}
	// A file that became binary leaves the index.
	write(t, root, map[string]string{"docs/new.md": "now\x00binary"})
	rep = add(t, b, "docs/new.md")
	if diff := cmp.Diff(counts{Removed: 1, Skipped: 1}, countsOf(rep)); diff != "" {
		t.Errorf("add of a file turned binary (-want +got):\n%s", diff)
	}
}

func TestAddRefused(t *testing.T) {
	root := t.TempDir()
	outside := t.TempDir()
	write(t, root, map[string]string{"in.md": "inside", "dir/x.md": "x"})
	write(t, outside, map[string]string{"secret.md": "outside"})
	if err := os.Symlink(filepath.Join(outside, "secret.md"), filepath.Join(root, "link.md")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(root, "dir", "linkdir")); err != nil {
		t.Fatal(err)
	}
	b := newBase(t, root, Config{})
	for _, tc := range []struct{ path, want string }{
		{"../x.md", "outside the knowledge base root"},
		{filepath.Join(outside, "secret.md"), "outside the knowledge base root"},
		{"link.md", "symbolic link to " + filepath.Join(outside, "secret.md")},
		{"missing.md", "missing.md does not exist"},
	} {
		_, err := b.Add(ctx, []string{"in.md", tc.path}, nil)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Add(%s) = %v, want an error saying %q", tc.path, err, tc.want)
		}
	}
	if got := docPaths(t, b); len(got) != 0 {
		t.Errorf("a refused Add indexed %v", got)
	}
	rep := add(t, b, ".")
	if diff := cmp.Diff([]string{"dir/x.md", "in.md"}, docPaths(t, b)); diff != "" {
		t.Errorf("documents (-want +got):\n%s", diff)
	}
	var reasons []string
	for _, s := range rep.Skipped {
		reasons = append(reasons, s.Path)
	}
	sort.Strings(reasons)
	if diff := cmp.Diff([]string{"dir/linkdir", "link.md"}, reasons); diff != "" {
		t.Errorf("symbolic links out of the root reported (-want +got):\n%s", diff)
	}
	if _, err := b.Add(ctx, nil, nil); err == nil {
		t.Errorf("Add of nothing succeeded")
	}
}

func TestAddUnreadable(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root reads every file")
	}
	root := t.TempDir()
	write(t, root, map[string]string{"ok.md": "fine", "locked.md": "secret"})
	if err := os.Chmod(filepath.Join(root, "locked.md"), 0); err != nil {
		t.Fatal(err)
	}
	b := newBase(t, root, Config{})
	rep := add(t, b, ".")
	if len(rep.Skipped) != 1 || !strings.Contains(rep.Skipped[0].Reason, "permission denied") || rep.Added != 1 {
		t.Errorf("report %+v: want locked.md skipped for permission and ok.md added", rep)
	}
}

func TestRemove(t *testing.T) {
	root := t.TempDir()
	write(t, root, map[string]string{"a/x.md": "x", "a/y.md": "y", "ab.md": "ab", "b.md": "b"})
	b := newBase(t, root, Config{})
	add(t, b, ".")
	if n, err := b.Remove(ctx, "a"); err != nil || n != 2 {
		t.Errorf("Remove(a) = %d, %v; want 2 (not ab.md)", n, err)
	}
	if n, err := b.Remove(ctx, filepath.Join(root, "b.md")); err != nil || n != 1 {
		t.Errorf("Remove(absolute b.md) = %d, %v", n, err)
	}
	_, err := b.Remove(ctx, "a")
	if !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "rein kb list") {
		t.Errorf("Remove of nothing = %v, want ErrNotFound with a hint", err)
	}
	if _, err := b.Remove(ctx, "../etc"); err == nil {
		t.Errorf("Remove outside the root succeeded")
	}
	if diff := cmp.Diff([]string{"ab.md"}, docPaths(t, b)); diff != "" {
		t.Errorf("documents (-want +got):\n%s", diff)
	}
	if n, err := b.Remove(ctx, "."); err != nil || n != 1 {
		t.Errorf("Remove(.) = %d, %v", n, err)
	}
}

func corpus(t *testing.T) string {
	root := t.TempDir()
	write(t, root, map[string]string{
		"net.md":   "# Networking\n\nHow to parse a URL query string with ParseQuery.",
		"tls.md":   "# TLS\n\nThe client sends its certificate during the handshake.",
		"sort.md":  "# Sorting\n\nSort a slice with a stable sort to keep equal elements in order.",
		"cook.md":  "# Cooking\n\nBoil the pasta, then drain it.",
		"empty.md": "",
	})
	return root
}

func where(res *Results) []string {
	var out []string
	for _, h := range res.Hits {
		out = append(out, h.Doc)
	}
	return out
}

func TestSearchKeyword(t *testing.T) {
	b := newBase(t, corpus(t), Config{})
	add(t, b, ".")
	res, err := b.Search(ctx, "how to parse a query string", SearchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Mode != ModeKeyword || res.Note != NoteKeywordOnly {
		t.Errorf("mode %q note %q, want keyword with the note", res.Mode, res.Note)
	}
	if diff := cmp.Diff([]string{"net.md"}, where(res)); diff != "" {
		t.Errorf("hits (-want +got):\n%s", diff)
	}
	h := res.Hits[0]
	if h.KeywordRank != 1 || h.VectorRank != 0 || h.Heading != "Networking" || h.Start != 1 || h.Score <= 0 {
		t.Errorf("hit %+v", h)
	}
	for _, q := range []string{"", "the of a", "!!! ?", "x y z"} {
		if _, err := b.Search(ctx, q, SearchOptions{}); !errors.Is(err, ErrEmptyQuery) {
			t.Errorf("Search(%q) = %v, want ErrEmptyQuery", q, err)
		}
	}
}

func TestSearchLimits(t *testing.T) {
	root := t.TempDir()
	files := map[string]string{}
	for i := range 60 {
		files[filepath.Join("d", itoa(i)+".md")] = strings.Repeat("common ", 1+i%7) + "word" + itoa(i)
	}
	write(t, root, files)
	b := newBase(t, root, Config{})
	add(t, b, ".")
	for _, tc := range []struct {
		opts SearchOptions
		want int
	}{
		{SearchOptions{}, DefaultTopK},
		{SearchOptions{TopK: 3}, 3},
		{SearchOptions{TopK: 500}, MaxTopK},
		{SearchOptions{TopK: 500, Candidates: 20}, MaxTopK},
	} {
		res, err := b.Search(ctx, "common", tc.opts)
		if err != nil || len(res.Hits) != tc.want {
			t.Errorf("Search(%+v): %d hits, %v; want %d", tc.opts, len(res.Hits), err, tc.want)
		}
	}
	// A threshold of 1 keeps the hits as good as the best only.
	res, err := b.Search(ctx, "common word7", SearchOptions{Threshold: 1})
	if err != nil || len(res.Hits) != 1 || res.Hits[0].Doc != "d/7.md" {
		t.Errorf("Search with threshold 1: %v, %v", where(res), err)
	}
}

func TestSearchHybrid(t *testing.T) {
	emb := &fakeEmbedder{}
	b := newBase(t, corpus(t), Config{Embedder: emb, EmbeddingModel: "fake-1", EmbedBatch: 2})
	rep := add(t, b, ".")
	if rep.Mode != ModeHybrid || emb.texts != 4 {
		t.Errorf("mode %q, %d texts embedded; want hybrid, 4", rep.Mode, emb.texts)
	}
	res, err := b.Search(ctx, "tls client certificate", SearchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Mode != ModeHybrid || res.Note != "" || len(res.Hits) == 0 {
		t.Fatalf("results %+v", res)
	}
	if h := res.Hits[0]; h.Doc != "tls.md" || h.KeywordRank != 1 || h.VectorRank != 1 {
		t.Errorf("best hit %+v: want tls.md found by both passes", h)
	}
	docs, _ := b.Documents(ctx)
	for _, d := range docs {
		if d.Embedding != "fake-1" {
			t.Errorf("document %s: embedding %q", d.Path, d.Embedding)
		}
	}
	// The query's embedding fails: keyword only, and the note says why.
	emb.failAfter = emb.calls
	res, err = b.Search(ctx, "tls client certificate", SearchOptions{})
	if err != nil || res.Mode != ModeKeyword || !strings.Contains(res.Note, "model overloaded") || len(res.Hits) == 0 {
		t.Errorf("search with a failing embedder: %+v, %v", res, err)
	}
	// Another model re-embeds every document.
	emb.failAfter = 0
	b2 := newBase(t, b.Root(), Config{Backend: b.backend, Embedder: emb, EmbeddingModel: "fake-2"})
	if diff := cmp.Diff(counts{Updated: 5}, countsOf(add(t, b2, "."))); diff != "" {
		t.Errorf("add with another model (-want +got):\n%s", diff)
	}
}

// An embedder failing during an Add stops it with an error; documents
// written before stay, whole.
func TestAddEmbedderFails(t *testing.T) {
	root := t.TempDir()
	files := map[string]string{}
	for i := range 20 {
		files[itoa(i)+".md"] = "document number " + itoa(i)
	}
	write(t, root, files)
	emb := &fakeEmbedder{failAfter: 3}
	mem := NewMemory()
	b := newBase(t, root, Config{Backend: mem, Embedder: emb, EmbeddingModel: "fake", EmbedBatch: 2, Workers: 1})
	rep, err := b.Add(ctx, []string{"."}, nil)
	if err == nil || !strings.Contains(err.Error(), "model overloaded") || !strings.Contains(err.Error(), "run again") {
		t.Fatalf("Add = %v, want the embedder's error", err)
	}
	docs, _ := b.Documents(ctx)
	if len(docs) != rep.Added || len(docs) == 0 || len(docs) >= 20 {
		t.Errorf("%d documents indexed, report says %d added; want some, not all", len(docs), rep.Added)
	}
	for _, d := range docs {
		if d.Chunks != 1 {
			t.Errorf("document %s has %d chunks", d.Path, d.Chunks)
		}
	}
	emb.failAfter = 0
	rep = add(t, b, ".")
	if rep.Added+rep.Unchanged != 20 {
		t.Errorf("the add after the failure: %+v", countsOf(rep))
	}
}

func TestNewRefused(t *testing.T) {
	for name, cfg := range map[string]Config{
		"no backend":      {Root: t.TempDir()},
		"no root":         {Backend: NewMemory()},
		"missing root":    {Root: filepath.Join(t.TempDir(), "nope"), Backend: NewMemory()},
		"embedder, model": {Root: t.TempDir(), Backend: NewMemory(), Embedder: &fakeEmbedder{}},
	} {
		if _, err := New(cfg); err == nil {
			t.Errorf("New with %s succeeded", name)
		}
	}
}

func TestHumanBytes(t *testing.T) {
	for n, want := range map[int64]string{0: "0 B", 1023: "1023 B", 1024: "1 KiB", 1 << 20: "1 MiB", 1887437: "1.8 MiB", 3 << 30: "3 GiB"} {
		if got := humanBytes(n); got != want {
			t.Errorf("humanBytes(%d) = %q, want %q", n, got, want)
		}
	}
	for n, want := range map[int64]string{0: "0", 999: "999", 1234: "1,234", 1234567: "1,234,567", -1234: "-1,234"} {
		if got := thousands(n); got != want {
			t.Errorf("thousands(%d) = %q, want %q", n, got, want)
		}
	}
}

// Sensitive files are never indexed — walked, named outright, or indexed
// before they became sensitive (removed by Reindex) — so kb_search cannot
// show what the tools may not read.
func TestSensitiveNeverIndexed(t *testing.T) {
	root := t.TempDir()
	write(t, root, map[string]string{"docs/a.md": "alpha", "docs/server.key": "-----BEGIN PRIVATE KEY-----",
		"notes/id_rsa": "-----BEGIN OPENSSH PRIVATE KEY-----", "notes/b.md": "beta"})
	secret := map[string]bool{"server.key": true, "id_rsa": true}
	var later bool // notes/b.md becomes sensitive after it was indexed
	b := newBase(t, root, Config{Sensitive: func(abs string) (string, bool) {
		name := filepath.Base(abs)
		if secret[name] || later && name == "b.md" {
			return name, true
		}
		return "", false
	}})
	rep := add(t, b, "docs", "notes/id_rsa", "notes/b.md")
	if diff := cmp.Diff([]string{"docs/a.md", "notes/b.md"}, docPaths(t, b)); diff != "" {
		t.Errorf("indexed (-want +got):\n%s", diff)
	}
	sort.Slice(rep.Skipped, func(i, j int) bool { return rep.Skipped[i].Path < rep.Skipped[j].Path })
	if len(rep.Skipped) != 2 || rep.Skipped[0].Path != "docs/server.key" || rep.Skipped[1].Path != "notes/id_rsa" ||
		!strings.Contains(rep.Skipped[1].Reason, "sensitive file (matches id_rsa)") {
		t.Errorf("skipped: %+v", rep.Skipped)
	}
	later = true
	if _, err := b.Reindex(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"docs/a.md"}, docPaths(t, b)); diff != "" {
		t.Errorf("after the file became sensitive (-want +got):\n%s", diff)
	}
}
