package gateway

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/reinhq/rein/eventbus"
	"github.com/reinhq/rein/memory"
	"github.com/reinhq/rein/permission"
	"github.com/reinhq/rein/session"
)

// Route is one channel as the gateway runs it: the platform's client and
// the policy of its chats.
type Route struct {
	Channel Channel
	// Allow lists the platform user ids that may talk to the agent; "*"
	// lets anyone. Empty refuses everyone: a stranger is told their id, so
	// that the owner can add it. A refused message never reaches a model.
	Allow []string
	// PermissionMode is the mode of the chats' runs ("" the
	// configuration's): default asks in the chat, accept-edits, plan, …
	PermissionMode string
	// Model is the chats' model ("" the configuration's); /model changes
	// it for one chat.
	Model string
	// Workspace is the directory the chats' sessions work in (their tools
	// run there; attachments are saved under its inbox/). "" makes the
	// chats conversation only: no tools (a chat workspace, WS-2).
	Workspace string
}

// Runtime is what the gateway needs of the runner: it starts, cancels and
// answers runs — the same three calls rein serve makes (server.Runtime),
// with the same [session.Submission]. *runner.Service implements both.
type Runtime interface {
	// Submit stores a queued run of the session and schedules it.
	Submit(ctx context.Context, s session.Submission) (*session.Run, error)
	// Cancel cancels a queued or running run.
	Cancel(ctx context.Context, runID string) (*session.Run, error)
	// Answer answers the pending permission question of callID in run
	// runID (SPEC PERM-3).
	Answer(ctx context.Context, runID, callID string, v permission.Verdict) error
}

// Config configures a [Gateway].
type Config struct {
	Service  Runtime
	Sessions session.Store
	Ledger   session.Ledger
	Bus      eventbus.Bus
	State    *State
	Routes   []Route
	// Memory, when set, answers /memory and keeps the profile the
	// persona's bootstrap writes.
	Memory *memory.Store
	// PersonaDir, when set with Memory, is the persona's directory: while
	// the persona has no name the gateway first asks an allowed user the
	// bootstrap's questions in their chat (GW-1).
	PersonaDir string
	// IdleAfter drops a chat with nothing running from memory after this
	// long (default 15 minutes); its next message loads it again.
	IdleAfter time.Duration
	Logger    *slog.Logger
	Now       func() time.Time
}

// Gateway routes the messages of chats to sessions and their replies
// back (see the package documentation). Create it with [New], serve
// [Gateway.Handler] for the channels that receive over HTTP and call
// [Gateway.Run].
type Gateway struct {
	cfg    Config
	log    *slog.Logger
	routes map[string]*route
	order  []*route

	mu        sync.Mutex
	chats     map[string]*chat // the pool, by chat key
	approvals map[string]*approval
	refused   map[string]time.Time // stranger "<channel>:<user>" → last refusal
	boot      *bootstrap

	// base is Run's context (New's before): followers and sends live
	// under it. Atomic, not under mu: it is read with a chat's lock held,
	// and the lock order is mu, then a chat's.
	base atomic.Pointer[context.Context]
	// spawnMu orders spawn's wg.Add before Run's wg.Wait.
	spawnMu sync.RWMutex
	stopped bool
	wg      sync.WaitGroup
}

// route is a channel as the gateway runs it.
type route struct {
	Route
	name   string
	ch     Channel
	limits Limits
	ws     *session.Workspace
	allow  map[string]bool
	anyone bool
}

// gatewayCaller owns the gateway's workspaces in the ledger.
const gatewayCaller = "gateway"

