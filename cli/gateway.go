package cli

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
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
	config, listen, dataDir, logLevel, metricsAddr string
	shutdownTimeout                                time.Duration
	check                                          bool
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
	f.StringVar(&o.metricsAddr, "metrics-addr", "", "serve Prometheus metrics at http://ADDR/metrics (e.g. 127.0.0.1:9464; default: none)")
	f.BoolVar(&o.check, "check", false, "check the file (keys, types, secrets in the environment, workspaces) and list its channels, then exit")
	f.DurationVar(&o.shutdownTimeout, "shutdown-timeout", 30*time.Second, "how long running replies may go on after SIGTERM (the rest are answered after the next start)")
	return cmd
}

// gateway runs the gateway until SIGTERM or SIGINT.
func (a *App) gateway(ctx context.Context, o *gatewayOptions) error {
	if _, err := telemetry.ParseLevel(o.logLevel); err != nil {
		return usageErrorf("--log-level: %v", err) // before the file is read, as --check does
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
	proc, err := a.startProcess(ctx, o.logLevel, "front", "gateway")
	if err != nil {
		return err
	}
	defer proc.close(ctx)
	logger := proc.logger
	db, err := sqlite.Open(filepath.Join(dataDir, "rein.db"), sqlite.Options{})
	if err != nil {
		return fail(ExitError, "--data-dir %s: %v", dataDir, err)
	}
	proc.onClose(db.Close)
	state, err := gateway.OpenState(filepath.Join(dataDir, "gateway.db"))
	if err != nil {
		return fail(ExitError, "--data-dir %s: %v", dataDir, err)
	}
	proc.onClose(state.Close)
	bus := eventbus.NewMemory(eventbus.Options{Buffer: 256})
	proc.onClose(bus.Close)
	personaDir, mem, _ := a.personaAt()
	withPersona := file.Persona == nil || *file.Persona
	cfg := runner.ServiceConfig{Sessions: db, Ledger: db, Bus: bus, DataDir: filepath.Join(dataDir, "sessions"),
		Resolve: a.resolveModel, ResolveEmbedder: a.resolveEmbedder, UserMemory: true,
		Getenv: a.getenv, Now: a.Now, UserAgent: "rein/" + Version()}
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
	svc, err := proc.service(ctx, cfg)
	if err != nil {
		return err
	}
	gcfg := gateway.Config{Service: svc, Sessions: db, Ledger: db, Bus: bus, State: state, Routes: routes, Memory: mem,
		IdleAfter: file.Idle, Logger: logger, Now: a.Now}
	if withPersona {
		gcfg.PersonaDir = personaDir
	}
	// The gateway runs on past the signal: the runs let finish in step 3
	// of the shutdown need it to deliver their replies. Its context ends
	// once they did (see afterRuns below), not with proc.sig.
	gctx, gstop := context.WithCancel(context.WithoutCancel(ctx))
	defer gstop()
	g, err := gateway.New(gctx, gcfg)
	if err != nil {
		return fail(ExitError, "%v", err)
	}
	if o.metricsAddr != "" {
		addr, err := proc.listen("--metrics-addr", o.metricsAddr, proc.metrics.Handler(), false)
		if err != nil {
			return err
		}
		fmt.Fprintf(a.Stderr, "rein: gateway metrics on http://%s/metrics\n", addr)
	}
	if g.Receives() {
		// The platforms' webhooks only bring messages in: they close first,
		// and an update sent meanwhile is retried by its platform.
		addr, err := proc.listen("listen", firstNonEmpty(o.listen, file.Listen, "127.0.0.1:8787"), g.Handler(), true)
		if err != nil {
			return err
		}
		fmt.Fprintf(a.Stderr, "rein: gateway receiving on http://%s (data in %s)\n", addr, dataDir)
	} else {
		fmt.Fprintf(a.Stderr, "rein: gateway running (data in %s)\n", dataDir)
	}
	ran := make(chan struct{})
	go func() {
		defer close(ran)
		if err := g.Run(gctx); err != nil && gctx.Err() == nil {
			proc.fail(fmt.Errorf("gateway: %w", err))
		}
	}()
	proc.afterRuns(func() {
		// The runs ended: their done events are out. Each chat's follower
		// sends the reply and stops; a reply the platform does not take
		// within replyGrace (or a chat with runs left queued) is sent at
		// the next start.
		grace := time.NewTimer(replyGrace)
		defer grace.Stop()
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		for wait := true; wait && g.Evict() > 0; {
			select {
			case <-tick.C:
			case <-grace.C:
				wait = false
			case <-ran: // it failed: nothing follows the chats
				wait = false
			}
		}
		gstop()
		<-ran
	})
	return proc.wait(ctx, o.shutdownTimeout)
}

// replyGrace bounds how long, on shutdown, the gateway goes on sending
// the replies of the runs that ended (the rest go out at the next start).
const replyGrace = 5 * time.Second

// firstNonEmpty returns the first of vs that is not "".
func firstNonEmpty(vs ...string) string {
	for _, v := range vs {
		if v != "" {
			return v
		}
	}
	return ""
}
