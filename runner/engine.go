package runner

import (
	"context"
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
	"github.com/reinhq/rein/compact"
	"github.com/reinhq/rein/hook"
	"github.com/reinhq/rein/llm"
	"github.com/reinhq/rein/llm/registry"
	"github.com/reinhq/rein/memory"
	"github.com/reinhq/rein/permission"
	"github.com/reinhq/rein/session"
	"github.com/reinhq/rein/tool"
	"github.com/reinhq/rein/tool/builtin"
	"github.com/reinhq/rein/tool/mcptool"
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
	// MCP, when set, shares MCP connections among engines (the server's);
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
}

// Engine is the runtime of one conversation at a time in one workspace
// (docs/architecture.md, "Fronts and the one composition root"): it builds the agent —
// model, tools, permissions, hooks, compactor, AGENTS.md — binds a session
// (new, resumed and healed), runs prompts in it, and journals every durable
// event through its Recorder. The interactive CLI, rein run and the
// server's runner all drive sessions through it. One goroutine uses it at a
// time; Usage and Session may be read from others.
type Engine struct {
	cfg    Config
	ev     *workspace.Effective
	ws     workspace.Workspace
	reg    *registry.Registry
	logger *slog.Logger

	model  *Model
	system string
	// agentsMD is the workspace's AGENTS.md (or CLAUDE.md), named agentsPath;
	// skillIdx the skill index. Every prompt of the engine's agents, its
	// sub-agents' too, shares them: they are built once, with the model.
	agentsMD, agentsPath, skillIdx string

	policy  *permission.Engine
	hooks   *hook.Registry
	hookLog lockedFile

	sess    *session.Session // nil until the first run of a new session
	rec     *Recorder
	sessDir string
	history []llm.Message
	focus   agent.Focus
	// healed says what healing fixed when the session was loaded; the
	// next run's run_start carries it (SESS-2), then it is cleared.
	healed string
	audit  permission.Auditor
	closer func() error
	// mu guards sess, usage and cost, read by other goroutines.
	mu    sync.Mutex
	usage llm.Usage
	cost  float64

	// main is the agent definition the session runs as (Config.Agent).
	main *workspace.Agent
	// depth is how deep in a tree of agents this process runs (DepthEnv);
	// subPolicies are the policies of sub-agents asking for a tighter mode.
	depth       int
	subMu       sync.Mutex
	subPolicies map[string]*permission.Engine

	// mcp connects to the MCP servers (once: mcpDone); ownMCP when this
	// engine started it.
	mcp             *mcptool.Manager
	mcpDone, ownMCP bool
	// warnings are what run_start reports besides the configuration's: MCP
	// servers that did not start; scanWarnings the instructions that look
	// like prompt injections (ScanInstructions).
	warnings, scanWarnings []string

	// memory is the cross-session memory (nil when off); memorySection is
	// what the system prompt holds of it, memoryWarnings what reading it
	// found (entries refused, files cut), both as of the last run's start.
	memory         *memory.Store
	memorySection  string
	memoryWarnings []string

	// kb is the kb_search tool, when the workspace has a knowledge base.
	kb        *kbTool
	tracker   *builtin.FileTracker
	todos     *builtin.Todos
	asker     askerBox
	tools     *tool.Set
	compactor *compact.Compactor
}

// New builds the runtime of a workspace: its permission policy and hooks.
// The model is chosen by [Engine.UseModel], once a session to resume is
// known.
func New(cfg Config) (*Engine, error) {
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
	reg, err := registry.New(registry.Config{Profiles: l.Profiles.Profiles, Models: l.Models, Getenv: cfg.Getenv})
	if err != nil {
		return nil, fmt.Errorf("provider profiles: %w", err)
	}
	e := &Engine{cfg: cfg, ev: l.Effective, ws: l.Workspace, reg: reg, logger: cfg.Logger}
	if e.depth, err = baseDepth(cfg.Getenv); err != nil {
		return nil, err
	}
	if max := e.maxDepth(); e.depth > max {
		return nil, fmt.Errorf("agents nest %d deep here (%s), beyond %s %d: a tool of a sub-agent started rein again", e.depth, DepthEnv, workspace.SubagentMaxDepth, max)
	}
	if cfg.Agent != "" {
		defs := l.Definitions()
		a, ok := defs.Agent(cfg.Agent)
		if !ok {
			return nil, unknownAgent(cfg.Agent, defs.Agents)
		}
		e.main = &a
	}
	if err := e.buildPolicy(); err != nil {
		return nil, err
	}
	e.memory = e.newMemory()
	if err := e.loadHooks(); err != nil {
		return nil, err
	}
	return e, nil
}

// note passes a note for the user to the front end.
func (e *Engine) note(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	if e.cfg.Notice != nil {
		e.cfg.Notice(msg)
		return
	}
	e.logger.Warn(msg)
}

// Registry returns the model registry of the configuration.
func (e *Engine) Registry() *registry.Registry { return e.reg }

