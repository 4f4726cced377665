package workspace

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Origin says which layer a definition comes from.
type Origin string

// The layers of definitions, lowest first: a workspace's definition
// replaces the user's of the same name, which replaces a built-in one.
const (
	OriginBuiltin   Origin = "builtin"
	OriginUser      Origin = "user"
	OriginWorkspace Origin = "workspace"
)

// The kinds of definition, as a [Clash] names them.
const (
	DefAgent   = "agent"
	DefSkill   = "skill"
	DefAction  = "action"
	DefMCP     = "mcp"
	DefHook    = "hook"
	DefCommand = "command"
)

// Problem is a malformed file or entry: its path, line (0 when unknown)
// and what is wrong, with how to fix it when possible. The rest of what
// was read still loads; the message says when the entry itself did not.
type Problem struct {
	Path string `json:"path"`
	Line int    `json:"line,omitempty"`
	Msg  string `json:"msg"`
	// Credential marks a workspace's declaration that names one of rein's
	// credentials (SPEC PERM-5, MCP-2): it is refused them, and every run
	// warns about it.
	Credential bool `json:"credential,omitempty"`
}

// String returns "path:line: msg" (without ":line" when the line is
// unknown).
func (p Problem) String() string {
	if p.Line > 0 {
		return p.Path + ":" + strconv.Itoa(p.Line) + ": " + p.Msg
	}
	return p.Path + ": " + p.Msg
}

// Agent is an agent definition (SPEC AGENT-1): Markdown with YAML
// frontmatter, whose body is the system prompt.
//
//	---
//	name: reviewer
//	description: Reviews a change for bugs and style.
//	tools: read_file, grep, glob     # or a YAML list; omitted: every tool
//	model: inherit                   # or a model string or alias (sonnet)
//	permission_mode: read-only       # permissionMode in Claude Code's format
//	max_turns: 20                    # maxTurns
//	---
//	You review code. …
//
// Claude Code's format is read in full (SPEC COMPAT-1): its tool names,
// old and new (Read, Bash, Task/Agent, BashOutput/TaskOutput, …; see
// tool.ClaudeToolNames); `tools` entries with a rule (`Bash(git diff:*)`),
// which make the tool available for the calls the rule matches only, and
// pre-approve those calls; `disallowedTools`, whose rules deny the calls
// they match; `permissionMode` default, acceptEdits, plan, dontAsk,
// bypassPermissions (refused from a workspace's agent); `maxTurns`;
// `skills`. Fields rein does not honour are reported as problems.
type Agent struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	// Model is the model string; "" runs the agent on its parent's model
	// (Claude Code's "inherit"). Claude Code aliases (sonnet, opus,
	// haiku) are kept as written.
	Model string `json:"model,omitempty"`
	// Tools are the tools allowed; nil means every tool the parent has,
	// an empty list none. Claude Code names ("Read", "Bash", "Grep") and
	// rules ("Bash(git diff:*)", see [SplitToolEntry]) are kept as
	// written: the runner maps them.
	Tools []string `json:"tools,omitempty"`
	// DisallowedTools are taken away from Tools (or from the parent's).
	DisallowedTools []string `json:"disallowed_tools,omitempty"`
	// PermissionMode is a mode's canonical name (permission.ParseMode),
	// or [AgentModeDontAsk]; "" inherits the parent's. An agent never runs
	// under a mode looser than its parent's.
	PermissionMode string `json:"permission_mode,omitempty"`
	// MaxTurns bounds the agent's turns; 0 inherits.
	MaxTurns int `json:"max_turns,omitempty"`
	// Skills are the skills whose instructions are loaded into the
	// agent's system prompt when it starts (Claude Code's skills).
	Skills []string `json:"skills,omitempty"`
	// Prompt is the Markdown body: the agent's system prompt.
	Prompt string `json:"-"`
	// Path is the file ("builtin" for a built-in agent).
	Path   string `json:"path"`
	Origin Origin `json:"origin"`
}

// Skill is a skill (SPEC SKILL-1): a directory holding SKILL.md, whose
// frontmatter gives a name, a description and optionally the tools it may
// use (allowed-tools); the body is loaded on demand ([Skill.Body]).
type Skill struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	// AllowedTools are the tools the skill may use (Claude Code's
	// allowed-tools), as written.
	AllowedTools []string `json:"allowed_tools,omitempty"`
	// Dir is the skill's directory, Path its SKILL.md.
	Dir  string `json:"dir"`
	Path string `json:"path"`
	// Root is the directory SKILL.md must resolve inside ("" for
	// anywhere): Body refuses a file a symbolic link now takes elsewhere.
	Root   string `json:"-"`
	Origin Origin `json:"origin"`
}

