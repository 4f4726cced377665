package cli

import (
	"fmt"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/reinhq/rein/workspace"
)

func (a *App) configCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "config",
		Short: "Show the configuration and where each value comes from",
		Args:  cobra.NoArgs,
	}
	cmd.AddCommand(a.configShow())
	return cmd
}

// configView is what `rein config show --json` prints.
type configView struct {
	Workspace string            `json:"workspace"`
	Values    []workspace.Value `json:"values"`
	Rules     []ruleView        `json:"rules"`
	Files     []fileView        `json:"files"`
	Unknown   []string          `json:"unknown_keys,omitempty"`
	Warnings  []string          `json:"warnings,omitempty"`
}

type ruleView struct {
	Rule   string `json:"rule"`
	Source string `json:"source"`
	File   string `json:"file"`
	// Ignored: an allow rule of a workspace the user has not trusted.
	Ignored bool `json:"ignored,omitempty"`
}

type fileView struct {
	Role   string `json:"role"`
	Path   string `json:"path"`
	Exists bool   `json:"exists"`
}

func (a *App) configShow() *cobra.Command {
	var asJSON bool
	o := &runOptions{}
	cmd := &cobra.Command{
		Use:   "show",
		Short: "Print every effective setting and the layer it came from",
		Long: `Print every effective setting and the layer it came from. Layers, highest
first: flags, REIN_* variables, the workspace's .rein/settings.yaml (and
settings.local.yaml, where "always allow" answers go), the user's
~/.config/rein/settings.yaml (and config.yaml's default profile), built-in
defaults. Permission rules add up across the layers; deny wins.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			flags := o.settings(cmd)
			if err := checkFlags(flags); err != nil {
				return err
			}
			l, err := workspace.Load(workspace.Options{WorkDir: a.abs(o.cwd), Getenv: a.getenv, Flags: flags})
			if err != nil {
				return fail(ExitError, "configuration: %v", err)
			}
			v := viewConfig(l)
			if asJSON {
				return writeJSON(a.Stdout, v)
			}
			return printConfig(a, v)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	f := cmd.Flags()
	f.StringVarP(&o.model, "model", "m", "", "as rein run --model")
	f.IntVar(&o.maxTurns, "max-turns", 0, "as rein run --max-turns")
	f.StringVar(&o.permissionMode, "permission-mode", "", "as rein run --permission-mode")
	f.StringVar(&o.timeout, "timeout", "", "as rein run --timeout")
	f.StringVar(&o.cwd, "cwd", "", "show the configuration of this directory")
	return cmd
}

func viewConfig(l *workspace.Loaded) configView {
	v := configView{Workspace: l.Workspace.Root, Values: l.Effective.All(), Unknown: l.Unknown(),
		Warnings: l.Warnings}
	for _, s := range []workspace.Settings{l.User, l.Project, l.Local} {
		for i, r := range s.Permissions.Rules {
			v.Rules = append(v.Rules, ruleView{Rule: s.RuleLines()[i], Source: string(r.Source), File: s.Path,
				Ignored: !l.RuleApplies(s, r)})
		}
	}
	for _, f := range []struct{ role, path string }{
		{"user settings", l.Paths.UserSettings()},
		{"user profiles", l.Paths.ProfilesFile()},
		{"user hooks", l.Paths.UserHooks()},
		{"workspace settings", l.Workspace.Settings()},
		{"workspace local settings", l.Workspace.LocalSettings()},
		{"workspace hooks", l.Workspace.Hooks()},
		{"Claude Code settings (hooks)", l.Workspace.ClaudeSettings()},
		{"workspace models", l.Workspace.Models()},
		{"user trust decisions", l.Paths.TrustFile()},
	} {
		_, err := os.Stat(f.path)
		v.Files = append(v.Files, fileView{Role: f.role, Path: f.path, Exists: err == nil})
	}
	text, name, _ := l.Workspace.Instructions()
	if name != "" {
		v.Files = append(v.Files, fileView{Role: fmt.Sprintf("instructions (%d bytes)", len(text)), Path: name, Exists: true})
	}
	return v
}

func printConfig(a *App, v configView) error {
	tw := tabwriter.NewWriter(a.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "Workspace: %s\n\n", v.Workspace)
	fmt.Fprintln(tw, "SETTING\tVALUE\tFROM")
	for _, val := range v.Values {
		shown := strings.ReplaceAll(val.Value, "\n", ", ") // a list (sandbox.allow_hosts)
		if shown == "" {
			shown = "(none)"
		}
		from := string(val.Source)
		if val.Origin != "" {
			from += " " + val.Origin
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", val.Key, clip(shown, 60), from)
	}
	for _, r := range v.Rules {
		ignored := ""
		if r.Ignored {
			ignored = " (ignored: workspace not trusted)"
		}
		fmt.Fprintf(tw, "permissions rule\t%s\t%s %s%s\n", r.Rule, r.Source, r.File, ignored)
	}
	fmt.Fprintln(tw, "\nFILE\tPATH\t")
	for _, f := range v.Files {
		state := ""
		if !f.Exists {
			state = "(missing)"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", f.Role, f.Path, state)
	}
	if len(v.Unknown) > 0 {
		fmt.Fprintf(tw, "\nUnknown keys (ignored):\n  %s\n", strings.Join(v.Unknown, "\n  "))
	}
	for _, w := range v.Warnings {
		fmt.Fprintf(tw, "\nWarning: %s\n", w)
	}
	return tw.Flush()
}
