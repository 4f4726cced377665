package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"
)

// settingsTemplate is the .rein/settings.yaml rein init writes.
const settingsTemplate = `# rein workspace settings. Layers, highest first: flags, REIN_* variables,
# this file, ~/.config/rein/settings.yaml, defaults (see: rein config show).

# model: anthropic/claude-sonnet-4-5   # provider/model, a bare name, or a profile
# max_turns: 100                       # model calls per prompt
# timeout: 30m                         # wall-clock budget of a run
# sandbox: auto                        # auto | on | off: run commands under bubblewrap (Landlock without it)

permissions:
  mode: default        # strict | default | accept-edits | read-only | bypass
  allow:
    # - "bash(go test:*)"
    # - "bash(git diff:*)"
  deny:
    # - "read_file(secrets/**)"
`

// agentsTemplate is the AGENTS.md rein init writes.
const agentsTemplate = `# AGENTS.md

Instructions for coding agents working in this repository. rein puts this
file, verbatim, into every session's system prompt.

## Project
<!-- What this project is, in two or three sentences. -->

## Build and test
<!-- The exact commands, e.g.:
- build: go build ./...
- test:  go test ./...
-->

## Conventions
<!-- Style, layout, naming; what reviewers look for. -->

## Do not
<!-- Files or areas agents must not touch; commands they must not run. -->
`

func (a *App) initCommand() *cobra.Command {
	var dir string
	cmd := &cobra.Command{
		Use:   "init",
		Short: "Create .rein/settings.yaml and AGENTS.md in the workspace (never overwrites)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			root := a.abs(dir)
			files := []struct{ path, body string }{
				{filepath.Join(root, ".rein", "settings.yaml"), settingsTemplate},
				{filepath.Join(root, "AGENTS.md"), agentsTemplate},
			}
			created := 0
			for _, f := range files {
				ok, err := createNew(f.path, f.body)
				if err != nil {
					return fail(ExitError, "%v", err)
				}
				if ok {
					created++
					fmt.Fprintf(a.Stdout, "Created %s\n", f.path)
				} else {
					fmt.Fprintf(a.Stdout, "Kept %s (it exists; rein init never overwrites)\n", f.path)
				}
			}
			if created == 0 {
				return fail(ExitError, "%s is already set up; nothing was changed", root)
			}
			fmt.Fprintln(a.Stdout, "Edit AGENTS.md to tell agents about the project; rein doctor checks the setup.")
			return nil
		},
	}
	cmd.Flags().StringVar(&dir, "cwd", "", "set up this directory instead of the current one")
	return cmd
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
