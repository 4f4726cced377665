package workspace

import (
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/reinhq/rein/permission"
	"github.com/reinhq/rein/tool"
)

// parseAgent reads an agent file: YAML frontmatter (rein's snake_case
// keys or Claude Code's camelCase ones) and a Markdown body, the prompt.
// fallback names the agent when the frontmatter does not. ok is false
// when the agent cannot be loaded; problems say why, and what else is
// wrong.
func parseAgent(path string, data []byte, fallback string) (a Agent, probs []Problem, ok bool) {
	d := &doc{path: path}
	m, body, ok := d.frontmatter(data, "an agent needs a description")
	if !ok {
		return Agent{}, d.probs, false
	}
	a = Agent{Path: path, Prompt: cleanBody(body)}
	a.Name = m.str("name")
	nameNode, _ := m.get("name")
	if nameNode == nil {
		nameNode = m.node
	}
	if a.Name == "" {
		a.Name = fallback
	}
	if !nameRE().MatchString(a.Name) {
		d.problem(nameNode, "agent name %q is not valid: use 1 to 64 letters, digits, - and _ (the agent is not loaded)", a.Name)
		return Agent{}, d.probs, false
	}
	a.Description = m.str("description")
	if a.Description == "" {
		d.problem(nameNode, "agent %s has no description: add description: saying when to use it (the agent is not loaded)", a.Name)
		return Agent{}, d.probs, false
	}
	if a.Model = m.str("model"); strings.EqualFold(a.Model, "inherit") {
		a.Model = ""
	}
	a.Tools, _ = m.list("tools")
	a.DisallowedTools, _ = m.list("disallowed_tools", "disallowedTools")
	d.checkTools(&a, m)
	if n, key := m.get("permission_mode", "permissionMode"); n != nil {
		mode, ok := agentMode(n)
		if !ok {
			d.problem(n, "%s: %s is not a permission mode (strict, default, accept-edits, read-only, plan, bypass, or Claude Code's default, acceptEdits, plan, dontAsk, bypassPermissions): the agent is not loaded, rather than run under a mode it did not ask for", key, kindName(n))
			return Agent{}, d.probs, false
		}
		if mode == agentModeAuto {
			d.problem(n, "%s: Claude Code's auto mode has no rein equivalent: agent %s runs under its parent's mode", key, a.Name)
			mode = ""
		}
		a.PermissionMode = mode
	}
	a.MaxTurns = m.int("max_turns", "maxTurns")
	a.Skills, _ = m.list("skills")
	for _, k := range m.keys {
		if what, ok := agentIgnored[k.Value]; ok {
			d.problem(k, "%s: %s; agent %s loads without it", k.Value, what, a.Name)
		}
	}
	return a, d.probs, true
}

// AgentModeDontAsk is an agent's permission mode in which only what is
// pre-approved runs (allow rules, its own tool patterns, what the mode
// allows) and every question is answered no without asking anyone:
// Claude Code's dontAsk. It is not a mode of the permission engine: the
// agent runs under its parent's mode, and its questions are denied.
const AgentModeDontAsk = "dont-ask"

// agentModeAuto marks Claude Code's auto mode while parsing.
const agentModeAuto = "auto"

// agentMode reads an agent's permission mode: rein's modes and Claude
// Code's spellings (permission.ParseMode), plus dontAsk, manual and auto.
func agentMode(n *yaml.Node) (string, bool) {
	if n.Kind != yaml.ScalarNode {
		return "", false
	}
	switch strings.ToLower(strings.TrimSpace(n.Value)) {
	case "dontask", "dont-ask", "dont_ask":
		return AgentModeDontAsk, true
	case "manual":
		return string(permission.ModeDefault), true
	case agentModeAuto:
		return agentModeAuto, true
	}
	mode, err := permission.ParseMode(n.Value)
	if err != nil {
		return "", false
	}
	return string(mode), true
}

// agentIgnored are Claude Code's agent fields rein does not honour, each
// with what to know; they are reported, never silently dropped
// (SPEC COMPAT-1). color is cosmetic and passes unreported.
var agentIgnored = map[string]string{
	"mcpServers":    "an agent's own MCP servers are not supported (declare them in .mcp.json or .rein/mcp.yaml)",
	"hooks":         "an agent's own hooks are not supported (declare them in .rein/hooks.yaml; they fire for sub-agents as subagent_start and subagent_stop)",
	"memory":        "an agent's own memory directory is not supported",
	"background":    "running an agent in the background is not supported",
	"effort":        "an agent's reasoning effort is not supported",
	"isolation":     "running an agent in its own worktree is not supported",
	"initialPrompt": "an initial prompt is not supported",
}

