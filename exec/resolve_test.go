package exec

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// resolveTree makes a tree of directories, files and links of every kind
// the resolver must follow as filepath.EvalSymlinks does: relative and
// absolute, chained, with "..", to a file, dangling and in a loop.
func resolveTree(t testing.TB) string {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"a/b/c", "d", "e/f"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(root, "a/file"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	for link, target := range map[string]string{
		"rel":         "a/b",
		"abs":         filepath.Join(root, "e/f"),
		"chain":       "rel",
		"up":          "a/b/c/../..",
		"d/back":      "../a",
		"d/toFile":    "../a/file",
		"dangling":    "nowhere/x",
		"loop1":       "loop2",
		"loop2":       "loop1",
		"e/f/viaLink": "../../chain/c",
		"dot":         ".",
	} {
		if err := os.Symlink(target, filepath.Join(root, link)); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// TOOL-5 (issue 30): the sandbox's remembering resolver answers as
// filepath.EvalSymlinks for every kind of path, asked once or again.
func TestResolverAsEvalSymlinks_TOOL5(t *testing.T) {
	root := resolveTree(t)
	paths := []string{
		"", "a", "a/b/c", "a/b/c/", "a//b/./c", "a/b/../b/c", "rel", "rel/c", "chain/c", "abs", "abs/viaLink",
		"up", "up/a/b", "d/back/b/c", "d/back/../d", "d/toFile", "d/toFile/x", "a/file/x", "dangling", "missing",
		"missing/x", "loop1", "loop1/x", "dot/dot/a", "e/f/viaLink", "e/f/viaLink/..", "..", "../..", "rel/..",
	}
	r := newResolver()
	for round := range 2 { // the second round is answered from memory
		for _, p := range paths {
			full := root + "/" + p
			want, wantErr := filepath.EvalSymlinks(full)
			got, gotErr := r.evalSymlinks(full)
			if got != want || (gotErr == nil) != (wantErr == nil) {
				t.Errorf("round %d: evalSymlinks(%s) = %q, %v; EvalSymlinks: %q, %v", round, p, got, gotErr, want, wantErr)
			}
		}
	}
	if got, err := r.evalSymlinks("/"); got != "/" || err != nil {
		t.Errorf("evalSymlinks(/) = %q, %v", got, err)
	}
}

// TOOL-5: a missing entry is never remembered — the shield creates
// placeholders during the preparation and must see them — and a relative
// path is resolved as EvalSymlinks resolves it.
func TestResolverForgetsMissing_TOOL5(t *testing.T) {
	root := resolveTree(t)
	r := newResolver()
	p := filepath.Join(root, "a", "made")
	if _, err := r.evalSymlinks(p); err == nil {
		t.Fatal("a missing path resolved")
	}
	if err := os.Mkdir(p, 0o755); err != nil {
		t.Fatal(err)
	}
	if got, err := r.evalSymlinks(p); got != p || err != nil {
		t.Errorf("after mkdir: %q, %v; want %q", got, err, p)
	}
	if fi, err := r.stat(filepath.Join(root, "rel")); err != nil || !fi.IsDir() {
		t.Errorf("stat through a link: %v, %v", fi, err)
	}
	t.Chdir(root)
	if got, err := r.evalSymlinks("chain/c"); err != nil || got != "a/b/c" {
		t.Errorf("relative path: %q, %v", got, err)
	}
	var none *resolver
	if got, err := none.evalSymlinks(filepath.Join(root, "chain")); err != nil || got != filepath.Join(root, "a/b") {
		t.Errorf("nil resolver: %q, %v", got, err)
	}
}

// FuzzResolver compares the resolver with filepath.EvalSymlinks on paths
// made of the tree's names.
func FuzzResolver(f *testing.F) {
	for _, s := range []string{"a/b/c", "rel/../chain/c", "d/back/b/../../up", "loop1", "abs/viaLink/.."} {
		f.Add(s)
	}
	root := resolveTree(f)
	f.Fuzz(func(t *testing.T, p string) {
		if strings.ContainsRune(p, 0) {
			return
		}
		full := root + "/" + p
		want, wantErr := filepath.EvalSymlinks(full)
		got, gotErr := newResolver().evalSymlinks(full)
		if got != want || (gotErr == nil) != (wantErr == nil) {
			t.Errorf("evalSymlinks(%q) = %q, %v; EvalSymlinks: %q, %v", p, got, gotErr, want, wantErr)
		}
	})
}