// New checks the configuration and opens each route's workspace.
func New(ctx context.Context, cfg Config) (*Gateway, error) {
	if cfg.Service == nil || cfg.Sessions == nil || cfg.Ledger == nil || cfg.Bus == nil || cfg.State == nil {
		return nil, errors.New("gateway: Config needs Service, Sessions, Ledger, Bus and State")
	}
	if len(cfg.Routes) == 0 {
		return nil, errors.New("gateway: no channels: configure at least one under channels: in the gateway's file")
	}
	if cfg.IdleAfter <= 0 {
		cfg.IdleAfter = 15 * time.Minute
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	g := &Gateway{cfg: cfg, log: cfg.Logger, routes: map[string]*route{}, chats: map[string]*chat{},
		approvals: map[string]*approval{}, refused: map[string]time.Time{}}
	g.base.Store(&ctx)
	existing, err := cfg.Ledger.ListWorkspaces(ctx, gatewayCaller)
	if err != nil {
		return nil, fmt.Errorf("gateway: workspaces: %w", err)
	}
	for _, rt := range cfg.Routes {
		name := rt.Channel.Name()
		if name == "" || strings.ContainsAny(name, ":/ ") {
			return nil, fmt.Errorf("gateway: channel name %q: use letters, digits, - and _", name)
		}
		if g.routes[name] != nil {
			return nil, fmt.Errorf("gateway: two channels are named %q: give each its own name", name)
		}
		_, polls := rt.Channel.(Poller)
		_, posts := rt.Channel.(HTTPReceiver)
		if !polls && !posts {
			return nil, fmt.Errorf("gateway: channel %s receives nothing (neither a Poller nor an HTTPReceiver)", name)
		}
		if err := CheckPermissionMode(rt.PermissionMode); err != nil {
			return nil, fmt.Errorf("gateway: channel %s: %w", name, err)
		}
		r := &route{Route: rt, name: name, ch: rt.Channel, limits: rt.Channel.Limits(), allow: map[string]bool{}}
		if r.limits.MaxText <= 0 {
			r.limits.MaxText = 2000
		}
		for _, u := range rt.Allow {
			if u == "*" {
				r.anyone = true
			}
			r.allow[u] = true
		}
		if r.ws, err = g.workspace(ctx, existing, r); err != nil {
			return nil, err
		}
		g.routes[name] = r
		g.order = append(g.order, r)
	}
	return g, nil
}

// CheckPermissionMode checks a channel's permission_mode: a mode rein
// knows ("" is the configuration's), and not bypass — a chat message
// would then run any tool call without a question.
func CheckPermissionMode(mode string) error {
	if mode == "" {
		return nil
	}
	m, err := permission.ParseMode(mode)
	if err != nil {
		return fmt.Errorf("permission_mode: %w", err)
	}
	if m == permission.ModeBypass {
		return errors.New("permission_mode bypass would run every tool call a chat message asks for " +
			"without a question; use default (questions come as buttons) or accept-edits")
	}
	return nil
}

// workspace finds or opens the route's workspace: a project workspace
// at its directory, or a chat workspace.
func (g *Gateway) workspace(ctx context.Context, existing []*session.Workspace, r *route) (*session.Workspace, error) {
	kind := session.WorkspaceChat
	if r.Workspace != "" {
		kind = session.WorkspaceProject
	}
	for _, w := range existing {
		if w.Name == r.name && w.Kind == kind && w.Dir == r.Workspace {
			return w, nil
		}
	}
	w := &session.Workspace{Caller: gatewayCaller, Kind: kind, Dir: r.Workspace, Name: r.name, CreatedAt: g.cfg.Now()}
	if err := g.cfg.Ledger.CreateWorkspace(ctx, w); err != nil {
		return nil, fmt.Errorf("gateway: channel %s: open its workspace: %w", r.name, err)
	}
	return w, nil
}

// Handler serves the channels that receive over HTTP, each under
// /<channel name>/, and /health.
func (g *Gateway) Handler() http.Handler {
	mux := http.NewServeMux()
	for _, r := range g.order {
		if hr, ok := r.ch.(HTTPReceiver); ok {
			prefix := "/" + r.name
			mux.Handle(prefix+"/", http.StripPrefix(prefix, hr.HTTPHandler(&handler{g: g, r: r})))
		}
	}
	mux.HandleFunc("GET /health", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintln(w, `{"status":"ok"}`)
	})
	return mux
}