// Body reads SKILL.md again and returns what follows its frontmatter,
// trimmed: the instructions loaded when the skill is used (SPEC SKILL-2).
func (s Skill) Body() (string, error) {
	data, err := readBounded(s.Path, s.Root)
	if err != nil {
		return "", err
	}
	fm, err := splitFrontmatter(data)
	if err != nil {
		return "", err
	}
	return cleanBody(fm.body), nil
}

// Action is an action (SPEC ACTION-1), .rein/actions/NAME/ACTION.yaml:
// a command projected to the model as a tool.
//
//	name: deploy                     # default: the directory's name
//	description: Deploy a service to staging.
//	input_schema:
//	  type: object
//	  properties:
//	    service: {type: string}
//	  required: [service]
//	command: ["./deploy.sh"]         # argv, run directly; or a string, run by bash -c
//	timeout: 5m
//	env: [DEPLOY_TOKEN]
type Action struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	// InputSchema is the JSON Schema of the input, an object schema;
	// {"type":"object","properties":{}} when the file has none.
	InputSchema json.RawMessage `json:"input_schema"`
	// Command is the argv run directly (a YAML list), or
	Command []string `json:"command,omitempty"`
	// Script is a command run by bash -c (a YAML string).
	Script string `json:"script,omitempty"`
	// Timeout bounds a run; 0 is the default.
	Timeout time.Duration `json:"timeout,omitempty"`
	// Env names the variables of rein's environment the action gets; it
	// gets a clean environment otherwise (SPEC PERM-5).
	Env []string `json:"env,omitempty"`
	// Dir is the action's directory, Path its ACTION.yaml.
	Dir    string `json:"dir"`
	Path   string `json:"path"`
	Origin Origin `json:"origin"`
}

// CommandLine describes what the action runs: its argv, or its script.
func (a Action) CommandLine() string {
	if a.Script != "" {
		return a.Script
	}
	return strings.Join(a.Command, " ")
}

// MCPServer is an MCP server (SPEC MCP-1), from .rein/mcp.yaml, .mcp.json
// (Claude Code's format) or the user's mcp.yaml: a command speaking stdio,
// or a URL speaking streamable HTTP.
type MCPServer struct {
	Name string `json:"name"`
	// Command, Args and Env start a stdio server.
	Command string            `json:"command,omitempty"`
	Args    []string          `json:"args,omitempty"`
	Env     map[string]string `json:"env,omitempty"`
	// URL and Headers reach a streamable HTTP server, or an SSE server
	// (the older transport) when Transport is "sse".
	URL     string            `json:"url,omitempty"`
	Headers map[string]string `json:"headers,omitempty"`
	// Transport is "sse" for a server speaking MCP's older HTTP+SSE
	// transport (type: sse), else empty: stdio with a command,
	// streamable HTTP with a url.
	Transport string `json:"transport,omitempty"`
	// Timeout bounds each call; 0 is the default.
	Timeout time.Duration `json:"timeout,omitempty"`
	// Disabled servers are listed, not started. A disabled entry may
	// turn off a lower layer's server of the same name.
	Disabled bool `json:"disabled,omitempty"`
	// Declared is the command line or the URL as the file writes it,
	// before ${VAR} expansion: what to show people, since the expanded
	// values may hold secrets.
	Declared string `json:"declared,omitempty"`
	Path     string `json:"path"`
	Origin   Origin `json:"origin"`
}

// CommandLine is the command and arguments, or the URL, as run: with
// variables expanded, it may hold secrets — show Declared instead.
func (m MCPServer) CommandLine() string {
	if m.URL != "" {
		return m.URL
	}
	return strings.Join(append([]string{m.Command}, m.Args...), " ")
}

// Clash is a name defined by more than one file; the last of Paths wins.
// Kind is one of DefAgent, DefSkill, DefAction, DefMCP, DefHook and
// DefCommand; a
// built-in agent's path is "builtin".
type Clash struct {
	Kind  string   `json:"kind"`
	Name  string   `json:"name"`
	Paths []string `json:"paths"`
}

// Definitions is everything loaded (agents, skills, actions, MCP servers,
// slash commands), merged by name: built-in < user <
// workspace, and within a level .rein (or rein's own config directory)
// wins over .claude and .mcp.json. Each list is sorted by name. Clashes
// says which names more than one file defined; Problems what could not be
// read, in the order the files were read.
type Definitions struct {
	Agents   []Agent     `json:"agents"`
	Skills   []Skill     `json:"skills"`
	Actions  []Action    `json:"actions"`
	MCP      []MCPServer `json:"mcp"`
	Commands []Command   `json:"commands,omitempty"`
	Clashes  []Clash     `json:"clashes,omitempty"`
	Problems []Problem   `json:"problems,omitempty"`
}

// Agent returns the agent called name.
func (d *Definitions) Agent(name string) (Agent, bool) {
	return find(d.Agents, name, func(a Agent) string { return a.Name })
}

// Skill returns the skill called name.
func (d *Definitions) Skill(name string) (Skill, bool) {
	return find(d.Skills, name, func(s Skill) string { return s.Name })
}

