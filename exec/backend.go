// Package exec is where commands run and files are read and written: the
// execution backend of SPEC TOOL-5. The harness never assumes which backend it
// has: [Local] runs on the host, the bubblewrap sandbox confines writes to the
// workspace and cuts the network.
package exec

import (
	"context"
	"io"
	"io/fs"
	"time"
)

// Backend runs commands and touches files for tools.
type Backend interface {
	// Name identifies the backend in logs and audit records ("local", "bwrap").
	Name() string
	// Run executes cmd and waits for it, its process group included. A
	// non-zero exit, a timeout or a cancelled ctx is reported in the Output,
	// not as an error; err is for failing to run at all (a missing sandbox, a
	// bad directory).
	Run(ctx context.Context, cmd Command) (Output, error)
	// ReadFile returns a file's content.
	ReadFile(ctx context.Context, path string) ([]byte, error)
	// WriteFile replaces a file's content atomically (temp file and rename),
	// creating parent directories.
	WriteFile(ctx context.Context, path string, data []byte, perm fs.FileMode) error
	// Stat describes a file.
	Stat(ctx context.Context, path string) (fs.FileInfo, error)
}

// Command is one command to run.
type Command struct {
	// Script is run by bash -c. Exactly one of Script and Args is set.
	Script string
	// Args is run directly, Args[0] looked up in PATH.
	Args []string
	// Dir is the working directory; it must exist.
	Dir string
	// Env is added to the backend's base environment for this call only; the
	// process's own environment is never changed (SPEC TOOL-4).
	Env []string
	// Timeout ends the command (TERM to its process group, then KILL after 2 s);
	// 0 means no timeout beyond ctx.
	Timeout time.Duration
	// MaxOutput bounds the bytes of output the command may write: past it
	// the command is stopped like on a timeout (Output.OutputLimited) and the
	// spill file keeps the first MaxOutput bytes. 0 means the backend's
	// MaxSpill (DefaultMaxSpill, 64 MiB, unless set); negative means no limit.
	MaxOutput int64
	// OnStart, when set, is called with the process group id right after the
	// command starts, before it can do anything — so a journal can record it
	// (SPEC SESS-1).
	OnStart func(pgid int)
	// Stream, when set, receives the output as it is written (see
	// stream.go): Run then keeps only its first and last StreamKeep bytes
	// (Combined, Tail), for a backend's own reading of a failure, makes
	// no spill file, and still counts it all (TotalBytes) and applies
	// MaxOutput. A background job reads its command's output this way
	// (SPEC TOOL-8).
	Stream io.Writer
}

// Output is what a command did.
type Output struct {
	// Combined is stdout and stderr interleaved as written, up to the
	// backend's memory cap; Truncated says more was written. SpillPath, when
	// set, holds the output: all of it, or the first SpillBytes bytes when
	// OutputLimited.
	Combined  []byte
	Truncated bool
	SpillPath string
	// SpillBytes is how many bytes SpillPath holds.
	SpillBytes int64
	// OutputLimited says the output passed OutputLimit and the command was
	// stopped there.
	OutputLimited bool
	// OutputLimit is the limit that applied: Command.MaxOutput, else the
	// backend's MaxSpill; 0 when there was none.
	OutputLimit int64
	// Tail, when Truncated, holds the last bytes written (as many as the
	// memory cap), so a caller can show the end without reading SpillPath.
	// The caller owns SpillPath and removes it when done.
	Tail []byte
	// TotalBytes is the number of bytes the command wrote in all.
	TotalBytes int64
	ExitCode   int
	// Notes say what a sandbox did that the model and the user should know:
	// what it moved aside after the command, and why (a new git
	// repository's hooks or config, a new .git file, a new .rein or
	// .claude; see [Sandbox]), and sensitive files it could not hide.
	Notes []string
	// TimedOut says the Timeout ended the command; Cancelled says ctx did.
	TimedOut, Cancelled bool
	Duration            time.Duration
}
