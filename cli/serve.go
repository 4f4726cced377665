package cli

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/reinhq/rein/eventbus"
	"github.com/reinhq/rein/eventbus/redisbus"
	"github.com/reinhq/rein/runner"
	"github.com/reinhq/rein/server"
	"github.com/reinhq/rein/session"
	"github.com/reinhq/rein/session/postgres"
	"github.com/reinhq/rein/session/sqlite"
	"github.com/reinhq/rein/telemetry"
)

const serveLong = `Serve rein's HTTP API (OpenAPI 3.1 at /openapi.json, events over SSE):
one process, no other service — sessions, runs, events and the audit trail in
SQLite under --data-dir. With --database-url (or REIN_DATABASE_URL) they live
in PostgreSQL instead (its schema is created and migrated at start-up), and
with --redis-url (or REIN_REDIS_URL) live events travel through Redis; session
files (spilled command output) stay under --data-dir. For now one rein serve
runs a database's runs: a second process on the same database would take the
first one's running runs for interrupted ones when it starts.

Callers open a workspace (a project directory under a --root, or a chat),
create sessions in it, post messages (each is a run, answered 202 with its id)
and read the session's events at /sessions/{id}/events; permission questions
arrive as permission_request events and are answered by POST. A run goes on
when its client goes away. On SIGTERM or Ctrl-C the server stops accepting,
lets running runs finish for --shutdown-timeout, then cancels them. Project
workspaces with a .rein directory get a copy of their sessions in
.rein/data/history.db (see rein mirror).

Without authentication the server listens on loopback only and every client is
the caller "local". Beyond loopback, configure callers: bearer tokens (JWT,
--jwt-secret-file for HS256, --jwt-public-key for EdDSA/RS256; exp required,
sub is the caller) or a header set by a proxy (--trusted-header with
--trusted-proxy). REIN_JWT_SECRET is read as the HS256 secret too.

Drive it with curl:
  rein serve --root ~/src &
  curl -s localhost:7878/workspaces --json '{"kind":"project","dir":"'$HOME/src/app'"}'
      → {"id":"WS",…}
  curl -s localhost:7878/sessions --json '{"workspace_id":"WS"}'            → {"id":"S",…}
  curl -s localhost:7878/sessions/S/messages --json '{"text":"list the files"}'
      → 202 {"run_id":"R",…}
  curl -N localhost:7878/sessions/S/events                               (SSE)
  curl -s localhost:7878/runs/R/permissions/CALL --json '{"answer":"once"}'  (or "always", "deny")
`

type serveOptions struct {
	addr, dataDir, jwtSecretFile, jwtIssuer, jwtAudience, trustedHeader, logLevel string
	databaseURL, redisURL                                                         string
	roots, jwtPublicKeys, trustedProxies                                          []string
	maxConcurrent                                                                 int
	allowBypass, metricsPublic, historyMirror                                     bool
	shutdownTimeout                                                               time.Duration
	rateLimit                                                                     float64
}

func (a *App) serveCommand() *cobra.Command {
	o := &serveOptions{}
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve the HTTP API (sessions, runs, SSE events) from one process",
		Long:  serveLong,
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.serve(cmd.Context(), o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.addr, "addr", "127.0.0.1:7878", "address to listen on")
	f.StringVar(&o.dataDir, "data-dir", "", "where the server keeps its database and session files (default: rein's data directory/server)")
	f.StringVar(&o.databaseURL, "database-url", "", "PostgreSQL URL (postgres://user:password@host:5432/db) holding sessions, runs, events and audit instead of SQLite; REIN_DATABASE_URL too")
	f.StringVar(&o.redisURL, "redis-url", "", "Redis URL (redis://host:6379/0) carrying live events instead of process memory; REIN_REDIS_URL too")
	f.StringArrayVar(&o.roots, "root", nil, "a directory under which project workspaces may be opened (repeatable; default: the current directory)")
	f.StringVar(&o.jwtSecretFile, "jwt-secret-file", "", "file holding the HS256 secret of callers' tokens")
	f.StringArrayVar(&o.jwtPublicKeys, "jwt-public-key", nil, "PEM file of a public key (Ed25519 or RSA) verifying callers' tokens (repeatable)")
	f.StringVar(&o.jwtIssuer, "jwt-issuer", "", "required iss of callers' tokens")
	f.StringVar(&o.jwtAudience, "jwt-audience", "", "required aud of callers' tokens")
	f.StringVar(&o.trustedHeader, "trusted-header", "", "header a trusted proxy sets to the caller id (needs --trusted-proxy)")
	f.StringArrayVar(&o.trustedProxies, "trusted-proxy", nil, "address or CIDR of a proxy whose --trusted-header is believed (repeatable)")
	f.IntVar(&o.maxConcurrent, "max-concurrent", 16, "sessions running at once (runs of one session always run one at a time)")
	f.BoolVar(&o.allowBypass, "allow-bypass", false, "let callers run with permission_mode bypass")
	f.BoolVar(&o.metricsPublic, "metrics-public", false, "serve /metrics without authentication")
	f.BoolVar(&o.historyMirror, "history-mirror", true, "copy the sessions of project workspaces that have a .rein directory into .rein/data/history.db after their runs (rein mirror rebuild recreates one); --history-mirror=false turns it off")
	f.DurationVar(&o.shutdownTimeout, "shutdown-timeout", 30*time.Second, "how long running runs may go on after SIGTERM before they are cancelled")
	f.Float64Var(&o.rateLimit, "rate-limit", 20, "requests a second per caller (burst: twice as many)")
	f.StringVar(&o.logLevel, "log-level", "info", "log level: debug, info, warn, error (JSON on stderr)")
	return cmd
}

