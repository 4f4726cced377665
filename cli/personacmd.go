package cli

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/reinhq/rein/memory"
	"github.com/reinhq/rein/persona"
	"github.com/reinhq/rein/workspace"
)

const personaLong = `The persona is who rein's personal agent is (docs/persona.md), kept for you
across every workspace:
  ~/.config/rein/persona/identity.yaml   its name and avatar
  ~/.config/rein/persona/SOUL.md         its character and style (at most 4,000 characters)
  ~/.config/rein/memory/USER.md          your profile: memory's (rein memory)
The first chat with the personal agent asks a few questions and writes them.
SOUL.md is checked for prompt injection and hidden text: what is found is
warned about. Runs of rein run do not use the persona; the gateway will.`

func (a *App) personaCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "persona",
		Short: "Show, edit or reset the personal agent's persona",
		Long:  personaLong,
		Args:  cobra.NoArgs,
	}
	cmd.AddCommand(a.personaShow(), a.personaEdit(), a.personaReset())
	return cmd
}

// personaAt returns the persona directory, the memory store holding the
// profile (user scope only), and a Loaded for displayPath.
func (a *App) personaAt() (string, *memory.Store, *workspace.Loaded) {
	paths := workspace.PathsFrom(a.getenv)
	store := memory.New(memory.Config{UserDir: memory.UserDir(paths.ConfigDir), Now: a.Now})
	return persona.Dir(paths.ConfigDir), store, &workspace.Loaded{Paths: paths}
}

// personaView is `rein persona show --json`.
type personaView struct {
	Dir          string               `json:"dir"`
	Bootstrapped bool                 `json:"bootstrapped"`
	Identity     persona.Identity     `json:"identity"`
	Soul         string               `json:"soul"`
	SoulChars    int                  `json:"soul_chars"`
	SoulCap      int                  `json:"soul_cap"`
	Findings     []memory.Finding     `json:"findings,omitempty"`
	Profile      *memory.FileSnapshot `json:"profile,omitempty"`
	Warnings     []string             `json:"warnings,omitempty"`
}

func (a *App) personaShow() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "show",
		Short: "Show the persona: identity, SOUL.md, your profile, and warnings",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			dir, store, l := a.personaAt()
			p, err := persona.Load(dir)
			if err != nil {
				return fail(ExitError, "%v", err)
			}
			v := personaView{Dir: dir, Bootstrapped: p.Bootstrapped(), Identity: p.Identity, Soul: p.Soul,
				SoulChars: p.SoulChars, SoulCap: persona.SoulCap, Findings: p.Findings, Warnings: p.Warnings}
			snap := store.Snapshot()
			for i, f := range snap.Files {
				if f.Target == memory.TargetProfile {
					v.Profile = &snap.Files[i]
					for _, w := range snap.Warnings {
						if strings.Contains(w, f.Path) {
							v.Warnings = append(v.Warnings, w)
						}
					}
				}
			}
			if asJSON {
				return writeJSON(a.Stdout, v)
			}
			printPersona(a.Stdout, l, v)
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

