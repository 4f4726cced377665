//go:build !unix

package workspace

import (
	"io"
	"io/fs"
	"os"
)

// readRegular reads the regular file at p, of at most limit bytes
// (errTooBig beyond). With nofollow, a symbolic link at p is errLink.
func readRegular(p string, nofollow bool, limit int) ([]byte, error) {
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
	case fi.Size() > int64(limit):
		return nil, errTooBig
	}
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, int64(limit)+1))
	if err != nil {
		return nil, err
	}
	if len(data) > limit {
		return nil, errTooBig
	}
	return data, nil
}
