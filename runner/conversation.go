package runner

import (
	"context"
	"slices"
	"sync"

	"github.com/reinhq/rein/agent"
	"github.com/reinhq/rein/compact"
	"github.com/reinhq/rein/hook"
	"github.com/reinhq/rein/llm"
	"github.com/reinhq/rein/permission"
	"github.com/reinhq/rein/session"
	"github.com/reinhq/rein/tool"
	"github.com/reinhq/rein/tool/builtin"
	"github.com/reinhq/rein/workspace"
)

// Conversation is one session's conversation over a [Setup]: the session
// (new, resumed and healed), its recorder, history and focus, what its
// runs used, and the tools bound to its directory. It runs prompts
// ([Conversation.Submit]) and compacts; every durable event is journaled
// through its [Recorder] before it is yielded. A Conversation binds one
// session in its life: a new one on its first run ([Conversation.Create])
// or a stored one ([Conversation.Resume]). One goroutine uses it at a
// time; Usage and Session may be read from others.
type Conversation struct {
	s *Setup

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
	// hooks are the setup's hooks, audited into this session's trail.
	hooks   *hook.Registry
	hookLog lockedFile
	// startContext is what session_start hooks of a resumed session added;
	// the next run's prompt carries it.
	startContext string
	// transcriptMu guards transcriptSeq, the last entry copied to the
	// transcript hooks read (hookinput.go).
	transcriptMu  sync.Mutex
	transcriptSeq int64
	// hookNoteMu orders the notices of hooks fired by parallel tool calls.
	hookNoteMu sync.Mutex
	// mu guards sess, usage and cost, read by other goroutines.
	mu    sync.Mutex
	usage llm.Usage
	cost  float64

	// system is the system prompt of the runs, built over memorySection,
	// the memory of the last run's start; memoryWarnings are what reading
	// it found (entries refused, files cut).
	system         string
	memorySection  string
	memoryWarnings []string

	// kb is the kb_search tool, when the workspace has a knowledge base.
	kb        *kbTool
	tracker   *builtin.FileTracker
	todos     *builtin.Todos
	tools     *tool.Set
	compactor *compact.Compactor
	// jobs are the session's background jobs (jobs.go), nil without.
	jobs *builtin.Jobs
	// grant are the allow rules of the run going on only: a slash
	// command's allowed-tools (prelude.go).
	grant []permission.Rule
	// releaseJobs gives a Service's held jobs back (nil: c owns jobs).
	releaseJobs func()
	// files holds the session's text files besides the disk (an editor's
	// buffers, see [Conversation.UseFiles]); nil: the disk alone.
	files FileAccess
	// effort is the reasoning effort of the next runs ("": the
	// configuration's thinking), see [Conversation.UseEffort].
	effort string
}

// NewConversation starts a conversation over s; its first run creates
// its session, unless [Conversation.Resume] binds a stored one first.
func (s *Setup) NewConversation() *Conversation {
	c := &Conversation{s: s}
	if len(s.hookRegs) > 0 {
		c.hooks = hook.NewRegistry(hook.Options{Logger: s.logger, Auditor: hook.AuditFunc(c.hookLog.write)})
		if err := c.hooks.Register(s.hookRegs...); err != nil { // checked by NewSetup
			s.logger.Error("hooks left out", "err", err)
			c.hooks = nil
		}
	}
	return c
}

// Setup returns what the conversation's runs are set up with.
func (c *Conversation) Setup() *Setup { return c.s }

// UseModel switches the model of the next runs (the terminal UI's /model).
func (c *Conversation) UseModel(spec string) error {
	n, err := c.s.WithModel(spec)
	if err != nil {
		return err
	}
	c.s, c.system, c.compactor = n, "", nil
	return nil
}

// Tools returns the tools of the bound session (nil before one is bound).
func (c *Conversation) Tools() *tool.Set { return c.tools }

// History returns the conversation so far.
func (c *Conversation) History() []llm.Message { return c.history }

