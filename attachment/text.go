package attachment

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"unicode/utf8"
)

// MaxTextBytes bounds one text file a slash command's `@path` pastes into
// its prompt.
const MaxTextBytes = 256 << 10

// ErrNoFile is the error of [Resolver.Text] for a mention that names no
// file (an `@team` in prose): the mention is left as written.
var ErrNoFile = errors.New("no such file")

// Text returns the real path and the content of the text file a mention
// names, for a slash command's `@path` (SPEC COMPAT-1): relative to the
// workspace, inside it (symbolic links resolved), not a sensitive file, a
// regular file of at most [MaxTextBytes] of UTF-8 text. A path that names
// nothing is [ErrNoFile]; every other refusal wraps [ErrInvalid] or
// [ErrTooLarge] and says why.
func (r Resolver) Text(p string) (real, text string, err error) {
	if _, err := os.Lstat(joinRoot(r.Root, p)); errors.Is(err, fs.ErrNotExist) {
		return "", "", fmt.Errorf("@%s: %w", p, ErrNoFile)
	}
	real, err = r.resolve(p)
	if err != nil {
		return "", "", err
	}
	f, err := os.Open(real)
	if err != nil {
		return "", "", fmt.Errorf("@%s: %w: %v", p, ErrInvalid, noSuchFile(err))
	}
	defer f.Close()
	fi, err := f.Stat()
	switch {
	case err != nil:
		return "", "", fmt.Errorf("@%s: %w: %v", p, ErrInvalid, err)
	case fi.IsDir():
		return "", "", fmt.Errorf("@%s: %w: a directory; name a file in it", p, ErrInvalid)
	case !fi.Mode().IsRegular():
		return "", "", fmt.Errorf("@%s: %w: not a regular file", p, ErrInvalid)
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxTextBytes+1))
	switch {
	case err != nil:
		return "", "", fmt.Errorf("@%s: %w: %v", p, ErrInvalid, err)
	case len(data) > MaxTextBytes:
		return "", "", fmt.Errorf("@%s: %w: over the limit of %s for a file a command pastes; let the model read it with read_file instead (write the path without @)",
			p, ErrTooLarge, sizeText(MaxTextBytes))
	case bytes.IndexByte(data, 0) >= 0 || !utf8.Valid(data):
		return "", "", fmt.Errorf("@%s: %w: not a text file (binary content)", p, ErrInvalid)
	}
	return real, string(data), nil
}
