package cli

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/reinhq/rein/console"
	"github.com/reinhq/rein/eventbus"
	"github.com/reinhq/rein/eventbus/redisbus"
	"github.com/reinhq/rein/runner"
	"github.com/reinhq/rein/runner/queue"
	"github.com/reinhq/rein/runner/queue/redisqueue"
	"github.com/reinhq/rein/server"
	"github.com/reinhq/rein/session"
	"github.com/reinhq/rein/session/postgres"
	"github.com/reinhq/rein/session/sqlite"
)

const serveLong = `Serve rein's HTTP API (OpenAPI 3.1 at /openapi.json, events over SSE):
one process, no other service — sessions, runs, events and the audit trail in
SQLite under --data-dir, each project workspace's knowledge base in its
.rein/data/kb.db. With --database-url (or REIN_DATABASE_URL) they live in
PostgreSQL instead, knowledge bases too, one per caller and workspace (its
schema is created and migrated at start-up; a database migrated by a newer
rein is refused), and with --redis-url (or
REIN_REDIS_URL) runs go through a queue on Redis and live events through Redis
pub/sub; session files (spilled command output) stay under --data-dir.

The production split (PostgreSQL + Redis, the same URLs for every process):
  rein serve --mode api --database-url postgres://… --redis-url redis://…   (HTTP; enqueues)
  rein worker --database-url postgres://… --redis-url redis://…             (runs; see rein worker --help)
Any number of each; an SSE client may reconnect to any API process with
Last-Event-ID. rein serve (--mode all) with both URLs serves and works in one
process and may run beside others. Without Redis, run one rein serve per
database. /health answers while the process runs; /ready checks the store and
the bus and answers 503 with Retry-After, naming the one that does not answer,
as does a request that needs it: with PostgreSQL away nothing is stored; with
Redis away messages are refused (503) rather than stored unqueued, and workers
pause; both resume by themselves.

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

Web pages get nothing by default. A request is answered only when its Host
is localhost, a loopback address, the address it arrived at or an
--allowed-host name (421 otherwise: DNS rebinding). A page of another origin
may neither change anything nor read event streams (403) unless its origin
is an --allowed-origin, which also gets CORS answers; request bodies must be
JSON (Content-Type: application/json, 415 otherwise). Behind a proxy that
keeps the public Host, name it: --allowed-host rein.example.com. A caller
holds at most --max-streams-per-caller event streams (429 beyond); a stream
opened with a token ends when the token expires (the client reconnects with
a fresh one and Last-Event-ID).

The web console (SPEC API-10) is served at / (--console=false turns it
off). Without authentication, rein serve prints a one-time login link at
start: opening it signs that browser in with an HttpOnly, SameSite=Strict
cookie of this process; a signed-in console, or any local client with
POST /console/links, makes another. With tokens, the console asks for one.

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
	databaseURL, redisURL, redisPrefix, mode                                      string
	roots, jwtPublicKeys, trustedProxies                                          []string
	allowedHosts, allowedOrigins                                                  []string
	corsCredentials                                                               bool
	console                                                                       bool
	maxConcurrent, maxStreamsPerCaller, maxStreams                                int
	databaseMaxConns                                                              int
	allowBypass, metricsPublic, historyMirror                                     bool
	shutdownTimeout, leaseTTL                                                     time.Duration
	rateLimit                                                                     float64

	// allowUnconfined is --allow-unconfined-commands (SPEC API-9).
	allowUnconfined bool
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
	f.StringVar(&o.mode, "mode", modeAll, "all: serve HTTP and run the runs; api: serve HTTP and enqueue runs for rein worker processes (needs --database-url and --redis-url)")
	addStoreFlags(f, o)
	f.StringArrayVar(&o.roots, "root", nil, "a directory under which project workspaces may be opened (repeatable; default: the current directory)")
	f.StringVar(&o.jwtSecretFile, "jwt-secret-file", "", "file holding the HS256 secret of callers' tokens")
	f.StringArrayVar(&o.jwtPublicKeys, "jwt-public-key", nil, "PEM file of a public key (Ed25519 or RSA) verifying callers' tokens (repeatable)")
	f.StringVar(&o.jwtIssuer, "jwt-issuer", "", "required iss of callers' tokens")
	f.StringVar(&o.jwtAudience, "jwt-audience", "", "required aud of callers' tokens")
	f.StringVar(&o.trustedHeader, "trusted-header", "", "header a trusted proxy sets to the caller id (needs --trusted-proxy)")
	f.StringArrayVar(&o.trustedProxies, "trusted-proxy", nil, "address or CIDR of a proxy whose --trusted-header is believed (repeatable)")
	f.BoolVar(&o.allowBypass, "allow-bypass", false, "let callers run with permission_mode bypass")
	f.BoolVar(&o.metricsPublic, "metrics-public", false, "serve /metrics without authentication")
	f.Float64Var(&o.rateLimit, "rate-limit", 20, "requests a second per caller (burst: twice as many)")
	addBrowserFlags(f, o)
	addRunnerFlags(f, o)
	return cmd
}

// addStoreFlags adds the flags naming where the server keeps its state.
func addStoreFlags(f *pflag.FlagSet, o *serveOptions) {
	f.StringVar(&o.dataDir, "data-dir", "", "where the server keeps its database and session files (default: rein's data directory/server)")
	f.StringVar(&o.databaseURL, "database-url", "", "PostgreSQL URL (postgres://user:password@host:5432/db) holding sessions, runs, events, audit and the workspaces' knowledge bases instead of SQLite (and .rein/data/kb.db); REIN_DATABASE_URL too")
	f.IntVar(&o.databaseMaxConns, "database-max-conns", 0, "PostgreSQL connections this process uses at once (default: the number of CPUs, at least 4); REIN_DATABASE_MAX_CONNS too")
	f.StringVar(&o.redisURL, "redis-url", "", "Redis URL (redis://host:6379/0) carrying the run queue and live events instead of process memory; REIN_REDIS_URL too")
	f.StringVar(&o.redisPrefix, "redis-prefix", "rein:", "prefix of rein's Redis keys and channels, so that deployments can share a Redis; the same for every process of one")
}

// addBrowserFlags adds the flags saying which names and web pages may reach
// the server, and how many event streams it holds (SPEC API-8, API-9).
func addBrowserFlags(f *pflag.FlagSet, o *serveOptions) {
	f.StringArrayVar(&o.allowedHosts, "allowed-host", nil, "a name (or name:port) clients may call this server by besides localhost and its addresses: the Host header of any other is refused, which stops DNS rebinding (repeatable)")
	f.StringArrayVar(&o.allowedOrigins, "allowed-origin", nil, "a web origin (https://app.example.com) whose pages may call this API and get CORS answers; never * (repeatable)")
	f.BoolVar(&o.console, "console", true, "serve the web console at / (without authentication, a one-time login link is printed at start); --console=false turns it off")
	f.BoolVar(&o.corsCredentials, "cors-credentials", false, "let the --allowed-origin pages send cookies and HTTP authentication (Access-Control-Allow-Credentials)")
	f.IntVar(&o.maxStreamsPerCaller, "max-streams-per-caller", server.DefaultMaxStreamsPerCaller, "open event streams a caller may hold (more: 429)")
	f.IntVar(&o.maxStreams, "max-streams", server.DefaultMaxStreams, "open event streams the server holds in all (more: 429)")
}

// addRunnerFlags adds the flags of a process that runs runs.
func addRunnerFlags(f *pflag.FlagSet, o *serveOptions) {
	f.IntVar(&o.maxConcurrent, "max-concurrent", 16, "sessions running at once in this process (runs of one session always run one at a time)")
	f.BoolVar(&o.historyMirror, "history-mirror", true, "copy the sessions of project workspaces that have a .rein directory into .rein/data/history.db after their runs (rein mirror rebuild recreates one); --history-mirror=false turns it off")
	f.DurationVar(&o.shutdownTimeout, "shutdown-timeout", 30*time.Second, "how long running runs may go on after SIGTERM before they are cancelled")
	f.DurationVar(&o.leaseTTL, "lease-ttl", queue.DefaultTTL, "with Redis: how long a session stays with a worker that stopped renewing its lease (it died) before another takes it over; the same for every process")
	f.StringVar(&o.logLevel, "log-level", "info", "log level: debug, info, warn, error (JSON on stderr)")
	f.BoolVar(&o.allowUnconfined, "allow-unconfined-commands", false, "where no sandbox can confine what commands read (bubblewrap with user namespaces), "+
		"run authenticated callers' commands anyway, able to read whatever this process's user can; by default they are refused")
}

// The process modes of rein serve (SPEC API-5).
const (
	modeAll    = "all"    // HTTP and runs in one process
	modeAPI    = "api"    // HTTP only: runs are enqueued for workers
	modeWorker = "worker" // runs only (rein worker)
)

// serve runs the server until SIGTERM or SIGINT.
func (a *App) serve(ctx context.Context, o *serveOptions) error {
	if o.mode != modeAll && o.mode != modeAPI && o.mode != modeWorker {
		return usageErrorf("--mode %q: want all or api (rein worker runs the runs of an api deployment)", o.mode)
	}
	proc, err := a.startProcess(ctx, o.logLevel, "mode", o.mode)
	if err != nil {
		return err
	}
	defer proc.close(ctx)
	logger := proc.logger
	var auth server.Auth
	var roots []string
	if o.mode != modeWorker {
		if auth, err = a.serveAuth(o); err != nil {
			return err
		}
		if !auth.Configured() && !loopbackAddr(o.addr) {
			return usageErrorf("--addr %s is beyond loopback and no authentication is configured: "+
				"set --jwt-secret-file, --jwt-public-key or --trusted-header with --trusted-proxy, or listen on 127.0.0.1", o.addr)
		}
		if roots, err = a.serveRoots(o); err != nil {
			return err
		}
		if err := checkBrowserFlags(o); err != nil {
			return err
		}
	}
	if err := a.resolveMaxConns(o); err != nil {
		return err
	}
	if o.mode != modeAll && (a.databaseURL(o) == "" || a.redisURL(o) == "") {
		return usageErrorf("%s needs the shared store and queue: set --database-url (or REIN_DATABASE_URL) to PostgreSQL "+
			"and --redis-url (or REIN_REDIS_URL) to Redis, the same for every process", processName(o.mode))
	}
	dataDir := a.serverDataDir(o.dataDir)
	db, where, err := a.openServerStore(ctx, o, dataDir)
	if err != nil {
		return err
	}
	proc.onClose(db.Close)
	kbs, closeKB, err := a.openServerKB(ctx, o)
	if err != nil {
		return err
	}
	if closeKB != nil {
		proc.onClose(closeKB)
	}
	bus, err := a.openServerBus(ctx, o)
	if err != nil {
		return err
	}
	proc.onClose(bus.Close)
	q, err := a.openServerQueue(ctx, o, db, logger)
	if err != nil {
		return err
	}
	if q != nil {
		proc.onClose(q.Close)
	}
	metrics := proc.metrics
	tenancy, commands := serveTenancy(o, auth, dataDir, roots, logger)
	cfg := runner.ServiceConfig{Tenancy: tenancy, Sessions: db, Ledger: db, Bus: bus, DataDir: filepath.Join(dataDir, "sessions"),
		Resolve: a.resolveModel, ResolveEmbedder: a.resolveEmbedder, MaxConcurrent: o.maxConcurrent, AllowBypass: o.allowBypass,
		Getenv: a.getenv, Now: a.Now, UserAgent: "rein/" + Version(), KnowledgeBases: kbs}
	if m := serveMirror(o.historyMirror && o.mode != modeAPI, db, logger); m != nil {
		cfg.Mirror = m
	}
	if q != nil {
		cfg.Queue = q
		cfg.Broadcast = bus.(runner.Broadcaster) // the Redis bus, as q is Redis's
	}
	svc, err := proc.service(ctx, cfg)
	if err != nil {
		return err
	}
	if q != nil && o.mode != modeAPI {
		proc.loop("the run queue", svc.Work)
	}
	if o.mode != modeWorker {
		var con *console.Console
		if o.console {
			con = console.New(console.Options{Now: a.Now})
		}
		srv, err := server.New(server.Config{Console: con, Runtime: svc, Sessions: db, Ledger: db, Bus: bus, Auth: auth,
			Roots: roots, RateLimit: o.rateLimit, Burst: int(2 * o.rateLimit), Version: Version(), Metrics: metrics.Handler(),
			MetricsPublic: o.metricsPublic, OnSSE: metrics.SSEClients, OnRequest: metrics.HTTPRequest, Logger: logger, Now: a.Now,
			Checks: readyChecks(db, bus, q, o.leaseTTL), OnSessionChange: svc.NotifyMirror, Commands: commands,
			AllowedHosts: o.allowedHosts, AllowedOrigins: o.allowedOrigins, CORSCredentials: o.corsCredentials,
			MaxStreamsPerCaller: o.maxStreamsPerCaller, MaxStreams: o.maxStreams, Jobs: serviceJobs{svc},
			Workspaces: serviceWorkspaces{svc: svc, now: a.now}})
		if err != nil {
			return fail(ExitError, "%v", err)
		}
		addr, err := proc.listen("--addr", o.addr, srv.Handler(), false, srv.CloseStreams)
		if err != nil {
			return err
		}
		proc.afterRuns(func() { // the runs' last events reach their streams before the process exits
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			if err := srv.EndStreams(ctx); err != nil {
				logger.Warn("event streams were still writing at the shutdown deadline", "err", err)
			}
		})
		logger.Info("rein serve listening", "addr", addr.String(), "data_dir", dataDir, "store", where, "roots", strings.Join(roots, ","),
			"auth", auth.Configured(), "queue", q != nil, "version", Version())
		fmt.Fprintf(a.Stderr, "rein: serving on http://%s (data in %s)\n", addr, where)
		if con != nil {
			a.printConsole(con, auth, addr.String())
		}
	} else {
		if o.addr != "" {
			addr, err := proc.listen("--addr", o.addr, server.ProbeHandler(Version(), commands, readyChecks(db, bus, nil, 0), logger), false)
			if err != nil {
				return err
			}
			fmt.Fprintf(a.Stderr, "rein: probes on http://%s/health and /ready\n", addr)
		}
		logger.Info("rein worker running", "data_dir", dataDir, "store", where, "max_concurrent", o.maxConcurrent, "version", Version())
		fmt.Fprintf(a.Stderr, "rein: working (data in %s)\n", where)
	}
	return proc.wait(ctx, o.shutdownTimeout)
}

// processName names the process of a mode in messages.
func processName(mode string) string {
	if mode == modeWorker {
		return "rein worker"
	}
	return "rein serve --mode " + mode
}

// serveRoots returns the --root directories, absolute, or the current
// directory.
func (a *App) serveRoots(o *serveOptions) ([]string, error) {
	roots := o.roots
	if len(roots) == 0 {
		roots = []string{a.Dir}
	}
	for i, r := range roots {
		roots[i] = a.abs(r)
		if fi, err := os.Stat(roots[i]); err != nil || !fi.IsDir() {
			return nil, usageErrorf("--root %s: not a directory", roots[i])
		}
	}
	return roots, nil
}

// serverStore is what the server keeps its sessions and ledger in.
type serverStore interface {
	session.Store
	session.Ledger
	Close() error
}

// readyChecks are the dependencies /ready checks: the store and the bus,
// where they can be pinged (PostgreSQL, SQLite, Redis), and, with a run
// queue, that its work is taken within the lease time (SPEC API-5).
func readyChecks(store, bus any, q queue.Queue, leaseTTL time.Duration) map[string]func(context.Context) error {
	type pinger interface{ Ping(context.Context) error }
	checks := map[string]func(context.Context) error{}
	if q != nil {
		checks[server.CheckWorkers] = queue.TakenCheck(q, leaseTTL)
	}
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
	url := a.databaseURL(o)
	if url == "" {
		db, err := sqlite.Open(filepath.Join(dataDir, "rein.db"), sqlite.Options{})
		if err != nil {
			return nil, "", fail(ExitError, "--data-dir %s: %v", dataDir, err)
		}
		return db, dataDir, nil
	}
	octx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	db, err := postgres.Open(octx, url, postgres.Options{MaxConns: o.databaseMaxConns})
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
	url := a.redisURL(o)
	if url == "" {
		return eventbus.NewMemory(eventbus.Options{Buffer: 256}), nil
	}
	bus, err := redisbus.New(ctx, url, redisbus.Options{Buffer: 256, Prefix: o.redisPrefix + "bus:"})
	if err != nil {
		return nil, fail(ExitError, "--redis-url: %v", err)
	}
	return bus, nil
}

// resolveMaxConns checks --database-max-conns and, when it is not given,
// takes REIN_DATABASE_MAX_CONNS; 0 is the store's default (issue 30: a
// worker's pool of max(CPUs, 4) serialises 16 sessions' runs).
func (a *App) resolveMaxConns(o *serveOptions) error {
	const want = "want a whole number of connections, at least 1 (the default is the number of CPUs, at least 4)"
	if o.databaseMaxConns < 0 {
		return usageErrorf("--database-max-conns %d: %s", o.databaseMaxConns, want)
	}
	if env := strings.TrimSpace(a.getenv("REIN_DATABASE_MAX_CONNS")); o.databaseMaxConns == 0 && env != "" {
		n, err := strconv.Atoi(env)
		if err != nil || n < 1 {
			return usageErrorf("REIN_DATABASE_MAX_CONNS=%q: %s", env, want)
		}
		o.databaseMaxConns = n
	}
	return nil
}

// databaseURL is --database-url, else REIN_DATABASE_URL.
func (a *App) databaseURL(o *serveOptions) string {
	if o.databaseURL != "" {
		return o.databaseURL
	}
	return a.getenv("REIN_DATABASE_URL")
}

// redisURL is --redis-url, else REIN_REDIS_URL.
func (a *App) redisURL(o *serveOptions) string {
	if o.redisURL != "" {
		return o.redisURL
	}
	return a.getenv("REIN_REDIS_URL")
}

// openServerQueue opens the run queue on Redis when a Redis URL is set:
// runs then go through it, so any number of processes share the work. It
// returns nil without Redis (runs are scheduled in the process).
func (a *App) openServerQueue(ctx context.Context, o *serveOptions, db session.Ledger, logger *slog.Logger) (queue.Queue, error) {
	url := a.redisURL(o)
	if url == "" {
		return nil, nil
	}
	if o.leaseTTL != 0 && o.leaseTTL < time.Second {
		return nil, usageErrorf("--lease-ttl %s: want at least 1s (renewals go every third of it)", o.leaseTTL)
	}
	q, err := redisqueue.New(ctx, url, redisqueue.Options{Prefix: o.redisPrefix + "queue:", Options: queue.Options{TTL: o.leaseTTL,
		Resync: runner.PendingSessions(db), Logger: logger.With("component", "queue")}})
	if err != nil {
		return nil, fail(ExitError, "--redis-url: %v", err)
	}
	return q, nil
}

// printConsole says where the web console is: without authentication, as
// a one-time login link for the local caller (SPEC API-10).
func (a *App) printConsole(con *console.Console, auth server.Auth, addr string) {
	base := "http://" + addr
	if auth.Configured() {
		fmt.Fprintf(a.Stderr, "rein: console at %s/ (sign in with a token, or through the trusted proxy)\n", base)
		return
	}
	local := auth.Local
	if local == "" {
		local = server.DefaultLocalCaller
	}
	tok, exp, err := con.IssueLink(local, time.Time{})
	if err != nil {
		fmt.Fprintf(a.Stderr, "rein: console at %s/: no login link: %v\n", base, err)
		return
	}
	fmt.Fprintf(a.Stderr, "rein: console: open %s (a one-time login link, valid until %s; POST /console/links makes another)\n",
		server.ConsoleLoginURL(base, tok), exp.Local().Format("15:04"))
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

// checkBrowserFlags refuses allow-list entries that would open the server
// to any web page, and stream caps below one, before anything is opened.
func checkBrowserFlags(o *serveOptions) error {
	for _, h := range o.allowedHosts {
		if _, _, err := server.ParseAllowedHost(h); err != nil {
			return usageErrorf("--allowed-host: %v", err)
		}
	}
	for _, origin := range o.allowedOrigins {
		if _, err := server.ParseAllowedOrigin(origin); err != nil {
			return usageErrorf("--allowed-origin: %v", err)
		}
	}
	if o.corsCredentials && len(o.allowedOrigins) == 0 {
		return usageErrorf("--cors-credentials needs --allowed-origin: credentials go only to the origins listed")
	}
	if o.maxStreamsPerCaller < 1 || o.maxStreams < 1 {
		return usageErrorf("--max-streams-per-caller %d, --max-streams %d: want at least 1 each", o.maxStreamsPerCaller, o.maxStreams)
	}
	return nil
}

// loopbackAddr reports whether a listen address ("127.0.0.1:7879",
// "localhost:0", "[::1]:9000") stays on this machine: rein serve without
// authentication and rein mcp serve --http listen only where it does. An
// empty host (":7879") listens everywhere and does not.
func loopbackAddr(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.IsLoopback()
}