// Session returns the bound session, nil before the first run of a new
// one.
func (c *Conversation) Session() *session.Session {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.sess
}

// SessionID returns the bound session's id, "" before the first run.
func (c *Conversation) SessionID() string {
	if s := c.Session(); s != nil {
		return s.ID
	}
	return ""
}

// Usage returns what the session's runs used and cost so far.
func (c *Conversation) Usage() (llm.Usage, float64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.usage, c.cost
}

// Agent builds the agent of one run; approver answers its permission
// questions (nil: every question is denied, as in a headless run).
func (c *Conversation) Agent(approver permission.Approver) *agent.Agent {
	s, m := c.s, c.s.model
	if s.main != nil && s.main.PermissionMode == workspace.AgentModeDontAsk {
		approver = nil // Claude Code's dontAsk: what is not pre-approved is denied, unasked
	}
	if c.compactor == nil {
		c.compactor = compact.New(compact.Config{ContextWindow: m.Caps.ContextWindow, MaxOutput: m.Caps.MaxOutput,
			Provider: llm.Retrying(m.Provider, llm.RetryPolicy{}), Model: m.Name,
			Focus: func() agent.Focus { return c.focus }, Logger: s.logger})
	}
	provider, price := c.modelCalls(m)
	cfg := agent.Config{
		Provider: c.compactor.Observe(provider), ProviderName: m.ProviderName, Model: m.Name,
		Caps:   agent.Caps{NoVision: !m.Caps.Vision, NoToolResultImages: !m.Caps.ToolResultImages},
		System: c.system, Tools: c.runTools(approver), MaxTurns: s.maxTurns(), Timeout: s.ev.Duration(workspace.Timeout),
		ToolTimeout: s.toolTimeout,
		MaxTokens:   s.ev.Int(workspace.MaxTokens), Compactor: c.compactor, Price: price, Logger: s.logger,
		Permissions: &agent.Gate{Policy: c.granted(c.grant), Approver: approver, Rules: s.policy, Auditor: c.audit,
			Timeout: s.policy.AskTimeout(), Logger: s.logger, Now: s.cfg.Now},
		Notices:  c.notices(),
		Reminder: c.planReminder,
		Now:      s.cfg.Now, Warnings: slices.Concat(s.cfg.Loaded.Warnings, s.reg.Warnings(), c.agentWarnings(), s.scanWarnings, c.memoryWarnings, s.mcp.warnings),
	}
	cfg.Thinking = c.thinking(m, s.ev.Int(workspace.ThinkingBudget))
	if f := m.Frame; f != nil {
		cfg.MaxTokens, cfg.Thinking = f.MaxTokens, f.Thinking
	}
	if c.hooks != nil {
		cfg.Hooks = sessionHooks{c}
	}
	return agent.New(cfg)
}

// FireHook runs the hooks of an event the front end owns (a manual
// compaction, a resumed session) for the bound session. A hook's failure
// is logged by the registry, never returned.
func (c *Conversation) FireHook(ctx context.Context, ev hook.Event, in hook.Input) hook.Outcome {
	if c.hooks == nil || !c.hooks.Has(ev) {
		return hook.Outcome{}
	}
	in.SessionID, in.CWD = c.SessionID(), c.s.ws.Root
	out, _ := sessionHooks{c}.Fire(ctx, ev, in)
	return out
}

// SessionStarted fires session_start with the way the session started
// (SPEC HOOK-1): "resume" when a stored session was loaded. A new
// session's first run fires it with "startup" from the run loop.
func (c *Conversation) SessionStarted(ctx context.Context, source string) {
	out := c.FireHook(ctx, hook.SessionStart, hook.Input{Source: source})
	c.startContext = out.AdditionalContext
}

// EndSession fires the session_end hooks.
func (c *Conversation) EndSession(ctx context.Context, reason string) {
	if c.hooks == nil || c.Session() == nil || c.s.model == nil {
		return
	}
	c.Agent(nil).EndSession(ctx, c.SessionID(), c.s.ws.Root, reason)
}
