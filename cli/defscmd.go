package cli

import (
	"cmp"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/reinhq/rein/workspace"
)

// untrustedMark follows a definition an untrusted workspace brings: it is
// listed so the user sees what trusting would add, and does not apply
// (SPEC PERM-5).
const untrustedMark = "(not trusted: ignored — rein trust)"

// listed is one definition of a listing: those that apply, and those of an
// untrusted workspace, which do not (Ignored).
type listed[T any] struct {
	Def     T
	Ignored bool
}

// mergeListed lists the definitions that apply (applied) and those of all
// that do not — an untrusted workspace's, which all holds in place of the
// user's of the same name — sorted by name, the one that applies first.
// key returns a definition's name and file.
func mergeListed[T any](applied, all []T, key func(T) (name, path string)) []listed[T] {
	seen := map[[2]string]bool{}
	var out []listed[T]
	for _, d := range applied {
		n, p := key(d)
		seen[[2]string{n, p}] = true
		out = append(out, listed[T]{Def: d})
	}
	for _, d := range all {
		n, p := key(d)
		if !seen[[2]string{n, p}] {
			out = append(out, listed[T]{Def: d, Ignored: true})
		}
	}
	slices.SortStableFunc(out, func(a, b listed[T]) int {
		an, _ := key(a.Def)
		bn, _ := key(b.Def)
		if c := cmp.Compare(an, bn); c != 0 {
			return c
		}
		return cmp.Compare(boolRank(a.Ignored), boolRank(b.Ignored))
	})
	return out
}

func boolRank(b bool) int {
	if b {
		return 1
	}
	return 0
}

// displayPath shortens a definition's file for people: relative to the
// workspace inside it, ~/… inside the home directory, as is otherwise
// ("builtin").
func displayPath(l *workspace.Loaded, p string) string {
	if p == "" || !filepath.IsAbs(p) {
		return p
	}
	if r, ok := under(l.Workspace.Root, p); ok {
		return r
	}
	if r, ok := under(l.Paths.Home, p); ok && l.Paths.Home != "" {
		return filepath.Join("~", r)
	}
	return p
}

// under returns p relative to dir, when p is inside dir.
func under(dir, p string) (string, bool) {
	r, err := filepath.Rel(dir, p)
	if err != nil || r == ".." || strings.HasPrefix(r, ".."+string(filepath.Separator)) || filepath.IsAbs(r) {
		return "", false
	}
	return r, true
}

// loadAt loads the configuration of dir (--cwd), or of the directory rein
// runs in.
func (a *App) loadAt(dir string) (*workspace.Loaded, error) {
	l, err := workspace.Load(workspace.Options{WorkDir: a.abs(dir), Getenv: a.getenv})
	if err != nil {
		return nil, fail(ExitError, "configuration: %v", err)
	}
	return l, nil
}

func (a *App) agentsCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "agents",
		Short: "List the agent definitions (built-in, yours, the workspace's)",
		Long: `Agents are Markdown files with YAML frontmatter (docs/workspace.md): rein's
built-in ones, yours (~/.config/rein/agents, ~/.claude/agents) and the
workspace's (.rein/agents, .claude/agents); the workspace's win on a name
clash. rein run --agent NAME runs a session as one; the task tool hands work
to them. An untrusted workspace's agents are listed, marked, and do not apply
until you trust it (rein trust).`,
		Args: cobra.NoArgs,
	}
	cmd.AddCommand(a.agentsList())
	return cmd
}

// agentView is an agent as `rein agents list --json` shows it.
type agentView struct {
	workspace.Agent
	// Ignored: the agent of an untrusted workspace; it does not apply.
	Ignored bool `json:"ignored,omitempty"`
}

