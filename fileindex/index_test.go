package fileindex

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// tree writes files (slash paths; a trailing / makes a directory) under a
// new directory.
func tree(t testing.TB, files ...string) string {
	t.Helper()
	root := t.TempDir()
	for _, f := range files {
		p := filepath.Join(root, filepath.FromSlash(f))
		if strings.HasSuffix(f, "/") {
			if err := os.MkdirAll(p, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("x\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func refresh(t *testing.T, ix *Index) Stats {
	t.Helper()
	st, err := ix.Refresh(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// CLI-6: the index lists files and directories, leaves out what Ignore
// reports (the .gitignore matcher) and never enters .git or node_modules;
// a symbolic link is listed, not followed.
func TestIndexWalk_CLI6(t *testing.T) {
	root := tree(t, "main.go", "cmd/rein/main.go", "build/out.bin", ".git/objects/ab/cdef", "node_modules/x/index.js",
		".github/workflows/ci.yml", "docs/")
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "secret"), []byte("s"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(root, "link")); err != nil {
		t.Fatal(err)
	}
	ix := New(Options{Root: root, Ignore: func(rel string, isDir bool) bool { return rel == "build" && isDir }})
	st := refresh(t, ix)
	got, trunc := ix.Entries()
	want := []string{".github/", ".github/workflows/", ".github/workflows/ci.yml", "cmd/", "cmd/rein/", "cmd/rein/main.go", "docs/", "link", "main.go"}
	if !slices.Equal(got, want) || trunc || st.Entries != len(want) {
		t.Errorf("entries = %q (truncated %v, stats %+v), want %q", got, trunc, st, want)
	}
}

// CLI-6: a refresh reads again only the directories that changed, and
// sees files added and removed.
func TestIndexIncremental_CLI6(t *testing.T) {
	root := tree(t, "a/1.go", "a/2.go", "b/c/3.go", "d/4.go")
	ix := New(Options{Root: root})
	if st := refresh(t, ix); st.DirsRead != 5 {
		t.Errorf("first refresh read %d directories, want 5", st.DirsRead)
	}
	if st := refresh(t, ix); st.DirsRead != 0 {
		t.Errorf("an unchanged tree was read again: %d directories", st.DirsRead)
	}
	// A new file in b/c and a file removed from a: those two are read.
	future := time.Now().Add(2 * time.Second)
	if err := os.WriteFile(filepath.Join(root, "b/c/new.go"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(root, "a/2.go")); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"b/c", "a"} { // coarse file systems keep the same mtime within a tick
		if err := os.Chtimes(filepath.Join(root, d), future, future); err != nil {
			t.Fatal(err)
		}
	}
	st := refresh(t, ix)
	got, _ := ix.Entries()
	if st.DirsRead != 2 || !slices.Contains(got, "b/c/new.go") || slices.Contains(got, "a/2.go") {
		t.Errorf("after changes: read %d directories, entries %q", st.DirsRead, got)
	}
	if err := os.RemoveAll(filepath.Join(root, "d")); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(root, future, future); err != nil {
		t.Fatal(err)
	}
	refresh(t, ix)
	if got, _ := ix.Entries(); slices.Contains(got, "d/4.go") || slices.Contains(got, "d/") {
		t.Errorf("a removed directory is still listed: %q", got)
	}
}

// The cap bounds the index and says so.
func TestIndexCap_CLI6(t *testing.T) {
	var files []string
	for i := range 30 {
		files = append(files, fmt.Sprintf("f%02d.txt", i))
	}
	ix := New(Options{Root: tree(t, files...), MaxFiles: 10})
	st := refresh(t, ix)
	if got, trunc := ix.Entries(); len(got) != 10 || !trunc || !st.Truncated {
		t.Errorf("entries %d truncated %v", len(got), trunc)
	}
}

// Bad roots are errors; a cancelled refresh leaves the index as it was.
func TestIndexErrors_CLI6(t *testing.T) {
	if _, err := New(Options{Root: filepath.Join(t.TempDir(), "none")}).Refresh(context.Background()); err == nil {
		t.Error("a missing root gave no error")
	}
	root := tree(t, "f")
	if _, err := New(Options{Root: filepath.Join(root, "f")}).Refresh(context.Background()); err == nil || !strings.Contains(err.Error(), "not a directory") {
		t.Errorf("a file as root: %v", err)
	}
	ix := New(Options{Root: tree(t, "a/b.go")})
	refresh(t, ix)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := ix.Refresh(ctx); err == nil {
		t.Error("a cancelled refresh gave no error")
	}
	if got, _ := ix.Entries(); len(got) != 2 {
		t.Errorf("a cancelled refresh changed the index: %q", got)
	}
}

// CLI-6: search ranks a base-name match over a scattered one, shorter
// paths first among equals; the empty query lists the top level first.
func TestSearch_CLI6(t *testing.T) {
	ix := New(Options{Root: tree(t, "cli/tui/model.go", "cli/tui/menu.go", "docs/models.md", "internal/mo/del.go", "model.go", "README.md")})
	refresh(t, ix)
	hits, total := ix.Search("model", 3)
	if total != 4 || len(hits) != 3 || hits[0].Path != "model.go" || hits[1].Path != "docs/models.md" && hits[1].Path != "cli/tui/model.go" {
		t.Errorf("search model: %d %+v", total, hits)
	}
	if hits, _ := ix.Search("./cli/tui/me", 5); len(hits) == 0 || hits[0].Path != "cli/tui/menu.go" {
		t.Errorf("search ./cli/tui/me: %+v", hits)
	}
	if hits, _ := ix.Search("", 2); len(hits) != 2 || strings.Contains(strings.TrimSuffix(hits[0].Path, "/"), "/") {
		t.Errorf("empty query: %+v", hits)
	}
	if hits, total := ix.Search("zzz", 5); len(hits) != 0 || total != 0 {
		t.Errorf("no match: %+v", hits)
	}
}

// BenchmarkRefresh and BenchmarkSearch measure a large tree: 20k files in
// 1k directories.
func largeIndex(b *testing.B) *Index {
	b.Helper()
	var files []string
	for d := range 1000 {
		for f := range 20 {
			files = append(files, fmt.Sprintf("pkg%03d/sub%d/file_%02d.go", d, d%7, f))
		}
	}
	ix := New(Options{Root: tree(b, files...)})
	if _, err := ix.Refresh(context.Background()); err != nil {
		b.Fatal(err)
	}
	return ix
}

func BenchmarkRefreshUnchanged(b *testing.B) {
	ix := largeIndex(b)
	for b.Loop() {
		if _, err := ix.Refresh(context.Background()); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkSearch(b *testing.B) {
	ix := largeIndex(b)
	for b.Loop() {
		ix.Search("pk42sub3fil", 50)
	}
}
