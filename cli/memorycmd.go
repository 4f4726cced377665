package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/reinhq/rein/memory"
	"github.com/reinhq/rein/workspace"
)

const memoryLong = `Memory is what rein keeps across sessions (docs/memory.md): a profile of you
(who you are, preferences, style, stack) and fact notes (decisions,
conventions, milestones). Runs show it to the model at the start, in the
system prompt; the model changes it with its memory tool.

It is plain Markdown, one "- " item per entry:
  ~/.config/rein/memory/USER.md    your profile, for every workspace
  ~/.config/rein/memory/NOTES.md   your notes, for every workspace
  .rein/memory/NOTES.md            the workspace's notes
and MEMORY.md, an index rein rewrites on every change. Each file has a cap
(profile 2,000 characters, notes 3,000); every entry is checked for prompt
injection, secrets and hidden characters, and one that fails is left out of
the prompt. The setting memory (REIN_MEMORY=off) turns memory off for runs.`

func (a *App) memoryCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "memory",
		Short: "Show and edit what rein remembers across sessions",
		Long:  memoryLong,
		Args:  cobra.NoArgs,
	}
	cmd.AddCommand(a.memoryShow(), a.memoryEdit(), a.memoryAdd(), a.memoryRemove())
	return cmd
}

// memoryAt opens the memory of dir's workspace (--cwd): the user's and,
// unless it is a chat workspace, the workspace's.
func (a *App) memoryAt(dir string) (*workspace.Loaded, *memory.Store, error) {
	l, err := a.loadAt(dir)
	if err != nil {
		return nil, nil, err
	}
	cfg := memory.Config{UserDir: memory.UserDir(l.Paths.ConfigDir), WorkspaceDir: memory.WorkspaceDir(l.Workspace.Root), Now: a.Now}
	if l.Effective.String(workspace.WorkspaceKind) == "chat" {
		cfg.WorkspaceDir = ""
	}
	return l, memory.New(cfg), nil
}

// memoryView is `rein memory show --json`.
type memoryView struct {
	// Memory is the memory setting: on, or off (runs do not read it).
	Memory string                `json:"memory"`
	Files  []memory.FileSnapshot `json:"files"`
	// SectionChars is the size of the prompt's memory section.
	SectionChars int      `json:"section_chars"`
	Warnings     []string `json:"warnings,omitempty"`
}

