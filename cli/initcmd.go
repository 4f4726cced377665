package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"github.com/spf13/cobra"

	"github.com/reinhq/rein/workspace"
)

const initLong = `Set up a workspace (SPEC WS-1) from a template; existing files are kept.

--kind project (the default) writes AGENTS.md (how to build and test the
project, for agents), .rein/settings.yaml (the model, permission rules) and an
example agent, .rein/agents/reviewer.md.

--kind chat writes a chat workspace (SPEC WS-2): AGENTS.md describing an
assistant's persona and .rein/settings.yaml with kind: chat, so the model gets
no tools; talk to it with rein.

What rein init writes brings agents, which apply only in a trusted workspace
(rein trust): when everything the workspace brings is what rein init just
wrote, rein init trusts it; otherwise it says to run rein trust.`

// initFiles are the files of a template kind, relative to the workspace.
func initFiles(kind string) ([]struct{ rel, body string }, error) {
	type file = struct{ rel, body string }
	switch kind {
	case "project":
		return []file{{".rein/settings.yaml", settingsTemplate}, {"AGENTS.md", agentsTemplate},
			{".rein/agents/reviewer.md", reviewerTemplate}}, nil
	case "chat":
		return []file{{".rein/settings.yaml", chatSettingsTemplate}, {"AGENTS.md", chatAgentsTemplate}}, nil
	}
	return nil, usageErrorf("--kind %q: want project or chat", kind)
}

func (a *App) initCommand() *cobra.Command {
	var dir, kind string
	cmd := &cobra.Command{
		Use:   "init",
		Short: "Set up a project or chat workspace: AGENTS.md, .rein/settings.yaml, an agent (never overwrites)",
		Long:  initLong,
		Example: `  rein init                 # a project: AGENTS.md, settings, an example reviewer agent
  rein init --kind chat     # a chat: a persona and a model, no tools`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			files, err := initFiles(kind)
			if err != nil {
				return err
			}
			root := a.abs(dir)
			var created []string
			for _, f := range files {
				path := filepath.Join(root, filepath.FromSlash(f.rel))
				ok, err := createNew(path, f.body)
				if err != nil {
					return fail(ExitError, "%v", err)
				}
				if ok {
					created = append(created, f.rel)
					fmt.Fprintf(a.Stdout, "Created %s\n", path)
				} else {
					fmt.Fprintf(a.Stdout, "Kept %s (it exists; rein init never overwrites)\n", path)
				}
			}
			if len(created) == 0 {
				return fail(ExitError, "%s is already set up; nothing was changed", root)
			}
			a.trustInit(root, created)
			if kind == "chat" {
				fmt.Fprintln(a.Stdout, "Edit AGENTS.md to describe the assistant; talk to it with: rein")
				return nil
			}
			fmt.Fprintln(a.Stdout, "Edit AGENTS.md to tell agents about the project; rein doctor checks the setup.")
			return nil
		},
	}
	cmd.Flags().StringVar(&dir, "cwd", "", "set up this directory instead of the current one")
	cmd.Flags().StringVar(&kind, "kind", "project", "the template: project or chat")
	return cmd
}

// trustInit trusts the workspace of root when all it brings that needs
// trust comes from the files rein init just created (rel paths): rein's
// own templates, nothing of the repository's. Otherwise it says how to
// trust it (SPEC PERM-5).
func (a *App) trustInit(root string, created []string) {
	l, err := workspace.Load(workspace.Options{WorkDir: root, Getenv: a.getenv})
	if err != nil {
		fmt.Fprintf(a.Stdout, "Warning: the configuration does not load: %v\n", err)
		return
	}
	t := l.Trust
	if t.Trusted || len(t.Extras) == 0 {
		return
	}
	ours := t.Err == nil
	for _, x := range t.Extras {
		if !slices.Contains(created, filepath.ToSlash(x.File)) {
			ours = false
		}
	}
	if ours {
		if err := l.TrustNow(a.now()); err == nil {
			fmt.Fprintf(a.Stdout, "Trusted %s: all it brings is what rein init wrote; editing those files asks again (rein trust).\n", l.Workspace.Root)
			return
		}
	}
	fmt.Fprintf(a.Stdout, "The workspace brings agents, settings or hooks that apply once you trust it: review them, then rein trust %s\n", l.Workspace.Root)
}

// createNew writes a file that must not exist yet; false when it does.
func createNew(path, body string) (bool, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return false, err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if errors.Is(err, fs.ErrExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	_, err = f.WriteString(body)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err == nil, err
}
