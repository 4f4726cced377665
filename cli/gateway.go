package cli

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os/signal"
	"path/filepath"
	"slices"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/reinhq/rein/eventbus"
	"github.com/reinhq/rein/gateway"
	"github.com/reinhq/rein/persona"
	"github.com/reinhq/rein/runner"
	"github.com/reinhq/rein/session/sqlite"
	"github.com/reinhq/rein/telemetry"
	"github.com/reinhq/rein/workspace"
)

const gatewayLong = `Run your agent in the chat apps you use (SPEC GW-2): Telegram, Slack,
Discord, Feishu/Lark and a generic webhook, configured in one file
(--config, default ~/.config/rein/gateway.yaml) with the secrets in
environment variables. Each chat talks to a session of its own; its
runs go one at a time (a message sent meanwhile is queued; /stop cancels).
Progress and tool hints appear as edits of one message; permission
questions come as buttons (the webhook: /approve ID or /deny ID), which
only allowed users can answer; no answer within the timeout denies. A
stranger is refused and never reaches the model. Updates are
acknowledged to the platform only once stored: a restart resumes every
chat and answers nothing twice. The persona (rein persona) is the agent's
identity; until it has a name the first allowed user is asked a few
questions to set it up.

In the chat: /new /stop /model [name] /cost /memory /help.

An example gateway.yaml:

  listen: 127.0.0.1:8787        # Slack, Feishu and the webhook post here
  channels:
    tg:
      type: telegram             # token from TELEGRAM_BOT_TOKEN (token_env)
      allow: ["123456789"]       # user ids; a stranger is told theirs
      workspace: ~/agent         # where its tools work; none: talk only
      permission_mode: default   # or accept-edits, plan
    ops:
      type: slack                # SLACK_BOT_TOKEN, SLACK_SIGNING_SECRET
      allow: ["U024BE7LH"]       # Events API: http(s)://HOST/ops/events,
                                 # interactivity: http(s)://HOST/ops/interactivity
    hook:
      type: webhook              # POST /hook/messages, signed with REIN_WEBHOOK_SECRET
      callback_url: https://example.com/rein
      allow: ["*"]

Each type's own keys, and how to set up each platform: docs/gateway.md.`

type gatewayOptions struct {
	config, listen, dataDir, logLevel string
	shutdownTimeout                   time.Duration
	check                             bool
}

