package runner

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/reinhq/rein/agent"
	"github.com/reinhq/rein/hook"
	"github.com/reinhq/rein/llm"
	"github.com/reinhq/rein/llm/registry"
	"github.com/reinhq/rein/memory"
	"github.com/reinhq/rein/permission"
	"github.com/reinhq/rein/session"
	"github.com/reinhq/rein/workspace"
)

// Model is a model ready to call, with what the runtime needs to know of
// it. Front ends resolve model strings into Models (only they pick
// adapters: docs/architecture.md, "Layers and arrows").
type Model struct {
	Provider llm.Provider
	// ProviderName is the name the provider stamps on its replies; Name the
	// model's name as the provider knows it.
	ProviderName, Name string
	// Caps is what the registry knows of the model.
	Caps registry.Model
	// Label is "provider/model" as the user named it (a profile's name, not
	// the vendor's); sessions record it, so resuming picks the same profile.
	Label string
	// Warning is a note about the model (unknown capabilities).
	Warning string
	// Frame is set for a replayed cassette: what the recording sent.
	Frame *Frame
	// Plan, for Claude Code's opusplan, is the model calls go to while
	// the permission mode is plan (planmodel.go); nil: this model runs in
	// every mode.
	Plan *Model
}

// Frame is what a replayed run must send as the recording did: the system
// prompt (it describes the recording machine), the model and the output
// limit. Tools and messages are the run's own.
type Frame struct {
	Model     string              `json:"model"`
	System    string              `json:"system"`
	MaxTokens int                 `json:"max_tokens"`
	Thinking  *llm.ThinkingConfig `json:"-"`
	Prompt    string              `json:"-"`
}

// Resolver turns a model string into a Model; reg holds the profiles and
// models of the configuration.
type Resolver func(reg *registry.Registry, spec string) (*Model, error)

// Config is what a front end gives the runtime of one workspace: the loaded
// configuration layers (trust already settled), where sessions live, how
// models resolve, and the run-level permission rules.
type Config struct {
	Loaded *workspace.Loaded
	Store  session.Store
	// SessionsDir holds a directory per session: spilled command output,
	// and, without Audit, the session's audit logs.
	SessionsDir string
	Resolve     Resolver
	// ResolveEmbedder resolves kb.embedding_model for the knowledge base
	// (kb_search); nil refuses an embedding model, keyword search works.
	ResolveEmbedder EmbedderResolver
	// KnowledgeBases and KBNamespace, when set, put the workspace's
	// knowledge base (kb_search) in namespace KBNamespace of a shared
	// database rather than in its KBFile (a server on PostgreSQL: see
	// [ServiceConfig.KnowledgeBases]).
	KnowledgeBases KBNamespaces
	KBNamespace    string
	// RunRules are the run's own permission rules (--allowed-tools …);
	// Hidden the tools a bare --disallowed-tools names.
	RunRules []permission.Rule
	Hidden   []string
	// RuleStore, when set, keeps the "always" answers in place of the
	// workspace's .rein/settings.local.yaml and the user's trust file: a
	// server's runs keep them as their caller's rules in the ledger
	// (API-9). nil keeps them as the CLI does.
	RuleStore permission.RuleStore
	// CallerRules are the rules a server's caller kept in earlier runs
	// (Source caller): they apply to this engine's policy only, and, like
	// every rule, never make a deny or a built-in protection weaker.
	CallerRules []permission.Rule
	// NoTools gives the model no tools at all (a chat workspace, WS-2:
	// the server's chat workspaces, or `kind: chat` in the settings).
	NoTools bool
	// MCP, when set, shares MCP connections among setups (the server's);
	// nil starts the servers for this engine and stops them on Close.
	MCP *MCPPool
	// NoUserMemory leaves the user's memory (profile and notes under the
	// configuration directory) out: a server's callers are other people
	// than the user running it. The workspace's memory still applies.
	NoUserMemory bool
	// Persona, when set, returns the persona section of the main agent's
	// system prompt (GW-1, the gateway's personal agent), read at each
	// run's start.
	Persona func() string
	// Agent names the agent definition the session runs as (AGENT-1,
	// `rein run --agent`): its prompt replaces rein's instructions, and its
	// tools, permission mode (never looser than the configuration's), model
	// and max turns apply unless a flag or variable sets them. "" runs
	// rein's own.
	Agent string
	// Audit, when set, opens the audit trail of a session (the server's
	// ledger); nil writes audit.jsonl and hooks.jsonl into its directory.
	Audit func(s *session.Session) (permission.Auditor, hook.Auditor, error)
	// UserAgent names rein to web servers (web_fetch).
	UserAgent string
	Getenv    func(string) string
	Logger    *slog.Logger
	// Notice receives notes for the user (a sandbox fallback, a tool
	// left out); nil logs them as warnings.
	Notice func(msg string)
	Now    func() time.Time
	// Tenancy, when set, confines the tools to the workspace as a
	// server's runs need (SPEC API-9; see [Tenancy]).
	Tenancy *Tenancy

	// heldJobs, set by a [Service], keeps each session's background jobs
	// beyond the run's Conversation (servicejobs.go).
	heldJobs *jobRegistry
}

