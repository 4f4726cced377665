package builtin

import (
	"bufio"
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/go-git/go-git/v5/plumbing/format/gitignore"
	"github.com/reinhq/rein/tool"
)

// ignoreFiles are read in every directory, lowest priority first, as
// ripgrep does.
var ignoreFiles = []string{".gitignore", ".ignore", ".rgignore"}

// errStopWalk ends a walk early without an error.
var errStopWalk = errors.New("stop walk")

// visitFunc is called for each regular file a walk finds: its absolute path
// and its slash-separated path relative to the walk's base.
type visitFunc func(abs, rel string, d fs.DirEntry) error

// walkFiles calls visit for every regular file under base, in path order
// (each directory's entries sorted by name, depth first). It skips .git,
// symbolic links, the files and directories ex leaves out (sensitive files,
// see [exclusion]), and what ignore files exclude: those of base and its
// subdirectories, of base's ancestors up to the enclosing repository's root
// (all of them when there is no repository), and the repository's
// .git/info/exclude. A base that is itself ignored is walked with its own
// rules only, since it was asked for by name. maxDepth limits how deep it goes (0: base's own
// entries; negative: no limit). visit may return errStopWalk.
func walkFiles(ctx context.Context, base string, maxDepth int, ex exclusion, visit visitFunc) error {
	root, patterns := ancestorPatterns(base)
	rel, err := filepath.Rel(root, base)
	if err != nil {
		return err
	}
	var parts []string
	if rel != "." {
		parts = strings.Split(filepath.ToSlash(rel), "/")
	}
	if explicitlyIgnored(patterns, parts) {
		// The caller asked for an ignored directory (node_modules, build):
		// search it, with only the rules found inside it.
		patterns = readIgnore(base, parts)
	}
	w := &walker{ctx: ctx, visit: visit, maxDepth: maxDepth, ex: ex}
	err = w.dir(base, "", parts, patterns, 0)
	if errors.Is(err, errStopWalk) {
		return nil
	}
	return err
}

type walker struct {
	ctx      context.Context
	visit    visitFunc
	maxDepth int
	ex       exclusion
}

// dir walks one directory: abs on disk, rel from the walk's base, parts
// from the ignore root; patterns hold the rules of its ancestors.
func (w *walker) dir(abs, rel string, parts []string, patterns []gitignore.Pattern, depth int) error {
	if err := w.ctx.Err(); err != nil {
		return err
	}
	if depth > 0 {
		patterns = append(slices.Clip(patterns), readIgnore(abs, parts)...)
	}
	entries, err := w.ex.fence.readDir(abs)
	if err != nil {
		return nil // unreadable directories are skipped, as rg does
	}
	m := gitignore.NewMatcher(patterns)
	for _, e := range entries {
		name := e.Name()
		if name == ".git" || e.Type()&fs.ModeSymlink != 0 {
			continue
		}
		isDir := e.IsDir()
		p := append(slices.Clip(parts), name)
		if m.Match(p, isDir) {
			continue
		}
		childAbs, childRel := filepath.Join(abs, name), name
		if w.ex.skips(childAbs) {
			continue
		}
		if rel != "" {
			childRel = rel + "/" + name
		}
		switch {
		case isDir:
			if w.maxDepth >= 0 && depth >= w.maxDepth {
				continue
			}
			if err := w.dir(childAbs, childRel, p, patterns, depth+1); err != nil {
				return err
			}
		case e.Type().IsRegular():
			if err := w.visit(childAbs, childRel, e); err != nil {
				return err
			}
		}
	}
	return nil
}

// explicitlyIgnored says whether the directory at parts, or one of its
// ancestors below the ignore root, is ignored by patterns.
func explicitlyIgnored(patterns []gitignore.Pattern, parts []string) bool {
	if len(patterns) == 0 {
		return false
	}
	m := gitignore.NewMatcher(patterns)
	for i := 1; i <= len(parts); i++ {
		if m.Match(parts[:i], true) {
			return true
		}
	}
	return false
}

