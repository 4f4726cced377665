//go:build linux

package memory

import (
	"runtime"
	"syscall"
	"time"
)

// threadCPU returns the CPU time of the calling thread and a function to
// release it: on a shared machine wall time says little, CPU time more.
func threadCPU() (now func() time.Duration, release func()) {
	runtime.LockOSThread()
	return func() time.Duration {
		var ru syscall.Rusage
		if err := syscall.Getrusage(syscall.RUSAGE_THREAD, &ru); err != nil {
			return 0
		}
		return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}, runtime.UnlockOSThread
}
