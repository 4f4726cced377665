package workspace

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/reinhq/rein/llm/registry"
	"github.com/reinhq/rein/permission"
)

// Paths are the user-level directories rein reads and writes.
type Paths struct {
	Home string
	// ConfigDir holds settings.yaml, config.yaml and hooks.yaml:
	// $REIN_CONFIG_DIR, else $XDG_CONFIG_HOME/rein, else ~/.config/rein.
	ConfigDir string
	// DataDir holds sessions: $XDG_DATA_HOME/rein, else ~/.local/share/rein.
	DataDir string
	// ClaudeConfigDir is $CLAUDE_CONFIG_DIR: where Claude Code keeps the
	// user's settings.json and .claude.json instead of ~/.claude and
	// ~/.claude.json; empty when unset.
	ClaudeConfigDir string
	// ClaudeManagedDir holds Claude Code's managed settings
	// (managed-settings.json, managed-settings.d/): /etc/claude-code.
	ClaudeManagedDir string
}

// PathsFrom computes the paths from the environment.
func PathsFrom(getenv func(string) string) Paths {
	home := getenv("HOME")
	if home == "" {
		home, _ = os.UserHomeDir()
	}
	p := Paths{Home: home, ClaudeConfigDir: getenv("CLAUDE_CONFIG_DIR"), ClaudeManagedDir: ClaudeManagedDir}
	switch {
	case getenv("REIN_CONFIG_DIR") != "":
		p.ConfigDir = getenv("REIN_CONFIG_DIR")
	case getenv("XDG_CONFIG_HOME") != "":
		p.ConfigDir = filepath.Join(getenv("XDG_CONFIG_HOME"), "rein")
	default:
		p.ConfigDir = filepath.Join(home, ".config", "rein")
	}
	if x := getenv("XDG_DATA_HOME"); x != "" {
		p.DataDir = filepath.Join(x, "rein")
	} else {
		p.DataDir = filepath.Join(home, ".local", "share", "rein")
	}
	return p
}

// ClaudeManagedDir is where Claude Code's managed settings live on Linux.
const ClaudeManagedDir = "/etc/claude-code"

// UserSettings is the user's settings file.
func (p Paths) UserSettings() string { return filepath.Join(p.ConfigDir, "settings.yaml") }

// ProfilesFile is the user's provider profiles (config.yaml).
func (p Paths) ProfilesFile() string { return filepath.Join(p.ConfigDir, "config.yaml") }

// UserHooks is the user's hooks file.
func (p Paths) UserHooks() string { return filepath.Join(p.ConfigDir, "hooks.yaml") }

// Workspace is a directory whose AGENTS.md and .rein/ declare what an agent
// may do there (SPEC WS-1).
type Workspace struct {
	Root string
}

// FindWorkspace returns the workspace dir belongs to: the nearest directory,
// dir itself or an ancestor below home, holding .rein/ or .git; dir itself
// when there is none.
func FindWorkspace(dir, home string) Workspace { return findWorkspace(dir, home, nil) }

// findWorkspace is FindWorkspace recording in t what it looked for.
func findWorkspace(dir, home string, t *trace) Workspace {
	dir = filepath.Clean(dir)
	for d := dir; ; {
		if d == home && d != dir {
			break
		}
		t.lookup(filepath.Join(d, ".rein"), filepath.Join(d, ".git"))
		if isDir(filepath.Join(d, ".rein")) || exists(filepath.Join(d, ".git")) {
			return Workspace{Root: d}
		}
		parent := filepath.Dir(d)
		if parent == d {
			break
		}
		d = parent
	}
	return Workspace{Root: dir}
}

func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}

func exists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}

// Settings is the workspace's settings file.
func (w Workspace) Settings() string { return filepath.Join(w.Root, ".rein", "settings.yaml") }

// LocalSettings holds the rules of "always allow" answers, kept apart from
// the settings a project commits.
func (w Workspace) LocalSettings() string {
	return filepath.Join(w.Root, ".rein", "settings.local.yaml")
}

// Hooks is the workspace's hooks file.
func (w Workspace) Hooks() string { return filepath.Join(w.Root, ".rein", "hooks.yaml") }

// ClaudeSettings is Claude Code's settings file, whose hooks rein runs too.
func (w Workspace) ClaudeSettings() string { return filepath.Join(w.Root, ".claude", "settings.json") }