// Setup is what a workspace and its configuration determine, built once
// and not changed after: the model registry, the permission policy, the
// hooks, the memory store, the MCP connections, the main agent's
// definition, and — once [Setup.WithModel] chose one — the model and the
// system prompt's parts. Changing the model makes a new Setup sharing the
// rest. Its methods are safe for concurrent use; the conversations built
// on it ([Setup.NewConversation]) hold what changes.
type Setup struct {
	cfg    Config
	ev     *workspace.Effective
	ws     workspace.Workspace
	reg    *registry.Registry
	logger *slog.Logger

	// main is the agent definition the session runs as (Config.Agent).
	main *workspace.Agent
	// depth is how deep in a tree of agents this process runs (DepthEnv).
	depth int

	policy *permission.Engine
	// gate is what decides the main agent's calls: policy, or policy
	// within the main agent's tool rules (agentscope.go). mainRules is
	// set when policy holds the main agent's own rules, which its
	// sub-agents must not inherit.
	gate      permission.Policy
	mainRules bool
	// subs caches the policies of sub-agents asking for a tighter mode.
	subs *policyCache
	// hookRegs are the hooks that apply; each conversation registers them
	// with its own audit trail.
	hookRegs []hook.Registration
	// memory is the cross-session memory (nil when off).
	memory *memory.Store
	// mcp connects to the MCP servers, once, for every conversation.
	mcp *mcpConn

	// What WithModel sets. agentsMD is the workspace's AGENTS.md (or
	// CLAUDE.md), named agentsPath; skillIdx the skill index; every prompt
	// of the setup's agents, sub-agents' too, shares them. scanWarnings
	// are the instructions that look like prompt injections.
	model                          *Model
	agentsMD, agentsPath, skillIdx string
	scanWarnings                   []string
}

// policyCache holds the permission policies of sub-agents, by mode, and
// those of agents with tool rules, by agent and mode.
type policyCache struct {
	mu     sync.Mutex
	m      map[string]*permission.Engine
	scoped map[string]*scopedPolicy
}

