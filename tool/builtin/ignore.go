package builtin

import (
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/go-git/go-git/v5/plumbing/format/gitignore"
)

// IgnoreFunc returns what the search tools skip under root, as a function
// of a slash-separated path relative to root: what the ignore files
// (.gitignore, .ignore, .rgignore, of root's ancestors up to the
// repository and of every directory below) and .git/info/exclude ignore.
// The knowledge base's walk uses it (`rein kb add`). Each directory's
// files are read once; it is safe for concurrent use.
func IgnoreFunc(root string) func(rel string, isDir bool) bool {
	ig := &ignorer{root: root, dirs: map[string][]gitignore.Pattern{}}
	ig.base, ig.top = ancestorPatterns(root)
	if rel, err := filepath.Rel(ig.base, root); err == nil && rel != "." {
		ig.prefix = strings.Split(filepath.ToSlash(rel), "/")
	}
	return ig.ignored
}

type ignorer struct {
	root, base string
	prefix     []string // root's parts below the ignore root
	top        []gitignore.Pattern
	mu         sync.Mutex
	dirs       map[string][]gitignore.Pattern // rel dir → its own patterns
}

// ignored reports whether rel (relative to root) is ignored: by the
// patterns of root's ancestors and of each directory between root and it.
func (ig *ignorer) ignored(rel string, isDir bool) bool {
	if rel == "" || rel == "." {
		return false
	}
	parts := strings.Split(rel, "/")
	patterns := slices.Clip(ig.top)
	for i := 1; i < len(parts); i++ {
		patterns = append(patterns, ig.patternsOf(strings.Join(parts[:i], "/"))...)
	}
	full := append(slices.Clip(ig.prefix), parts...)
	return gitignore.NewMatcher(patterns).Match(full, isDir)
}

// patternsOf returns the patterns of the ignore files in directory rel.
func (ig *ignorer) patternsOf(rel string) []gitignore.Pattern {
	ig.mu.Lock()
	defer ig.mu.Unlock()
	if p, ok := ig.dirs[rel]; ok {
		return p
	}
	domain := append(slices.Clip(ig.prefix), strings.Split(rel, "/")...)
	p := readIgnore(filepath.Join(ig.root, filepath.FromSlash(rel)), domain)
	ig.dirs[rel] = p
	return p
}
