package exec

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	osexec "os/exec"
	"sync"
	"time"
)

// Local runs commands on the host, each in a process group of its own, and
// reads and writes host files (SPEC TOOL-4, TOOL-5). The zero value is ready
// to use; a Local may be used from many goroutines at once.
type Local struct {
	// MaxMemory is how many bytes of output are kept in memory (Combined, and
	// as many again in Tail once truncated); beyond it the whole output goes
	// to a spill file. 0 means DefaultMaxMemory (1 MiB).
	MaxMemory int
	// MaxSpill bounds a command's output, so the spill file cannot fill
	// the disk: past it the command is stopped (TERM, then KILL) and the
	// spill file keeps the first MaxSpill bytes (Output.OutputLimited). A
	// Command's MaxOutput overrides it. 0 means DefaultMaxSpill (64 MiB);
	// negative means no limit.
	MaxSpill int64
	// SpillDir holds spill files; "" means os.TempDir()/rein.
	SpillDir string
	// PassEnv names the variables commands inherit from rein's environment;
	// nil means DefaultPassEnv.
	PassEnv []string
	// KillDelay is the time from SIGTERM to SIGKILL on a timeout or cancel;
	// 0 means DefaultKillDelay (2 s).
	KillDelay time.Duration
	// PipeGrace is how long output is still read once the command's leader
	// has exited, for background processes that hold the output pipe; 0 means
	// DefaultPipeGrace.
	PipeGrace time.Duration
}

// Name implements Backend.
func (l *Local) Name() string { return "local" }

func (l *Local) limits() limits {
	return limits{maxMemory: l.MaxMemory, maxSpill: l.MaxSpill, spillDir: l.SpillDir,
		killDelay: l.KillDelay, pipeGrace: l.PipeGrace}
}

// Run implements Backend. A Script runs with bash -c (sh -c where bash is
// missing); Args run directly.
func (l *Local) Run(ctx context.Context, cmd Command) (Output, error) {
	argv, err := argvOf(cmd)
	if err != nil {
		return Output{}, err
	}
	if err := checkDir(cmd.Dir); err != nil {
		return Output{}, err
	}
	c := osexec.Command(argv[0], argv[1:]...)
	c.Dir = cmd.Dir
	c.Env = baseEnv(l.PassEnv, cmd.Env)
	out, err := runProcess(ctx, c, cmd, l.limits())
	if err != nil {
		return Output{}, fmt.Errorf("exec: run %s: %w", argv[0], err)
	}
	return out, nil
}

// argvOf turns a Command into an argument vector.
func argvOf(cmd Command) ([]string, error) {
	switch {
	case cmd.Script != "" && len(cmd.Args) > 0:
		return nil, errors.New("exec: command has both Script and Args")
	case cmd.Script != "":
		return []string{shell(), "-c", cmd.Script}, nil
	case len(cmd.Args) > 0:
		return cmd.Args, nil
	}
	return nil, errors.New("exec: empty command")
}

var shellPath = sync.OnceValue(func() string {
	if p, err := osexec.LookPath("bash"); err == nil {
		return p
	}
	if p, err := osexec.LookPath("sh"); err == nil {
		return p
	}
	return "/bin/sh"
})

// shell is bash, or sh where there is no bash.
func shell() string { return shellPath() }

func checkDir(dir string) error {
	if dir == "" {
		return nil
	}
	fi, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("exec: working directory: %w", err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("exec: working directory %s is not a directory", dir)
	}
	return nil
}

// ReadFile implements Backend.
func (l *Local) ReadFile(ctx context.Context, path string) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return readCapped(path)
}

// MaxReadFile is the most ReadFile reads: a file the tools hold whole in
// memory. A sparse file of a terabyte costs a command one truncate, and
// reading it whole took the server's memory from every caller.
const MaxReadFile = 256 << 20

// readCapped reads path whole, refusing it beyond MaxReadFile — counted
// while reading, since a file can grow after it was measured.
func readCapped(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var size int64
	if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() {
		size = fi.Size()
	}
	if size > MaxReadFile {
		return nil, fmt.Errorf("read %s: %d bytes, more than the %d the file tools read whole", path, size, MaxReadFile)
	}
	data := make([]byte, 0, size+512)
	buf := bytes.NewBuffer(data)
	n, err := buf.ReadFrom(io.LimitReader(f, MaxReadFile+1))
	if err != nil {
		return nil, &fs.PathError{Op: "read", Path: path, Err: err}
	}
	if n > MaxReadFile {
		return nil, fmt.Errorf("read %s: more than the %d bytes the file tools read whole (it grew while being read)", path, MaxReadFile)
	}
	return buf.Bytes(), nil
}

// Stat implements Backend.
func (l *Local) Stat(ctx context.Context, path string) (fs.FileInfo, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return os.Stat(path)
}

// WriteFile implements Backend: parents are created, the data goes to a
// temporary file in the same directory that is synced and renamed over path,
// so a reader sees the old content or the new, never half. An existing file
// keeps its mode (perm applies to new files); a symlink is written through.
func (l *Local) WriteFile(ctx context.Context, path string, data []byte, perm fs.FileMode) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return writeAtomic(path, data, perm)
}

func writeAtomic(path string, data []byte, perm fs.FileMode) error {
	real, err := ResolveExisting(path)
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return writeResolved(real, data, perm)
}
