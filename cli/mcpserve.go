package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/reinhq/rein/mcpserver"
	"github.com/reinhq/rein/runner"
	"github.com/reinhq/rein/session/jsonl"
	"github.com/reinhq/rein/workspace"
)

const mcpServeLong = `Serve rein as an MCP server (docs/mcp.md, "rein as an MCP server"): an MCP
client — Claude Code, an IDE, the MCP Inspector — gets the tools run (a
prompt in this directory or one below it: the answer, session id, turns and
cost), continue (a follow-up in a session), list_sessions and read_session.

The transport is stdio, unless --http ADDR serves streamable HTTP on ADDR
(a loopback address: 127.0.0.1:7879, localhost:0). Over HTTP every request
must carry the server's bearer token (Authorization: Bearer TOKEN): the
token of REIN_MCP_TOKEN or of --token-file, else a random one rein makes
and prints on stderr at start. A request without it, or whose Host is not
a loopback name, or which comes from a web page (Origin), is refused.

Permission questions go to the client as elicitation requests when it
supports them; otherwise the permission mode decides, and a call that would
ask is denied, as in rein run without a terminal. A call may ask for a
stricter permission mode than the configured one, never a looser one.
The workspace's extras (hooks, MCP servers, …) apply once it is trusted
(rein trust), as for rein run.`

// mcpServe is `rein mcp serve`.
func (a *App) mcpServe() *cobra.Command {
	var httpAddr, model, mode, tokenFile string
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve rein as an MCP server (stdio, or --http)",
		Long:  mcpServeLong,
		Example: `  claude mcp add rein -- rein mcp serve
  rein mcp serve --http 127.0.0.1:7879 --permission-mode accept-edits
  REIN_MCP_TOKEN=$(openssl rand -base64 32) rein mcp serve --http 127.0.0.1:7879`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			flags := map[string]string{}
			if cmd.Flags().Changed("model") {
				flags[workspace.Model] = model
			}
			if cmd.Flags().Changed("permission-mode") {
				flags[workspace.PermissionMode] = mode
			}
			if tokenFile != "" && httpAddr == "" {
				return usageErrorf("--token-file is for --http: over stdio the client that started rein is the only one")
			}
			return a.serveMCP(cmd.Context(), httpAddr, tokenFile, flags)
		},
	}
	cmd.Flags().StringVar(&httpAddr, "http", "", "serve streamable HTTP on this loopback address (host:port) instead of stdio")
	cmd.Flags().StringVar(&tokenFile, "token-file", "", "with --http: the file holding the bearer token clients must send (else REIN_MCP_TOKEN, else a random one, printed)")
	cmd.Flags().StringVar(&model, "model", "", "the model of runs that name none (provider/model)")
	cmd.Flags().StringVar(&mode, "permission-mode", "", "the permission mode of runs: default, accept-edits, plan, bypass, read-only, strict")
	return cmd
}

// serveMCP serves the MCP server until the client goes (stdio) or the
// process is stopped (HTTP).
func (a *App) serveMCP(ctx context.Context, httpAddr, tokenFile string, flags map[string]string) error {
	if httpAddr != "" && !loopbackAddr(httpAddr) {
		return usageErrorf("--http %s: give a loopback address (127.0.0.1:7879, localhost:0): rein mcp serve listens on this machine only", httpAddr)
	}
	var token string
	printToken := false
	if httpAddr != "" {
		var err error
		if token, printToken, err = a.mcpToken(tokenFile); err != nil {
			return err
		}
	}
	srv, closeStore, err := a.newMCPServer(flags)
	if err != nil {
		return err
	}
	defer closeStore()
	if httpAddr == "" {
		err := srv.ServeStdio(ctx, io.NopCloser(a.Stdin), nopWriteCloser{a.Stdout})
		if err != nil && !errors.Is(err, context.Canceled) && !errors.Is(err, io.EOF) {
			return fail(ExitError, "mcp serve: %v", err)
		}
		return nil
	}
	ln, err := net.Listen("tcp", httpAddr)
	if err != nil {
		return fail(ExitError, "--http %s: %v", httpAddr, err)
	}
	handler, err := srv.Handler(token)
	if err != nil {
		ln.Close()
		return fail(ExitError, "%v", err)
	}
	hs := &http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second}
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		<-ctx.Done()
		// Runs in flight get a while to end; then their connections close,
		// which cancels them.
		down, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		if hs.Shutdown(down) != nil {
			hs.Close()
		}
	}()
	fmt.Fprintf(a.Stderr, "rein: MCP server on http://%s/ (streamable HTTP)\n", ln.Addr())
	if printToken {
		fmt.Fprintf(a.Stderr, "rein: clients must send Authorization: Bearer %s (set REIN_MCP_TOKEN or --token-file to choose it)\n", token)
	} else {
		fmt.Fprintf(a.Stderr, "rein: clients must send Authorization: Bearer with the token given\n")
	}
	if err := hs.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return fail(ExitError, "--http %s: %v", ln.Addr(), err)
	}
	<-stopped
	return nil
}

