//go:build !linux

package workspace

import "errors"

// errNoState is why nothing is cached here: the states revalidation
// compares (inode, change time in nanoseconds) are read on Linux only.
var errNoState = errors.New("file states are read on Linux only")

// lstatState fails: a [Cache] loads every time on this system.
func lstatState(string) (fileState, error) { return fileState{}, errNoState }

func (s fileState) isLink() bool     { return false }
func (s fileState) isDirState() bool { return false }
