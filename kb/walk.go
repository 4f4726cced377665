package kb

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Skip is a file an indexing run passed over, and why.
type Skip struct {
	Path   string `json:"path"`
	Reason string `json:"reason"`
}

// target is a path given to Add, resolved.
type target struct {
	abs, rel string
	dir      bool
}

// file is a file to index.
type file struct {
	abs, rel string
}

// resolve checks a path given to Add: it must exist inside the root, also
// once symbolic links are followed, and be a regular file or a directory.
func (b *Base) resolve(p string) (target, error) {
	name, err := b.relName(p)
	if err != nil {
		return target{}, err
	}
	lex := filepath.Join(b.root, filepath.FromSlash(name))
	real, err := filepath.EvalSymlinks(lex)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return target{}, notExist(fmt.Sprintf("%s does not exist (paths are relative to the knowledge base root %s)", name, b.root))
		}
		return target{}, err
	}
	rel, err := filepath.Rel(b.root, real)
	if err != nil || escapes(rel) {
		return target{}, fmt.Errorf("%s is a symbolic link to %s, outside the knowledge base root %s: refused", name, real, b.root)
	}
	info, err := os.Stat(real)
	if err != nil {
		return target{}, err
	}
	switch {
	case info.IsDir():
		return target{abs: real, rel: filepath.ToSlash(rel), dir: true}, nil
	case info.Mode().IsRegular():
		return target{abs: real, rel: filepath.ToSlash(rel)}, nil
	}
	return target{}, fmt.Errorf("%s is not a regular file or a directory (%s)", name, info.Mode().Type())
}

// notExist is the message of a missing path; it is an fs.ErrNotExist.
type notExist string

func (e notExist) Error() string { return string(e) }
func (e notExist) Unwrap() error { return fs.ErrNotExist }

// skipDirs are never walked into.
var skipDirs = map[string]bool{".git": true, "node_modules": true}

// walk lists the files under t (t itself when a file) in lexical order,
// skipping .git, node_modules, hidden entries, what Config.Ignore ignores
// and symbolic links (reported when they lead out of the root).
func (b *Base) walk(ctx context.Context, t target, files []file, skips []Skip) ([]file, []Skip, error) {
	if !t.dir {
		if s, ok := b.sensitive(t.abs, t.rel); ok {
			return files, append(skips, s), nil
		}
		return append(files, file{abs: t.abs, rel: t.rel}), skips, nil
	}
	err := filepath.WalkDir(t.abs, func(p string, d fs.DirEntry, err error) error {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		rel := b.walkRel(p)
		if err != nil {
			if d != nil && d.IsDir() && p != t.abs {
				skips = append(skips, Skip{Path: rel, Reason: "cannot read the directory: " + errText(err)})
				return fs.SkipDir
			}
			if p == t.abs {
				return err
			}
			skips = append(skips, Skip{Path: rel, Reason: "cannot read: " + errText(err)})
			return nil
		}
		if p == t.abs {
			return nil
		}
		name := d.Name()
		isDir := d.IsDir()
		if strings.HasPrefix(name, ".") || (isDir && skipDirs[name]) ||
			(b.cfg.Ignore != nil && b.cfg.Ignore(rel, isDir)) {
			if isDir {
				return fs.SkipDir
			}
			return nil
		}
		switch {
		case isDir:
			return nil
		case d.Type()&fs.ModeSymlink != 0:
			if dest, err := filepath.EvalSymlinks(p); err == nil {
				if r, err := filepath.Rel(b.root, dest); err != nil || escapes(r) {
					skips = append(skips, Skip{Path: rel, Reason: "a symbolic link to " + dest + ", outside the root: not followed"})
				}
			}
			return nil
		case !d.Type().IsRegular():
			return nil // devices, sockets, pipes
		}
		if s, ok := b.sensitive(p, rel); ok {
			skips = append(skips, s)
			return nil
		}
		files = append(files, file{abs: p, rel: rel})
		return nil
	})
	if err != nil {
		return files, skips, fmt.Errorf("walk %s: %w", t.rel, err)
	}
	return files, skips, nil
}

// sensitive reports a file Config.Sensitive refuses, as a Skip.
func (b *Base) sensitive(abs, rel string) (Skip, bool) {
	if b.cfg.Sensitive == nil {
		return Skip{}, false
	}
	pattern, ok := b.cfg.Sensitive(abs)
	if !ok {
		return Skip{}, false
	}
	return Skip{Path: rel, Reason: "a sensitive file (matches " + pattern + "): never indexed, as tools never read it"}, true
}

// walkRel is the document path of a walked path (under the resolved root).
func (b *Base) walkRel(p string) string {
	rel, err := filepath.Rel(b.root, p)
	if err != nil {
		return filepath.ToSlash(p)
	}
	return filepath.ToSlash(rel)
}

// errText is an error's message without the path the caller already shows.
func errText(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}