// Models is the workspace's model table additions.
func (w Workspace) Models() string { return filepath.Join(w.Root, ".rein", "models.yaml") }

// InstructionFiles are the names read as project instructions, in order
// of preference.
var InstructionFiles = []string{"AGENTS.md", "CLAUDE.md"}

// Instructions returns the workspace's AGENTS.md (or, when it has none,
// CLAUDE.md) verbatim, and the file's name; "" when there is neither.
func (w Workspace) Instructions() (text, name string, err error) {
	for _, n := range InstructionFiles {
		b, err := os.ReadFile(filepath.Join(w.Root, n))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return "", "", err
		}
		return string(b), n, nil
	}
	return "", "", nil
}

// Options say what to load.
type Options struct {
	// WorkDir is where rein runs; the workspace is found from it.
	WorkDir string
	// Root, when set, is the workspace itself rather than the nearest
	// directory above WorkDir holding .rein or .git: a server's, whose
	// callers opened that very directory (SPEC API-9), so neither the
	// settings nor the tools of an enclosing directory reach its runs.
	Root string
	// Getenv reads the environment.
	Getenv func(string) string
	// Flags maps setting names to the values flags gave.
	Flags map[string]string
	// ClaudeManagedDir, when set, replaces [ClaudeManagedDir] (tests).
	ClaudeManagedDir string
	// WithoutUser loads nothing of the user's level: rein's user
	// settings, hooks, agents, skills, actions and MCP servers, nor Claude
	// Code's user settings, ~/.claude.json and ~/.claude agents and
	// skills. The trust store, provider profiles and data directory are
	// still the user's, and managed settings still apply. A replay of a
	// recording made without the user's configuration loads this way, so
	// it runs for every user whatever they configured (SPEC CLI-1).
	WithoutUser bool
	// MCPConfigs are MCP server documents given for this invocation
	// (Claude Code's --mcp-config), in .mcp.json's format: the user's own,
	// they apply whether the workspace is trusted or not and win over a
	// server of the same name elsewhere. A problem in one fails Load.
	MCPConfigs []MCPConfig
	// StrictMCP leaves out every MCP server but those of MCPConfigs
	// (Claude Code's --strict-mcp-config).
	StrictMCP bool
}

// MCPConfig is one MCP server document given for an invocation: Data in
// .mcp.json's format, Source naming where it came from (a file, or the
// flag) in problems and in `rein mcp list`.
type MCPConfig struct {
	Source string
	Data   []byte
}

// Loaded is the configuration of one invocation: every layer read, and the
// values resolved.
type Loaded struct {
	Paths     Paths
	Workspace Workspace
	Effective *Effective
	// User, Project and Local are the settings files: the user's, the
	// workspace's, and the workspace's rules kept by "always" answers.
	User, Project, Local Settings
	// Profiles is the user's config.yaml.
	Profiles Profiles
	// Models are the workspace's additions to the model table.
	Models []registry.Model
	// Warnings are the settings of workspace files rein ignored: a
	// workspace may only tighten the permission mode and the sandbox
	// (see [Guarded]), and an untrusted workspace's extras do not apply
	// (Trust.Warnings, at the end). `rein doctor`, `rein config show` and
	// every run print them.
	Warnings []string
	// Trust is the workspace's trust state: what it brings that widens
	// permissions or runs code applies only once the user trusted it
	// (SPEC PERM-5).
	Trust Trust
	// Claude are Claude Code's settings files as read (managed, user,
	// project, local: see [ClaudeFile]); their rules, mode and env join
	// rein's (SPEC COMPAT-1).
	Claude []ClaudeFile
	// ClaudeUnmapped says, one line each, what Claude Code's settings hold
	// that rein does not apply, or applies with another meaning: rules it
	// cannot translate, keys it does not use, variables refused. They are
	// in Warnings too; `rein doctor` lists them.
	ClaudeUnmapped []string
	// Refused say, one line each, what the workspace's declarations named
	// of rein's credentials and were refused, trusted or not (SPEC PERM-5,
	// MCP-2; see [Loaded.Credential]); they are in Warnings too.
	Refused []string
	// MCPSkipped are the servers of the workspace's .mcp.json that Claude
	// Code's settings leave out (enabledMcpjsonServers and the like), each
	// with the reason; rein doctor lists them.
	MCPSkipped []MCPSkip

	hooks       []hookFile
	withoutUser bool // Options.WithoutUser
	trustStore  *TrustStore
	claudeEnv   []string // ClaudeEnv
	// defs are the definitions that apply, allDefs those with the
	// workspace's whether it is trusted or not; both set by Load.
	defs, allDefs *Definitions
	// trace records what Load reads, while it reads (see [Cache]).
	trace *trace
}

