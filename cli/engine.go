package cli

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/spf13/cobra"

	"github.com/reinhq/rein/agent"
	"github.com/reinhq/rein/compact"
	"github.com/reinhq/rein/hook"
	"github.com/reinhq/rein/internal/config"
	"github.com/reinhq/rein/llm"
	"github.com/reinhq/rein/llm/registry"
	"github.com/reinhq/rein/llm/replay"
	"github.com/reinhq/rein/permission"
	"github.com/reinhq/rein/runner"
	"github.com/reinhq/rein/session"
	"github.com/reinhq/rein/session/jsonl"
	"github.com/reinhq/rein/tool"
	"github.com/reinhq/rein/tool/builtin"
)

// engine is the machinery of one CLI session: configuration, model, tools,
// permissions, hooks and the session store. The terminal UI drives it as its
// Backend; rein run submits one prompt. One goroutine uses it at a time.
type engine struct {
	app    *App
	cfg    *config.Loaded
	ws     config.Workspace
	reg    *registry.Registry
	logger *slog.Logger
	logOut *swapWriter // where the logger writes: stderr, or a file under the terminal UI
	notice io.Writer   // where notes for the user go (stderr)

	model    *resolved
	record   string // --record
	cassette *replay.Recorder
	system   string

	runRules []permission.Rule
	hidden   []string
	policy   *permission.Engine
	hooks    *hook.Registry
	hookLog  lockedFile

	store   *jsonl.Store
	sess    *session.Session // nil until the first run of a new session
	rec     *runner.Recorder
	sessDir string
	history []llm.Message
	focus   agent.Focus
	// healed says what healing fixed when the session was loaded; the
	// next run's run_start carries it (SESS-2), then it is cleared.
	healed string
	audit  *permission.FileAuditor
	// usage and cost add up the session's runs; mu guards them, as the
	// terminal UI reads them for its status line.
	mu    sync.Mutex
	usage llm.Usage
	cost  float64

	tracker   *builtin.FileTracker
	todos     *builtin.Todos
	asker     askerBox
	tools     *tool.Set
	compactor *compact.Compactor
}

// newEngine loads the configuration and opens the session store. The
// model is resolved by [engine.useModel], after a session to resume is
// known. When the workspace brings extras the user has not trusted
// (SPEC PERM-5), ask, when set, asks whether to trust it; a headless run
// passes nil and goes on without them.
func (a *App) newEngine(cmd *cobra.Command, o *runOptions, notice io.Writer, ask trustAsker) (*engine, error) {
	dir := a.abs(o.cwd)
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return nil, usageErrorf("--cwd %s: not a directory", dir)
	}
	flags := o.settings(cmd)
	if err := checkFlags(flags); err != nil {
		return nil, err
	}
	opts := config.Options{WorkDir: dir, Getenv: a.getenv, Flags: flags}
	cfg, err := config.Load(opts)
	if err != nil {
		return nil, fail(ExitError, "configuration: %v", err)
	}
	cfg, asked, err := a.settleTrust(cmd.Context(), cfg, opts, ask)
	if err != nil {
		return nil, err
	}
	rules, hidden, err := o.rules()
	if err != nil {
		return nil, err
	}
	reg, err := registry.New(registry.Config{Profiles: cfg.Profiles.Profiles, Models: cfg.Models, Getenv: a.getenv})
	if err != nil {
		return nil, fail(ExitError, "provider profiles: %v", err)
	}
	store, err := jsonl.New(cfg.Effective.String(config.SessionsDir))
	if err != nil {
		return nil, fail(ExitError, "sessions: %v", err)
	}
	logOut := &swapWriter{w: notice}
	e := &engine{app: a, cfg: cfg, ws: cfg.Workspace, reg: reg, notice: notice, record: o.record,
		runRules: rules, hidden: hidden, store: store, logOut: logOut, logger: newLogger(logOut, a.getenv("REIN_LOG"))}
	for _, w := range cfg.Warnings {
		if asked && slices.Contains(cfg.Trust.Warnings, w) {
			continue // the question listed them
		}
		e.note("%s", w)
	}
	if err := e.buildPolicy(); err != nil {
		store.Close()
		return nil, err
	}
	if err := e.loadHooks(); err != nil {
		store.Close()
		return nil, err
	}
	return e, nil
}

