package cli

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/reinhq/rein/runner"
	"github.com/reinhq/rein/tool/mcptool"
	"github.com/reinhq/rein/workspace"
)

// startMCP connects to servers (definitions that apply) as a run would: a
// stdio server in the workspace's directory with a clean environment
// (runner.MCPServer). Start returns once each is ready or failed, within
// timeout. The caller closes the manager.
func (a *App) startMCP(ctx context.Context, l *workspace.Loaded, defs []workspace.MCPServer, timeout time.Duration) *mcptool.Manager {
	depth, _ := strconv.Atoi(a.getenv(runner.DepthEnv))
	servers := make([]mcptool.Server, 0, len(defs))
	for _, d := range defs {
		s := runner.MCPServer(d, a.getenv, depth)
		if s.Command != "" {
			s.Dir = l.Workspace.Root
		}
		servers = append(servers, s)
	}
	cctx, cancel := context.WithTimeout(ctx, timeout+5*time.Second)
	defer cancel()
	return mcptool.Start(cctx, servers, mcptool.Options{ConnectTimeout: timeout, ClientName: "rein", ClientVersion: Version(),
		Screen: runner.ScreenText, Accepted: mcpReviews(l).Accepted})
}

func (a *App) mcpTest() *cobra.Command {
	var dir string
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   "test NAME",
		Short: "Connect to an MCP server and list its tools, resources and prompts",
		Long: `Connect to one MCP server as a run would (a stdio server starts in the
workspace's directory, with a clean environment plus its env:), and list its
tools with what the server says of them (read-only, destructive, …), its
resources and its prompts. When it fails, the error ends with the last lines
the server wrote on stderr; the exit code is then 1. A server whose
definitions look like a prompt injection is withheld from runs: the test
lists what was flagged and exits 1 until you accept it (rein mcp accept).
An untrusted workspace's server is not started: trust the workspace first
(rein trust).`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			l, err := a.loadAt(dir)
			if err != nil {
				return err
			}
			def, err := testable(l, args[0])
			if err != nil {
				return err
			}
			return a.testMCP(cmd.Context(), l, def, timeout)
		},
	}
	cmd.Flags().StringVar(&dir, "cwd", "", "test the server as the workspace of this directory sees it")
	cmd.Flags().DurationVar(&timeout, "timeout", 30*time.Second, "bound on the connection: start, handshake and tool list")
	return cmd
}

// testable returns the server called name if it applies; an untrusted
// workspace's server, a disabled entry without a command, or an unknown
// name is an error saying what to do.
func testable(l *workspace.Loaded, name string) (workspace.MCPServer, error) {
	d, ok := l.Definitions().Server(name)
	if !ok {
		if w, ok := l.AllDefinitions().Server(name); ok {
			return d, fail(ExitError, "the MCP server %s (%s) is the workspace's, which is not trusted; it would run: %s\n"+
				"Review it, then trust the workspace: rein trust %s", name, displayPath(l, w.Path), w.Declared, l.Workspace.Root)
		}
		var names []string
		for _, s := range l.AllDefinitions().MCP {
			names = append(names, s.Name)
		}
		if len(names) == 0 {
			return d, fail(ExitError, "no MCP server is called %s; none is configured (rein mcp add)", name)
		}
		return d, fail(ExitError, "no MCP server is called %s; the servers are: %s", name, strings.Join(names, ", "))
	}
	if d.Command == "" && d.URL == "" {
		return d, fail(ExitError, "the MCP server %s is only an entry turning it off (disabled: true in %s)", name, displayPath(l, d.Path))
	}
	return d, nil
}

// testMCP connects to one server and prints what it offers; a server
// that does not connect, or fails to list, is exit code 1.
func (a *App) testMCP(ctx context.Context, l *workspace.Loaded, d workspace.MCPServer, timeout time.Duration) error {
	w := a.Stdout
	fmt.Fprintf(w, "MCP server %s (%s, %s): %s\n", d.Name, transportOf(d), displayPath(l, d.Path), d.Declared)
	if d.Disabled {
		fmt.Fprintln(w, "Note: it is disabled: runs do not start it.")
	}
	m := a.startMCP(ctx, l, []workspace.MCPServer{d}, timeout)
	defer m.Close()
	st := m.Status()[0]
	if st.State != mcptool.StateReady {
		fmt.Fprintf(w, "State: %s\n", st.State)
		msg := st.Err
		if msg == "" {
			msg = fmt.Sprintf("it did not connect within %s", timeout)
		}
		return fail(ExitError, "MCP server %s: %s", d.Name, msg)
	}
	fmt.Fprintf(w, "State: %s\n", st.State)
	var failed []string
	_ = mcpReviews(l).RecordFlagged(d.Name, st.Screening, a.now()) // keeps rein mcp list's note true
	if st.Screening.Flagged() {
		printFindings(w, st.Screening)
		if st.Withheld {
			fmt.Fprintf(w, "Withheld: runs neither offer nor call its tools. Review the tools below; rein mcp accept %s accepts them as they are.\n", d.Name)
			failed = append(failed, "withheld: its definitions look like a prompt injection (rein mcp accept "+d.Name+" after review)")
		} else {
			fmt.Fprintln(w, "Accepted (rein mcp accept): its tools are offered.")
		}
	}
	printMCPTools(w, m.ServerTools(d.Name))
	rs, err := m.Resources(ctx, d.Name)
	if err != nil {
		failed = append(failed, "listing resources: "+err.Error())
	}
	fmt.Fprintf(w, "\nResources (%d):\n", len(rs))
	for _, r := range rs {
		fmt.Fprintf(w, "  %s  %s%s\n", r.URI, r.Name, parens(r.MIMEType))
	}
	ps, err := m.Prompts(ctx, d.Name)
	if err != nil {
		failed = append(failed, "listing prompts: "+err.Error())
	}
	fmt.Fprintf(w, "\nPrompts (%d):\n", len(ps))
	for _, p := range ps {
		var args []string
		for _, arg := range p.Arguments {
			if arg.Required {
				args = append(args, arg.Name)
			} else {
				args = append(args, arg.Name+"?") // optional
			}
		}
		fmt.Fprintf(w, "  %s(%s)  %s\n", p.Name, strings.Join(args, ", "), clip(p.Description, 80))
	}
	if len(failed) > 0 {
		return fail(ExitError, "MCP server %s: %s", d.Name, strings.Join(failed, "; "))
	}
	return nil
}

// printMCPTools lists tools with their annotations.
func printMCPTools(w io.Writer, tools []*mcptool.Tool) {
	fmt.Fprintf(w, "\nTools (%d):\n", len(tools))
	for _, mt := range tools {
		fmt.Fprintf(w, "  %s  %s%s\n", mt.Spec().Name, clip(mt.Spec().Description, 80), parens(hints(mt.Annotations())))
	}
}

// hints names what a server says of a tool. They are hints from a third
// party: rein asks before an MCP tool runs whatever they say.
func hints(an mcptool.Annotations) string {
	var out []string
	if an.ReadOnlyHint {
		out = append(out, "read-only")
	} else {
		if an.DestructiveHint {
			out = append(out, "destructive")
		}
		if an.IdempotentHint {
			out = append(out, "idempotent")
		}
	}
	if an.OpenWorldHint {
		out = append(out, "open-world")
	}
	return strings.Join(out, ", ")
}

// parens is " (s)", or "" for an empty s.
func parens(s string) string {
	if s == "" {
		return ""
	}
	return " (" + s + ")"
}
