//go:build unix

package workspace

import (
	"io/fs"
	"syscall"
)

// readRegular reads the regular file at p, of at most limit bytes
// (errTooBig beyond, without reading it). With nofollow, a symbolic link
// at p is errLink. The file is opened without blocking (a
// FIFO a repository ships never hangs rein) and without going through
// the runtime's poller, which costs a few system calls per file.
func readRegular(p string, nofollow bool, limit int) ([]byte, error) {
	flags := syscall.O_RDONLY | syscall.O_CLOEXEC | syscall.O_NONBLOCK
	if nofollow {
		flags |= syscall.O_NOFOLLOW
	}
	var fd int
	var err error
	for {
		if fd, err = syscall.Open(p, flags, 0); err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		if nofollow && (err == syscall.ELOOP || err == syscall.EMLINK) {
			return nil, errLink
		}
		return nil, &fs.PathError{Op: "open", Path: p, Err: err}
	}
	defer syscall.Close(fd)
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil {
		return nil, &fs.PathError{Op: "stat", Path: p, Err: err}
	}
	if st.Mode&syscall.S_IFMT != syscall.S_IFREG {
		return nil, errNotRegular
	}
	if st.Size > int64(limit) {
		return nil, errTooBig
	}
	buf := make([]byte, st.Size+512)
	n := 0
	for {
		if n == len(buf) {
			if n > limit {
				return nil, errTooBig
			}
			buf = append(buf, make([]byte, 4096)...)
		}
		m, err := syscall.Read(fd, buf[n:])
		if err == syscall.EINTR || err == syscall.EAGAIN {
			continue
		}
		if err != nil {
			return nil, &fs.PathError{Op: "read", Path: p, Err: err}
		}
		if m <= 0 {
			break
		}
		if n += m; st.Size > 0 && int64(n) >= st.Size {
			break // all fstat promised: spare the read that would say EOF
		}
	}
	if n > limit {
		return nil, errTooBig
	}
	return buf[:n], nil
}
