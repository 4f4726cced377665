package builtin_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/reinhq/rein/tool/builtin"
)

// TestIgnoreFunc checks the ignore rules the knowledge base's walk gets:
// the root's .gitignore, a nested one scoped to its directory, a
// repository's ignore file above the root, negation.
func TestIgnoreFunc(t *testing.T) {
	repo := t.TempDir()
	write := func(rel, content string) {
		p := filepath.Join(repo, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(".git/HEAD", "ref: refs/heads/main\n")
	write(".gitignore", "*.log\n")
	write("docs/.gitignore", "build/\n!keep.log\n")
	write("docs/sub/.ignore", "secret.md\n")
	root := filepath.Join(repo, "docs")
	ignored := builtin.IgnoreFunc(root)
	for _, tc := range []struct {
		rel   string
		isDir bool
		want  bool
	}{
		{"a.md", false, false},
		{"run.log", false, true},   // the repository's .gitignore, above the root
		{"keep.log", false, false}, // negated in docs/.gitignore
		{"build", true, true},      // docs/.gitignore
		{"sub/build", true, true},  // build/ matches at any depth below docs
		{"sub/secret.md", false, true},
		{"secret.md", false, false}, // docs/sub/.ignore applies under sub only
		{"sub/notes.md", false, false},
	} {
		if got := ignored(tc.rel, tc.isDir); got != tc.want {
			t.Errorf("%s (dir %v): ignored %v, want %v", tc.rel, tc.isDir, got, tc.want)
		}
	}
}