func (a *App) memoryShow() *cobra.Command {
	var asJSON bool
	var dir string
	cmd := &cobra.Command{
		Use:   "show",
		Short: "Show both scopes' memory: files, fill, entries, and what is left out of the prompt",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			l, store, err := a.memoryAt(dir)
			if err != nil {
				return err
			}
			snap := store.Snapshot()
			view := memoryView{Memory: l.Effective.String(workspace.Memory), Files: snap.Files,
				SectionChars: utf8.RuneCountInString(memory.Section(snap)), Warnings: snap.Warnings}
			if asJSON {
				return writeJSON(a.Stdout, view)
			}
			printMemory(a.Stdout, l, view)
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	cmd.Flags().StringVar(&dir, "cwd", "", "show the memory of this directory's workspace")
	return cmd
}

// printMemory writes the view for people.
func printMemory(w io.Writer, l *workspace.Loaded, v memoryView) {
	if v.Memory == "off" {
		fmt.Fprintln(w, "Memory is off (setting memory): runs do not read it.")
		fmt.Fprintln(w)
	}
	titles := map[string]string{"user/profile": "User profile", "user/notes": "Notes for all workspaces", "workspace/notes": "Notes for this workspace"}
	for i, f := range v.Files {
		if i > 0 {
			fmt.Fprintln(w)
		}
		fmt.Fprintf(w, "%s — %s\n", titles[string(f.Scope)+"/"+string(f.Target)], displayPath(l, f.Path))
		if !f.Exists {
			fmt.Fprintf(w, "  %s (%s): not written yet\n", f.Target, f.Scope)
			continue
		}
		fmt.Fprintf(w, "  %s\n", f.Fill())
		if len(f.Findings) > 0 {
			fmt.Fprintf(w, "  [the whole file is withheld: its entries read together: %s]\n", withheldWhy(f.Findings))
		}
		for n, e := range f.Entries {
			mark := ""
			switch {
			case len(e.Findings) > 0:
				mark = "  [withheld: " + withheldWhy(e.Findings) + "]"
			case e.OverCap:
				mark = "  [left out: over the cap]"
			}
			text := strings.ReplaceAll(e.Text, "\n", "\n     ")
			fmt.Fprintf(w, "  %2d. %s%s\n", n+1, text, mark)
		}
	}
	fmt.Fprintf(w, "\nThe prompt's memory section: %s characters.\n", thousandsInt(v.SectionChars))
	if len(v.Warnings) > 0 {
		fmt.Fprintln(w, "\nWarnings:")
		for _, x := range v.Warnings {
			fmt.Fprintf(w, "  %s\n", x)
		}
	}
}

// withheldWhy says why the scanner withholds a note (SPEC MEM-3): each
// finding's rule, the text it matched, and its reason.
func withheldWhy(fs []memory.Finding) string {
	parts := make([]string, len(fs))
	for i, f := range fs {
		s := "rule " + f.Rule
		if f.Rule == "" {
			s = "rule " + string(f.Kind)
		}
		if f.Excerpt != "" {
			s += " matched “" + f.Excerpt + "”"
		}
		parts[i] = s + ": " + f.Reason
	}
	return strings.Join(parts, "; ")
}

// thousandsInt formats n with commas.
func thousandsInt(n int) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// memoryTarget resolves the --user, --workspace and --profile flags to a
// scope and a target: the profile is the user's; notes go to the
// workspace when there is one.
func memoryTarget(store *memory.Store, user, ws, profile bool) (memory.Scope, memory.Target, error) {
	switch {
	case user && ws:
		return "", "", usageErrorf("--user and --workspace exclude each other")
	case profile && ws:
		return "", "", usageErrorf("the profile is kept at user level only: drop --workspace")
	case profile:
		return memory.ScopeUser, memory.TargetProfile, nil
	case user:
		return memory.ScopeUser, memory.TargetNotes, nil
	case ws:
		return memory.ScopeWorkspace, memory.TargetNotes, nil
	}
	return store.DefaultScope(memory.TargetNotes), memory.TargetNotes, nil
}

func (a *App) memoryEdit() *cobra.Command {
	var user, ws, profile bool
	var dir string
	cmd := &cobra.Command{
		Use:   "edit",
		Short: "Open a memory file in $VISUAL or $EDITOR, then check it",
		Long: `Opens the notes (the workspace's, or yours with --user or outside a
workspace) or, with --profile, your profile in $VISUAL, $EDITOR or vi. Then
every entry is checked: what looks like a prompt injection, a secret or
hidden text stays in the file but is left out of the prompt, and you are told.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			l, store, err := a.memoryAt(dir)
			if err != nil {
				return err
			}
			scope, target, err := memoryTarget(store, user, ws, profile)
			if err != nil {
				return err
			}
			path, err := store.Ensure(cmd.Context(), scope, target)
			if err != nil {
				return fail(ExitError, "%v", err)
			}
			if err := a.runEditor(cmd.Context(), path); err != nil {
				return fail(ExitError, "%v", err)
			}
			_ = os.Chmod(path, 0o600) // an editor that writes a new file may widen it
			if err := store.Reindex(cmd.Context(), scope); err != nil {
				fmt.Fprintf(a.Stderr, "rein: warning: %v\n", err)
			}
			a.reportFile(l, store.Snapshot(), path)
			return nil
		},
	}
	cmd.Flags().BoolVar(&user, "user", false, "edit your notes, for every workspace")
	cmd.Flags().BoolVar(&ws, "workspace", false, "edit the workspace's notes")
	cmd.Flags().BoolVar(&profile, "profile", false, "edit your profile")
	cmd.Flags().StringVar(&dir, "cwd", "", "use the memory of this directory's workspace")
	return cmd
}

// runEditor opens path in the user's editor, on the app's terminal.
func (a *App) runEditor(ctx context.Context, path string) error {
	editor := a.getenv("VISUAL")
	if editor == "" {
		editor = a.getenv("EDITOR")
	}
	if editor == "" {
		editor = "vi"
	}
	// Like git, the editor is a shell command: EDITOR="code --wait" works.
	c := exec.CommandContext(ctx, "sh", "-c", editor+` "$1"`, "sh", path)
	c.Stdin, c.Stdout, c.Stderr = a.Stdin, a.Stdout, a.Stderr
	if err := c.Run(); err != nil {
		return fmt.Errorf("editor %q: %w; set VISUAL or EDITOR to the editor to use", editor, err)
	}
	return nil
}

// reportFile says what a file holds after an edit, and what of it the
// prompt leaves out.
func (a *App) reportFile(l *workspace.Loaded, snap memory.Snapshot, path string) {
	for _, f := range snap.Files {
		if f.Path == path {
			fmt.Fprintf(a.Stdout, "%s: %s\n", displayPath(l, path), f.Fill())
		}
	}
	for _, w := range snap.Warnings {
		if strings.Contains(w, path) {
			fmt.Fprintf(a.Stderr, "rein: warning: %s\n", w)
		}
	}
}

func (a *App) memoryAdd() *cobra.Command {
	var user, profile bool
	var dir string
	cmd := &cobra.Command{
		Use:   "add [--user] [--profile] TEXT",
		Short: "Add an entry to the notes (or, with --profile, to your profile)",
		Long: `Adds TEXT (the words of the command line, or stdin when TEXT is -) as one
entry of the workspace's notes, of yours with --user or outside a workspace,
or of your profile with --profile. It is checked like the model's writes:
refused if it looks like a prompt injection, a secret or hidden text, or if
the file would go over its cap; a duplicate changes nothing.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			l, store, err := a.memoryAt(dir)
			if err != nil {
				return err
			}
			scope, target, err := memoryTarget(store, user, false, profile)
			if err != nil {
				return err
			}
			text, err := a.memoryText(args)
			if err != nil {
				return err
			}
			rein := filepath.Join(l.Workspace.Root, ".rein")
			_, statErr := os.Lstat(rein)
			ch, err := store.Add(cmd.Context(), scope, target, text)
			if _, now := os.Lstat(rein); err == nil && errors.Is(statErr, fs.ErrNotExist) && now == nil {
				// A plain directory became a workspace: say so, once.
				fmt.Fprintf(a.Stderr, "rein: created %s (the workspace's memory): %s had none; rein memory add --user keeps notes in yours instead\n",
					rein, l.Workspace.Root)
			}
			return a.memoryChanged(ch, err)
		},
	}
	cmd.Flags().BoolVar(&user, "user", false, "add to your notes, for every workspace")
	cmd.Flags().BoolVar(&profile, "profile", false, "add to your profile")
	cmd.Flags().StringVar(&dir, "cwd", "", "use the memory of this directory's workspace")
	return cmd
}

