package cli

import (
	"cmp"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/reinhq/rein/runner"
	"github.com/reinhq/rein/tool/mcptool"
	"github.com/reinhq/rein/workspace"
)

// mcpReviews is where the acceptances of flagged MCP servers are kept (SPEC
// MCP-2): the user's configuration directory.
func mcpReviews(l *workspace.Loaded) *runner.MCPReviews {
	return &runner.MCPReviews{Dir: l.Paths.ConfigDir}
}

func (a *App) mcpAccept() *cobra.Command {
	var dir string
	var timeout time.Duration
	var revoke bool
	cmd := &cobra.Command{
		Use:   "accept NAME",
		Short: "Accept an MCP server whose tool definitions were flagged as a prompt injection",
		Long: `rein scans what an MCP server puts in front of the model — its instructions,
each tool's description and the texts of its input schema — with the rules
AGENTS.md and skills go through. A server with findings is withheld: runs
neither offer nor call its tools, and say why.

rein mcp accept NAME connects to the server, shows what was flagged and
records that you accept exactly that (a hash of the flagged texts, in
mcp-accepted.json in your config directory) — when it is what was last shown
to you (by rein mcp test, a run's warning or an earlier accept); otherwise it
accepts nothing and asks you to review what is flagged now and run it again. When a flagged text changes, or
a new one appears, the server is withheld again until you accept it again.
--revoke forgets the acceptance.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			l, err := a.loadAt(dir)
			if err != nil {
				return err
			}
			reviews := mcpReviews(l)
			if revoke {
				return a.revokeMCP(reviews, args[0])
			}
			def, err := testable(l, args[0])
			if err != nil {
				return err
			}
			m := a.startMCP(cmd.Context(), l, []workspace.MCPServer{def}, timeout)
			defer m.Close()
			st := m.Status()[0]
			if st.State != mcptool.StateReady {
				return fail(ExitError, "MCP server %s: %s; it must connect to be screened", def.Name,
					cmp.Or(st.Err, fmt.Sprintf("it did not connect within %s", timeout)))
			}
			if !st.Screening.Flagged() {
				fmt.Fprintf(a.Stdout, "Nothing of the MCP server %s is flagged: its %d tool(s) are offered; there is nothing to accept.\n", def.Name, st.Tools)
				return nil
			}
			printFindings(a.Stdout, st.Screening)
			if last, ok := reviews.LastFlagged(def.Name); !ok || last.Hash != st.Screening.Hash {
				// The server shows this connection something other than what was
				// last reviewed (rein mcp test, a run's warning): accept only what
				// the user saw before deciding (issue 22's second probes).
				_ = reviews.RecordFlagged(def.Name, st.Screening, a.now())
				return fail(ExitError, "MCP server %s: what it flags is not what was last shown (by rein mcp test, a run or this command): nothing accepted; review the findings above, then run rein mcp accept %s again", def.Name, def.Name)
			}
			if err := reviews.Accept(def.Name, st.Screening, a.now()); err != nil {
				return fail(ExitError, "%v", err)
			}
			_ = reviews.RecordFlagged(def.Name, st.Screening, a.now()) // rein mcp list then says accepted
			fmt.Fprintf(a.Stdout, "Accepted the MCP server %s as it is now: its tools are offered again. A change to what was flagged withholds it again.\n", def.Name)
			return nil
		},
	}
	cmd.Flags().StringVar(&dir, "cwd", "", "the server as the workspace of this directory sees it")
	cmd.Flags().DurationVar(&timeout, "timeout", 30*time.Second, "bound on the connection: start, handshake and tool list")
	cmd.Flags().BoolVar(&revoke, "revoke", false, "forget the acceptance of the server")
	return cmd
}

// revokeMCP forgets a server's acceptance.
func (a *App) revokeMCP(reviews *runner.MCPReviews, name string) error {
	had, err := reviews.Revoke(name)
	if err != nil {
		return fail(ExitError, "%v", err)
	}
	if !had {
		return fail(ExitError, "no acceptance of an MCP server %s is recorded", name)
	}
	fmt.Fprintf(a.Stdout, "Forgot the acceptance of the MCP server %s: if its definitions are flagged, it is withheld again.\n", name)
	return nil
}

// printFindings lists what the screening of a server flagged.
func printFindings(w io.Writer, s mcptool.Screening) {
	fmt.Fprintf(w, "Flagged as a possible prompt injection (%d):\n", len(s.Findings))
	for _, f := range s.Findings {
		fmt.Fprintf(w, "  %s\n", f)
	}
}

// withheldState is what `rein mcp list` says of a server's screening: the
// last withholding a run recorded, unless accepted since.
func withheldState(reviews *runner.MCPReviews, name string) string {
	f, ok := reviews.LastFlagged(name)
	if !ok {
		return ""
	}
	if reviews.Accepted(name, f.Hash) {
		return "accepted"
	}
	return fmt.Sprintf("withheld since %s: %d flagged text(s) (rein mcp test %s; rein mcp accept %s)",
		f.At.Format(time.DateOnly), len(f.Findings), name, name)
}
