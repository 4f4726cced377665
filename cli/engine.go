package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
	"strings"
	"sync"

	"github.com/spf13/cobra"

	"github.com/reinhq/rein/llm/registry"
	"github.com/reinhq/rein/llm/replay"
	"github.com/reinhq/rein/memory"
	"github.com/reinhq/rein/permission"
	"github.com/reinhq/rein/runner"
	"github.com/reinhq/rein/session"
	"github.com/reinhq/rein/session/jsonl"
	"github.com/reinhq/rein/workspace"
)

// engine is the CLI's side of a session: the runner's Conversation (the
// session, its journal and tools, over a Setup: model, permissions, hooks)
// plus what only a terminal front end has — where notes and logs go, the JSONL store, the
// cassette being recorded. The terminal UI drives it as its Backend; rein
// run submits one prompt. One goroutine uses it at a time.
type engine struct {
	*runner.Conversation
	app    *App
	cfg    *workspace.Loaded
	logger *slog.Logger
	logOut *swapWriter // where the logger writes: stderr, or a file under the terminal UI
	notice io.Writer   // where notes for the user go (stderr)

	record   string // --record
	cassette *replay.Recorder
	store    *jsonl.Store
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
	spec := flags[workspace.Model]
	if spec == "" {
		spec = a.getenv("REIN_MODEL")
	}
	opts := workspace.Options{WorkDir: dir, Getenv: a.getenv, Flags: flags, WithoutUser: a.replayIsolated(spec),
		MCPConfigs: o.cc.mcp, StrictMCP: o.cc.strictMCP}
	cfg, err := workspace.Load(opts)
	var mce *workspace.MCPConfigError
	if errors.As(err, &mce) {
		return nil, usageErrorf("%v", err) // --mcp-config: the caller's input
	}
	if err != nil {
		return nil, fail(ExitError, "configuration: %v", err)
	}
	if spec == "" && o.resume != "" && a.resumesIsolatedReplay(cmd.Context(), cfg, o.resume) {
		// The session was run on such a cassette, and goes on with it.
		opts.WithoutUser = true
		if cfg, err = workspace.Load(opts); err != nil {
			return nil, fail(ExitError, "configuration: %v", err)
		}
	}
	cfg, asked, err := a.settleTrust(cmd.Context(), cfg, opts, ask)
	if err != nil {
		return nil, err
	}
	rules, hidden, err := o.rules()
	if err != nil {
		return nil, err
	}
	unknownAgent, err := checkAgent(cfg, o.agent)
	if err != nil {
		return nil, err
	}
	store, err := jsonl.New(cfg.Effective.String(workspace.SessionsDir))
	if err != nil {
		return nil, fail(ExitError, "sessions: %v", err)
	}
	// Notes and the log reach stderr from several goroutines (an MCP
	// server failing while a run starts): one lock orders their writes.
	notice = &swapWriter{w: notice}
	logOut := &swapWriter{w: notice}
	e := &engine{app: a, cfg: cfg, notice: notice, record: o.record, store: store, logOut: logOut,
		logger: newLogger(logOut, a.getenv("REIN_LOG"))}
	for _, w := range cfg.Warnings {
		if asked && slices.Contains(cfg.Trust.Warnings, w) {
			continue // the question listed them
		}
		e.note("%s", w)
	}
	for _, u := range cfg.Unknown() {
		e.note("unknown setting %s is ignored", displayPath(cfg, u))
	}
	setup, err := runner.NewSetup(runner.Config{Loaded: cfg, Store: store, SessionsDir: store.Dir(), Resolve: e.resolve, ResolveEmbedder: a.resolveEmbedder,
		RunRules: rules, Hidden: hidden, Agent: o.agent, UserAgent: "rein/" + Version(), Getenv: a.getenv, Logger: e.logger,
		Notice: func(msg string) { e.note("%s", msg) }, Now: a.Now})
	if err != nil {
		store.Close()
		if unknownAgent {
			return nil, usageErrorf("--agent: %v", err)
		}
		return nil, fail(ExitError, "%v", err)
	}
	e.Conversation = setup.NewConversation()
	return e, nil
}