// ancestorPatterns finds the ignore root of base (the enclosing repository,
// or the file system root when there is none) and reads the ignore rules
// of the directories from there down to base, base included.
func ancestorPatterns(base string) (string, []gitignore.Pattern) {
	dirs := []string{base}
	repo := ""
	for d := base; ; {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			repo = d
			break
		}
		parent := filepath.Dir(d)
		if parent == d {
			break
		}
		d = parent
		dirs = append(dirs, d)
	}
	root := dirs[len(dirs)-1]
	var patterns []gitignore.Pattern
	if repo != "" {
		patterns = readPatternFile(filepath.Join(repo, ".git", "info", "exclude"), nil)
	}
	for i := len(dirs) - 1; i >= 0; i-- {
		rel, _ := filepath.Rel(root, dirs[i])
		var parts []string
		if rel != "." {
			parts = strings.Split(filepath.ToSlash(rel), "/")
		}
		patterns = append(patterns, readIgnore(dirs[i], parts)...)
	}
	return root, patterns
}

// readIgnore reads the ignore files of directory abs, whose path from the
// ignore root is parts.
func readIgnore(abs string, parts []string) []gitignore.Pattern {
	var out []gitignore.Pattern
	for _, name := range ignoreFiles {
		out = append(out, readPatternFile(filepath.Join(abs, name), parts)...)
	}
	return out
}

// readPatternFile parses one ignore file; a missing file has no patterns.
func readPatternFile(path string, domain []string) []gitignore.Pattern {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	var out []gitignore.Pattern
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSuffix(sc.Text(), "\r")
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
			continue
		}
		out = append(out, gitignore.ParsePattern(line, slices.Clip(domain)))
	}
	return out
}

// exclusion leaves sensitive files (.env, keys: [tool.DefaultSensitiveFiles]
// unless the caller gives its own list) out of a search, in both grep
// engines and in glob.
type exclusion struct {
	set tool.SensitiveSet
	// rgGlobs are the patterns as rg --glob !… options, which keep rg from
	// reading the files at all; nil when the list has exceptions (!x), which
	// rg globs cannot express. rg's output is filtered either way.
	rgGlobs []string
	// fenced are directories a Fence hides ([Fence.Hidden]): always left
	// out, as is every .rein/data.
	fenced []string
	// fence, when it has a Root, judges each directory the walk lists by
	// what was opened ([Fence.readDir]).
	fence Fence
}

// withFence returns e leaving out what f hides too.
func (e exclusion) withFence(f Fence) exclusion {
	root, _ := f.realRoot()
	e.fenced, e.fence = f.hidden(root), f
	return e
}

// newExclusion compiles a list of sensitive-file patterns; nil means
// [tool.DefaultSensitiveFiles], an empty list excludes nothing.
func newExclusion(patterns []string) exclusion {
	if patterns == nil {
		patterns = tool.DefaultSensitiveFiles
	}
	e := exclusion{set: tool.NewSensitiveSet(patterns)}
	for _, p := range patterns {
		p = strings.TrimSpace(p)
		switch {
		case p == "":
		case strings.HasPrefix(p, "!"):
			e.rgGlobs = nil
			return e
		case strings.HasPrefix(p, "/") || strings.HasPrefix(p, "~"):
			// absolute: left to the output filter
		default:
			g := strings.TrimPrefix(filepath.ToSlash(p), "./")
			if strings.Contains(g, "/") && !strings.HasPrefix(g, "**/") {
				g = "**/" + g
			}
			e.rgGlobs = append(e.rgGlobs, "!"+g)
		}
	}
	return e
}

// skips reports whether the file or directory at abs is left out.
func (e exclusion) skips(abs string) bool {
	if inReinData(abs) || slices.ContainsFunc(e.fenced, func(h string) bool { return isWithin(h, abs) }) {
		return true
	}
	_, ok := e.set.Match(abs)
	return ok
}

// skipsRel reports whether rel, a slash path below base, or a directory on
// the way to it is left out: what the walk would not reach.
func (e exclusion) skipsRel(base, rel string) bool {
	if e.set.Empty() && len(e.fenced) == 0 {
		return false
	}
	p := base
	for _, part := range strings.Split(rel, "/") {
		if part == "" || part == "." {
			continue
		}
		p = filepath.Join(p, part)
		if e.skips(p) {
			return true
		}
	}
	return false
}

// skipsBase reports whether a search base is left out: it, or a directory
// between it and the workspace, is sensitive. The pattern is returned for
// the error message.
func (e exclusion) skipsBase(workDir, base string) (string, bool) {
	inside := filepath.Clean(workDir) + string(filepath.Separator)
	for p := base; ; {
		if g, ok := e.set.Match(p); ok {
			return g, true
		}
		parent := filepath.Dir(p)
		if workDir == "" || parent == p || !strings.HasPrefix(parent, inside) {
			return "", false
		}
		p = parent
	}
}
