//go:build !unix

package workspace

import (
	"io"
	"io/fs"
	"os"
)

// readRegular reads the regular file at p, bounded. With nofollow, a
// symbolic link at p is errLink.
func readRegular(p string, nofollow bool) ([]byte, error) {
	stat := os.Stat
	if nofollow {
		stat = os.Lstat
	}
	fi, err := stat(p)
	if err != nil {
		return nil, err
	}
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		return nil, errLink
	case !fi.Mode().IsRegular():
		return nil, errNotRegular
	case fi.Size() > maxDefBytes:
		return nil, errTooBig
	}
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxDefBytes+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxDefBytes {
		return nil, errTooBig
	}
	return data, nil
}
