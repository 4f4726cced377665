package exec

import (
	"context"
	"errors"
	"os"
	osexec "os/exec"
	"syscall"
	"time"
)

// Defaults shared by the backends.
const (
	DefaultMaxMemory = 1 << 20         // bytes of output kept in memory
	DefaultKillDelay = 2 * time.Second // from SIGTERM to SIGKILL
	DefaultPipeGrace = 500 * time.Millisecond
	// DefaultMaxSpill bounds the output of one command (and so its spill
	// file): `yes` writes gigabytes in seconds.
	DefaultMaxSpill int64 = 64 << 20
)

// limits are the knobs of one run, defaults applied.
type limits struct {
	maxMemory int
	maxSpill  int64
	spillDir  string
	killDelay time.Duration
	pipeGrace time.Duration
	// start starts the process; nil means (*osexec.Cmd).Start.
	start func(*osexec.Cmd) error
}

func (l limits) withDefaults() limits {
	if l.maxMemory <= 0 {
		l.maxMemory = DefaultMaxMemory
	}
	if l.killDelay <= 0 {
		l.killDelay = DefaultKillDelay
	}
	if l.pipeGrace <= 0 {
		l.pipeGrace = DefaultPipeGrace
	}
	if l.maxSpill == 0 {
		l.maxSpill = DefaultMaxSpill
	}
	return l
}

// runProcess starts c in a session of its own (so it is the leader of a new
// process group and has no controlling terminal to prompt on), with stdin on
// /dev/null and stdout and stderr on one pipe, and waits for it. A timeout or
// a cancelled ctx sends SIGTERM to the whole group and SIGKILL after the kill
// delay. Once the leader has exited, output is read until every holder of the
// pipe has closed it, or for the pipe grace at most: a daemon left in the
// background cannot hold Run forever.
//
// Output past the limit (cmd.MaxOutput, else lim.maxSpill) stops the group
// the same way, reported as OutputLimited.
func runProcess(ctx context.Context, c *osexec.Cmd, cmd Command, lim limits) (Output, error) {
	if cmd.MaxOutput != 0 {
		lim.maxSpill = cmd.MaxOutput
	}
	lim = lim.withDefaults()
	if ctx.Err() != nil {
		return Output{Cancelled: true, ExitCode: -1}, nil
	}
	r, w, err := os.Pipe()
	if err != nil {
		return Output{}, err
	}
	c.Stdin = nil // os/exec opens /dev/null
	c.Stdout, c.Stderr = w, w
	c.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	startFn := (*osexec.Cmd).Start
	if lim.start != nil {
		startFn = lim.start
	}
	start := time.Now()
	if err := startFn(c); err != nil {
		r.Close()
		w.Close()
		return Output{}, err
	}
	w.Close()
	pgid := c.Process.Pid
	if cmd.OnStart != nil {
		cmd.OnStart(pgid)
	}

	capt := &capture{max: lim.maxMemory, spillDir: lim.spillDir, maxSpill: lim.maxSpill, limit: make(chan struct{}), stream: cmd.Stream}
	if cmd.Stream != nil {
		capt.max = min(capt.max, StreamKeep)
	}
	readDone := make(chan struct{})
	go func() {
		defer close(readDone)
		capt.readAll(r)
	}()
	waitDone := make(chan error, 1)
	go func() { waitDone <- c.Wait() }()

	var out Output
	var timeout <-chan time.Time
	if cmd.Timeout > 0 {
		t := time.NewTimer(cmd.Timeout)
		defer t.Stop()
		timeout = t.C
	}
	var waitErr error
	limited := false
	select {
	case waitErr = <-waitDone:
	case <-timeout:
		out.TimedOut = true
	case <-ctx.Done():
		out.Cancelled = true
	case <-capt.limit:
		limited = true
	}
	if out.TimedOut || out.Cancelled || limited {
		waitErr = stopGroup(pgid, waitDone, readDone, lim.killDelay)
	}
	select {
	case <-readDone:
	case <-time.After(lim.pipeGrace):
	}
	r.Close()
	<-readDone
	out.Duration = time.Since(start)
	capt.finish(&out)
	out.ExitCode = exitCode(c.ProcessState, waitErr)
	return out, nil
}

// stopGroup sends SIGTERM to the group and waits, up to delay, for the
// leader to exit, the pipe to close and the rest of the group to go; then it
// sends SIGKILL to whatever of the group is left. It returns the leader's wait
// error.
func stopGroup(pgid int, waitDone <-chan error, readDone <-chan struct{}, delay time.Duration) error {
	_ = syscall.Kill(-pgid, syscall.SIGTERM)
	deadline := time.NewTimer(delay)
	defer deadline.Stop()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	var waitErr error
	exited, drained := false, false
	for {
		select {
		case waitErr = <-waitDone:
			exited = true
		case <-readDone:
			drained, readDone = true, nil
		case <-tick.C:
		case <-deadline.C:
			// The group id stays reserved while any member lives, so this
			// reaches only what is left of the command.
			_ = syscall.Kill(-pgid, syscall.SIGKILL)
			if !exited {
				waitErr = <-waitDone
			}
			return waitErr
		}
		if exited && drained && !groupAlive(pgid) {
			return waitErr
		}
	}
}

// exitCode is the shell's view: the status, or 128+signal when killed.
func exitCode(ps *os.ProcessState, err error) int {
	if ps == nil {
		var ee *osexec.ExitError
		if errors.As(err, &ee) {
			ps = ee.ProcessState
		}
	}
	if ps == nil {
		return -1
	}
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return ps.ExitCode()
}
