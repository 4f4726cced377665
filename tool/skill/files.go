package skill

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/reinhq/rein/internal/suggest"
	"github.com/reinhq/rein/tool"
)

// sensitive are the files the tool never reads or lists, whatever skill
// brings them.
var sensitive = tool.NewSensitiveSet(tool.DefaultSensitiveFiles)

// maxWalk bounds the directory entries looked at to list a skill's files.
const maxWalk = 5000

// listFiles returns up to MaxListedFiles of the files under dir, as
// slash-separated relative paths in lexical order, and whether there are
// more. Hidden directories (.git) and sensitive files are left out, and so
// are symlinks that lead outside dir or to something other than a file.
func listFiles(ctx context.Context, dir string) (files []string, more bool) {
	if dir == "" {
		return nil, false
	}
	root, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return nil, false
	}
	seen := 0
	_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil // unreadable: leave it out
		}
		if seen++; seen > maxWalk || ctx.Err() != nil {
			more = true
			return fs.SkipAll
		}
		if d.IsDir() {
			if p != root && strings.HasPrefix(d.Name(), ".") {
				return fs.SkipDir
			}
			return nil
		}
		if !listable(root, p, d) {
			return nil
		}
		if len(files) == MaxListedFiles {
			more = true
			return fs.SkipAll
		}
		rel, _ := filepath.Rel(root, p)
		files = append(files, filepath.ToSlash(rel))
		return nil
	})
	return files, more
}

// listable reports a regular file, or a symlink to one inside root, that is
// not sensitive.
func listable(root, p string, d fs.DirEntry) bool {
	if _, hit := sensitive.Match(p); hit {
		return false
	}
	switch {
	case d.Type().IsRegular():
		return true
	case d.Type()&fs.ModeSymlink == 0:
		return false
	}
	real, err := filepath.EvalSymlinks(p)
	if err != nil || !inside(root, real) {
		return false
	}
	if _, hit := sensitive.Match(real); hit {
		return false
	}
	fi, err := os.Stat(real)
	return err == nil && fi.Mode().IsRegular()
}

