package persona

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"strings"
	"unicode/utf8"

	"github.com/reinhq/rein/internal/atomicfile"
)

// maxFileBytes bounds what is read of a persona file: a file edited by hand
// into something huge is read cut, not swallowed whole.
const maxFileBytes = 64 << 10

// readFile reads path: at most maxFileBytes (truncated says so), invalid
// UTF-8 replaced. exists is false, with no error, when there is no file.
func readFile(path string) (text string, exists, truncated bool, err error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return "", false, false, nil
	}
	if err != nil {
		return "", false, false, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return "", true, false, err
	}
	if !fi.Mode().IsRegular() {
		return "", true, false, errors.New("not a regular file")
	}
	data, err := io.ReadAll(io.LimitReader(f, maxFileBytes+1))
	if err != nil {
		return "", true, false, err
	}
	if len(data) > maxFileBytes {
		data, truncated = data[:maxFileBytes], true
	}
	s := string(data)
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	return s, true, truncated, nil
}

// writeAtomic writes data to path atomically, private (0600, directory
// 0700).
func writeAtomic(path string, data []byte) error { return atomicfile.Write(path, data, 0o600) }

// removeFile removes path; a missing file is not an error. It reports
// whether there was one.
func removeFile(path string) (bool, error) {
	err := os.Remove(path)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	return err == nil, err
}
