package kbtest

import (
	"syscall"
	"time"
)

// ThreadCPU returns the CPU time the calling thread has used (the caller
// locks itself to its thread): what a search costs whatever else the
// machine runs, which the wall clock under load does not tell.
func ThreadCPU() (time.Duration, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_THREAD, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
