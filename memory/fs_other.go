//go:build !unix

package memory

import (
	"errors"
	"io/fs"
	"os"
)

// errLink is the error of opening a symbolic link without following it.
var errLink = errors.New("a symbolic link")

// oNoFollow is not available here; openNoFollow checks with Lstat.
const oNoFollow = 0

// openNoFollow opens p for reading unless it is a symbolic link
// (errLink).
func openNoFollow(p string) (*os.File, error) {
	fi, err := os.Lstat(p)
	if err != nil {
		return nil, err
	}
	if fi.Mode()&fs.ModeSymlink != 0 {
		return nil, errLink
	}
	return os.Open(p)
}

// tryLock is a no-op where flock does not exist: concurrent rein
// processes writing one memory file may lose a write there.
func tryLock(*os.File) (bool, error) { return true, nil }

func unlockFile(*os.File) {}
