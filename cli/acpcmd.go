package cli

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/reinhq/rein/acp"
)

// acpCommand is `rein acp`: rein as an Agent Client Protocol agent on
// stdio, for editors (SPEC FRONT-1; docs/editors.md).
func (a *App) acpCommand() *cobra.Command {
	o := &runOptions{}
	cmd := &cobra.Command{
		Use:   "acp",
		Short: "Run rein as an Agent Client Protocol agent on stdio (for Zed, JetBrains, Neovim)",
		Long: "rein acp speaks the Agent Client Protocol on stdin and stdout: an editor starts it and drives\n" +
			"its sessions. stdout carries the protocol only; notes and logs go to stderr (REIN_LOG sets the level).\n" +
			"Each session works in the directory the editor names as its cwd, with that workspace's\n" +
			"configuration; extras of a workspace not trusted yet are left out (rein trust DIR), and so are the\n" +
			"editor's MCP servers. When the editor offers its files, the file tools read and write through it\n" +
			"(unsaved buffers are seen); commands always run in rein's own sandbox, never the editor's terminal.\n" +
			"docs/editors.md shows each editor's configuration.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return a.serveACP(cmd, o) },
	}
	f := cmd.Flags()
	f.StringVarP(&o.model, "model", "m", "", "model of new sessions (provider/model)")
	f.StringVar(&o.permissionMode, "permission-mode", "", "permission mode sessions start in: default, accept-edits, plan, read-only, strict or bypass")
	return cmd
}

// serveACP serves ACP on the app's stdin and stdout until stdin ends.
func (a *App) serveACP(cmd *cobra.Command, o *runOptions) error {
	if err := checkFlags(o.settings(cmd)); err != nil {
		return err
	}
	open := func(_ context.Context, dir string) (*acp.Workspace, error) {
		oo := *o
		oo.cwd = dir
		// No terminal to ask on: a workspace not trusted runs without
		// its extras, as a headless run does, and stderr says so.
		e, err := a.newEngine(cmd, &oo, a.Stderr, nil)
		if err != nil {
			return nil, err
		}
		return &acp.Workspace{Setup: e.Setup(), Store: e.store, Close: e.Close}, nil
	}
	err := acp.Serve(cmd.Context(), acp.Config{Open: open, Version: Version(), Logger: newLogger(a.Stderr, a.getenv("REIN_LOG"))},
		a.Stdin, a.Stdout)
	if err != nil && cmd.Context().Err() == nil {
		return fail(ExitError, "acp: %v", err)
	}
	return nil
}