// Load reads every layer. A file that does not parse, or a bad value in
// the environment or a flag, is an error naming it.
func Load(opts Options) (*Loaded, error) { return load(opts, nil) }

// load is Load recording in t (when not nil) what it read.
func load(opts Options, t *trace) (*Loaded, error) {
	getenv := opts.Getenv
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	getenv = t.getenv(getenv)
	l := &Loaded{Paths: PathsFrom(getenv), withoutUser: opts.WithoutUser, trace: t}
	defer func() { l.trace = nil }()
	if opts.ClaudeManagedDir != "" {
		l.Paths.ClaudeManagedDir = opts.ClaudeManagedDir
	}
	if opts.Root != "" {
		l.Workspace = Workspace{Root: filepath.Clean(opts.Root)}
	} else {
		l.Workspace = findWorkspace(opts.WorkDir, l.Paths.Home, t)
	}
	t.lookup(l.Workspace.Root)
	var err error
	l.User = Settings{Values: map[string]string{}}
	t.add(l.Paths.UserSettings(), l.Workspace.Settings(), l.Workspace.LocalSettings(), l.Paths.ProfilesFile(), l.Workspace.Models())
	if !l.withoutUser {
		if l.User, err = LoadSettings(l.Paths.UserSettings(), permission.SourceUser); err != nil {
			return nil, err
		}
	}
	if l.Project, err = LoadSettings(l.Workspace.Settings(), permission.SourceWorkspace); err != nil {
		return nil, err
	}
	if l.Local, err = LoadSettings(l.Workspace.LocalSettings(), permission.SourceWorkspace); err != nil {
		return nil, err
	}
	if l.Profiles, err = LoadProfiles(l.Paths.ProfilesFile()); err != nil {
		return nil, err
	}
	if l.Models, err = LoadModels(l.Workspace.Models()); err != nil {
		return nil, err
	}
	l.screenModels()
	if err := l.loadClaude(); err != nil {
		return nil, err
	}
	l.loadHooks()
	l.screenHookEnv()
	defs := readLayers(l.Paths, l.Workspace, true, getenv, l.Credential, t)
	if l.withoutUser {
		defs.user = &layer{}
	}
	l.gateClaudeMCP(defs)
	if err := addMCPConfigs(defs, opts, getenv); err != nil {
		return nil, err
	}
	l.allDefs = l.withHookClashes(defs.merge(true), true)
	if defs.workspace != nil {
		l.Refused = append(l.Refused, l.credentialWarnings(defs.workspace.probs)...)
	}
	l.Warnings = append(l.Warnings, l.Refused...)
	l.loadTrust()
	l.screenClaudeEnv()
	l.defs = l.allDefs
	if !l.Trust.Trusted {
		l.defs = l.withHookClashes(defs.merge(false), false)
	}
	l.warnSkillEnv()
	flags, err := FlagLayer(opts.Flags)
	if err != nil {
		return nil, err
	}
	env, err := EnvLayer(getenv)
	if err != nil {
		return nil, err
	}
	user := l.User.Layer(SourceUser)
	ccManaged, ccUser := l.claudeMode(ClaudeManaged).Layer(SourceUser), l.claudeMode(ClaudeUser).Layer(SourceUser)
	userAll := firstOf(ccManaged, user, ccUser) // what a workspace may only tighten
	local := l.gate(l.guard(l.Local, userAll, flags, env))
	ccLocal := l.gate(l.guard(l.claudeMode(ClaudeLocal), userAll, flags, env))
	project := l.gate(l.guard(l.Project, userAll, flags, env))
	ccProject := l.gate(l.guard(l.claudeMode(ClaudeProject), userAll, flags, env))
	l.Effective = Resolve(flags, env, local, ccLocal, project, ccProject, ccManaged, user, ccUser, l.profileLayer(), l.defaults(getenv))
	l.Warnings = append(l.Warnings, l.ClaudeUnmapped...)
	l.Warnings = append(l.Warnings, l.Trust.Warnings...)
	return l, nil
}

