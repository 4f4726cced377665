package workspace

import (
	"io/fs"
	"path/filepath"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/reinhq/rein/permission"
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
	if !nameRE.MatchString(a.Name) {
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
	if n, key := m.get("permission_mode", "permissionMode"); n != nil {
		mode, err := permission.ParseMode(n.Value)
		if n.Kind != yaml.ScalarNode || err != nil {
			d.problem(n, "%s: %s is not a permission mode (strict, default, accept-edits, read-only, plan, bypass): the agent is not loaded, rather than run under a mode it did not ask for", key, kindName(n))
			return Agent{}, d.probs, false
		}
		a.PermissionMode = string(mode)
	}
	a.MaxTurns = m.int("max_turns", "maxTurns")
	return a, d.probs, true
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
		rp, err := s.resolve(real, name, e.Type()&fs.ModeSymlink != 0)
		if err != nil {
			s.problem(path, 0, "%v", err)
			return Agent{}, false
		}
		data, ok := s.read(path, rp)
		if !ok {
			return Agent{}, false
		}
		a, probs, ok := parseAgent(path, data, strings.TrimSuffix(name, ".md"))
		s.add(probs)
		a.Origin = s.origin
		return a, ok
	})
}