// Workspace returns the workspace the engine runs in.
func (e *Engine) Workspace() workspace.Workspace { return e.ws }

// Policy returns the permission policy.
func (e *Engine) Policy() *permission.Engine { return e.policy }

// Model returns the model of the next runs (nil before UseModel).
func (e *Engine) Model() *Model { return e.model }

// System returns the system prompt of the next runs.
func (e *Engine) System() string { return e.system }

// Tools returns the tools of the bound session (nil before one is bound).
func (e *Engine) Tools() *tool.Set { return e.tools }

// History returns the conversation of the bound session.
func (e *Engine) History() []llm.Message { return e.history }

// Store returns the session store.
func (e *Engine) Store() session.Store { return e.cfg.Store }

// Session returns the bound session, nil before the first run of a new
// one.
func (e *Engine) Session() *session.Session {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.sess
}

// SessionID returns the bound session's id, "" before the first run.
func (e *Engine) SessionID() string {
	if s := e.Session(); s != nil {
		return s.ID
	}
	return ""
}

// Usage returns what the bound session's runs used and cost so far.
func (e *Engine) Usage() (llm.Usage, float64) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.usage, e.cost
}

// UseModel resolves the model of the next runs.
func (e *Engine) UseModel(spec string) error {
	m, err := e.cfg.Resolve(e.reg, spec)
	if err != nil {
		return err
	}
	if m.Warning != "" {
		e.note("%s", m.Warning)
	}
	system, err := e.buildSystem(m)
	if err != nil {
		return err
	}
	e.model, e.system, e.compactor = m, system, nil
	return nil
}

// ModelSpec is the model string to use: an explicit setting wins, then the
// model the session last ran, then the built-in default.
func (e *Engine) ModelSpec() string {
	v := e.ev.Get(workspace.Model)
	if e.main != nil && e.main.Model != "" && v.Source != workspace.SourceFlag && v.Source != workspace.SourceEnv {
		return e.main.Model
	}
	if s := e.Session(); v.Source == workspace.SourceDefault && s != nil && s.Model != "" {
		return s.Model
	}
	return v.Value
}

// buildSystem assembles the system prompt: rein's instructions (or
// --system-prompt), the environment, the workspace's AGENTS.md (CLAUDE.md
// as a fallback) verbatim, and --append-system-prompt. A replayed run uses
// the recorded one.
func (e *Engine) buildSystem(m *Model) (string, error) {
	text, name, err := e.ws.Instructions()
	if err != nil {
		return "", fmt.Errorf("workspace instructions: %w", err)
	}
	e.agentsMD, e.agentsPath = text, name // sub-agents' prompts have them, replayed or not
	e.skillIdx = e.skillIndex()
	e.scanWarnings = ScanInstructions(e.ws.Root, text, name, e.cfg.Loaded.Definitions())
	if f := m.Frame; f != nil {
		return f.System, nil
	}
	instructions := e.ev.String(workspace.SystemPrompt)
	if e.main != nil && instructions == "" {
		instructions = e.main.Prompt
	}
	parts := e.promptParts(instructions)
	e.memorySection, e.memoryWarnings = e.readMemory()
	parts.Memory = e.memorySection // the main agent's only: sub-agents get a task, not the user's profile
	if e.cfg.Persona != nil {
		parts.Persona = e.cfg.Persona()
	}
	return agent.BuildSystem(parts), nil
}

