package workspace

import (
	"errors"
	"io/fs"
	"maps"
	"path/filepath"
	"slices"
)

// layer is what one origin declares, in the order its files are read:
// within a layer, a later file's definition wins.
type layer struct {
	agents   []Agent
	skills   []Skill
	actions  []Action
	mcp      []MCPServer
	commands []Command
	probs    []Problem
}

// layers are the definitions read, not merged yet; workspace is nil when
// it was not read.
type layers struct {
	builtin, user, workspace *layer
	// run holds what this invocation's flags declare (--mcp-config): the
	// user's own, merged last and applied whether the workspace is
	// trusted or not.
	run *layer
}

// readLayers reads the built-in, the user's and (when workspace is true)
// the workspace's definitions; the workspace's may not read the variables
// credential names (see [isCredential]).
// What they read is recorded in t (nil records nothing).
func readLayers(p Paths, ws Workspace, workspace bool, getenv func(string) string, credential func(string) bool, t *trace) *layers {
	ls := &layers{builtin: &layer{agents: BuiltinAgents()}, user: readUser(p, ws.Root, getenv, t)}
	if workspace && ws.Root != "" {
		ls.workspace = readWorkspace(ws, p, envReader{getenv: getenv, refuse: credential}, t)
	}
	return ls
}

// readUser reads the user's definitions: Claude Code's (~/.claude, and
// the MCP servers of ~/.claude.json for the user and the workspace at
// root), then rein's (the config directory), which win.
func readUser(p Paths, root string, getenv func(string) string, t *trace) *layer {
	s := newScope(OriginUser, "", t)
	l := &layer{}
	l.agents = append(s.agents(p.ClaudeAgentsDir()), s.agents(p.UserAgentsDir())...)
	l.skills = append(s.skills(p.ClaudeSkillsDir()), s.skills(p.UserSkillsDir())...)
	l.actions = s.actions(p.UserActionsDir())
	l.commands = append(s.commands(p.ClaudeCommandsDir()), s.commands(p.UserCommandsDir())...)
	t.add(p.ClaudeJSON())
	t.lookup(root)
	claude, probs := readClaudeJSON(p.ClaudeJSON(), root, envReader{getenv: getenv})
	l.mcp = append(claude, s.mcpFile(p.UserMCP(), envReader{getenv: getenv}, parseMCPYAML)...)
	l.probs = append(probs, s.probs...)
	return l
}

// readWorkspace reads the workspace's definitions: Claude Code's (.claude,
// .mcp.json), then rein's (.rein), which win. Files must stay inside the
// workspace; a directory that is also the user's (a workspace at the home
// directory) is read as the user's only. Its declarations are refused the
// variables env refuses: rein's credentials.
func readWorkspace(ws Workspace, p Paths, env envReader, t *trace) *layer {
	s := newScope(OriginWorkspace, ws.Root, t)
	s.refuse = env.refuse
	user := []string{p.ClaudeAgentsDir(), p.ClaudeSkillsDir(), p.UserAgentsDir(), p.UserSkillsDir(), p.UserActionsDir(), p.UserMCP(),
		p.ClaudeCommandsDir(), p.UserCommandsDir()}
	own := func(path string) string {
		if slices.Contains(user, path) {
			return ""
		}
		return path
	}
	l := &layer{}
	l.agents = append(s.agents(own(ws.ClaudeAgentsDir())), s.agents(own(ws.AgentsDir()))...)
	l.skills = append(s.skills(own(ws.ClaudeSkillsDir())), s.skills(own(ws.SkillsDir()))...)
	l.actions = s.actions(own(ws.ActionsDir()))
	l.commands = append(s.commands(own(ws.ClaudeCommandsDir())), s.commands(own(ws.CommandsDir()))...)
	l.mcp = append(s.mcpFile(own(ws.ClaudeMCP()), env, parseMCPJSON), s.mcpFile(own(ws.MCP()), env, parseMCPYAML)...)
	l.probs = s.probs
	return l
}

// mcpFile reads an MCP servers file with parse; a missing file declares
// none.
func (s *scope) mcpFile(path string, env envReader,
	parse func(string, []byte, envReader) ([]MCPServer, []Problem)) []MCPServer {
	if path == "" {
		return nil
	}
	s.t.add(path)
	real, err := filepath.EvalSymlinks(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		s.problem(path, 0, "cannot read: %v", err)
		return nil
	case !within(real, s.root):
		s.problem(path, 0, "%v", errOutside)
		return nil
	}
	data, ok := s.read(path, real)
	if !ok {
		return nil
	}
	servers, probs := parse(path, data, env)
	s.add(probs)
	for i := range servers {
		servers[i].Origin = s.origin
	}
	return servers
}

// merge merges the layers by name: built-in, user, then the workspace's
// when workspace is true and it was read, then the invocation's.
func (ls *layers) merge(workspace bool) *Definitions {
	all := []*layer{ls.builtin, ls.user}
	if workspace && ls.workspace != nil {
		all = append(all, ls.workspace)
	}
	if ls.run != nil {
		all = append(all, ls.run)
	}
	agents := newMerged[Agent](DefAgent)
	skills := newMerged[Skill](DefSkill)
	actions := newMerged[Action](DefAction)
	servers := newMerged[MCPServer](DefMCP)
	commands := newMerged[Command](DefCommand)
	d := &Definitions{}
	for _, l := range all {
		for _, a := range l.agents {
			agents.add(a.Name, a.Path, a)
		}
		for _, s := range l.skills {
			skills.add(s.Name, s.Path, s)
		}
		for _, a := range l.actions {
			actions.add(a.Name, a.Path, a)
		}
		for _, m := range l.mcp {
			servers.add(m.Name, m.Path, m)
		}
		for _, c := range l.commands {
			commands.add(c.Name, c.Path, c)
		}
		d.Problems = append(d.Problems, l.probs...)
	}
	d.Agents, d.Skills, d.Actions, d.MCP, d.Commands = agents.list(), skills.list(), actions.list(), servers.list(), commands.list()
	for _, c := range [][]Clash{agents.clashes(), skills.clashes(), actions.clashes(), servers.clashes(), commands.clashes()} {
		d.Clashes = append(d.Clashes, c...)
	}
	return d
}

// merged keeps the last definition of each name, and every path that
// defined it.
type merged[T any] struct {
	kind  string
	items map[string]T
	paths map[string][]string
}

func newMerged[T any](kind string) *merged[T] {
	return &merged[T]{kind: kind, items: map[string]T{}, paths: map[string][]string{}}
}

func (m *merged[T]) add(name, path string, v T) {
	m.items[name] = v
	m.paths[name] = append(m.paths[name], path)
}

// list returns the definitions sorted by name.
func (m *merged[T]) list() []T {
	out := make([]T, 0, len(m.items))
	for _, name := range m.names() {
		out = append(out, m.items[name])
	}
	return out
}

// clashes returns the names defined more than once, sorted.
func (m *merged[T]) clashes() []Clash {
	var out []Clash
	for _, name := range m.names() {
		if ps := m.paths[name]; len(ps) > 1 {
			out = append(out, Clash{Kind: m.kind, Name: name, Paths: ps})
		}
	}
	return out
}

func (m *merged[T]) names() []string {
	return slices.Sorted(maps.Keys(m.items))
}
