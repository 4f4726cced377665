//go:build unix

package memory

import (
	"errors"
	"io/fs"
	"os"
	"syscall"
)

// errLink is the error of opening a symbolic link without following it.
var errLink = errors.New("a symbolic link")

// oNoFollow makes an open fail on a symbolic link.
const oNoFollow = syscall.O_NOFOLLOW

// openNoFollow opens p for reading without following a symbolic link
// (errLink) and without blocking on a FIFO.
func openNoFollow(p string) (*os.File, error) {
	f, err := os.OpenFile(p, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	var pe *fs.PathError
	if errors.As(err, &pe) && (pe.Err == syscall.ELOOP || pe.Err == syscall.EMLINK) {
		return nil, errLink
	}
	return f, err
}

// tryLock takes an exclusive flock on f without waiting; ok is false
// when another holds it.
func tryLock(f *os.File) (ok bool, err error) {
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err != syscall.EINTR {
			break
		}
	}
	if err == syscall.EWOULDBLOCK {
		return false, nil
	}
	return err == nil, err
}

func unlockFile(f *os.File) { _ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN) }