// serve runs the server until SIGTERM or SIGINT.
func (a *App) serve(ctx context.Context, o *serveOptions) error {
	if _, err := telemetry.ParseLevel(o.logLevel); err != nil {
		return usageErrorf("--log-level: %v", err)
	}
	logger := telemetry.NewLogger(a.Stderr, telemetry.LogOptions{JSON: true, Level: o.logLevel})
	auth, err := a.serveAuth(o)
	if err != nil {
		return err
	}
	if !auth.Configured() && !loopbackAddr(o.addr) {
		return usageErrorf("--addr %s is beyond loopback and no authentication is configured: "+
			"set --jwt-secret-file, --jwt-public-key or --trusted-header with --trusted-proxy, or listen on 127.0.0.1", o.addr)
	}
	roots := o.roots
	if len(roots) == 0 {
		roots = []string{a.Dir}
	}
	for i, r := range roots {
		roots[i] = a.abs(r)
		if fi, err := os.Stat(roots[i]); err != nil || !fi.IsDir() {
			return usageErrorf("--root %s: not a directory", roots[i])
		}
	}
	dataDir := a.serverDataDir(o.dataDir)
	db, where, err := a.openServerStore(ctx, o, dataDir)
	if err != nil {
		return err
	}
	defer db.Close()
	bus, err := a.openServerBus(ctx, o)
	if err != nil {
		return err
	}
	defer bus.Close()
	metrics := telemetry.NewMetrics()
	tp, stopTracing, err := telemetry.SetupTracing(ctx, a.getenv, "rein", Version())
	if err != nil {
		return fail(ExitError, "tracing: %v", err)
	}
	defer stopTracing(context.WithoutCancel(ctx))
	obs := runner.NewTelemetry(metrics, tp)
	svc, err := runner.NewService(runner.ServiceConfig{Sessions: db, Ledger: db, Bus: bus, DataDir: filepath.Join(dataDir, "sessions"),
		Resolve: a.resolveModel, ResolveEmbedder: a.resolveEmbedder, MaxConcurrent: o.maxConcurrent, AllowBypass: o.allowBypass, Observer: obs,
		Getenv: a.getenv, Logger: logger, Now: a.Now, UserAgent: "rein/" + Version(), Mirror: serveMirror(o.historyMirror, db, logger)})
	if err != nil {
		return fail(ExitError, "%v", err)
	}
	obs.Queued = svc.Queued
	if err := svc.Recover(ctx); err != nil {
		return fail(ExitError, "%v", err)
	}
	srv, err := server.New(server.Config{Runtime: serviceRuntime{svc}, Sessions: db, Ledger: db, Bus: bus, Auth: auth,
		Roots: roots, RateLimit: o.rateLimit, Burst: int(2 * o.rateLimit), Version: Version(), Metrics: metrics.Handler(),
		MetricsPublic: o.metricsPublic, OnSSE: metrics.SSEClients, OnRequest: metrics.HTTPRequest, Logger: logger, Now: a.Now,
		Checks: readyChecks(db, bus)})
	if err != nil {
		return fail(ExitError, "%v", err)
	}
	ln, err := net.Listen("tcp", o.addr)
	if err != nil {
		return fail(ExitError, "--addr %s: %v", o.addr, err)
	}
	hs := &http.Server{Handler: srv.Handler(), ReadHeaderTimeout: 10 * time.Second}
	hs.RegisterOnShutdown(srv.CloseStreams)
	logger.Info("rein serve listening", "addr", ln.Addr().String(), "data_dir", dataDir, "store", where, "roots", strings.Join(roots, ","),
		"auth", auth.Configured(), "version", Version())
	fmt.Fprintf(a.Stderr, "rein: serving on http://%s (data in %s)\n", ln.Addr(), where)
	sig, stop := signal.NotifyContext(ctx, syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		return fail(ExitError, "serve: %v", err)
	case <-sig.Done():
	}
	svc.Close() // before saying so: a message posted after the line below is refused (503)
	logger.Info("shutting down: no new runs; running runs may finish", "timeout", o.shutdownTimeout.String())
	down, cancel := context.WithTimeout(context.WithoutCancel(ctx), o.shutdownTimeout)
	defer cancel()
	// HTTP (SSE streams included) closes once the runs are done, so
	// clients see their ends.
	if err := svc.Shutdown(down); err != nil {
		logger.Warn("running runs were cancelled at the shutdown deadline", "err", err)
	}
	hctx, hcancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer hcancel()
	if err := hs.Shutdown(hctx); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		logger.Warn("http shutdown", "err", err)
	}
	hs.Close()
	logger.Info("stopped")
	return nil
}

