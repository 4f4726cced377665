package exec

import (
	"fmt"
	osexec "os/exec"
	"runtime"

	"github.com/reinhq/rein/exec/helper"
)

// LandlockABI returns the Landlock ABI version the kernel offers, 0 when it
// has none (not Linux, older than 5.13, disabled at boot, or blocked by a
// seccomp filter).
func LandlockABI() int { return helper.LandlockABI() }

// startLandlocked starts c from an OS thread of its own restricted by r:
// the child inherits the thread's Landlock domain and no_new_privs, as a
// helper process would give it, without executing anything in between.
// The thread is never unlocked, so it ends with its goroutine and its
// restrictions never reach the rest of rein.
func startLandlocked(c *osexec.Cmd, r helper.Rules) error {
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // and never unlocked: see above
		if err := helper.Restrict(r); err != nil {
			errc <- fmt.Errorf("landlock: %w", err)
			return
		}
		errc <- c.Start()
	}()
	return <-errc
}