// NewSetup builds what the workspace of cfg determines: its model
// registry, permission policy, hooks and memory. The model is chosen by
// [Setup.WithModel], once a session to resume is known.
func NewSetup(cfg Config) (*Setup, error) {
	if cfg.Loaded == nil || cfg.Store == nil || cfg.Resolve == nil {
		return nil, fmt.Errorf("runner: Config needs Loaded, Store and Resolve")
	}
	if cfg.Getenv == nil {
		cfg.Getenv = os.Getenv
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	l := cfg.Loaded
	if l.Effective != nil && l.Effective.String(workspace.WorkspaceKind) == "chat" {
		cfg.NoTools = true // a chat workspace: prompt, agent and model only (WS-2)
	}
	rc, err := l.RegistryConfig(cfg.Getenv)
	if err != nil {
		return nil, fmt.Errorf("models: %w", err)
	}
	reg, err := registry.New(rc)
	if err != nil {
		return nil, fmt.Errorf("provider profiles: %w", err)
	}
	s := &Setup{cfg: cfg, ev: l.Effective, ws: l.Workspace, reg: reg, logger: cfg.Logger, subs: &policyCache{}, mcp: &mcpConn{}}
	if s.depth, err = baseDepth(cfg.Getenv); err != nil {
		return nil, err
	}
	if max := s.maxDepth(); s.depth > max {
		return nil, fmt.Errorf("agents nest %d deep here (%s), beyond %s %d: a tool of a sub-agent started rein again", s.depth, DepthEnv, workspace.SubagentMaxDepth, max)
	}
	if cfg.Agent != "" {
		defs := l.Definitions()
		a, ok := defs.Agent(cfg.Agent)
		if !ok {
			return nil, unknownAgent(cfg.Agent, defs.Agents)
		}
		s.main = &a
	}
	if err := s.buildPolicy(); err != nil {
		return nil, err
	}
	s.memory = s.newMemory()
	if err := s.loadHooks(); err != nil {
		return nil, err
	}
	return s, nil
}

// note passes a note for the user to the front end.
func (s *Setup) note(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	if s.cfg.Notice != nil {
		s.cfg.Notice(msg)
		return
	}
	s.logger.Warn(msg)
}

// Registry returns the model registry of the configuration.
func (s *Setup) Registry() *registry.Registry { return s.reg }

// Workspace returns the workspace the setup runs in.
func (s *Setup) Workspace() workspace.Workspace { return s.ws }

// Policy returns the permission policy.
func (s *Setup) Policy() *permission.Engine { return s.policy }

// Model returns the model of the setup's runs (nil before WithModel).
func (s *Setup) Model() *Model { return s.model }

// Store returns the session store.
func (s *Setup) Store() session.Store { return s.cfg.Store }

// WithModel returns a Setup that runs the model spec names, sharing
// everything else with s: the workspace's instructions and skill index
// are read again, for the model's prompt.
func (s *Setup) WithModel(spec string) (*Setup, error) {
	m, err := s.cfg.Resolve(s.reg, spec)
	if err != nil {
		return nil, err
	}
	if m.Warning != "" {
		s.note("%s", m.Warning)
	}
	text, name, err := s.ws.Instructions()
	if err != nil {
		return nil, fmt.Errorf("workspace instructions: %w", err)
	}
	n := *s
	n.model, n.agentsMD, n.agentsPath = m, text, name
	n.skillIdx = n.skillIndex()
	n.scanWarnings = ScanInstructions(s.ws.Root, text, name, s.cfg.Loaded.Definitions())
	return &n, nil
}

// ModelSpec is the model string to use: a flag or variable wins, then the
// model sess (nil for a new session) last ran, then the settings and the
// built-in default.
func (s *Setup) ModelSpec(sess *session.Session) string {
	v := s.ev.Get(workspace.Model)
	if s.main != nil && s.main.Model != "" && v.Source != workspace.SourceFlag && v.Source != workspace.SourceEnv {
		return s.main.Model
	}
	// A resumed session keeps the model (and profile) it ran with unless
	// this invocation names one (SPEC SESS-3).
	if v.Source != workspace.SourceFlag && v.Source != workspace.SourceEnv && sess != nil && sess.Model != "" {
		return sess.Model
	}
	return v.Value
}

// systemPrompt assembles the main agent's system prompt over memory, the
// memory section of the run's start: rein's instructions (or
// --system-prompt, or the agent definition's), the environment, the
// workspace's AGENTS.md (CLAUDE.md as a fallback) verbatim, and
// --append-system-prompt. A replayed run uses the recorded one.
func (s *Setup) systemPrompt(memory string) string {
	if f := s.model.Frame; f != nil {
		return f.System
	}
	instructions := s.ev.String(workspace.SystemPrompt)
	if s.main != nil && instructions == "" {
		instructions = s.main.Prompt
	}
	parts := s.promptParts(instructions)
	parts.Memory = memory // the main agent's only: sub-agents get a task, not the user's profile
	if s.cfg.Persona != nil {
		parts.Persona = s.cfg.Persona()
	}
	return agent.BuildSystem(parts)
}

// promptParts are the parts of a system prompt over instructions (rein's
// own when empty): the environment, AGENTS.md as read by WithModel, and
// --append-system-prompt.
func (s *Setup) promptParts(instructions string) agent.PromptParts {
	_, gitErr := os.Lstat(filepath.Join(s.ws.Root, ".git"))
	env := agent.Environment{WorkDir: s.ws.Root, Platform: runtime.GOOS + "/" + runtime.GOARCH, Shell: "bash", GitRepo: gitErr == nil}
	if s.cfg.NoTools {
		env = agent.Environment{Platform: runtime.GOOS + "/" + runtime.GOARCH}
	}
	if m := s.model; m != nil && m.Frame != nil {
		env = recordedEnv(m.Frame.System, env)
	}
	return agent.PromptParts{Instructions: instructions, Env: env, AgentsMD: s.agentsMD, AgentsPath: s.agentsPath,
		Skills: s.skillIdx, Append: s.ev.String(workspace.AppendSystemPrompt)}
}

// recordedEnv is env as the system prompt of a recording describes it
// (the "# Environment" lines of agent.BuildSystem): a replayed run's
// sub-agents describe the recording machine, as its main prompt does, so
// a cassette plays wherever it is cloned.
func recordedEnv(system string, env agent.Environment) agent.Environment {
	_, section, ok := strings.Cut(system, "\n# Environment\n")
	if !ok {
		return env
	}
	section, _, _ = strings.Cut(section, "\n\n")
	for _, line := range strings.Split(section, "\n") {
		k, v, _ := strings.Cut(line, ": ")
		switch k {
		case "Working directory":
			env.WorkDir = v
		case "Platform":
			env.Platform = v
		case "Git repository":
			env.GitRepo = v == "yes"
		}
	}
	return env
}

// buildPolicy builds the permission policy from every settings layer, the
// caller's kept rules and the run's rules; "always" answers are kept in
// Config.RuleStore, by default .rein/settings.local.yaml.
func (s *Setup) buildPolicy() error {
	mode := s.ev.String(workspace.PermissionMode)
	var sc agentScope
	if s.main != nil {
		mode = tighterMode(mode, s.main.PermissionMode)
		sc = scopeOf(s.main, s.mayPreapprove(s.main))
	}
	extra := slices.Concat(sc.deny, sc.allow)
	p, err := s.newPolicy(permission.Mode(mode), extra...)
	if err != nil {
		return err
	}
	s.policy, s.gate, s.mainRules = p, p, len(extra) > 0
	if len(sc.only) > 0 || sc.agents != nil {
		if s.gate, err = s.scope(s.main.Name, p, sc); err != nil {
			return err
		}
	}
	return nil
}

// newPolicy builds the permission policy of every settings layer, the
// caller's kept rules, the run's rules and extra (an agent's), under mode.
func (s *Setup) newPolicy(mode permission.Mode, extra ...permission.Rule) (*permission.Engine, error) {
	store := s.cfg.RuleStore
	if store == nil {
		store = s.cfg.Loaded.RuleStore()
	}
	run := permission.Settings{Mode: mode, AskTimeout: s.ev.Duration(workspace.AskTimeout),
		Rules: slices.Concat(s.cfg.CallerRules, s.cfg.RunRules, extra), Store: store, SensitiveHidden: s.sandboxed(),
		Tenant: s.cfg.Tenancy != nil && s.cfg.Tenancy.RemoteCallers}
	p, err := permission.NewPolicy(s.cfg.Loaded.Permissions(run))
	if err != nil {
		return nil, fmt.Errorf("permissions: %w", err)
	}
	return p, nil
}

// loadHooks reads the hooks of the user (hooks.yaml) and, once the
// workspace is trusted, the workspace's (.rein/hooks.yaml) and Claude
// Code's (.claude/settings.json), and checks them. They get a clean
// environment: the base set and the variables each names.
func (s *Setup) loadHooks() error {
	regs, err := s.cfg.Loaded.HookRegistrations(s.ws.Root, s.cfg.Getenv) // a workspace's re-check the trust
	if err != nil {
		return fmt.Errorf("hooks: %w", err)
	}
	if err := hook.NewRegistry(hook.Options{}).Register(regs...); err != nil {
		return fmt.Errorf("hooks: %w", err)
	}
	s.hookRegs = regs
	return nil
}

// HasHooks reports whether any hook is registered.
func (s *Setup) HasHooks() bool { return len(s.hookRegs) > 0 }

// Close stops the MCP servers the setup started (not a shared pool's).
func (s *Setup) Close() error { return s.mcp.close() }