// Receives reports whether some channel receives over HTTP (the gateway
// then needs its listen address).
func (g *Gateway) Receives() bool {
	for _, r := range g.order {
		if _, ok := r.ch.(HTTPReceiver); ok {
			return true
		}
	}
	return false
}

// Run resumes the chats with updates not yet answered (a restart), runs
// the polled channels and evicts idle chats, until ctx ends; then it
// waits for the replies being sent. It returns the first channel's
// failure for good (a revoked token).
func (g *Gateway) Run(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx) // a channel failing for good stops the rest
	defer cancel()
	g.base.Store(&ctx)
	if err := g.resume(ctx); err != nil {
		stopped := ctx.Err() != nil // what was not resumed stays open for the next start
		cancel()
		g.drain()
		if stopped {
			return nil
		}
		return err
	}
	errc := make(chan error, len(g.order))
	var polls sync.WaitGroup
	for _, r := range g.order {
		p, ok := r.ch.(Poller)
		if !ok {
			continue
		}
		polls.Add(1)
		go func() {
			defer polls.Done()
			if err := p.Receive(ctx, &handler{g: g, r: r}); err != nil && ctx.Err() == nil {
				errc <- fmt.Errorf("gateway: channel %s: %w", r.name, err)
			}
		}()
	}
	g.spawn(g.sweep)
	var err error
	select {
	case <-ctx.Done():
	case err = <-errc:
	}
	cancel()
	polls.Wait()
	g.drain()
	return err
}

// drain lets no goroutine start any more and waits for those running (the
// replies being sent).
func (g *Gateway) drain() {
	g.spawnMu.Lock()
	g.stopped = true // no goroutine starts after this; wg.Wait sees them all
	g.spawnMu.Unlock()
	g.wg.Wait()
}

// sweep drops idle chats from the pool and forgets old refusals.
func (g *Gateway) sweep(ctx context.Context) {
	t := time.NewTicker(max(g.cfg.IdleAfter/4, time.Second))
	defer t.Stop()
	pruned := time.Now()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			g.evict(g.cfg.Now())
			if now.Sub(pruned) > time.Hour {
				pruned = now
				if err := g.cfg.State.prune(ctx, g.cfg.Now().Add(-keepAnswered)); err != nil {
					g.log.Warn("old updates could not be pruned", "err", err)
				}
			}
		}
	}
}

// evict drops the chats idle since IdleAfter; it returns how many are left.
func (g *Gateway) evict(now time.Time) int {
	g.mu.Lock()
	defer g.mu.Unlock()
	for k, c := range g.chats {
		if c.idle(now, g.cfg.IdleAfter) {
			delete(g.chats, k)
		}
	}
	for k, at := range g.refused {
		if now.Sub(at) > refuseEvery {
			delete(g.refused, k)
		}
	}
	return len(g.chats)
}

// Chats is the number of chats in the pool.
func (g *Gateway) Chats() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.chats)
}

// Evict drops every idle chat from the pool now (as the sweeper does
// after IdleAfter) and returns how many are left.
func (g *Gateway) Evict() int { return g.evict(g.cfg.Now().Add(g.cfg.IdleAfter + time.Nanosecond)) }

// spawn runs fn in a goroutine under Run's context (a follower, a
// reply, a command's answer), so a platform waiting for its
// acknowledgement is not held up by a send; false once Run has ended.
func (g *Gateway) spawn(fn func(ctx context.Context)) bool {
	g.spawnMu.RLock()
	defer g.spawnMu.RUnlock()
	if g.stopped {
		return false
	}
	ctx := *g.base.Load()
	g.wg.Add(1)
	go func() {
		defer g.wg.Done()
		fn(ctx)
	}()
	return true
}

// reply sends text to a chat in the background, split at the platform's
// size.
func (g *Gateway) reply(r *route, chatID, text string) {
	g.spawn(func(ctx context.Context) {
		for _, part := range Split(text, r.limits.MaxText) {
			if _, err := r.send(ctx, Outgoing{ChatID: chatID, Text: part}); err != nil {
				g.log.Warn("a reply could not be sent", "channel", r.name, "chat", chatID, "err", err)
				return
			}
		}
	})
}
