package workspace

import "syscall"

// lstatState returns the state of the path p itself (a link is not
// followed); a missing path (or one through a file) is the zero state.
func lstatState(p string) (fileState, error) {
	var st syscall.Stat_t
	var err error
	for {
		if err = syscall.Lstat(p, &st); err != syscall.EINTR {
			break
		}
	}
	switch err {
	case nil:
	case syscall.ENOENT, syscall.ENOTDIR:
		return fileState{}, nil
	default:
		return fileState{}, err
	}
	return fileState{exists: true, dev: uint64(st.Dev), ino: uint64(st.Ino), nlink: uint64(st.Nlink),
		mode: st.Mode, uid: st.Uid, gid: st.Gid, size: st.Size, mtime: st.Mtim.Nano(), ctime: st.Ctim.Nano()}, nil
}

// isLink and isDirState read a state's type.
func (s fileState) isLink() bool     { return s.mode&syscall.S_IFMT == syscall.S_IFLNK }
func (s fileState) isDirState() bool { return s.mode&syscall.S_IFMT == syscall.S_IFDIR }