func (a *App) gatewayCommand() *cobra.Command {
	o := &gatewayOptions{}
	cmd := &cobra.Command{
		Use:   "gateway",
		Short: "Run the agent in Telegram, Slack, Discord, Feishu or a webhook",
		Long:  gatewayLong,
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.gateway(cmd.Context(), o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.config, "config", "", "the gateway's file (default: rein's configuration directory/gateway.yaml)")
	f.StringVar(&o.listen, "listen", "", "address the HTTP channels are served on (overrides listen: of the file; default 127.0.0.1:8787)")
	f.StringVar(&o.dataDir, "data-dir", "", "where the gateway keeps its sessions and state (default: rein's data directory/gateway)")
	f.StringVar(&o.logLevel, "log-level", "info", "log level: debug, info, warn, error (JSON on stderr)")
	f.BoolVar(&o.check, "check", false, "check the file (keys, types, secrets in the environment, workspaces) and list its channels, then exit")
	f.DurationVar(&o.shutdownTimeout, "shutdown-timeout", 30*time.Second, "how long running replies may go on after SIGTERM (the rest are answered after the next start)")
	return cmd
}

// gateway runs the gateway until SIGTERM or SIGINT.
func (a *App) gateway(ctx context.Context, o *gatewayOptions) error {
	if _, err := telemetry.ParseLevel(o.logLevel); err != nil {
		return usageErrorf("--log-level: %v", err)
	}
	paths := workspace.PathsFrom(a.getenv)
	path := o.config
	if path == "" {
		path = filepath.Join(paths.ConfigDir, "gateway.yaml")
	}
	file, routes, err := a.loadGatewayFile(a.abs(path))
	if err != nil {
		return err
	}
	if o.check {
		fmt.Fprintf(a.Stdout, "%s: %d channels\n", a.abs(path), len(routes))
		for _, r := range routes {
			allowed := fmt.Sprintf("%d allowed", len(r.Allow))
			if slices.Contains(r.Allow, "*") {
				allowed = "anyone allowed"
			}
			ws := "no workspace (talk only)"
			if r.Workspace != "" {
				ws = "workspace " + r.Workspace
			}
			fmt.Fprintf(a.Stdout, "  %s: %s, %s, %s\n", r.Channel.Name(), allowed, ws, firstNonEmpty(r.PermissionMode, "the configuration's permission mode"))
		}
		return nil
	}
	dataDir := o.dataDir
	if dataDir == "" {
		dataDir = file.DataDir
	}
	if dataDir == "" {
		dataDir = filepath.Join(paths.DataDir, "gateway")
	}
	dataDir = a.abs(dataDir)
	logger := telemetry.NewLogger(a.Stderr, telemetry.LogOptions{JSON: true, Level: o.logLevel}).With("front", "gateway")
	db, err := sqlite.Open(filepath.Join(dataDir, "rein.db"), sqlite.Options{})
	if err != nil {
		return fail(ExitError, "--data-dir %s: %v", dataDir, err)
	}
	defer db.Close()
	state, err := gateway.OpenState(filepath.Join(dataDir, "gateway.db"))
	if err != nil {
		return fail(ExitError, "--data-dir %s: %v", dataDir, err)
	}
	defer state.Close()
	bus := eventbus.NewMemory(eventbus.Options{Buffer: 256})
	defer bus.Close()
	personaDir, mem, _ := a.personaAt()
	withPersona := file.Persona == nil || *file.Persona
	cfg := runner.ServiceConfig{Sessions: db, Ledger: db, Bus: bus, DataDir: filepath.Join(dataDir, "sessions"),
		Resolve: a.resolveModel, ResolveEmbedder: a.resolveEmbedder, UserMemory: true,
		Getenv: a.getenv, Logger: logger, Now: a.Now, UserAgent: "rein/" + Version()}
	if withPersona {
		cfg.Persona = func() string {
			p, err := persona.Load(personaDir)
			if err != nil {
				logger.Warn("the persona could not be read; runs go without it", "err", err)
				return ""
			}
			return p.Section()
		}
	}
	svc, err := runner.NewService(cfg)
	if err != nil {
		return fail(ExitError, "%v", err)
	}
	if err := svc.Recover(ctx); err != nil {
		return fail(ExitError, "%v", err)
	}
	sig, stop := signal.NotifyContext(ctx, syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	gcfg := gateway.Config{Service: svc, Sessions: db, Ledger: db, Bus: bus, State: state, Routes: routes, Memory: mem,
		IdleAfter: file.Idle, Logger: logger, Now: a.Now}
	if withPersona {
		gcfg.PersonaDir = personaDir
	}
	g, err := gateway.New(sig, gcfg)
	if err != nil {
		return fail(ExitError, "%v", err)
	}
	errc := make(chan error, 2)
	var hs *http.Server
	if g.Receives() {
		addr := firstNonEmpty(o.listen, file.Listen, "127.0.0.1:8787")
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			return fail(ExitError, "listen %s: %v", addr, err)
		}
		hs = &http.Server{Handler: g.Handler(), ReadHeaderTimeout: 10 * time.Second}
		fmt.Fprintf(a.Stderr, "rein: gateway receiving on http://%s (data in %s)\n", ln.Addr(), dataDir)
		go func() { errc <- fmt.Errorf("serve: %w", hs.Serve(ln)) }()
	} else {
		fmt.Fprintf(a.Stderr, "rein: gateway running (data in %s)\n", dataDir)
	}
	go func() { errc <- g.Run(sig) }()
	var runErr error
	select {
	case runErr = <-errc:
		stop()
	case <-sig.Done():
		runErr = <-errc
	}
	if hs != nil {
		hctx, hcancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer hcancel()
		hs.Shutdown(hctx)
	}
	svc.Close()
	down, cancel := context.WithTimeout(context.WithoutCancel(ctx), o.shutdownTimeout)
	defer cancel()
	if err := svc.Shutdown(down); err != nil {
		logger.Warn("running replies were cancelled at the shutdown deadline; their chats are told after the next start", "err", err)
	}
	if runErr != nil && !errors.Is(runErr, http.ErrServerClosed) {
		return fail(ExitError, "%v", runErr)
	}
	return nil
}

// firstNonEmpty returns the first of vs that is not "".
func firstNonEmpty(vs ...string) string {
	for _, v := range vs {
		if v != "" {
			return v
		}
	}
	return ""
}
