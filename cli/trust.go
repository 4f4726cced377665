package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/reinhq/rein/workspace"
)

// trustAsker asks the user whether to trust the workspace l describes,
// whose extras are not trusted yet (SPEC PERM-5).
type trustAsker func(ctx context.Context, l *workspace.Loaded) (bool, error)

// now is the App's clock.
func (a *App) now() time.Time {
	if a.Now != nil {
		return a.Now()
	}
	return time.Now()
}

// settleTrust asks, when ask is set and the workspace brings untrusted
// extras, whether to trust it; yes records the trust and loads the
// configuration again, with the extras applied. Otherwise l stands: its
// warnings say what was ignored. asked reports whether the user saw the
// extras listed.
func (a *App) settleTrust(ctx context.Context, l *workspace.Loaded, opts workspace.Options, ask trustAsker) (_ *workspace.Loaded, asked bool, _ error) {
	if ask == nil || len(l.Trust.Ignored()) == 0 || l.Trust.Err != nil {
		return l, false, nil
	}
	ok, err := ask(ctx, l)
	if errors.Is(err, context.Canceled) {
		return nil, true, &exitError{code: ExitCancelled}
	}
	if err != nil {
		return nil, true, fail(ExitError, "%v", err)
	}
	if !ok {
		fmt.Fprintln(a.Stderr, "rein: going on without the workspace's extras; rein trust applies them later.")
		return l, true, nil
	}
	if err := l.TrustNow(a.now()); err != nil {
		fmt.Fprintf(a.Stderr, "rein: cannot trust the workspace: %v\n", err)
		return l, true, nil
	}
	trusted, err := workspace.Load(opts)
	if err != nil {
		return nil, true, fail(ExitError, "configuration: %v", err)
	}
	if !trusted.Trust.Trusted {
		fmt.Fprintln(a.Stderr, "rein: the workspace's files changed while you answered; its extras stay off (rein trust to review them again).")
	}
	return trusted, true, nil
}

// askTrust asks on the terminal, before the interactive session starts.
func (a *App) askTrust(ctx context.Context, l *workspace.Loaded) (bool, error) {
	w := a.Stderr
	fmt.Fprintf(w, "\nThe workspace %s brings what widens rein's permissions or runs code:\n", l.Workspace.Root)
	if l.Trust.Lost {
		fmt.Fprintln(w, "You trusted it before; since then:")
		for _, c := range l.Trust.Changed {
			fmt.Fprintf(w, "  ~ %s\n", c)
		}
	}
	for _, x := range l.Trust.Ignored() {
		fmt.Fprintf(w, "  • %s\n", x)
	}
	fmt.Fprint(w, "Trust it? They apply now and in later sessions until these files change. [y/N] ")
	line, err := readAnswer(ctx, a.Stdin)
	if err != nil && !errors.Is(err, io.EOF) {
		fmt.Fprintln(w)
		return false, err
	}
	switch strings.ToLower(strings.TrimSpace(line)) {
	case "y", "yes":
		return true, nil
	}
	return false, nil
}

// readAnswer reads one line from in, a byte at a time so nothing after it
// is taken from the terminal UI that reads in next; it returns ctx's
// error if ctx ends first.
func readAnswer(ctx context.Context, in io.Reader) (string, error) {
	if in == nil {
		return "", io.EOF
	}
	type result struct {
		line string
		err  error
	}
	ch := make(chan result, 1)
	go func() {
		var sb strings.Builder
		b := make([]byte, 1)
		for sb.Len() < 1024 {
			n, err := in.Read(b)
			if n == 1 {
				if b[0] == '\n' {
					break
				}
				sb.WriteByte(b[0])
			}
			if err != nil {
				ch <- result{sb.String(), err}
				return
			}
		}
		ch <- result{sb.String(), nil}
	}()
	select {
	case r := <-ch:
		return r.line, r.err
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

const trustLong = `Trust a workspace: let what it brings apply (SPEC PERM-5).

A cloned repository must not loosen your safety. What a workspace brings that
widens permissions, runs code or shapes the model's prompt applies only once
you trusted it: allow rules and sensitive-file exceptions ("!.env") of
.rein/settings.yaml and .rein/settings.local.yaml, hooks of .rein/hooks.yaml
and .claude/settings.json, a sessions_dir, replay: model, system_prompt or
append_system_prompt set there, and its MCP servers, agents, skills and
actions. Deny and ask rules always apply. A workspace's declarations never
receive rein's credentials (provider keys, tokens, REIN_* variables), trusted
or not: only your user configuration may name them.

rein trust lists what the workspace (DIR, default: the current one) brings and
records your trust with a fingerprint of those files, of the scripts its
hooks, actions and MCP servers run, and of what linked directories hold; when
any of them changes, the trust is lost and rein names the files. "Always allow" answers you give rein keep
applying either way, and do not make a workspace trusted.

rein on a terminal asks once at start; rein run never asks: it goes on without
the extras and warns.`

func (a *App) trustCommand() *cobra.Command {
	var revoke, list bool
	cmd := &cobra.Command{
		Use:   "trust [DIR]",
		Short: "Trust a workspace's settings, hooks and agents; --revoke, --list",
		Long:  trustLong,
		Example: `  rein trust              # review and trust the current workspace
  rein trust ~/src/repo
  rein trust --revoke
  rein trust --list`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			dir := ""
			if len(args) == 1 {
				dir = args[0]
			}
			switch {
			case revoke && list:
				return usageErrorf("--revoke and --list exclude each other")
			case list && dir != "":
				return usageErrorf("--list takes no directory")
			case list:
				return a.trustList()
			case revoke:
				return a.trustRevoke(a.abs(dir))
			}
			return a.trustDir(a.abs(dir))
		},
	}
	cmd.Flags().BoolVar(&revoke, "revoke", false, "forget the trust in the workspace (and the rules approved there)")
	cmd.Flags().BoolVar(&list, "list", false, "list the workspaces rein remembers and whether their trust holds")
	return cmd
}

// trustDir shows what the workspace of dir brings and records the trust.
func (a *App) trustDir(dir string) error {
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return usageErrorf("%s: not a directory", dir)
	}
	l, err := workspace.Load(workspace.Options{WorkDir: dir, Getenv: a.getenv})
	if err != nil {
		return fail(ExitError, "configuration: %v", err)
	}
	w := a.Stdout
	fmt.Fprintf(w, "Workspace %s\n", l.Workspace.Root)
	if len(l.Trust.Extras) == 0 {
		fmt.Fprintln(w, "It brings nothing that needs trust (allow rules, sensitive-file exceptions, hooks, agents…).")
	} else {
		fmt.Fprintln(w, "It brings:")
		printExtras(w, l.Trust.Extras)
	}
	if len(l.Refused) > 0 {
		fmt.Fprintln(w, "It names rein's credentials, which it never receives, trusted or not:")
		for _, r := range l.Refused {
			fmt.Fprintf(w, "  %s\n", r)
		}
	}
	if probs := workspaceProblems(l); len(probs) > 0 {
		fmt.Fprintln(w, "These of its files do not load (rein doctor lists them too):")
		for _, p := range probs {
			fmt.Fprintf(w, "  %s\n", p)
		}
	}
	if l.Trust.Trusted {
		fmt.Fprintln(w, "Already trusted, and unchanged since.")
		return nil
	}
	if err := l.TrustNow(a.now()); err != nil {
		return fail(ExitError, "cannot trust %s: %v", l.Workspace.Root, err)
	}
	fmt.Fprintf(w, "Trusted. This applies to rein in %s until these files change; rein trust --revoke undoes it.\n", l.Workspace.Root)
	return nil
}