func (a *App) agentsList() *cobra.Command {
	var asJSON bool
	var dir string
	cmd := &cobra.Command{
		Use:     "list",
		Aliases: []string{"ls"},
		Short:   "List the agents: name, origin, description, model, tools",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			l, err := a.loadAt(dir)
			if err != nil {
				return err
			}
			key := func(d workspace.Agent) (string, string) { return d.Name, d.Path }
			list := mergeListed(l.Definitions().Agents, l.AllDefinitions().Agents, key)
			if asJSON {
				views := make([]agentView, 0, len(list))
				for _, x := range list {
					views = append(views, agentView{Agent: x.Def, Ignored: x.Ignored})
				}
				return writeJSON(a.Stdout, views)
			}
			return printAgents(a.Stdout, l, list)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	cmd.Flags().StringVar(&dir, "cwd", "", "list the agents of this directory's workspace")
	return cmd
}

func printAgents(w io.Writer, l *workspace.Loaded, list []listed[workspace.Agent]) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tORIGIN\tMODEL\tTOOLS\tDESCRIPTION")
	for _, x := range list {
		d := x.Def
		model := cmp.Or(d.Model, "inherit")
		desc := clip(d.Description, 70)
		if x.Ignored {
			desc += " " + untrustedMark
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", d.Name, origin(l, string(d.Origin), d.Path), model, clip(toolsText(d.Tools), 40), desc)
	}
	return tw.Flush()
}

// origin names where a definition comes from: its layer and file.
func origin(l *workspace.Loaded, layer, path string) string {
	if layer == string(workspace.OriginBuiltin) || path == "" || path == "builtin" {
		return layer
	}
	return layer + " " + displayPath(l, path)
}

// toolsText shows an agent's tools: all when it names none, none when its
// list is empty.
func toolsText(tools []string) string {
	switch {
	case tools == nil:
		return "all"
	case len(tools) == 0:
		return "none"
	}
	return strings.Join(tools, ", ")
}

func (a *App) skillsCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "skills",
		Short: "List the skills (yours and the workspace's)",
		Long: `Skills are directories holding a SKILL.md (docs/workspace.md): yours
(~/.config/rein/skills, ~/.claude/skills) and the workspace's (.rein/skills,
.claude/skills). Their names and descriptions go into the system prompt; the
model loads one's instructions with the skill tool when it needs them. An
untrusted workspace's skills are listed, marked, and do not apply until you
trust it (rein trust).`,
		Args: cobra.NoArgs,
	}
	cmd.AddCommand(a.skillsList())
	return cmd
}

// skillView is a skill as `rein skills list --json` shows it.
type skillView struct {
	workspace.Skill
	// Ignored: the skill of an untrusted workspace; it does not apply.
	Ignored bool `json:"ignored,omitempty"`
}

func (a *App) skillsList() *cobra.Command {
	var asJSON bool
	var dir string
	cmd := &cobra.Command{
		Use:     "list",
		Aliases: []string{"ls"},
		Short:   "List the skills: name, origin, description, path",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			l, err := a.loadAt(dir)
			if err != nil {
				return err
			}
			key := func(d workspace.Skill) (string, string) { return d.Name, d.Path }
			list := mergeListed(l.Definitions().Skills, l.AllDefinitions().Skills, key)
			if asJSON {
				views := make([]skillView, 0, len(list))
				for _, x := range list {
					views = append(views, skillView{Skill: x.Def, Ignored: x.Ignored})
				}
				return writeJSON(a.Stdout, views)
			}
			if len(list) == 0 {
				fmt.Fprintf(a.Stdout, "No skills. Add one as %s/NAME/SKILL.md (docs/workspace.md), or in %s.\n",
					displayPath(l, l.Workspace.SkillsDir()), displayPath(l, l.Paths.UserSkillsDir()))
				return nil
			}
			tw := tabwriter.NewWriter(a.Stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "NAME\tORIGIN\tDESCRIPTION\tPATH")
			for _, x := range list {
				desc := clip(x.Def.Description, 70)
				if x.Ignored {
					desc += " " + untrustedMark
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", x.Def.Name, x.Def.Origin, desc, displayPath(l, x.Def.Path))
			}
			return tw.Flush()
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	cmd.Flags().StringVar(&dir, "cwd", "", "list the skills of this directory's workspace")
	return cmd
}