// promptParts are the parts of a system prompt over instructions (rein's
// own when empty): the environment, AGENTS.md as read by buildSystem, and
// --append-system-prompt.
func (e *Engine) promptParts(instructions string) agent.PromptParts {
	_, gitErr := os.Lstat(filepath.Join(e.ws.Root, ".git"))
	env := agent.Environment{WorkDir: e.ws.Root, Platform: runtime.GOOS + "/" + runtime.GOARCH, Shell: "bash", GitRepo: gitErr == nil}
	if e.cfg.NoTools {
		env = agent.Environment{Platform: runtime.GOOS + "/" + runtime.GOARCH}
	}
	if m := e.model; m != nil && m.Frame != nil {
		env = recordedEnv(m.Frame.System, env)
	}
	return agent.PromptParts{Instructions: instructions, Env: env, AgentsMD: e.agentsMD, AgentsPath: e.agentsPath,
		Skills: e.skillIdx, Append: e.ev.String(workspace.AppendSystemPrompt)}
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
func (e *Engine) buildPolicy() error {
	mode := e.ev.String(workspace.PermissionMode)
	if e.main != nil {
		mode = tighterMode(mode, e.main.PermissionMode)
	}
	p, err := e.newPolicy(permission.Mode(mode))
	if err != nil {
		return err
	}
	e.policy = p
	return nil
}

// newPolicy builds the permission policy of every settings layer, the
// caller's kept rules and the run's rules, under mode.
func (e *Engine) newPolicy(mode permission.Mode) (*permission.Engine, error) {
	store := e.cfg.RuleStore
	if store == nil {
		store = e.cfg.Loaded.RuleStore()
	}
	run := permission.Settings{Mode: mode, AskTimeout: e.ev.Duration(workspace.AskTimeout),
		Rules: slices.Concat(e.cfg.CallerRules, e.cfg.RunRules), Store: store, SensitiveHidden: e.sandboxed(),
		Tenant: e.cfg.Tenancy != nil && e.cfg.Tenancy.RemoteCallers}
	p, err := permission.NewPolicy(e.cfg.Loaded.Permissions(run))
	if err != nil {
		return nil, fmt.Errorf("permissions: %w", err)
	}
	return p, nil
}

// loadHooks registers the hooks of the user (hooks.yaml) and, once the
// workspace is trusted, the workspace's (.rein/hooks.yaml) and Claude
// Code's (.claude/settings.json). They get a clean environment: the base
// set and the variables each names. Each run is audited.
func (e *Engine) loadHooks() error {
	regs, err := e.cfg.Loaded.HookRegistrations(e.ws.Root, e.cfg.Getenv) // a workspace's re-check the trust
	if err != nil {
		return fmt.Errorf("hooks: %w", err)
	}
	if len(regs) == 0 {
		return nil
	}
	reg := hook.NewRegistry(hook.Options{Logger: e.logger, Auditor: hook.AuditFunc(e.hookLog.write)})
	if err := reg.Register(regs...); err != nil {
		return fmt.Errorf("hooks: %w", err)
	}
	e.hooks = reg
	return nil
}

// HasHooks reports whether any hook is registered.
func (e *Engine) HasHooks() bool { return e.hooks != nil }

// Agent builds the agent of one run; approver answers its permission
// questions (nil: every question is denied, as in a headless run).
func (e *Engine) Agent(approver permission.Approver) *agent.Agent {
	m := e.model
	if e.compactor == nil {
		e.compactor = compact.New(compact.Config{ContextWindow: m.Caps.ContextWindow, MaxOutput: m.Caps.MaxOutput,
			Provider: llm.Retrying(m.Provider, llm.RetryPolicy{}), Model: m.Name,
			Focus: func() agent.Focus { return e.focus }, Logger: e.logger})
	}
	cfg := agent.Config{
		Provider: e.compactor.Observe(m.Provider), ProviderName: m.ProviderName, Model: m.Name,
		Caps:   agent.Caps{NoVision: !m.Caps.Vision, NoToolResultImages: !m.Caps.ToolResultImages},
		System: e.system, Tools: e.runTools(approver), MaxTurns: e.maxTurns(), Timeout: e.ev.Duration(workspace.Timeout),
		ToolTimeout: e.toolTimeout,
		MaxTokens:   e.ev.Int(workspace.MaxTokens), Compactor: e.compactor, Price: m.Caps.Price.Cost, Logger: e.logger,
		Permissions: &agent.Gate{Policy: e.policy, Approver: approver, Rules: e.policy, Auditor: e.audit,
			Timeout: e.policy.AskTimeout(), Logger: e.logger, Now: e.cfg.Now},
		Now: e.cfg.Now, Warnings: slices.Concat(e.cfg.Loaded.Warnings, e.scanWarnings, e.memoryWarnings, e.warnings),
	}
	if b := e.ev.Int(workspace.ThinkingBudget); b > 0 {
		cfg.Thinking = &llm.ThinkingConfig{BudgetTokens: b}
	}
	if f := m.Frame; f != nil {
		cfg.MaxTokens, cfg.Thinking = f.MaxTokens, f.Thinking
	}
	if e.hooks != nil {
		cfg.Hooks = e.hooks
	}
	return agent.New(cfg)
}

// FireHook runs the hooks of an event the front end owns (a manual
// compaction, a resumed session) for the bound session. A hook's failure
// is logged by the registry, never returned.
func (e *Engine) FireHook(ctx context.Context, ev hook.Event, in hook.Input) hook.Outcome {
	if e.hooks == nil || !e.hooks.Has(ev) {
		return hook.Outcome{}
	}
	in.SessionID, in.CWD = e.SessionID(), e.ws.Root
	out, _ := e.hooks.Fire(ctx, ev, in)
	return out
}

// SessionStarted fires session_start with the way the session started
// (SPEC HOOK-1): "resume" when a stored session was loaded. A new
// session's first run fires it with "startup" from the run loop.
func (e *Engine) SessionStarted(ctx context.Context, source string) {
	out := e.FireHook(ctx, hook.SessionStart, hook.Input{Source: source})
	if out.SystemMessage != "" {
		e.note("%s", out.SystemMessage)
	}
}

// EndSession fires the session_end hooks.
func (e *Engine) EndSession(ctx context.Context, reason string) {
	if e.hooks == nil || e.Session() == nil {
		return
	}
	e.Agent(nil).EndSession(ctx, e.SessionID(), e.ws.Root, reason)
}

// Close releases the bound session.
func (e *Engine) Close() error {
	e.Unbind()
	if e.ownMCP {
		return e.mcp.Close()
	}
	return nil
}
