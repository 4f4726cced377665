package runner

import (
	"fmt"
	"slices"
	"strings"

	"github.com/reinhq/rein/tool/skill"
	"github.com/reinhq/rein/workspace"
)

// skillText is the instructions of the skills def preloads (Claude Code's
// `skills:`), each under a heading, to follow its prompt; "" when it names
// none. A skill that is not defined, or whose file cannot be read, is left
// out (agentWarnings reports it).
func (t *tree) skillText(def workspace.Agent) string {
	if len(def.Skills) == 0 {
		return ""
	}
	defs := t.c.s.cfg.Loaded.Definitions()
	var b strings.Builder
	for _, name := range def.Skills {
		sk, ok := defs.Skill(name)
		if !ok {
			continue
		}
		body, err := sk.Body()
		if err != nil {
			t.c.s.logger.Warn("a skill of the agent is left out", "agent", def.Name, "skill", name, "err", err)
			continue
		}
		s := skill.Skill{Name: sk.Name, Description: sk.Description, AllowedTools: sk.AllowedTools, Dir: sk.Dir}
		fmt.Fprintf(&b, "\n\n# Skill %s\n\n%s", sk.Name, skill.Expand(body, t.c.skillVars(s)))
	}
	return b.String()
}

// agentWarnings say what of the agents' definitions this run cannot
// honour (SPEC COMPAT-1): tools it has none of, skills not defined, a
// permission mode looser than the run's (an agent only tightens it).
func (c *Conversation) agentWarnings() []string {
	agents := c.s.cfg.Loaded.Definitions().Agents
	if c.tools == nil || len(agents) == 0 {
		return nil
	}
	out := agentToolWarnings(agents, c.tools.Names())
	defs := c.s.cfg.Loaded.Definitions()
	parent := string(c.s.policy.Mode())
	for _, a := range agents {
		for _, name := range a.Skills {
			if _, ok := defs.Skill(name); !ok {
				out = append(out, fmt.Sprintf("agent %s: skills: no skill is called %s; the agent starts without it", a.Name, name))
			}
		}
		if m := a.PermissionMode; m != "" && m != workspace.AgentModeDontAsk && tighterMode(parent, m) != m {
			out = append(out, fmt.Sprintf("agent %s asks for the %s permission mode, looser than this run's %s: it runs under %s (an agent may only tighten the mode)",
				a.Name, m, parent, parent))
		}
	}
	return slices.Compact(out)
}