// resumesIsolatedReplay reports a session to resume whose model replays
// a cassette recorded without the user's configuration (see
// [App.replayIsolated]). A session that cannot be found is left for the
// resume to report.
func (a *App) resumesIsolatedReplay(ctx context.Context, cfg *workspace.Loaded, arg string) bool {
	store, err := jsonl.New(cfg.Effective.String(workspace.SessionsDir))
	if err != nil {
		return false
	}
	defer store.Close()
	id, err := resolveID(ctx, store, arg)
	if err != nil {
		return false
	}
	s, err := store.Get(ctx, id)
	return err == nil && a.replayIsolated(s.Model)
}

// Model returns the model of the next runs.
func (e *engine) Model() *runner.Model { return e.Setup().Model() }

// Workspace returns the workspace the runs work in.
func (e *engine) Workspace() workspace.Workspace { return e.Setup().Workspace() }

// Policy returns the permission policy.
func (e *engine) Policy() *permission.Engine { return e.Setup().Policy() }

// Memory returns the memory store, nil when memory is off.
func (e *engine) Memory() *memory.Store { return e.Setup().Memory() }

// ModelSpec is the model string to run: an explicit setting, then the
// bound session's model, then the default.
func (e *engine) ModelSpec() string { return e.Setup().ModelSpec(e.Session()) }

// Unbind ends the conversation; the next run starts a new session.
func (e *engine) Unbind() {
	e.Conversation.Close()
	e.Conversation = e.Setup().NewConversation()
}

// Resume binds stored session id in a new conversation (see
// runner.Conversation.Resume); the current one ends once it is bound.
func (e *engine) Resume(ctx context.Context, id string) (*session.State, error) {
	c := e.Setup().NewConversation()
	st, err := c.Resume(ctx, id)
	if err != nil {
		return nil, err
	}
	e.Conversation.Close()
	e.Conversation = c
	return st, nil
}

// checkAgent checks the agent --agent names: unknown reports that no
// definition applies by that name (the runner's error then says which do,
// and is a usage error). An agent only an untrusted workspace defines is a
// usage error at once, saying so (SPEC PERM-5).
func checkAgent(cfg *workspace.Loaded, name string) (unknown bool, err error) {
	if name == "" {
		return false, nil
	}
	if _, ok := cfg.Definitions().Agent(name); ok {
		return false, nil
	}
	if a, ok := cfg.AllDefinitions().Agent(name); ok && a.Origin == workspace.OriginWorkspace {
		return true, usageErrorf("--agent %s: the agent is the workspace's (%s), which is not trusted: review it, then rein trust %s",
			name, displayPath(cfg, a.Path), cfg.Workspace.Root)
	}
	return true, nil
}

// resolve resolves a model string for the runner, wrapping the provider in
// the cassette recorder under --record.
func (e *engine) resolve(reg *registry.Registry, spec string) (*runner.Model, error) {
	m, err := e.app.resolveModel(reg, spec)
	if err != nil {
		return nil, err
	}
	if e.record != "" {
		rec, err := replay.Create(m.Provider, e.app.abs(e.record), replay.RecorderOptions{Provider: m.ProviderName, Model: m.Name,
			UserConfig: len(e.cfg.UserFiles()) > 0})
		if err != nil {
			return nil, fail(ExitError, "--record: %v", err)
		}
		if e.cassette != nil {
			e.cassette.Close()
		}
		e.cassette = rec
		m.Provider = rec
	}
	return m, nil
}

// useModel resolves the model to run, as an error with an exit code.
func (e *engine) useModel(spec string) error {
	if err := e.UseModel(spec); err != nil {
		return failErr(err)
	}
	return nil
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

// Close releases the session, closes the store and finishes the cassette
// being recorded.
func (e *engine) Close() error {
	var errs []string
	if e.cassette != nil {
		if err := e.cassette.Close(); err != nil {
			errs = append(errs, "recording: "+err.Error())
		}
	}
	e.Conversation.Close()
	e.Setup().Close()
	if err := e.store.Close(); err != nil {
		errs = append(errs, err.Error())
	}
	if len(errs) > 0 {
		return fail(ExitError, "%s", strings.Join(errs, "; "))
	}
	return nil
}

// note prints a note for the user.
func (e *engine) note(format string, args ...any) {
	fmt.Fprintf(e.notice, "rein: "+format+"\n", args...)
}