// Definitions returns the agents, skills, actions and MCP servers that
// apply (SPEC WS-1): the built-in and the user's, and the workspace's once
// it is trusted (SPEC PERM-5). Clashes include the hooks a workspace's
// replaced by name. The result is shared: do not modify it. A Loaded not
// made by [Load] has the built-in agents only.
func (l *Loaded) Definitions() *Definitions {
	if l.defs == nil {
		return builtinOnly()
	}
	return l.defs
}

// AllDefinitions returns the definitions with the workspace's included
// whether it is trusted or not — for `rein doctor`, and to list what an
// untrusted workspace would bring. Never run what it holds without
// checking the trust. The result is shared: do not modify it.
func (l *Loaded) AllDefinitions() *Definitions {
	if l.allDefs == nil {
		return builtinOnly()
	}
	return l.allDefs
}

// builtinOnly is the definitions of nothing but rein's own.
func builtinOnly() *Definitions {
	return (&layers{builtin: &layer{agents: BuiltinAgents()}, user: &layer{}}).merge(false)
}

// SkillEnv returns the variables skills may read through ${env:X}
// (SPEC SKILL-2): the user's settings' skills.env; a workspace cannot
// name them.
func (l *Loaded) SkillEnv() []string { return slices.Clone(l.User.SkillEnv) }

// ToolTimeout returns the per-call timeout of the tool called name
// (tools.timeouts, SPEC TOOL-2): the entry that names it exactly, else the
// longest pattern that matches it, the workspace's settings before the
// user's; 0 when none does (the tool's own limits apply).
func (l *Loaded) ToolTimeout(name string) time.Duration {
	for _, s := range []Settings{l.Local, l.Project, l.User} {
		if d, ok := s.ToolTimeouts[name]; ok {
			return d
		}
		best, found := "", time.Duration(0)
		for p, d := range s.ToolTimeouts {
			if ok, _ := path.Match(p, name); ok && len(p) > len(best) {
				best, found = p, d
			}
		}
		if best != "" {
			return found
		}
	}
	return 0
}

// warnSkillEnv notes each workspace settings file that names skills.env:
// a repository must not choose which of the user's variables reach its
// skills.
func (l *Loaded) warnSkillEnv() {
	for _, s := range []Settings{l.Project, l.Local} {
		if len(s.SkillEnv) > 0 {
			l.Warnings = append(l.Warnings, fmt.Sprintf("workspace %s sets skills.env (%s); ignored: only your user settings (%s) may name the variables skills read",
				l.rel(s.Path), strings.Join(s.SkillEnv, ", "), l.Paths.UserSettings()))
		}
	}
}

// Guarded are the keys a workspace file may only tighten: a cloned
// repository must not loosen the user's safety settings. Flags and REIN_*
// variables still set them to anything. Each maps a value to its
// tightness; a higher rank is tighter.
var Guarded = map[string]map[string]int{
	PermissionMode: {
		string(permission.ModeBypass):      0,
		string(permission.ModeAcceptEdits): 1,
		string(permission.ModeDefault):     2,
		string(permission.ModeStrict):      3,
		string(permission.ModeReadOnly):    3,
		string(permission.ModePlan):        3,
	},
	Sandbox: {"off": 0, "auto": 1, "workspace": 1, "on": 2, "read-only": 3},
}

// GuardedMax are the number keys a workspace file may only lower: the
// budget of MCP tool definitions per request (SPEC MCP-2), and the bounds
// of sub-agents — how deep they nest, the tokens and the dollars one run
// may spend, where 0 means no bound (issue 22's second probes: a
// repository raised the user's subagents.max_cost).
var GuardedMax = []string{MCPMaxTools, MCPMaxToolBytes, SubagentMaxDepth, SubagentMaxTokens, SubagentMaxCost, JobsMax}

// unboundedAtZero are the keys of GuardedMax whose 0 means no bound: the
// loosest value, not the tightest.
var unboundedAtZero = []string{SubagentMaxTokens, SubagentMaxCost}

