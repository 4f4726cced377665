package cli

import (
	"cmp"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/reinhq/rein/workspace"
)

const mcpLong = `MCP servers give the model more tools (docs/mcp.md). They are declared in
~/.config/rein/mcp.yaml (yours, for every workspace), in the workspace's
.rein/mcp.yaml, or in its .mcp.json (Claude Code's format); the workspace's
win on a name clash. A workspace's servers run only once you trusted it
(rein trust).

rein mcp add and rein mcp remove edit an mcp.yaml (yours by default,
--scope workspace for the workspace's), keeping its other entries and its
comments. rein mcp test NAME connects to one server and shows its tools,
resources and prompts; rein doctor checks them all.

A server whose instructions or tool definitions look like a prompt
injection is withheld: runs neither offer nor call its tools. rein mcp test
NAME shows what was flagged; rein mcp accept NAME accepts exactly that.

rein mcp serve is the other way round: rein as an MCP server, for Claude
Code, an IDE or the MCP Inspector to run tasks with (docs/mcp.md, "rein as
an MCP server").`

func (a *App) mcpCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "mcp",
		Short: "List, add, remove and test MCP servers; serve rein as one",
		Long:  mcpLong,
		Args:  cobra.NoArgs,
	}
	cmd.AddCommand(a.mcpList(), a.mcpAdd(), a.mcpRemove(), a.mcpTest(), a.mcpAccept(), a.mcpServe())
	return cmd
}

// mcpView is a server as `rein mcp list --json` shows it: never its
// variables expanded (they may hold secrets), only the names of its
// variables and headers.
type mcpView struct {
	Name      string `json:"name"`
	Origin    string `json:"origin"`
	File      string `json:"file"`
	Transport string `json:"transport,omitempty"`
	// Declared is the command line or URL as the file writes it.
	Declared string   `json:"declared,omitempty"`
	Env      []string `json:"env,omitempty"`
	Headers  []string `json:"headers,omitempty"`
	Timeout  string   `json:"timeout,omitempty"`
	Disabled bool     `json:"disabled,omitempty"`
	// Ignored: the server of an untrusted workspace; it is not started.
	Ignored bool `json:"ignored,omitempty"`
	// Overrides are the files whose server of the same name this one
	// replaces.
	Overrides []string `json:"overrides,omitempty"`
	// Screening is what the last run withholding the server recorded, or
	// "accepted" once accepted (SPEC MCP-2); empty when no run withheld it.
	Screening string `json:"screening,omitempty"`
	// Skipped says why Claude Code's settings leave out this server of the
	// project's .mcp.json (enabledMcpjsonServers and the like).
	Skipped string `json:"skipped,omitempty"`
}

// viewMCP lists every server: those that apply and an untrusted
// workspace's.
func viewMCP(l *workspace.Loaded) []mcpView {
	key := func(d workspace.MCPServer) (string, string) { return d.Name, d.Path }
	all := l.AllDefinitions()
	reviews := mcpReviews(l)
	var out []mcpView
	for _, x := range mergeListed(l.Definitions().MCP, all.MCP, key) {
		d := x.Def
		v := mcpView{Name: d.Name, Origin: string(d.Origin), File: displayPath(l, d.Path), Transport: transportOf(d),
			Declared: d.Declared, Env: sortedKeys(d.Env), Headers: sortedKeys(d.Headers), Disabled: d.Disabled, Ignored: x.Ignored,
			Screening: withheldState(reviews, d.Name)}
		if d.Timeout > 0 {
			v.Timeout = d.Timeout.String()
		}
		for _, c := range all.Clashes {
			if c.Kind == workspace.DefMCP && c.Name == d.Name && len(c.Paths) > 1 && c.Paths[len(c.Paths)-1] == d.Path {
				for _, p := range c.Paths[:len(c.Paths)-1] {
					v.Overrides = append(v.Overrides, displayPath(l, p))
				}
			}
		}
		out = append(out, v)
	}
	for _, sk := range l.MCPSkipped {
		d := sk.Server
		out = append(out, mcpView{Name: d.Name, Origin: string(d.Origin), File: displayPath(l, d.Path), Transport: transportOf(d),
			Declared: d.Declared, Env: sortedKeys(d.Env), Headers: sortedKeys(d.Headers), Skipped: sk.Reason})
	}
	return out
}

// transportOf is "stdio", "http" or "sse"; "" for a disabled entry with neither.
func transportOf(d workspace.MCPServer) string {
	if d.URL != "" && d.Transport == "sse" {
		return "sse"
	}
	switch {
	case d.URL != "":
		return "http"
	case d.Command != "":
		return "stdio"
	}
	return ""
}

