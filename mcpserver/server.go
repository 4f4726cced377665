package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"path/filepath"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/reinhq/rein/runner"
	"github.com/reinhq/rein/session"
)

// Options are what a tool call may set for its run: the model ("" keeps
// the configuration's, or a continued session's) and the permission mode
// ("" keeps the configuration's). The front passes them to the workspace's
// configuration as flags would, so a mode is checked like --permission-mode.
type Options struct {
	Model          string
	PermissionMode string
}

// Opener builds the Setup of the workspace at dir (an absolute directory
// at or below [Config.Root]), with o applied as run-level settings; the
// model is chosen by the server ([runner.Setup.WithModel]). The front
// loads the configuration and settles the workspace's trust as `rein run`
// does without a terminal: extras it has not trusted stay out (PERM-5).
// The server closes the Setup after the call.
type Opener func(ctx context.Context, dir string, o Options) (*runner.Setup, error)

// DefaultMaxPrompt is the largest prompt a tool call may send, in bytes,
// when [Config.MaxPrompt] is zero.
const DefaultMaxPrompt = 1 << 20

// Config is what the front gives the server.
type Config struct {
	// Root is the directory rein was started in (its workspace's root):
	// runs work there or below, and only its sessions are offered.
	Root string
	// Store holds the sessions; every run's Setup must store in it.
	Store session.Store
	// Open builds a workspace's Setup.
	Open Opener
	// Version is rein's version, told to clients.
	Version string
	// MaxPrompt caps a prompt's size in bytes; 0 is [DefaultMaxPrompt].
	MaxPrompt int
	// Logger logs the server's own troubles; nil discards them.
	Logger *slog.Logger
}

// Server is rein's MCP server: one [mcp.Server] with rein's tools, served
// over stdio ([Server.ServeStdio]) or streamable HTTP ([Server.Handler]).
type Server struct {
	cfg    Config
	mcp    *mcp.Server
	parked parked
	holds  holds
}

// New checks cfg and builds the server with its tools.
func New(cfg Config) (*Server, error) {
	if cfg.Root == "" || !filepath.IsAbs(cfg.Root) {
		return nil, fmt.Errorf("mcpserver: Config.Root must be an absolute directory, not %q", cfg.Root)
	}
	if cfg.Store == nil || cfg.Open == nil {
		return nil, errors.New("mcpserver: Config needs Store and Open")
	}
	cfg.Root = filepath.Clean(cfg.Root)
	if cfg.MaxPrompt <= 0 {
		cfg.MaxPrompt = DefaultMaxPrompt
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	s := &Server{cfg: cfg}
	s.mcp = mcp.NewServer(&mcp.Implementation{Name: "rein", Title: "rein", Version: cfg.Version},
		&mcp.ServerOptions{Logger: cfg.Logger, Instructions: instructions})
	s.addTools()
	return s, nil
}

// instructions tell the client's model what the server is for.
const instructions = `rein is a coding agent. "run" gives it a task in a workspace (the directory the server was started in, or one below it) and returns its answer, cost and session id; "continue" sends a follow-up to a session; "list_sessions" and "read_session" show the stored sessions. Tool calls that need permission are asked through elicitation when the client supports it; otherwise the configured permission mode decides and a call that would ask is denied.`

// MCP returns the underlying MCP server (to connect it to any transport).
func (s *Server) MCP() *mcp.Server { return s.mcp }

// ServeStdio serves one client on in and out (the process's stdin and
// stdout) until the client closes in or ctx ends.
func (s *Server) ServeStdio(ctx context.Context, in io.ReadCloser, out io.WriteCloser) error {
	return s.mcp.Run(ctx, &mcp.IOTransport{Reader: in, Writer: out})
}

// Handler serves streamable HTTP to the clients that send token as a
// bearer token (auth.go), behind the Host and Origin checks of guard.go:
// only loopback names in Host, no Origin (no web page). token must pass
// [CheckToken] ([NewToken] makes one).
func (s *Server) Handler(token string) (http.Handler, error) {
	if err := CheckToken(token); err != nil {
		return nil, fmt.Errorf("mcpserver: %w", err)
	}
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s.mcp }, &mcp.StreamableHTTPOptions{Logger: s.cfg.Logger})
	return guard(bearer(token, h)), nil
}