// checkTools reports the entries of an agent's tools and disallowedTools
// that rein cannot honour: a rule that does not parse (`Bash(git diff`) is
// dropped; a Claude Code tool rein has no equivalent of is reported and
// kept (it matches no tool). Names rein does not know are left for the
// run to report: they may be MCP tools or actions.
func (d *doc) checkTools(a *Agent, m *mapping) {
	for _, field := range []struct {
		list  *[]string
		names []string
	}{{&a.Tools, []string{"tools"}}, {&a.DisallowedTools, []string{"disallowed_tools", "disallowedTools"}}} {
		if *field.list == nil {
			continue
		}
		n, key := m.get(field.names...)
		kept := (*field.list)[:0:0]
		for _, entry := range *field.list {
			name, _, err := SplitToolEntry(entry)
			if err != nil {
				d.problem(n, "%s: %v; the entry is ignored", key, err)
				continue
			}
			if slices.Contains(tool.ClaudeNoEquivalent, name) {
				d.problem(n, "%s: %s is a Claude Code tool rein has no equivalent of; agent %s runs without it", key, name, a.Name)
			}
			kept = append(kept, entry)
		}
		*field.list = kept
	}
}

// SplitToolEntry splits an entry of an agent's tools or disallowedTools:
// a tool name (`Read`, `mcp__github__*`), or a tool and a permission rule
// on its calls (`Bash(git diff:*)`, `Read(src/**)`), returned parsed as
// an allow rule (its Tool is rein's name where Claude Code's stands for
// one tool). name is the entry's tool name as written. An entry that is
// not one of these is an error saying so.
func SplitToolEntry(entry string) (name string, rule *permission.Rule, err error) {
	entry = strings.TrimSpace(entry)
	i := strings.IndexByte(entry, '(')
	if i < 0 {
		if entry == "" || strings.ContainsAny(entry, ") \t") {
			return "", nil, fmt.Errorf("%q is not a tool name", entry)
		}
		return entry, nil, nil
	}
	name = strings.TrimSpace(entry[:i])
	r, err := permission.ParseRule(permission.DecisionAllow, entry)
	if err != nil {
		return "", nil, fmt.Errorf("%q is not a tool name nor a rule Tool(pattern): %v", entry, strings.TrimPrefix(err.Error(), "permission: "))
	}
	return name, &r, nil
}

// frontmatter splits a Markdown definition and reads its frontmatter as
// a mapping (empty when the frontmatter is); ok is false, with a
// problem, when the file has none or it does not parse. needs says what
// a definition without frontmatter lacks.
func (d *doc) frontmatter(data []byte, needs string) (m *mapping, body string, ok bool) {
	fm, err := splitFrontmatter(data)
	if err != nil {
		pe, _ := err.(problemErr)
		d.probs = append(d.probs, Problem{Path: d.path, Line: pe.line, Msg: pe.msg})
		return nil, "", false
	}
	if !fm.found {
		d.probs = append(d.probs, Problem{Path: d.path, Line: 1, Msg: errNoFrontmatter.Error() + " (" + needs + ")"})
		return nil, "", false
	}
	d.off = fm.line - 1
	top := d.parse(fm.yaml)
	if top == nil {
		if len(d.probs) > 0 {
			return nil, "", false
		}
		return &mapping{d: d, vals: map[string]*yaml.Node{}}, fm.body, true
	}
	m, ok = d.mapping(top, "frontmatter")
	return m, fm.body, ok
}

// agents reads the *.md files of an agents directory.
func (s *scope) agents(dir string) []Agent {
	real, entries, ok := s.dir(dir)
	if !ok {
		return nil
	}
	return readEach(s, entries, func(s *scope, e fs.DirEntry) (Agent, bool) {
		name := e.Name()
		if strings.HasPrefix(name, ".") || !strings.HasSuffix(name, ".md") || e.IsDir() {
			return Agent{}, false
		}
		path := filepath.Join(dir, name)
		data, ok := s.readEntry(real, path, name, e.Type()&fs.ModeSymlink != 0)
		if !ok {
			return Agent{}, false
		}
		a, probs, ok := parseAgent(path, data, strings.TrimSuffix(name, ".md"))
		if ok && s.origin == OriginWorkspace && a.PermissionMode == string(permission.ModeBypass) {
			// A workspace may only tighten the permission mode (Guarded),
			// trusted or not: an agent of a cloned repository does not
			// switch the checks off.
			probs = append(probs, Problem{Path: path, Msg: fmt.Sprintf("agent %s asks for the bypass permission mode, which a workspace's agent may not have: it runs under its parent's mode (pass --permission-mode bypass yourself to run without checks)", a.Name)})
			a.PermissionMode = ""
		}
		s.add(probs)
		a.Origin = s.origin
		return a, ok
	})
}