// printExtras lists extras as a table: kind, what, file.
func printExtras(w io.Writer, extras []workspace.Extra) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for _, x := range extras {
		fmt.Fprintf(tw, "  %s\t%s\t%s\n", x.Kind, clip(x.What, 100), x.File)
	}
	tw.Flush()
}

// workspaceProblems are the problems of the workspace's definition
// files: what it declares that does not load, whatever the trust (but
// the credentials refused, which trustDir lists apart).
func workspaceProblems(l *workspace.Loaded) []string {
	var out []string
	for _, p := range l.AllDefinitions().Problems {
		if _, ok := under(l.Workspace.Root, p.Path); ok && !p.Credential {
			out = append(out, shortProblem(l, p))
		}
	}
	return out
}

// trustRevoke forgets the trust in the workspace of dir.
func (a *App) trustRevoke(dir string) error {
	root := dir
	if fi, err := os.Stat(dir); err == nil && fi.IsDir() {
		root = workspace.FindWorkspace(dir, workspace.PathsFrom(a.getenv).Home).Root
	}
	store := &workspace.TrustStore{Path: workspace.PathsFrom(a.getenv).TrustFile()}
	had, err := store.Revoke(root)
	if err != nil {
		return fail(ExitError, "%v", err)
	}
	if !had {
		fmt.Fprintf(a.Stdout, "%s was not trusted; nothing to revoke.\n", root)
		return nil
	}
	fmt.Fprintf(a.Stdout, "Revoked the trust in %s: its allow rules, exceptions and hooks no longer apply.\n", root)
	return nil
}

// trustList lists the workspaces of the trust file and their state.
func (a *App) trustList() error {
	store := &workspace.TrustStore{Path: workspace.PathsFrom(a.getenv).TrustFile()}
	entries, err := store.List()
	if err != nil {
		return fail(ExitError, "%v", err)
	}
	if len(entries) == 0 {
		fmt.Fprintln(a.Stdout, "No workspace is trusted.")
		return nil
	}
	tw := tabwriter.NewWriter(a.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "WORKSPACE\tSTATE\tSINCE")
	for _, e := range entries {
		since := ""
		if !e.TrustedAt.IsZero() {
			since = e.TrustedAt.Local().Format("2006-01-02 15:04")
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", e.Dir, trustState(e), since)
	}
	return tw.Flush()
}

// trustState says whether a remembered workspace's trust still holds.
func trustState(e workspace.TrustEntry) string {
	approved := ""
	if n := len(e.Approved); n > 0 {
		approved = fmt.Sprintf("; %d approved rule(s)", n)
	}
	if fi, err := os.Stat(e.Dir); err != nil || !fi.IsDir() {
		return "missing" + approved
	}
	if e.Fingerprint == "" {
		return "not trusted" + approved
	}
	m, err := workspace.FingerprintFiles(e.Dir)
	switch {
	case err != nil:
		return "cannot check: " + err.Error()
	case e.Trusted(m.Digest):
		return "trusted" + approved
	}
	return "changed since trusted: " + strings.Join(e.Changes(m), "; ") + " (rein trust " + e.Dir + " to review)" + approved
}
