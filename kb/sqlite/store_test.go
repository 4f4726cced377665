package sqlite

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/reinhq/rein/internal/migration"
	"github.com/reinhq/rein/kb"
	"github.com/reinhq/rein/kb/kbtest"
)

var ctx = context.Background()

func openTemp(t testing.TB) *Store {
	t.Helper()
	return openAt(t, filepath.Join(t.TempDir(), "data", "kb.db"))
}

func openAt(t testing.TB, path string) *Store {
	t.Helper()
	s, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestConformance(t *testing.T) {
	kbtest.Run(t, func(t *testing.T) kb.Backend { return openTemp(t) })
}

func putTexts(t testing.TB, s *Store, path string, vecs [][]float32, texts ...string) {
	t.Helper()
	chunks := make([]kb.Chunk, len(texts))
	for i, text := range texts {
		chunks[i] = kb.Chunk{Start: 10*i + 1, End: 10*i + 5, Text: text}
	}
	doc := kb.Document{Path: path, Hash: "h", Indexed: time.Unix(1, 0)}
	if err := s.Put(ctx, doc, chunks, vecs); err != nil {
		t.Fatalf("Put(%s): %v", path, err)
	}
}

func where(hits []kb.Hit) []string {
	out := []string{}
	for _, h := range hits {
		out = append(out, fmt.Sprintf("%s:%d", h.Doc, h.Start))
	}
	return out
}

func TestOpenModes(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "rein", "data")
	s := openAt(t, filepath.Join(dir, "kb.db"))
	for path, want := range map[string]os.FileMode{dir: 0o700 | os.ModeDir, s.Path(): 0o600} {
		info, err := os.Stat(path)
		if err != nil || info.Mode() != want {
			t.Errorf("%s: mode %v, %v; want %v", path, info.Mode(), err, want)
		}
	}
	if _, err := Open("", Options{}); err == nil {
		t.Errorf("Open of an empty path succeeded")
	}
}

func TestNewerSchema(t *testing.T) {
	path := filepath.Join(t.TempDir(), "kb.db")
	s, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.db.Exec(`INSERT INTO schema_version (version, name, applied_at) VALUES (99, '0099_future', 0)`); err != nil {
		t.Fatal(err)
	}
	s.Close()
	_, err = Open(path, Options{})
	if !errors.Is(err, ErrNewerSchema) || !strings.Contains(err.Error(), "version 99") {
		t.Errorf("Open of a newer database = %v, want ErrNewerSchema naming version 99", err)
	}
	// Reopening a current one applies nothing twice.
	path2 := filepath.Join(t.TempDir(), "kb.db")
	openAt(t, path2).Close()
	s2 := openAt(t, path2)
	ms, err := migration.Load(migrationFiles, "migrations")
	if err != nil {
		t.Fatal(err)
	}
	var n int
	if err := s2.db.QueryRow(`SELECT count(*) FROM schema_version`).Scan(&n); err != nil || n != len(ms) {
		t.Errorf("schema_version rows after two opens: %d, %v; want %d", n, err, len(ms))
	}
}

// Deleting and replacing documents leaves no index entry behind.
func TestNoStaleIndexEntries(t *testing.T) {
	s := openTemp(t)
	putTexts(t, s, "a.md", [][]float32{{1, 0}, {0, 1}}, "one two", "three")
	putTexts(t, s, "b.md", nil, "four")
	putTexts(t, s, "a.md", [][]float32{{1, 1}}, "five")
	if err := s.Delete(ctx, "b.md"); err != nil {
		t.Fatal(err)
	}
	putTexts(t, s, "c.md", nil, "six", "seven")
	var chunks, vecs int
	s.db.QueryRow(`SELECT count(*) FROM chunks`).Scan(&chunks)
	s.db.QueryRow(`SELECT count(*) FROM vectors`).Scan(&vecs)
	var indexed int
	for _, term := range []string{"one", "two", "three", "four", "five", "six", "seven"} {
		indexed += len(livePostings(t, s, term))
	}
	if chunks != 3 || vecs != 1 || indexed != 3 {
		t.Errorf("%d chunks, %d vectors, %d index entries; want 3, 1, 3", chunks, vecs, indexed)
	}
}

