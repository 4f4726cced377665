package acp

import (
	"context"
	"errors"
	"io"
	"log/slog"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/reinhq/rein/runner"
	"github.com/reinhq/rein/session"
)

// Workspace is what a front opens for one ACP session in one directory:
// the runner's Setup (its model not yet chosen: the session's own is, see
// [runner.Setup.ModelSpec]) and the store its sessions are kept in.
type Workspace struct {
	Setup *runner.Setup
	Store session.Store
	// Close releases what Open took (the Setup, the store).
	Close func() error
}

// Config configures [Serve].
type Config struct {
	// Open opens the workspace of dir, an absolute directory the client
	// named as a session's cwd. The CLI loads the configuration there,
	// with the workspace's trust settled as for a headless run.
	Open func(ctx context.Context, dir string) (*Workspace, error)
	// Version is rein's version, sent as agentInfo.
	Version string
	// Logger receives the connection's and the runs' logs (never stdout:
	// stdout carries the protocol). Nil discards them.
	Logger *slog.Logger
}

// Serve speaks ACP as the agent on in (the client's requests) and out
// (rein's answers and notifications) until in ends or ctx is done; it
// closes every session it opened before it returns.
func Serve(ctx context.Context, cfg Config, in io.Reader, out io.Writer) error {
	if cfg.Open == nil {
		return errors.New("acp: Config.Open is required")
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	a := newAgent(cfg)
	conn := sdk.NewAgentSideConnection(a, out, in)
	conn.SetLogger(cfg.Logger)
	a.conn = conn
	defer a.closeAll()
	select {
	case <-conn.Done():
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
