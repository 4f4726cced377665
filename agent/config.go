package agent

import (
	"context"
	"log/slog"
	"time"

	"github.com/reinhq/rein/llm"
	"github.com/reinhq/rein/tool"
)

// Config is what an [Agent] needs. The zero value of every optional field
// means its default.
type Config struct {
	// Provider is the model; wrap it with llm.Retrying for the retry policy
	// (New does so unless NoRetry is set).
	Provider llm.Provider
	// ProviderName and Model name the model; ProviderName is what the provider
	// stamps on its replies (PROV-5).
	ProviderName string
	Model        string
	// Caps says what the model accepts.
	Caps Caps
	// System is the system prompt, byte-identical across the turns of a
	// session (PROV-6); see [BuildSystem].
	System string
	// Tools is every tool the model may call; nil means none.
	Tools *tool.Set
	// MaxTurns bounds the model calls of one run (default 100).
	MaxTurns int
	// Timeout is the wall-clock budget of one run; 0 means none.
	Timeout time.Duration
	// TokenBudget and CostBudget bound what one run may spend, its
	// sub-agents' runs included: tokens sent and received (cache reads
	// count), and USD by Price. Once over, the run ends with
	// [ReasonBudget] before its next model call; 0 means no bound.
	TokenBudget int64
	CostBudget  float64
	// ToolTimeout returns the per-call timeout of a tool by name and
	// origin (SPEC TOOL-2); 0, or a nil func, leaves a call to its own
	// limits (bash's timeout, an MCP call's). A call that runs out gets an
	// error result saying so.
	ToolTimeout func(name string, origin tool.Origin) time.Duration
	// MaxParallel bounds concurrency-safe tools running at once (default 8).
	MaxParallel int
	// MaxTokens and Thinking are passed on every model request.
	MaxTokens int
	Thinking  *llm.ThinkingConfig
	// Retry is the model-call retry policy; NoRetry disables it (the
	// provider retries on its own, or tests want raw failures).
	Retry   llm.RetryPolicy
	NoRetry bool
	// Permissions gates every tool call; nil allows everything.
	Permissions Permissions
	// Hooks observes and intercepts the run; nil runs none.
	Hooks Hooks
	// Compactor keeps the history inside the context window; nil never
	// compacts (a context overflow then ends the run).
	Compactor Compactor
	// Price returns the cost of a usage in USD; nil reports no cost.
	Price func(llm.Usage) float64
	// Logger receives the run's logs; nil discards them.
	Logger *slog.Logger
	// Now is the clock; nil uses time.Now.
	Now func() time.Time
	// Notices, when set, is asked before each model call for what happened
	// outside the run that the model should know now — a background job
	// ended (SPEC TOOL-8). Each notice is added as a text block to the user
	// message the loop is about to append (the prompt, or the tool
	// results) and stored with it: the history stays append-only, so the
	// prompt cache keeps its prefix. See notice.go.
	Notices func() []string
	// Reminder, when set, returns a note for the model appended, like the
	// task focus, to the newest user message of each request — after the
	// cache-stable prefix, never stored — or "" for none. The runner's says
	// the session is in plan mode (SPEC PERM-7) while it is.
	Reminder func() string
	// Warnings are reported in every run_start: what the caller's
	// configuration ignored, such as an untrusted workspace's extras
	// (SPEC PERM-5).
	Warnings []string
}

// Caps says what the model cannot accept (from the registry's capability
// table); the zero value sends everything as it is.
type Caps struct {
	// NoVision: the model reads no images; they become text notes.
	NoVision bool
	// NoToolResultImages: images may not travel inside tool results; they are
	// moved into a user message right after the results (SPEC LOOP-8).
	NoToolResultImages bool
}

// Input is one run's input.
type Input struct {
	SessionID, RunID string
	// History is the conversation so far, healed (SPEC SESS-2).
	History []llm.Message
	// Prompt is the new user message; nil continues a pending conversation
	// whose last message holds tool results (SPEC LOOP-9).
	Prompt *llm.Message
	// WorkDir is the workspace the tools work in; SessionDir is private to
	// the session.
	WorkDir, SessionDir string
	// Focus is the task state the session carried so far (LOOP-11).
	Focus Focus
	// Healed says what healing fixed when the session was loaded (SESS-2);
	// run_start reports it.
	Healed string
	// Depth is how deep in a tree of agents the run is: 0 for a top run,
	// 1 for its sub-agents (AGENT-4). Tools get it in tool.Call.
	Depth int
	// HookContext is what hooks the front end fired before the run added
	// (session_start of a resumed session, SPEC HOOK-2): the prompt
	// carries it, as it carries what the run's own hooks add.
	HookContext string
}

// Agent runs conversations. It is safe for concurrent use: each Run has its
// own state.
type Agent struct {
	cfg Config
}

// New returns an agent.
func New(cfg Config) *Agent {
	if cfg.MaxTurns <= 0 {
		cfg.MaxTurns = 100
	}
	if cfg.MaxParallel <= 0 {
		cfg.MaxParallel = 8
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if !cfg.NoRetry && cfg.Provider != nil {
		cfg.Provider = llm.Retrying(cfg.Provider, cfg.Retry)
	}
	return &Agent{cfg: cfg}
}

// Compactor keeps a conversation inside the model's context window (SPEC
// CTX-2 … CTX-6). The loop calls Fit before every model request, counting the
// newest tool results, and Overflow when the provider still says the prompt
// is too long.
//
// req.Messages is the session's history as stored, before any per-model
// transformation; focus is the run's task state, for summaries to keep. A
// Compactor holds per-conversation state (estimates, reported usage): use one
// per session.
type Compactor interface {
	// Fit returns the history to send: the same slice when it fits, or a
	// compacted one with a report. It never breaks the pairing invariant.
	Fit(ctx context.Context, req *llm.Request, focus *Focus) (history []llm.Message, report *CompactionEvent, err error)
	// Overflow compacts after the provider rejected req as too long.
	Overflow(ctx context.Context, req *llm.Request, focus *Focus) (history []llm.Message, report *CompactionEvent, err error)
}

// UsageObserver is implemented by compactors that learn from the usage the
// provider reports (SPEC CTX-1: reported usage replaces the estimate); the
// loop calls it after every model call with the messages that were sent.
type UsageObserver interface {
	ObserveUsage(sent []llm.Message, u llm.Usage)
}

// OverflowObserver is implemented by compactors that learn from a
// context-overflow error (SPEC PROV-7: the provider's count is the truth);
// the loop calls it with the history that was sent and the error, just before
// it calls Compactor.Overflow.
type OverflowObserver interface {
	ObserveOverflow(sent []llm.Message, err error)
}