// Action returns the action called name.
func (d *Definitions) Action(name string) (Action, bool) {
	return find(d.Actions, name, func(a Action) string { return a.Name })
}

// Server returns the MCP server called name.
func (d *Definitions) Server(name string) (MCPServer, bool) {
	return find(d.MCP, name, func(m MCPServer) string { return m.Name })
}

// find looks name up in a list sorted by name.
func find[T any](list []T, name string, key func(T) string) (T, bool) {
	i, ok := slices.BinarySearchFunc(list, name, func(v T, n string) int { return strings.Compare(key(v), n) })
	if !ok {
		var zero T
		return zero, false
	}
	return list[i], true
}

// DefinitionOptions say how definitions are read; the zero value reads
// the process environment.
type DefinitionOptions struct {
	// Getenv reads the variables ${VAR} in MCP server files stand for;
	// nil is os.Getenv.
	Getenv func(string) string
}

// LoadDefinitions reads the built-in agents, the user's definitions and,
// when workspace is true, the workspace's, and merges them by name. What
// is malformed is reported in Problems; the rest loads.
func LoadDefinitions(p Paths, ws Workspace, workspace bool) *Definitions {
	return LoadDefinitionsWith(p, ws, workspace, DefinitionOptions{})
}

// LoadDefinitionsWith is [LoadDefinitions] with options.
func LoadDefinitionsWith(p Paths, ws Workspace, workspace bool, opts DefinitionOptions) *Definitions {
	ls := readLayers(p, ws, workspace, opts.getenv(), credentialCheck(p), nil)
	return ls.merge(workspace)
}

func (o DefinitionOptions) getenv() func(string) string {
	if o.Getenv == nil {
		return os.Getenv
	}
	return o.Getenv
}

// Files read for definitions, relative to their directory.
const (
	agentsDir   = "agents"
	skillsDir   = "skills"
	actionsDir  = "actions"
	skillFile   = "SKILL.md"
	actionFile  = "ACTION.yaml"
	mcpYAMLFile = "mcp.yaml"
	mcpJSONFile = ".mcp.json"
)

// AgentsDir is the workspace's agents (.rein/agents/*.md).
func (w Workspace) AgentsDir() string { return filepath.Join(w.Root, ".rein", agentsDir) }

// ClaudeAgentsDir is the workspace's Claude Code agents (.claude/agents/*.md).
func (w Workspace) ClaudeAgentsDir() string { return filepath.Join(w.Root, ".claude", agentsDir) }

// SkillsDir is the workspace's skills (.rein/skills/*/SKILL.md).
func (w Workspace) SkillsDir() string { return filepath.Join(w.Root, ".rein", skillsDir) }

// ClaudeSkillsDir is the workspace's Claude Code skills
// (.claude/skills/*/SKILL.md).
func (w Workspace) ClaudeSkillsDir() string { return filepath.Join(w.Root, ".claude", skillsDir) }

// ActionsDir is the workspace's actions (.rein/actions/*/ACTION.yaml).
func (w Workspace) ActionsDir() string { return filepath.Join(w.Root, ".rein", actionsDir) }

// MCP is the workspace's MCP servers file (.rein/mcp.yaml).
func (w Workspace) MCP() string { return filepath.Join(w.Root, ".rein", mcpYAMLFile) }

// ClaudeMCP is the workspace's MCP servers in Claude Code's format
// (.mcp.json).
func (w Workspace) ClaudeMCP() string { return filepath.Join(w.Root, mcpJSONFile) }

// UserAgentsDir is the user's agents (<ConfigDir>/agents/*.md).
func (p Paths) UserAgentsDir() string { return p.under(p.ConfigDir, agentsDir) }

// UserSkillsDir is the user's skills (<ConfigDir>/skills/*/SKILL.md).
func (p Paths) UserSkillsDir() string { return p.under(p.ConfigDir, skillsDir) }

// UserActionsDir is the user's actions (<ConfigDir>/actions/*/ACTION.yaml).
func (p Paths) UserActionsDir() string { return p.under(p.ConfigDir, actionsDir) }

// UserMCP is the user's MCP servers file (<ConfigDir>/mcp.yaml).
func (p Paths) UserMCP() string { return p.under(p.ConfigDir, mcpYAMLFile) }

// ClaudeAgentsDir is Claude Code's user-level agents (~/.claude/agents).
func (p Paths) ClaudeAgentsDir() string { return p.under(p.Home, ".claude", agentsDir) }

// ClaudeSkillsDir is Claude Code's user-level skills (~/.claude/skills).
func (p Paths) ClaudeSkillsDir() string { return p.under(p.Home, ".claude", skillsDir) }

// under joins elems to dir; "" when dir is unknown.
func (Paths) under(dir string, elems ...string) string {
	if dir == "" {
		return ""
	}
	return filepath.Join(append([]string{dir}, elems...)...)
}