// newLogger logs warnings (or the level REIN_LOG names) as text to w,
// without timestamps unless debugging.
func newLogger(w io.Writer, level string) *slog.Logger {
	var l slog.Level
	if l.UnmarshalText([]byte(level)) != nil || level == "" {
		l = slog.LevelWarn
	}
	opts := &slog.HandlerOptions{Level: l}
	if l > slog.LevelDebug {
		opts.ReplaceAttr = func(groups []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey && len(groups) == 0 {
				return slog.Attr{}
			}
			return a
		}
	}
	return slog.New(slog.NewTextHandler(w, opts))
}

// swapWriter is a writer whose destination can change while loggers hold
// it (stderr before the terminal UI starts, a log file while it runs).
type swapWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *swapWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}

func (s *swapWriter) set(w io.Writer) {
	s.mu.Lock()
	s.w = w
	s.mu.Unlock()
}

// useModel resolves the model to run: the configured one, or — when the
// configuration only has a default — the one the resumed session used.
func (e *engine) useModel(spec string) error {
	m, err := e.app.resolveModel(e.reg, spec)
	if err != nil {
		return err
	}
	if e.record != "" {
		rec, err := replay.Create(m.Provider, e.app.abs(e.record), replay.RecorderOptions{Provider: m.ProviderName, Model: m.Name})
		if err != nil {
			return fail(ExitError, "--record: %v", err)
		}
		if e.cassette != nil {
			e.cassette.Close()
		}
		e.cassette = rec
		m.Provider = rec
	}
	if m.Warning != "" {
		e.note("%s", m.Warning)
	}
	e.model = m
	system, err := e.buildSystem()
	if err != nil {
		return err
	}
	e.system = system
	e.compactor = nil
	return nil
}

// modelSpec is the model string to use: an explicit setting wins, then the
// model the session last ran, then the built-in default.
func (e *engine) modelSpec() string {
	v := e.cfg.Effective.Get(config.Model)
	if v.Source == config.SourceDefault && e.sess != nil && e.sess.Model != "" {
		return e.sess.Model
	}
	return v.Value
}

// buildSystem assembles the system prompt: rein's instructions (or
// --system-prompt), the environment, the workspace's AGENTS.md (CLAUDE.md
// as a fallback) verbatim, and --append-system-prompt. A replayed run uses
// the recorded one.
func (e *engine) buildSystem() (string, error) {
	if f := e.model.Frame; f != nil {
		return f.System, nil
	}
	text, name, err := e.ws.Instructions()
	if err != nil {
		return "", fail(ExitError, "workspace instructions: %v", err)
	}
	_, gitErr := os.Lstat(filepath.Join(e.ws.Root, ".git"))
	return agent.BuildSystem(agent.PromptParts{
		Instructions: e.cfg.Effective.String(config.SystemPrompt),
		Env: agent.Environment{WorkDir: e.ws.Root, Platform: runtime.GOOS + "/" + runtime.GOARCH, Shell: "bash",
			GitRepo: gitErr == nil},
		AgentsMD: text, AgentsPath: name,
		Append: e.cfg.Effective.String(config.AppendSystemPrompt),
	}), nil
}

// buildPolicy builds the permission policy from every settings layer and
// the run's flags; "always" answers are kept in .rein/settings.local.yaml.
func (e *engine) buildPolicy() error {
	ev := e.cfg.Effective
	run := permission.Settings{Mode: permission.Mode(ev.String(config.PermissionMode)),
		AskTimeout: ev.Duration(config.AskTimeout), Rules: e.runRules,
		Store: e.cfg.RuleStore(), SensitiveHidden: e.sandboxed()}
	p, err := permission.NewPolicy(e.cfg.Permissions(run))
	if err != nil {
		return fail(ExitError, "permissions: %v", err)
	}
	e.policy = p
	return nil
}