func (a *App) memoryRemove() *cobra.Command {
	var user, profile bool
	var dir string
	cmd := &cobra.Command{
		Use:     "rm [--user] [--profile] SUBSTRING",
		Aliases: []string{"remove"},
		Short:   "Remove the one entry that contains SUBSTRING",
		Long: `Removes the entry of the notes (the workspace's, or yours with --user or
outside a workspace) or, with --profile, of your profile that contains
SUBSTRING — exactly, or else ignoring case and white space. When several
entries contain it, nothing is removed and they are listed: quote more.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			_, store, err := a.memoryAt(dir)
			if err != nil {
				return err
			}
			scope, target, err := memoryTarget(store, user, false, profile)
			if err != nil {
				return err
			}
			ch, err := store.Remove(cmd.Context(), scope, target, strings.Join(args, " "))
			return a.memoryChanged(ch, err)
		},
	}
	cmd.Flags().BoolVar(&user, "user", false, "remove from your notes, for every workspace")
	cmd.Flags().BoolVar(&profile, "profile", false, "remove from your profile")
	cmd.Flags().StringVar(&dir, "cwd", "", "use the memory of this directory's workspace")
	return cmd
}

// maxMemoryStdin bounds what `rein memory add -` reads.
const maxMemoryStdin = 64 << 10

// memoryText is the text of `rein memory add`: the arguments, or stdin
// for "-".
func (a *App) memoryText(args []string) (string, error) {
	if len(args) != 1 || args[0] != "-" {
		return strings.Join(args, " "), nil
	}
	b, err := io.ReadAll(io.LimitReader(a.Stdin, maxMemoryStdin+1))
	if err != nil {
		return "", fail(ExitError, "reading stdin: %v", err)
	}
	if len(b) > maxMemoryStdin {
		return "", fail(ExitError, "stdin holds more than %d KiB; a memory entry is a sentence or two", maxMemoryStdin>>10)
	}
	return string(b), nil
}

// memoryChanged reports a change, or fails with the store's reason.
func (a *App) memoryChanged(ch memory.Change, err error) error {
	if err != nil {
		if errors.Is(err, context.Canceled) {
			return fail(ExitCancelled, "cancelled")
		}
		return fail(ExitError, "%v", err)
	}
	fmt.Fprintln(a.Stdout, ch.String())
	return nil
}