func sortedKeys(m map[string]string) []string {
	if len(m) == 0 {
		return nil
	}
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func (a *App) mcpList() *cobra.Command {
	var asJSON bool
	var dir string
	cmd := &cobra.Command{
		Use:     "list",
		Aliases: []string{"ls"},
		Short:   "List every MCP server: name, origin, file, transport, command or URL",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			l, err := a.loadAt(dir)
			if err != nil {
				return err
			}
			views := viewMCP(l)
			if asJSON {
				if views == nil {
					views = []mcpView{}
				}
				return writeJSON(a.Stdout, views)
			}
			if len(views) == 0 {
				fmt.Fprintln(a.Stdout, "No MCP servers. Add one: rein mcp add NAME -- COMMAND ARGS…, or rein mcp add NAME --url URL.")
			} else if err := printMCP(a, views); err != nil {
				return err
			}
			for _, p := range mcpProblems(l) {
				fmt.Fprintf(a.Stdout, "Problem: %s\n", p)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	cmd.Flags().StringVar(&dir, "cwd", "", "list the servers of this directory's workspace")
	return cmd
}

func printMCP(a *App, views []mcpView) error {
	tw := tabwriter.NewWriter(a.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tORIGIN\tFILE\tTRANSPORT\tCOMMAND OR URL\tSTATE")
	for _, v := range views {
		var state []string
		if v.Disabled {
			state = append(state, "disabled")
		}
		if v.Ignored {
			state = append(state, untrustedMark)
		}
		if len(v.Overrides) > 0 {
			state = append(state, "replaces "+strings.Join(v.Overrides, ", "))
		}
		if v.Screening != "" {
			state = append(state, v.Screening)
		}
		if v.Skipped != "" {
			state = append(state, "skipped: "+v.Skipped)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", v.Name, v.Origin, v.File, cmp.Or(v.Transport, "-"),
			clip(cmp.Or(v.Declared, "-"), 60), strings.Join(state, "; "))
	}
	return tw.Flush()
}

// mcpProblems are the problems of the MCP server files, shortened.
func mcpProblems(l *workspace.Loaded) []string {
	files := []string{l.Paths.UserMCP(), l.Workspace.MCP(), l.Workspace.ClaudeMCP()}
	var out []string
	for _, p := range l.AllDefinitions().Problems {
		if slices.Contains(files, p.Path) {
			out = append(out, shortProblem(l, p))
		}
	}
	return out
}

// shortProblem is a problem with its path shortened.
func shortProblem(l *workspace.Loaded, p workspace.Problem) string {
	p.Path = displayPath(l, p.Path)
	return p.String()
}

// mcpScope is the file rein mcp add and remove edit: the user's mcp.yaml
// or the workspace's; perm is the mode of a new file (the user's may hold
// tokens).
func mcpScope(l *workspace.Loaded, scope string) (path string, perm fs.FileMode, err error) {
	switch scope {
	case "user":
		if l.Paths.UserMCP() == "" {
			return "", 0, fail(ExitError, "cannot tell your config directory: set HOME or REIN_CONFIG_DIR")
		}
		return l.Paths.UserMCP(), 0o600, nil
	case "workspace":
		return l.Workspace.MCP(), 0o644, nil
	}
	return "", 0, usageErrorf("--scope %q: want user or workspace", scope)
}

// mcpAddOptions are the flags of rein mcp add.
type mcpAddOptions struct {
	scope, url, timeout, dir string
	env, headers             []string
	force                    bool
	// transport is "" (stdio with a command, streamable HTTP with --url)
	// or "sse": the older HTTP+SSE transport (Claude Code's -t sse).
	transport string
}

func (a *App) mcpAdd() *cobra.Command {
	o := &mcpAddOptions{}
	cmd := &cobra.Command{
		Use:   "add NAME [flags] (-- COMMAND [ARGS…] | --url URL)",
		Short: "Add an MCP server to your mcp.yaml (--scope workspace: the workspace's)",
		Long: `Add an MCP server: a command speaking MCP on stdio (everything after --), or a
streamable HTTP endpoint (--url; with --transport sse, a server of MCP's older
HTTP+SSE transport). It goes into your ~/.config/rein/mcp.yaml,
or the workspace's .rein/mcp.yaml with --scope workspace; other entries and
comments are kept. Values are written as given: write ${VAR} (quoted, so the
shell leaves it) to have rein read a secret from its environment when it
starts the server, rather than storing the secret in the file.

A server added to the workspace changes what it brings: trust it again
(rein trust) before its servers run.`,
		Example: `  rein mcp add github --env 'GITHUB_PERSONAL_ACCESS_TOKEN=${GITHUB_TOKEN}' -- npx -y @modelcontextprotocol/server-github
  rein mcp add fs --scope workspace -- npx -y @modelcontextprotocol/server-filesystem .
  rein mcp add docs --url https://docs.example.com/mcp --header 'Authorization=Bearer ${DOCS_TOKEN}'
  rein mcp add legacy --transport sse --url http://127.0.0.1:8080/sse`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.addMCP(cmd, o, args)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.scope, "scope", "user", "user (your mcp.yaml) or workspace (.rein/mcp.yaml)")
	f.StringVar(&o.url, "url", "", "the server's streamable HTTP endpoint, instead of a command")
	f.StringVarP(&o.transport, "transport", "t", "", "sse: the --url server speaks MCP's older HTTP+SSE transport (default: stdio for a command, streamable HTTP for a --url)")
	f.StringArrayVarP(&o.env, "env", "e", nil, "a variable of the server's environment, KEY=VALUE (repeatable)")
	f.StringArrayVar(&o.headers, "header", nil, "a header sent to a --url server, KEY=VALUE (repeatable)")
	f.StringVar(&o.timeout, "timeout", "", "bound on each call, e.g. 60s (default 2m)")
	f.BoolVar(&o.force, "force", false, "replace a server of that name in the file")
	f.StringVar(&o.dir, "cwd", "", "the workspace of this directory, for --scope workspace")
	return cmd
}

// addMCP is rein mcp add.
func (a *App) addMCP(cmd *cobra.Command, o *mcpAddOptions, args []string) error {
	name, command := args[0], args[1:]
	if dash := cmd.ArgsLenAtDash(); dash > 1 {
		return usageErrorf("give the command after --: rein mcp add %s -- COMMAND ARGS…", name)
	}
	if err := workspace.CheckMCPName(name); err != nil {
		return usageErrorf("%v", err)
	}
	entry, err := o.entry(command)
	if err != nil {
		return err
	}
	l, err := a.loadAt(o.dir)
	if err != nil {
		return err
	}
	path, perm, err := mcpScope(l, o.scope)
	if err != nil {
		return err
	}
	if o.scope == "workspace" {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return fail(ExitError, "%v", err)
		}
	}
	f, err := openMCPFile(path, perm)
	if err != nil {
		return fail(ExitError, "%v", err)
	}
	verb := "Added"
	if f.has(name) {
		if !o.force {
			return fail(ExitError, "%s already declares an MCP server %s; --force replaces it (rein mcp list shows it)", path, name)
		}
		verb = "Replaced"
	}
	f.put(name, entry.node())
	if err := f.save(); err != nil {
		return fail(ExitError, "%v", err)
	}
	fmt.Fprintf(a.Stdout, "%s the MCP server %s in %s.\n", verb, name, path)
	a.afterMCPEdit(l, o.scope, path, name, true)
	return nil
}

// entry builds the server the flags and command describe.
func (o *mcpAddOptions) entry(command []string) (mcpEntry, error) {
	e := mcpEntry{URL: o.url}
	switch {
	case o.url != "" && len(command) > 0:
		return e, usageErrorf("give a command (after --) or --url, not both")
	case o.url == "" && len(command) == 0:
		return e, usageErrorf("give the server's command after --, or its --url")
	case o.url == "" && len(o.headers) > 0:
		return e, usageErrorf("--header is for a --url server; a command gets --env")
	case o.url != "" && !strings.HasPrefix(o.url, "http://") && !strings.HasPrefix(o.url, "https://"):
		return e, usageErrorf("--url %q: want an http:// or https:// URL", o.url)
	}
	switch o.transport {
	case "", "stdio", "http":
		if (o.transport == "stdio") != (o.url == "") && o.transport != "" {
			return e, usageErrorf("--transport %s: a command is stdio, a --url is http or sse", o.transport)
		}
	case "sse":
		if o.url == "" {
			return e, usageErrorf("--transport sse needs the server's --url (its SSE endpoint)")
		}
		e.Type = "sse"
	default:
		return e, usageErrorf("--transport %q: want stdio, http or sse", o.transport)
	}
	if len(command) > 0 {
		e.Command, e.Args = command[0], command[1:]
	}
	var err error
	if e.Env, err = pairs("--env", o.env); err != nil {
		return e, err
	}
	if e.Headers, err = pairs("--header", o.headers); err != nil {
		return e, err
	}
	if o.timeout != "" {
		if d, err := workspace.ParseDuration(o.timeout); err != nil || d == 0 {
			return e, usageErrorf("--timeout %q: want a duration such as 60s or 5m", o.timeout)
		}
		e.Timeout = o.timeout
	}
	return e, nil
}

// pairs splits KEY=VALUE flags.
func pairs(flag string, list []string) ([][2]string, error) {
	var out [][2]string
	for _, s := range list {
		k, v, ok := strings.Cut(s, "=")
		if !ok || strings.TrimSpace(k) == "" {
			return nil, usageErrorf("%s %q: want KEY=VALUE", flag, s)
		}
		out = append(out, [2]string{strings.TrimSpace(k), v})
	}
	return out, nil
}

// afterMCPEdit loads the configuration again and says what the edit of
// path changed: the file's problems, and, for the workspace's file, that
// its trust must be given again (SPEC PERM-5).
func (a *App) afterMCPEdit(before *workspace.Loaded, scope, path, name string, added bool) {
	l, err := workspace.Load(workspace.Options{WorkDir: before.Workspace.Root, Getenv: a.getenv})
	if err != nil {
		fmt.Fprintf(a.Stdout, "Warning: the configuration no longer loads: %v\n", err)
		return
	}
	for _, p := range l.AllDefinitions().Problems {
		if p.Path == path {
			fmt.Fprintf(a.Stdout, "Problem: %s\n", shortProblem(l, p))
		}
	}
	if added {
		if _, ok := l.AllDefinitions().Server(name); !ok {
			fmt.Fprintf(a.Stdout, "Warning: rein does not load the server %s as written; fix the problems above.\n", name)
		}
	}
	if scope == "workspace" && before.Trust.Trusted && !l.Trust.Trusted {
		fmt.Fprintf(a.Stdout, "The workspace's MCP servers changed: the workspace must be trusted again: rein trust %s\n", l.Workspace.Root)
	} else if scope == "workspace" && !l.Trust.Trusted && added {
		fmt.Fprintf(a.Stdout, "The workspace is not trusted: its servers run once you trust it: rein trust %s\n", l.Workspace.Root)
	}
	if added {
		fmt.Fprintf(a.Stdout, "Check it: rein mcp test %s\n", name)
	}
}

func (a *App) mcpRemove() *cobra.Command {
	var scope, dir string
	cmd := &cobra.Command{
		Use:     "remove NAME",
		Aliases: []string{"rm"},
		Short:   "Remove an MCP server from your mcp.yaml (--scope workspace: the workspace's)",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			name := args[0]
			l, err := a.loadAt(dir)
			if err != nil {
				return err
			}
			path, perm, err := mcpScope(l, scope)
			if err != nil {
				return err
			}
			f, err := openMCPFile(path, perm)
			if err != nil {
				return fail(ExitError, "%v", err)
			}
			if !f.remove(name) {
				return fail(ExitError, "%s declares no MCP server %s%s", path, name, elsewhere(l, name, path))
			}
			if err := f.save(); err != nil {
				return fail(ExitError, "%v", err)
			}
			fmt.Fprintf(a.Stdout, "Removed the MCP server %s from %s.\n", name, path)
			a.afterMCPEdit(l, scope, path, name, false)
			return nil
		},
	}
	cmd.Flags().StringVar(&scope, "scope", "user", "user (your mcp.yaml) or workspace (.rein/mcp.yaml)")
	cmd.Flags().StringVar(&dir, "cwd", "", "the workspace of this directory, for --scope workspace")
	return cmd
}

// elsewhere says where else a server called name is declared, for the
// error of a removal that found nothing in path.
func elsewhere(l *workspace.Loaded, name, path string) string {
	d, ok := l.AllDefinitions().Server(name)
	if !ok {
		return " (rein mcp list shows the servers)"
	}
	switch {
	case d.Path == l.Workspace.MCP():
		return "; it is in the workspace's: rein mcp remove " + name + " --scope workspace"
	case d.Path == l.Paths.UserMCP():
		return "; it is in yours: rein mcp remove " + name + " --scope user"
	}
	return fmt.Sprintf("; it is declared in %s: edit that file (or turn it off with an entry %s: {disabled: true} in an mcp.yaml)",
		displayPath(l, d.Path), name)
}