// loadHooks registers the hooks of the user (hooks.yaml) and, once the
// workspace is trusted, the workspace's (.rein/hooks.yaml) and Claude
// Code's (.claude/settings.json). They get a clean environment: the base
// set and the variables each names. Each run is audited to the session's
// hooks.jsonl.
func (e *engine) loadHooks() error {
	specs, err := e.cfg.Hooks()
	if err != nil {
		return fail(ExitError, "hooks: %v", err)
	}
	if len(specs) == 0 {
		return nil
	}
	reg := hook.NewRegistry(hook.Options{Logger: e.logger, Auditor: hook.AuditFunc(e.hookLog.write)})
	if err := reg.Register(hook.Registrations(specs, e.ws.Root, e.app.getenv)...); err != nil {
		return fail(ExitError, "hooks: %v", err)
	}
	e.hooks = reg
	return nil
}

// agentFor builds the agent of one run; approver answers its permission
// questions (nil: every question is denied, as in a headless run).
func (e *engine) agentFor(approver permission.Approver) *agent.Agent {
	ev := e.cfg.Effective
	m := e.model
	if e.compactor == nil {
		e.compactor = compact.New(compact.Config{ContextWindow: m.Caps.ContextWindow, MaxOutput: m.Caps.MaxOutput,
			Provider: llm.Retrying(m.Provider, llm.RetryPolicy{}), Model: m.Name,
			Focus: func() agent.Focus { return e.focus }, Logger: e.logger})
	}
	cfg := agent.Config{
		Provider: e.compactor.Observe(m.Provider), ProviderName: m.ProviderName, Model: m.Name,
		Caps:   agent.Caps{NoVision: !m.Caps.Vision, NoToolResultImages: !m.Caps.ToolResultImages},
		System: e.system, Tools: e.tools, MaxTurns: ev.Int(config.MaxTurns), Timeout: ev.Duration(config.Timeout),
		MaxTokens: ev.Int(config.MaxTokens), Compactor: e.compactor, Price: m.Caps.Price.Cost, Logger: e.logger,
		Permissions: &agent.Gate{Policy: e.policy, Approver: approver, Rules: e.policy, Auditor: e.audit,
			Timeout: e.policy.AskTimeout(), Logger: e.logger, Now: e.app.Now},
		Now: e.app.Now, Warnings: e.cfg.Warnings,
	}
	if b := ev.Int(config.ThinkingBudget); b > 0 {
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

// fireHook runs the hooks of an event the front end owns (a manual
// compaction, a resumed session) for the current session. A hook's failure
// is logged by the registry, never returned.
func (e *engine) fireHook(ctx context.Context, ev hook.Event, in hook.Input) hook.Outcome {
	if e.hooks == nil || !e.hooks.Has(ev) {
		return hook.Outcome{}
	}
	in.SessionID, in.CWD = e.sessionID(), e.ws.Root
	out, _ := e.hooks.Fire(ctx, ev, in)
	return out
}

// sessionStarted fires session_start with the way the session started
// (SPEC HOOK-1): "resume" when a stored session was loaded (--resume,
// --continue, /resume). A new session's first run fires it with "startup"
// from the run loop.
func (e *engine) sessionStarted(ctx context.Context, source string) {
	out := e.fireHook(ctx, hook.SessionStart, hook.Input{Source: source})
	if out.SystemMessage != "" {
		e.note("%s", out.SystemMessage)
	}
}

// Close releases the session and finishes the cassette being recorded.
func (e *engine) Close() error {
	var errs []string
	if e.cassette != nil {
		if err := e.cassette.Close(); err != nil {
			errs = append(errs, "recording: "+err.Error())
		}
	}
	e.unbind()
	if err := e.store.Close(); err != nil {
		errs = append(errs, err.Error())
	}
	if len(errs) > 0 {
		return fail(ExitError, "%s", strings.Join(errs, "; "))
	}
	return nil
}

// lockedFile is a JSON Lines file written from several goroutines; it
// writes nothing while closed.
type lockedFile struct {
	mu sync.Mutex
	f  *os.File
}

func (l *lockedFile) open(path string) error {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	l.mu.Lock()
	l.f = f
	l.mu.Unlock()
	return nil
}

func (l *lockedFile) close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f != nil {
		l.f.Close()
		l.f = nil
	}
}

// write appends a hook record.
func (l *lockedFile) write(_ context.Context, r hook.Record) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return nil
	}
	line, err := jsonLine(r)
	if err != nil {
		return err
	}
	_, err = l.f.Write(line)
	return err
}

// note prints a note for the user.
func (e *engine) note(format string, args ...any) {
	fmt.Fprintf(e.notice, "rein: "+format+"\n", args...)
}