// serverStore is what the server keeps its sessions and ledger in.
type serverStore interface {
	session.Store
	session.Ledger
	Close() error
}

// readyChecks are the dependencies /ready checks: the store and the bus,
// where they can be pinged (PostgreSQL, SQLite, Redis).
func readyChecks(store, bus any) map[string]func(context.Context) error {
	type pinger interface{ Ping(context.Context) error }
	checks := map[string]func(context.Context) error{}
	if p, ok := store.(pinger); ok {
		checks["store"] = p.Ping
	}
	if p, ok := bus.(pinger); ok {
		checks["bus"] = p.Ping
	}
	return checks
}

// openServerStore opens PostgreSQL when --database-url or
// REIN_DATABASE_URL names one, else SQLite under dataDir; where says which,
// for the log (never the password).
func (a *App) openServerStore(ctx context.Context, o *serveOptions, dataDir string) (serverStore, string, error) {
	url := o.databaseURL
	if url == "" {
		url = a.getenv("REIN_DATABASE_URL")
	}
	if url == "" {
		db, err := sqlite.Open(filepath.Join(dataDir, "rein.db"), sqlite.Options{})
		if err != nil {
			return nil, "", fail(ExitError, "--data-dir %s: %v", dataDir, err)
		}
		return db, dataDir, nil
	}
	octx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	db, err := postgres.Open(octx, url, postgres.Options{})
	if err != nil {
		return nil, "", fail(ExitError, "--database-url: %v", err)
	}
	return db, "postgres " + db.Target(), nil
}

// openServerBus opens the event bus: Redis when --redis-url or
// REIN_REDIS_URL names one, else process memory. A subscriber's buffer of
// 256 events (not the default 1,024) keeps an idle SSE client near 37 KiB;
// a client 256 events behind is cut off and resumes with Last-Event-ID.
func (a *App) openServerBus(ctx context.Context, o *serveOptions) (eventbus.Bus, error) {
	url := o.redisURL
	if url == "" {
		url = a.getenv("REIN_REDIS_URL")
	}
	if url == "" {
		return eventbus.NewMemory(eventbus.Options{Buffer: 256}), nil
	}
	bus, err := redisbus.New(ctx, url, redisbus.Options{Buffer: 256})
	if err != nil {
		return nil, fail(ExitError, "--redis-url: %v", err)
	}
	return bus, nil
}

// serveAuth builds the callers' authentication from the flags.
func (a *App) serveAuth(o *serveOptions) (server.Auth, error) {
	auth := server.Auth{Issuer: o.jwtIssuer, Audience: o.jwtAudience, TrustedHeader: o.trustedHeader}
	switch {
	case o.jwtSecretFile != "":
		b, err := os.ReadFile(a.abs(o.jwtSecretFile))
		if err != nil {
			return auth, usageErrorf("--jwt-secret-file: %v", err)
		}
		auth.HS256Secret = []byte(strings.TrimSpace(string(b)))
	case a.getenv("REIN_JWT_SECRET") != "":
		auth.HS256Secret = []byte(a.getenv("REIN_JWT_SECRET"))
	}
	if len(auth.HS256Secret) > 0 && len(auth.HS256Secret) < 32 {
		return auth, usageErrorf("the HS256 secret is %d bytes; use at least 32 random bytes (openssl rand -base64 48)", len(auth.HS256Secret))
	}
	if len(o.jwtPublicKeys) > 0 {
		paths := make([]string, len(o.jwtPublicKeys))
		for i, p := range o.jwtPublicKeys {
			paths[i] = a.abs(p)
		}
		keys, err := server.LoadPublicKeys(paths...)
		if err != nil {
			return auth, usageErrorf("--jwt-public-key: %v", err)
		}
		auth.PublicKeys = keys
	}
	for _, p := range o.trustedProxies {
		pfx, err := netip.ParsePrefix(p)
		if err != nil {
			addr, aerr := netip.ParseAddr(p)
			if aerr != nil {
				return auth, usageErrorf("--trusted-proxy %q: want an address or a CIDR (10.0.0.0/8)", p)
			}
			pfx = netip.PrefixFrom(addr, addr.BitLen())
		}
		auth.TrustedProxies = append(auth.TrustedProxies, pfx)
	}
	if (auth.TrustedHeader == "") != (len(auth.TrustedProxies) == 0) {
		return auth, usageErrorf("--trusted-header and --trusted-proxy go together: the header is believed only from those proxies")
	}
	return auth, nil
}

// loopbackAddr reports whether a listen address stays on this machine.
func loopbackAddr(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.IsLoopback()
}