// inside reports whether p is root or below it; both are cleaned absolute
// paths.
func inside(root, p string) bool {
	rel, err := filepath.Rel(root, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

// readFile returns one of the skill's files (SPEC SKILL-2).
func readFile(s Skill, file, workDir string) tool.Result {
	r, path, n, truncated := readFileText(s, file, workDir)
	meta := map[string]any{"skill": s.Name, "file": file}
	if path != "" {
		meta["path"] = shown(path, workDir)
	}
	if !r.IsError {
		meta["bytes"] = n
		meta["truncated"] = truncated
	}
	r.Metadata = meta
	return r
}

// readFileText does the work of readFile: the result, the file's resolved
// path, its size and whether it was cut.
func readFileText(s Skill, file, workDir string) (r tool.Result, path string, size int64, truncated bool) {
	if s.Dir == "" {
		return tool.Errorf("skill %s has no directory, so no files", s.Name), "", 0, false
	}
	if why := badPath(file); why != "" {
		return tool.Errorf("file %q: %s; give a path relative to the skill's directory %s, such as scripts/run.py", file, why, shown(s.Dir, workDir)), "", 0, false
	}
	root, err := filepath.EvalSymlinks(s.Dir)
	if err != nil {
		return tool.Errorf("skill %s: its directory %s cannot be read: %v", s.Name, s.Dir, err), "", 0, false
	}
	real, err := filepath.EvalSymlinks(filepath.Join(root, file))
	if errors.Is(err, fs.ErrNotExist) {
		return notFound(s, root, file), "", 0, false
	} else if err != nil {
		return tool.Errorf("file %s of skill %s: %v", file, s.Name, err), "", 0, false
	}
	if !inside(root, real) {
		return tool.Errorf("file %q of skill %s is refused: it leads outside the skill's directory %s", file, s.Name, s.Dir), "", 0, false
	}
	if pat, hit := sensitive.Match(filepath.Join(root, file), real); hit {
		return tool.Errorf("file %q of skill %s is refused: it is a sensitive file (matches %s)", file, s.Name, pat), "", 0, false
	}
	data, size, err := readCapped(real)
	if err != nil {
		return tool.Errorf("file %s of skill %s: %v", file, s.Name, err), real, 0, false
	}
	truncated = size > MaxFileBytes
	if truncated {
		data = cutText(data, MaxFileBytes)
	}
	if binary(data) {
		return tool.Errorf("file %s of skill %s is binary (%d bytes); this tool returns text files only", file, s.Name, size), real, size, false
	}
	var b strings.Builder
	fmt.Fprintf(&b, "File %s of skill %s (%s):\n\n", filepath.ToSlash(filepath.Clean(file)), s.Name, shown(real, workDir))
	b.WriteString(strings.ToValidUTF8(string(data), "\uFFFD"))
	if truncated {
		fmt.Fprintf(&b, "\n\n[… truncated: the file has %d bytes and only the first %d are shown; read the rest with read_file on %s, using offset and limit]",
			size, len(data), shown(real, workDir))
	}
	return tool.Text(b.String()), real, size, truncated
}

// badPath says why a file input is refused before it is looked up: an
// absolute path, a "..", a NUL byte. "" means none of those.
func badPath(file string) string {
	switch {
	case strings.ContainsRune(file, 0):
		return "it holds a NUL byte"
	case filepath.IsAbs(file) || strings.HasPrefix(file, "/") || strings.HasPrefix(file, `\`) || filepath.VolumeName(file) != "":
		return "absolute paths are refused"
	}
	for _, part := range strings.FieldsFunc(file, func(r rune) bool { return r == '/' || r == '\\' }) {
		if part == ".." {
			return `".." is refused`
		}
	}
	return ""
}

// notFound is the error for a file the skill does not have, with the
// nearest of the files it has.
func notFound(s Skill, root, file string) tool.Result {
	files, _ := listFiles(context.Background(), root)
	if len(files) == 0 {
		return tool.Errorf("skill %s has no file %q", s.Name, file)
	}
	near := suggest.Closest(filepath.ToSlash(file), files, 3)
	return tool.Errorf("skill %s has no file %q; did you mean %s? Call the skill tool without file to see its files",
		s.Name, file, strings.Join(near, ", "))
}

// readCapped reads at most MaxFileBytes+1 bytes of the regular file at
// real, a path with its symlinks resolved, and returns them with the
// file's size. The file opened must still be the one at real (no symlink
// swapped in since it was resolved).
func readCapped(real string) ([]byte, int64, error) {
	f, err := os.Open(real)
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, 0, err
	}
	if fi.IsDir() {
		return nil, 0, errors.New("is a directory; call the skill tool without file to see the skill's files")
	}
	if !fi.Mode().IsRegular() {
		return nil, 0, errors.New("is not a regular file")
	}
	if li, err := os.Lstat(real); err != nil || !os.SameFile(fi, li) {
		return nil, 0, errors.New("changed while it was being read")
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxFileBytes+1))
	if err != nil {
		return nil, 0, err
	}
	return data, max(fi.Size(), int64(len(data))), nil
}

// cutText cuts data to at most n bytes, at the last line break of the
// last fifth if there is one, else at a rune boundary.
func cutText(data []byte, n int) []byte {
	data = data[:n]
	if i := bytes.LastIndexByte(data, '\n'); i >= n*4/5 {
		return data[:i+1]
	}
	for i := len(data) - 1; i >= 0 && i >= len(data)-utf8.UTFMax; i-- {
		if utf8.RuneStart(data[i]) {
			if !utf8.FullRune(data[i:]) {
				return data[:i]
			}
			break
		}
	}
	return data
}

// binary reports data that is not text: a NUL byte in its first 8 KiB.
// Text in another encoding is shown with its invalid UTF-8 replaced.
func binary(data []byte) bool {
	return bytes.IndexByte(data[:min(len(data), 8192)], 0) >= 0
}