// loosens reports whether a workspace's value v of a guarded key is looser
// than base, the user's (or the default).
func loosens(name, v, base string) bool {
	if slices.Contains(GuardedMax, name) {
		n, err1 := strconv.ParseFloat(v, 64)
		b, err2 := strconv.ParseFloat(base, 64)
		if err1 != nil || err2 != nil {
			return false // not a number: the setting's own check refuses it
		}
		if slices.Contains(unboundedAtZero, name) {
			switch {
			case b == 0:
				return false // the user set no bound: any is tighter
			case n == 0:
				return true
			}
		}
		return n > b
	}
	rank := Guarded[name]
	return rank[v] < rank[base]
}

// guard returns the layer of workspace file s without the guarded values
// that would loosen what the user's layer (or the default) says, noting
// each in l.Warnings. Keys a flag or variable sets are left alone: they win
// anyway.
func (l *Loaded) guard(s Settings, user, flags, env Layer) Layer {
	layer := s.Layer(SourceWorkspace)
	copied := false
	for _, name := range append([]string{PermissionMode, Sandbox}, GuardedMax...) {
		v, ok := s.Values[name]
		if !ok {
			continue
		}
		if _, ok := flags.Values[name]; ok {
			continue
		}
		if _, ok := env.Values[name]; ok {
			continue
		}
		k, _ := Lookup(name)
		base, ok := user.Values[name]
		if !ok {
			base = k.Default
		}
		if !loosens(name, v, base) {
			continue
		}
		if !copied {
			layer.Values, copied = maps.Clone(s.Values), true
		}
		delete(layer.Values, name)
		allow := "set " + k.Env + "=" + v
		if k.Flag != "" {
			allow = "pass --" + k.Flag + " " + v
		}
		l.Warnings = append(l.Warnings, fmt.Sprintf("workspace %s asks for %s %s; ignored: a workspace may only tighten it — %s to allow",
			l.rel(s.Path), name, v, allow))
	}
	return layer
}

// rel names a workspace file relative to the workspace root.
func (l *Loaded) rel(path string) string {
	if r, err := filepath.Rel(l.Workspace.Root, path); err == nil && !strings.HasPrefix(r, "..") {
		return r
	}
	return path
}

// profileLayer is the default profile `rein provider use` chose, a user
// layer setting the model.
func (l *Loaded) profileLayer() Layer {
	if l.Profiles.Default == "" {
		return Layer{}
	}
	return Layer{Source: SourceUser, Origin: l.Profiles.Path, Values: map[string]string{Model: l.Profiles.Default}}
}

// vendorKeys lists the built-in vendors with the variables that hold their
// keys, in the order a model is picked when none is configured.
var vendorKeys = []struct{ profile, env string }{
	{"anthropic", "ANTHROPIC_API_KEY"},
	{"openai", "OPENAI_API_KEY"},
	{"google", "GEMINI_API_KEY"},
	{"google", "GOOGLE_API_KEY"},
}

// defaults are the built-in values that depend on the environment: the
// sessions directory, and a model for the first vendor whose key is set.
func (l *Loaded) defaults(getenv func(string) string) Layer {
	d := Layer{Source: SourceDefault, Values: map[string]string{
		SessionsDir: filepath.Join(l.Paths.DataDir, "sessions"),
	}, Origins: map[string]string{}}
	for _, v := range vendorKeys {
		if strings.TrimSpace(getenv(v.env)) != "" {
			d.Values[Model] = v.profile
			d.Origins[Model] = v.env + " is set"
			break
		}
	}
	return d
}

// Permissions merges the permission settings of every file — rein's and
// Claude Code's ([ClaudeFile]) — with the run's (mode, ask timeout, rules
// from flags), in the order of package permission: user, workspace, run. An untrusted workspace's allow rules
// (but those the user approved there) and sensitive-file exceptions are
// left out (SPEC PERM-5), the allow rules of its .claude files too.
func (l *Loaded) Permissions(run permission.Settings) permission.Settings {
	return permission.Merge(l.User.Permissions, l.claudePermissions(ClaudeManaged), l.claudePermissions(ClaudeUser),
		l.workspacePermissions(l.Project), l.claudePermissions(ClaudeProject),
		l.workspacePermissions(l.Local), l.claudePermissions(ClaudeLocal), run)
}

// Unknown lists the unknown keys of every settings file, prefixed with the
// file.
func (l *Loaded) Unknown() []string {
	var out []string
	for _, s := range []Settings{l.User, l.Project, l.Local} {
		for _, u := range s.Unknown {
			out = append(out, s.Path+": "+u)
		}
	}
	return out
}
