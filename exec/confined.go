package exec

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	osexec "os/exec"
	"slices"

	"github.com/reinhq/rein/exec/helper"
)

// Confined runs commands on the host under Landlock (Linux 5.13+), for
// where bubblewrap cannot run (a container without user namespaces, say).
// It is weaker than [Sandbox]: a command may read everything and execute
// everything, and may write only in the workspace, the Writable
// directories, a private temporary directory (TMPDIR, removed after the
// command; /tmp itself is not writable) and a few devices; TCP bind and
// connect are refused unless AllowNetwork (Landlock ABI 4; UDP is not
// covered); signals to processes outside the command, and reading their
// memory or environment through /proc, are refused (ABI 6 for signals,
// every ABI for ptrace). Landlock grants whole directory trees, so it
// cannot keep .git, .rein or .claude inside the workspace read-only nor
// hide files: after each command the same check as the Sandbox's moves
// aside new repositories' hooks and config and new .rein and .claude
// directories, but an existing .git/hooks is writable. Path-named host
// sockets (D-Bus, docker) stay reachable.
//
// The restriction is applied to an OS thread of rein made for the purpose,
// which starts the command and then ends: the command inherits it, rein
// does not, and no helper process runs in between.
type Confined struct {
	// Workspace is writable; "" means the command's Dir.
	Workspace string
	// Writable lists more writable directories.
	Writable []string
	// AllowNetwork keeps TCP.
	AllowNetwork bool
	// MaxScan bounds the workspace scans (see Sandbox.MaxScan).
	MaxScan int
	// Local carries the output and kill settings.
	Local Local
}

// Name implements Backend.
func (c *Confined) Name() string { return "landlock" }

// Available reports whether Landlock can confine commands here.
func (c *Confined) Available() error {
	if LandlockABI() < 1 {
		return errors.New("the kernel offers no Landlock (Linux 5.13 or later, enabled at boot, not blocked by seccomp)")
	}
	return nil
}

// Run implements Backend. It fails closed when Landlock is unavailable.
func (c *Confined) Run(ctx context.Context, cmd Command) (Output, error) {
	if err := c.Available(); err != nil {
		return Output{}, fmt.Errorf("exec: landlock: %w", err)
	}
	inner, err := argvOf(cmd)
	if err != nil {
		return Output{}, err
	}
	sb := c.files()
	dir, err := sb.dirOf(cmd, nil)
	if err != nil {
		return Output{}, err
	}
	writable := sb.writable(dir, nil)
	if len(writable) == 0 {
		return Output{}, fmt.Errorf("exec: landlock: workspace %s does not exist", c.Workspace)
	}
	limit := c.MaxScan
	if limit <= 0 {
		limit = DefaultMaxScan
	}
	before, err := scanTree(writable[0], nil, limit)
	if err != nil {
		return Output{}, fmt.Errorf("exec: landlock: cannot scan the workspace: %w", err)
	}
	tmp, err := os.MkdirTemp("", "rein-tmp-*")
	if err != nil {
		return Output{}, fmt.Errorf("exec: landlock: %w", err)
	}
	defer os.RemoveAll(tmp)
	rules := helper.Rules{Dirs: append(slices.Clone(writable), tmp), Files: landlockDevices, NoTCP: !c.AllowNetwork}
	if fi, err := os.Stat("/dev/shm"); err == nil && fi.IsDir() {
		rules.Dirs = append(rules.Dirs, "/dev/shm")
	}
	p := osexec.Command(inner[0], inner[1:]...)
	p.Dir = dir
	p.Env = baseEnv(c.Local.PassEnv, []string{"TMPDIR=" + tmp}, cmd.Env)
	lim := c.Local.limits()
	lim.start = func(p *osexec.Cmd) error { return startLandlocked(p, rules) }
	out, err := runProcess(ctx, p, cmd, lim)
	if err != nil {
		return Output{}, fmt.Errorf("exec: landlock run: %w", err)
	}
	sh := &shield{before: before, limit: limit, links: map[string]linkState{}}
	out.Notes = sh.check()
	return out, nil
}

// files is the Sandbox whose file operations Confined shares: writes only
// in the writable directories, never to a protected path.
func (c *Confined) files() *Sandbox {
	return &Sandbox{Workspace: c.Workspace, Writable: c.Writable, Local: c.Local}
}

// ReadFile implements Backend.
func (c *Confined) ReadFile(ctx context.Context, path string) ([]byte, error) {
	return c.files().ReadFile(ctx, path)
}

// Stat implements Backend.
func (c *Confined) Stat(ctx context.Context, path string) (fs.FileInfo, error) {
	return c.files().Stat(ctx, path)
}

// WriteFile implements Backend like Sandbox.WriteFile.
func (c *Confined) WriteFile(ctx context.Context, path string, data []byte, perm fs.FileMode) error {
	return c.files().WriteFile(ctx, path, data, perm)
}

var _ Backend = (*Confined)(nil)