// Two stores on one file (two processes): each sees the other's writes,
// in both passes, though it caches vectors and term frequencies.
func TestTwoStores(t *testing.T) {
	path := filepath.Join(t.TempDir(), "kb.db")
	a, b := openAt(t, path), openAt(t, path)
	putTexts(t, a, "x.md", [][]float32{{1, 0}}, "apple")
	if got, err := b.Vector(ctx, []float32{1, 0}, 5); err != nil || !cmp.Equal(where(got), []string{"x.md:1"}) {
		t.Fatalf("b's vector query after a's put: %v, %v", where(got), err)
	}
	if got, err := b.Keyword(ctx, []string{"apple"}, 5); err != nil || len(got) != 1 {
		t.Fatalf("b's keyword query after a's put: %v, %v", where(got), err)
	}
	putTexts(t, a, "x.md", [][]float32{{0, 1}}, "banana")
	putTexts(t, a, "y.md", [][]float32{{1, 0}}, "apple apple")
	if got, err := b.Vector(ctx, []float32{1, 0}, 5); err != nil || !cmp.Equal(where(got), []string{"y.md:1", "x.md:1"}) || got[0].Text != "apple apple" {
		t.Errorf("b's vector query after a's rewrite: %+v, %v", got, err)
	}
	if got, err := b.Keyword(ctx, []string{"apple"}, 5); err != nil || !cmp.Equal(where(got), []string{"y.md:1"}) {
		t.Errorf("b's keyword query after a's rewrite: %v, %v", where(got), err)
	}
	if err := b.Delete(ctx, "y.md"); err != nil {
		t.Fatal(err)
	}
	if got, err := a.Vector(ctx, []float32{1, 0}, 5); err != nil || !cmp.Equal(where(got), []string{"x.md:1"}) {
		t.Errorf("a's vector query after b's delete: %v, %v", where(got), err)
	}
}

// Through kb.Base: index files, search, re-index.
func TestBase(t *testing.T) {
	root := t.TempDir()
	for name, text := range map[string]string{
		"guide.md": "# Install\n\nRun the installer.\n\n# Configure\n\nEdit rein.yaml to set the model.",
		"main.go":  "package main\n\n// ReadConfig reads rein.yaml.\nfunc ReadConfig(path string) error {\n\treturn nil\n}\n",
	} {
		if err := os.WriteFile(filepath.Join(root, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	s := openTemp(t)
	base, err := kb.New(kb.Config{Root: root, Backend: s})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := base.Add(ctx, []string{"."}, nil)
	if err != nil || rep.Added != 2 {
		t.Fatalf("Add: %+v, %v", rep, err)
	}
	res, err := base.Search(ctx, "read config", kb.SearchOptions{})
	if err != nil || len(res.Hits) == 0 || res.Hits[0].Doc != "main.go" || res.Hits[0].Heading != "package main" {
		t.Errorf("Search(read config): %+v, %v", res, err)
	}
	rep, err = base.Reindex(ctx, nil)
	if err != nil || rep.Unchanged != 2 {
		t.Errorf("Reindex: %+v, %v", rep, err)
	}
}

// Keyword treats every term as data: no term is FTS5 syntax.
func FuzzKeyword(f *testing.F) {
	for _, s := range []string{`"`, `a"b`, "NEAR(a b)", "x OR y", "*", "col:x", "^", "\x00", "\xff", "日本", "AND"} {
		f.Add(s)
	}
	s := openTemp(f)
	putTexts(f, s, "a.md", nil, `quote " near NEAR(a b) x OR y col:x 日本`)
	f.Fuzz(func(t *testing.T, term string) {
		if _, err := s.Keyword(ctx, []string{term, "near"}, 5); err != nil {
			t.Errorf("Keyword(%q): %v", term, err)
		}
	})
}

// livePostings returns the live postings of term, from every segment.
func livePostings(t testing.TB, s *Store, term string) []posting {
	t.Helper()
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	segs, err := loadSegments(ctx, tx)
	if err != nil {
		t.Fatal(err)
	}
	lookup, err := tx.PrepareContext(ctx, lookupSQL)
	if err != nil {
		t.Fatal(err)
	}
	defer lookup.Close()
	list, err := postingsOf(ctx, lookup, segs, term, nil)
	if err != nil {
		t.Fatalf("postings of %q: %v", term, err)
	}
	return list
}
