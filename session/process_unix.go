//go:build unix

package session

import (
	"context"
	"errors"
	"fmt"
	"syscall"
	"time"
)

// StopGrace is how long [StopPending] waits after SIGTERM before SIGKILL
// (as the shell tool does, SPEC TOOL-4).
const StopGrace = 2 * time.Second

// StopPending stops the process groups of interrupted calls that still run
// (SPEC SESS-1): SIGTERM to the group, then SIGKILL when it has not exited
// after [StopGrace]. Calls with no live group are skipped; each group is
// checked again first, so a group that exited meanwhile, or a pid reused by
// an unrelated process, is left alone. Each call whose group it stopped is
// marked Stopped in pending, so [State.Recheck] tells the model rein stopped
// it. It returns an error naming the groups it could not stop.
func StopPending(ctx context.Context, pending []PendingCall) error {
	var errs []error
	for i := range pending {
		p := &pending[i]
		if p.PGID <= 0 || !groupAlive(p.PGID, p.Start) {
			continue
		}
		if err := stopGroup(ctx, p.PGID, p.Start); err != nil {
			errs = append(errs, fmt.Errorf("call %s (%s): process group %d: %w", p.CallID, p.Tool, p.PGID, err))
			continue
		}
		p.Stopped, p.Alive = true, false
	}
	return errors.Join(errs...)
}

func stopGroup(ctx context.Context, pgid int, start uint64) error {
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGKILL} {
		if err := syscall.Kill(-pgid, sig); err != nil && !errors.Is(err, syscall.ESRCH) {
			return fmt.Errorf("%v: %w", sig, err)
		}
		deadline := time.Now().Add(StopGrace)
		for time.Now().Before(deadline) {
			if !groupAlive(pgid, start) {
				return nil
			}
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(20 * time.Millisecond):
			}
		}
	}
	return errors.New("still running after SIGKILL")
}

// killProbe reports whether a process group exists, by signal 0. EPERM
// means it exists but belongs to another user.
func killProbe(pgid int) bool {
	err := syscall.Kill(-pgid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