// mcpToken is the bearer token of rein mcp serve --http: the file's
// (--token-file), else REIN_MCP_TOKEN's, else a random one, which is
// then printed (print true).
func (a *App) mcpToken(file string) (token string, print bool, err error) {
	from := "REIN_MCP_TOKEN"
	switch {
	case file != "":
		if !filepath.IsAbs(file) {
			file = filepath.Join(a.Dir, file)
		}
		data, err := os.ReadFile(file)
		if err != nil {
			return "", false, usageErrorf("--token-file: %v", err)
		}
		token, from = strings.TrimSpace(string(data)), "--token-file "+file
	case a.getenv("REIN_MCP_TOKEN") != "":
		token = strings.TrimSpace(a.getenv("REIN_MCP_TOKEN"))
	default:
		token, err := mcpserver.NewToken()
		if err != nil {
			return "", false, fail(ExitError, "%v", err)
		}
		return token, true, nil
	}
	if err := mcpserver.CheckToken(token); err != nil {
		return "", false, usageErrorf("%s: %v", from, err)
	}
	return token, false, nil
}

// newMCPServer builds the MCP server of the directory rein runs in: its
// session store, and an opener that loads a workspace's configuration with
// the server's flags and the call's options.
func (a *App) newMCPServer(flags map[string]string) (*mcpserver.Server, func(), error) {
	if err := checkFlags(flags); err != nil {
		return nil, nil, err
	}
	l, err := workspace.Load(workspace.Options{WorkDir: a.Dir, Getenv: a.getenv, Flags: flags})
	if err != nil {
		return nil, nil, fail(ExitError, "configuration: %v", err)
	}
	store, err := jsonl.New(l.Effective.String(workspace.SessionsDir))
	if err != nil {
		return nil, nil, fail(ExitError, "sessions: %v", err)
	}
	logger := newLogger(a.Stderr, a.getenv("REIN_LOG"))
	srv, err := mcpserver.New(mcpserver.Config{Root: l.Workspace.Root, Store: store, Version: Version(), Logger: logger,
		Open: a.mcpOpener(store, flags, logger)})
	if err != nil {
		store.Close()
		return nil, nil, fail(ExitError, "%v", err)
	}
	return srv, func() { store.Close() }, nil
}

// mcpOpener opens a workspace's Setup for a tool call, as rein run
// without a terminal would: the server's flags, then the call's model and
// (no looser) permission mode.
func (a *App) mcpOpener(store *jsonl.Store, flags map[string]string, logger *slog.Logger) mcpserver.Opener {
	return func(ctx context.Context, dir string, o mcpserver.Options) (*runner.Setup, error) {
		f := maps.Clone(flags)
		if o.Model != "" {
			f[workspace.Model] = o.Model
		}
		if _, err := workspace.FlagLayer(f); err != nil {
			return nil, err
		}
		opts := workspace.Options{WorkDir: dir, Getenv: a.getenv, Flags: f}
		l, err := workspace.Load(opts)
		if err != nil {
			return nil, fmt.Errorf("configuration: %v", err)
		}
		if o.PermissionMode != "" {
			if err := mcpserver.CheckMode(l.Effective.String(workspace.PermissionMode), o.PermissionMode); err != nil {
				return nil, err
			}
			opts.Flags[workspace.PermissionMode] = o.PermissionMode
			if l, err = workspace.Load(opts); err != nil {
				return nil, fmt.Errorf("configuration: %v", err)
			}
		}
		for _, w := range l.Warnings {
			logger.Warn(w)
		}
		return runner.NewSetup(runner.Config{Loaded: l, Store: store, SessionsDir: store.Dir(), Resolve: a.resolveModel,
			ResolveEmbedder: a.resolveEmbedder, UserAgent: "rein/" + Version(), Getenv: a.getenv, Logger: logger,
			Notice: func(msg string) { logger.Warn(msg) }, Now: a.Now})
	}
}

// nopWriteCloser is a writer whose Close does nothing (stdout outlives
// the MCP session).
type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }
