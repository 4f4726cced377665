package permission

import (
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/reinhq/rein/tool"
)

// DefaultSensitiveFiles are the files no tool may read or change unless a
// settings layer makes an exception (`!.env.example`). A pattern without a
// slash at its start matches at any depth. It is [tool.DefaultSensitiveFiles],
// the list the search tools leave out of their results too.
var DefaultSensitiveFiles = tool.DefaultSensitiveFiles

// pathInfo is a path a call names, seen from the workspace.
type pathInfo struct {
	raw     string // as the input wrote it
	abs     string // absolute and cleaned, symlinks as written
	real    string // absolute with the symlinks of its existing part resolved
	rel     string // abs relative to the workspace, slash-separated; "" outside
	realRel string // real relative to the real workspace; "" outside
}

// inside reports whether the path really lies in the workspace.
func (p pathInfo) inside() bool { return p.realRel != "" }

// shown is the path as a message should name it.
func (p pathInfo) shown() string {
	if p.rel != "" {
		return p.rel
	}
	return p.abs
}

// workspace is a resolved workspace root. It remembers the symlinks it
// resolved, so it serves one decision: files change between calls.
type workspace struct {
	dir, real string
	memo      map[string]string // absolute path → symlinks resolved
}

// newWorkspace resolves dir; empty means the working directory. roots,
// when not nil, remembers the resolved roots across decisions: the
// directories above a workspace are not the agent's to change.
func newWorkspace(dir string, roots *sync.Map) workspace {
	if dir == "" {
		dir, _ = os.Getwd()
	}
	dir, _ = filepath.Abs(dir)
	dir = filepath.Clean(dir)
	w := workspace{dir: dir, memo: map[string]string{}}
	if roots != nil {
		if r, ok := roots.Load(dir); ok {
			w.real = r.(string)
			w.memo[dir] = w.real
			return w
		}
	}
	w.real = w.realOf(dir, 0)
	if roots != nil {
		roots.Store(dir, w.real)
	}
	return w
}

// resolve places a path of a call relative to the workspace.
func (w workspace) resolve(p string) pathInfo {
	info := w.lexical(p)
	info.real = w.realOf(info.abs, 0)
	info.realRel = relInside(w.real, info.real)
	return info
}

// maxLinks bounds the symlinks followed to resolve one path, as the kernel
// does (ELOOP).
const maxLinks = 40

// realOf resolves the symlinks of an absolute, cleaned path component by
// component, one lstat each (parents come from the memo). A part that does
// not exist is kept as written; a dangling symlink is followed to where a
// write through it would land.
func (w workspace) realOf(p string, depth int) string {
	if r, ok := w.memo[p]; ok {
		return r
	}
	parent := filepath.Dir(p)
	if parent == p || depth > maxLinks {
		return p
	}
	cand := filepath.Join(w.realOf(parent, depth), filepath.Base(p))
	out := cand
	if fi, err := os.Lstat(cand); err == nil && fi.Mode()&os.ModeSymlink != 0 {
		if t, err := os.Readlink(cand); err == nil {
			if !filepath.IsAbs(t) {
				t = filepath.Join(filepath.Dir(cand), t)
			}
			out = w.realOf(filepath.Clean(t), depth+1)
		}
	}
	w.memo[p] = out
	return out
}

// lexical is resolve without touching the file system: symlinks are taken
// as written. Good enough for a heuristic such as naming a file in a
// command's arguments.
func (w workspace) lexical(p string) pathInfo {
	info := pathInfo{raw: p}
	p = expandHome(p)
	if !filepath.IsAbs(p) {
		p = filepath.Join(w.dir, p)
	}
	info.abs = filepath.Clean(p)
	info.real = info.abs
	info.rel = relInside(w.dir, info.abs)
	info.realRel = info.rel
	return info
}

// relInside returns p relative to base when p lies within base, else "".
func relInside(base, p string) string {
	rel, err := filepath.Rel(base, p)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel) {
		return ""
	}
	return filepath.ToSlash(rel)
}

// sensitiveSet matches the protected files.
type sensitiveSet struct {
	tool.SensitiveSet
}

// newSensitive compiles patterns; those starting with ! are exceptions.
func newSensitive(patterns []string) sensitiveSet {
	return sensitiveSet{tool.NewSensitiveSet(patterns)}
}

// match reports whether a path is sensitive, and the pattern it matched.
func (s sensitiveSet) match(p pathInfo) (string, bool) {
	return s.Match(p.abs, p.real)
}
