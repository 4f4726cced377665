package attachment

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/reinhq/rein/llm"
	"github.com/reinhq/rein/tool"
)

// imageExts are the file name endings a mention or a pasted path must have
// to be taken for an image (the bytes decide what it is).
var imageExts = []string{".png", ".jpg", ".jpeg", ".gif", ".webp"}

// LooksLikeImage reports whether a path names an image by its extension.
func LooksLikeImage(path string) bool {
	ext := strings.ToLower(filepath.Ext(path))
	for _, e := range imageExts {
		if ext == e {
			return true
		}
	}
	return false
}

// ReadFile reads the image file at path (a regular file, within the
// per-image limit, its type sniffed) for an attachment the user named
// explicitly, anywhere (`rein run --image`, a path dropped in the terminal
// UI); a sensitive file is still refused.
func ReadFile(path string, sensitive tool.SensitiveSet, l Limits) (llm.Image, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return llm.Image{}, fmt.Errorf("%s: %w: %v", path, ErrInvalid, err)
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return llm.Image{}, fmt.Errorf("%s: %w: %v", path, ErrInvalid, noSuchFile(err))
	}
	if pat, ok := sensitive.Match(abs, real); ok {
		return llm.Image{}, fmt.Errorf("%s: %w: it is a sensitive file (%s); rein attaches none", path, ErrInvalid, pat)
	}
	return readImage(path, real, l)
}

// readImage reads real (a resolved path) as one image; name is the path as
// the user wrote it.
func readImage(name, real string, l Limits) (llm.Image, error) {
	l = l.orDefault()
	f, err := os.Open(real)
	if err != nil {
		return llm.Image{}, fmt.Errorf("%s: %w: %v", name, ErrInvalid, noSuchFile(err))
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return llm.Image{}, fmt.Errorf("%s: %w: %v", name, ErrInvalid, err)
	}
	if !fi.Mode().IsRegular() {
		return llm.Image{}, fmt.Errorf("%s: %w: not a regular file", name, ErrInvalid)
	}
	if fi.Size() > int64(l.MaxImageBytes) {
		return llm.Image{}, fmt.Errorf("%s: %w: %s, over the limit of %s per image; scale it down or crop it",
			name, ErrTooLarge, sizeText(int(min(fi.Size(), 1<<40))), sizeText(l.MaxImageBytes))
	}
	// The file may grow between Stat and reading: read one byte more than
	// allowed and let New refuse it.
	data, err := io.ReadAll(io.LimitReader(f, int64(l.MaxImageBytes)+1))
	if err != nil {
		return llm.Image{}, fmt.Errorf("%s: %w: %v", name, ErrInvalid, err)
	}
	return New(name, data, "", l)
}

// noSuchFile shortens the error of a missing file.
func noSuchFile(err error) error {
	if os.IsNotExist(err) {
		return fmt.Errorf("no such file")
	}
	return err
}