// printPersona writes the view for people.
func printPersona(w io.Writer, l *workspace.Loaded, v personaView) {
	fmt.Fprintf(w, "Persona — %s\n", displayPath(l, v.Dir))
	if !v.Bootstrapped {
		fmt.Fprintln(w, "  not set up yet: the personal agent's first chat asks for it")
	}
	if v.Identity.Name != "" {
		fmt.Fprintf(w, "  name:   %s\n", v.Identity.Name)
	}
	if v.Identity.Avatar != "" {
		fmt.Fprintf(w, "  avatar: %s\n", v.Identity.Avatar)
	}
	fmt.Fprintln(w)
	if v.Soul == "" {
		fmt.Fprintln(w, "SOUL.md: not written yet (rein persona edit)")
	} else {
		fmt.Fprintf(w, "SOUL.md — %s / %s characters\n", thousandsInt(v.SoulChars), thousandsInt(v.SoulCap))
		for _, line := range strings.Split(v.Soul, "\n") {
			fmt.Fprintf(w, "  %s\n", line)
		}
	}
	fmt.Fprintln(w)
	switch {
	case v.Profile == nil || !v.Profile.Exists:
		fmt.Fprintln(w, "Your profile (USER.md): not written yet (rein memory add --profile)")
	default:
		fmt.Fprintf(w, "Your profile — %s\n  %s\n", displayPath(l, v.Profile.Path), v.Profile.Fill())
		for n, e := range v.Profile.Entries {
			mark := ""
			switch {
			case len(e.Findings) > 0:
				mark = "  [left out: " + memory.Explain(e.Findings) + "]"
			case e.OverCap:
				mark = "  [left out: over the cap]"
			}
			fmt.Fprintf(w, "  %2d. %s%s\n", n+1, strings.ReplaceAll(e.Text, "\n", "\n     "), mark)
		}
	}
	if len(v.Warnings) > 0 {
		fmt.Fprintln(w, "\nWarnings:")
		for _, x := range v.Warnings {
			fmt.Fprintf(w, "  %s\n", x)
		}
	}
}

func (a *App) personaEdit() *cobra.Command {
	return &cobra.Command{
		Use:   "edit",
		Short: "Open SOUL.md in $VISUAL or $EDITOR, then check it",
		Long: `Opens SOUL.md, the agent's character and style, in $VISUAL, $EDITOR or vi.
Then it is checked: over 4,000 characters is an error (condense it: it goes
into every system prompt); what looks like a prompt injection or hidden text
is warned about. Your profile is edited with rein memory edit --profile.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			dir, _, l := a.personaAt()
			path, err := persona.EnsureSoul(dir)
			if err != nil {
				return fail(ExitError, "%v", err)
			}
			if err := a.runEditor(cmd.Context(), path); err != nil {
				return fail(ExitError, "%v", err)
			}
			_ = os.Chmod(path, 0o600) // an editor that writes a new file may widen it
			p, err := persona.Load(dir)
			if err != nil {
				return fail(ExitError, "%v", err)
			}
			for _, w := range p.Warnings {
				fmt.Fprintf(a.Stderr, "rein: warning: %s\n", w)
			}
			if err := p.Validate(); err != nil {
				return fail(ExitError, "%s: %v (the file is kept: run rein persona edit again)", displayPath(l, path), err)
			}
			fmt.Fprintf(a.Stdout, "%s: %s / %s characters\n", displayPath(l, path), thousandsInt(p.SoulChars), thousandsInt(persona.SoulCap))
			return nil
		},
	}
}

func (a *App) personaReset() *cobra.Command {
	var yes, profile bool
	cmd := &cobra.Command{
		Use:   "reset --yes [--profile]",
		Short: "Remove SOUL.md and identity.yaml, so the next chat sets the persona up again",
		Long: `Removes SOUL.md and identity.yaml; the personal agent's next chat runs its
first-run questions again. Your profile (USER.md) is kept — it is memory's,
used by every run — unless --profile is given. Asks for --yes.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if !yes {
				what := "SOUL.md and identity.yaml"
				if profile {
					what += ", and your profile (USER.md)"
				}
				return usageErrorf("reset removes %s; nothing was removed: add --yes to do it", what)
			}
			dir, store, l := a.personaAt()
			var st *memory.Store
			if profile {
				st = store
			}
			removed, err := persona.Reset(cmd.Context(), dir, st)
			for _, p := range removed {
				fmt.Fprintf(a.Stdout, "Removed %s\n", displayPath(l, p))
			}
			if err != nil {
				return fail(ExitError, "%v", err)
			}
			if len(removed) == 0 {
				fmt.Fprintln(a.Stdout, "Nothing to remove: the persona is not set up.")
			}
			if !profile {
				fmt.Fprintln(a.Stdout, "Kept your profile (USER.md): add --profile to remove it too.")
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&yes, "yes", false, "do remove the files")
	cmd.Flags().BoolVar(&profile, "profile", false, "remove your profile (USER.md) too")
	return cmd
}
