package server

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/danielgtaylor/huma/v2"
	"github.com/danielgtaylor/huma/v2/adapters/humago"

	"github.com/reinhq/rein/api"
	"github.com/reinhq/rein/console"
	"github.com/reinhq/rein/eventbus"
	"github.com/reinhq/rein/permission"
	"github.com/reinhq/rein/session"
)

// Runtime is what the server needs of the runner: it starts, cancels and
// answers runs. The runner implements it; the server owns the interface.
type Runtime interface {
	// Submit persists a queued run of the session — durable before it
	// returns: that is the promise of the 202 — and schedules it. The
	// run's Caller is s.Caller.
	Submit(ctx context.Context, s session.Submission) (*session.Run, error)
	// Cancel cancels a queued or running run and returns it; a run that
	// already ended is an error wrapping session.ErrConflict.
	Cancel(ctx context.Context, runID string) (*session.Run, error)
	// Answer answers the pending permission question of callID in run
	// runID (SPEC PERM-3); none pending is an error wrapping
	// session.ErrNotFound.
	Answer(ctx context.Context, runID, callID string, v permission.Verdict) error
}

// Config configures a [Server]. Runtime, Sessions, Ledger and Bus are
// required; every other zero field means its default.
type Config struct {
	// Runtime starts, cancels and answers runs (the runner).
	Runtime Runtime
	// Sessions holds the sessions; Ledger the workspaces, runs, durable
	// events and audit records.
	Sessions session.Store
	Ledger   session.Ledger
	// Bus carries the sessions' live events to SSE clients.
	Bus eventbus.Bus
	// Auth says how callers are identified (SPEC API-4).
	Auth Auth
	// Roots are the directories under which project workspaces may be
	// opened (SPEC WS-2); none refuses project workspaces. Each must exist.
	Roots []string
	// RateLimit is the requests a second allowed per caller (default 20;
	// negative: no limit) and Burst the bucket's size (default twice the
	// rate, 40 by default).
	RateLimit float64
	Burst     int
	// Heartbeat is the interval of SSE heartbeat comments (default 15s).
	Heartbeat time.Duration
	// AskTimeout is how long a permission question waits for an answer
	// before it is denied (default 5m). The runner enforces it; the server
	// only documents it.
	AskTimeout time.Duration
	// Version is reported by /health and the OpenAPI document (default
	// "dev").
	Version string
	// Metrics, when set, is served at /metrics — to callers only, unless
	// MetricsPublic.
	Metrics       http.Handler
	MetricsPublic bool
	// OnSSE is called with +1 when an SSE client connects and -1 when it
	// leaves (a metrics gauge); nil is fine.
	OnSSE func(delta int)
	// OnSessionChange, when set, is called after a session was created,
	// forked or deleted through the API (the history mirror copies it).
	OnSessionChange func(sessionID string)
	// OnRequest is called once a request is answered, with its route
	// pattern (never the raw path: a bounded label), status and duration;
	// nil is fine.
	OnRequest func(method, route string, status int, d time.Duration)
	// Logger receives a line per request and the errors behind 500s
	// (default slog.Default()).
	Logger *slog.Logger
	// Now is the clock (default time.Now).
	Now func() time.Time
	// MaxBodyBytes bounds request bodies (default 1 MiB).
	MaxBodyBytes int64
	// AllowedHosts are the names (and addresses), besides localhost, the
	// loopback addresses and the address a connection arrived at, that a
	// request's Host may name (SPEC API-8): "rein.example.com" (any port)
	// or "rein.example.com:8443". Any other Host is answered 421 before
	// anything else runs: that is what DNS rebinding sends. See
	// [ParseAllowedHost].
	AllowedHosts []string
	// AllowedOrigins are the web origins (https://app.example.com), besides
	// the server's own, whose pages may change state and read event streams
	// and that get CORS answers; never "*" or "null". See
	// [ParseAllowedOrigin].
	AllowedOrigins []string
	// CORSCredentials sends Access-Control-Allow-Credentials: true to the
	// allowed origins (their pages may then send cookies and HTTP
	// authentication).
	CORSCredentials bool
	// MaxStreamsPerCaller and MaxStreams cap the open event streams of a
	// caller and of the server (defaults 32 and 1024; negative: no cap);
	// beyond them a stream is refused with 429 (SPEC API-9).
	MaxStreamsPerCaller, MaxStreams int
	// Checks are the dependencies /ready checks, by name ("store", "bus"):
	// each returns nil when its dependency answers. None: /ready answers
	// ready whenever the process serves.
	Checks map[string]func(context.Context) error
	// Commands, reported by /ready, says how runs' commands run (SPEC
	// API-9; runner.Tenancy.Commands); "" where this process runs none.
	Commands string
	// Jobs holds sessions' background jobs: GET /sessions/{id}/jobs
	// lists them, deleting a session stops them (SPEC TOOL-8); nil lists
	// none.
	Jobs JobHolder
	// Console, when set, serves the web console at / and /console/ and
	// holds its sign-ins (SPEC API-10): a request carrying its cookie is
	// the signed-in caller, and a write made with it needs its CSRF
	// token. Nil serves no console (rein serve --console=false).
	Console *console.Console

	// Workspaces shows workspaces' catalogs, memory and knowledge bases
	// (SPEC API-1, API-10); nil leaves those operations out.
	Workspaces WorkspaceData
}

func init() {
	// JSON field names are matched exactly. encoding/json matches them
	// case-insensitively and huma by default validates likewise — but it
	// validates one of two keys differing in case ({"max_turns":1,
	// "MAX_TURNS":-5}) while the decoder keeps the last, so a request
	// could slip a value past the schema. huma has no per-API switch.
	huma.ValidateStrictCasing = true
}

// The defaults of [Config].
const (
	DefaultRateLimit    = 20
	DefaultBurst        = 40
	DefaultHeartbeat    = 15 * time.Second
	DefaultMaxBodyBytes = 1 << 20
)

// Server is rein's HTTP API. Build it with [New]; serve [Server.Handler].
type Server struct {
	cfg     Config
	log     *slog.Logger
	now     func() time.Time
	roots   []string // resolved: absolute, symbolic links followed
	auth    *authenticator
	limits  *limiter
	hosts   *hostPolicy
	origins *originPolicy
	streams *streamCaps
	mux     *http.ServeMux
	api     huma.API

	specOnce sync.Once
	spec     []byte
	specErr  error

	closing   chan struct{} // closed by CloseStreams
	closeOnce sync.Once
}

// CloseStreams ends every open event stream and those opened later (give
// it to http.Server.RegisterOnShutdown): an idle SSE client would otherwise
// hold a graceful shutdown until its deadline. Clients reconnect with
// Last-Event-ID to the next server.
func (s *Server) CloseStreams() {
	s.closeOnce.Do(func() { close(s.closing) })
}

// EndStreams ends every open event stream and those opened later, as
// CloseStreams does, and waits until the open ones have written what the
// bus delivered to them (a run's done event) and closed, or until ctx
// ends (its error is returned). A process calls it once its runs ended and
// before it exits: a stream's last writes are the server's own, after its
// handler returned, so nothing else waits for them (SPEC API-5).
func (s *Server) EndStreams(ctx context.Context) error {
	s.CloseStreams()
	return s.streams.waitIdle(ctx)
}

// New checks cfg and builds the server with every operation registered.
func New(cfg Config) (*Server, error) {
	var missing []string
	for _, c := range []struct {
		name  string
		unset bool
	}{{"Runtime", cfg.Runtime == nil}, {"Sessions", cfg.Sessions == nil}, {"Ledger", cfg.Ledger == nil}, {"Bus", cfg.Bus == nil}} {
		if c.unset {
			missing = append(missing, c.name)
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("server: config: %s not set", strings.Join(missing, ", "))
	}
	cfg = withDefaults(cfg)
	roots, err := resolveRoots(cfg.Roots)
	if err != nil {
		return nil, err
	}
	auth, err := newAuthenticator(cfg.Auth, cfg.Now)
	if err != nil {
		return nil, err
	}
	auth.console = cfg.Console
	hosts, err := newHostPolicy(cfg.AllowedHosts)
	if err != nil {
		return nil, err
	}
	origins, err := newOriginPolicy(cfg.AllowedOrigins, cfg.CORSCredentials)
	if err != nil {
		return nil, err
	}
	s := &Server{cfg: cfg, log: cfg.Logger, now: cfg.Now, roots: roots, auth: auth,
		limits: newLimiter(cfg.RateLimit, cfg.Burst, maxLimited), hosts: hosts, origins: origins,
		streams: newStreamCaps(cfg.MaxStreamsPerCaller, cfg.MaxStreams), mux: http.NewServeMux(),
		closing: make(chan struct{})}
	s.api = humago.New(s.mux, s.humaConfig())
	s.api.UseMiddleware(s.gate)
	s.registerMeta()
	s.registerWorkspaces()
	s.registerSessions()
	s.registerExport()
	s.registerRuns()
	s.registerJobs()
	s.registerEvents()
	s.registerAudit()
	s.registerConsole()

	s.registerCatalog()
	s.registerMemory()
	s.registerKB()
	s.registerQuestions()
	s.registerSessionContext()
	s.completeDocument()
	s.mux.HandleFunc("/", s.noRoute)
	return s, nil
}

func withDefaults(cfg Config) Config {
	if cfg.RateLimit == 0 {
		cfg.RateLimit = DefaultRateLimit
		if cfg.Burst <= 0 {
			cfg.Burst = DefaultBurst
		}
	}
	if cfg.Burst <= 0 {
		cfg.Burst = max(1, int(2*cfg.RateLimit))
	}
	if cfg.Heartbeat <= 0 {
		cfg.Heartbeat = DefaultHeartbeat
	}
	if cfg.AskTimeout <= 0 {
		cfg.AskTimeout = permission.DefaultAskTimeout
	}
	if cfg.Version == "" {
		cfg.Version = "dev"
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.MaxBodyBytes <= 0 {
		cfg.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if cfg.MaxStreamsPerCaller == 0 {
		cfg.MaxStreamsPerCaller = DefaultMaxStreamsPerCaller
	}
	if cfg.MaxStreams == 0 {
		cfg.MaxStreams = DefaultMaxStreams
	}
	return cfg
}

// Handler returns the server's HTTP handler.
func (s *Server) Handler() http.Handler { return http.HandlerFunc(s.serveLogged) }

// OpenAPI returns the OpenAPI 3.1 document describing every operation, as
// served at /openapi.json.
func (s *Server) OpenAPI() *huma.OpenAPI { return s.api.OpenAPI() }

// securityScheme names the bearer scheme of the OpenAPI document.
const securityScheme = "bearer"

func (s *Server) humaConfig() huma.Config {
	hc := huma.DefaultConfig("rein", s.cfg.Version)
	// No $schema links in bodies, no docs UI, no schema files: the one
	// document is /openapi.json, served by an operation of its own.
	hc.CreateHooks = nil
	hc.OpenAPIPath, hc.DocsPath, hc.SchemasPath = "", "", ""
	hc.Transformers = []huma.Transformer{explainProblem}
	// A mistyped filter (?workspace= for ?workspace_id=) is an error, not
	// a listing of everything.
	hc.RejectUnknownQueryParameters = true
	hc.Servers = []*huma.Server{{URL: "/", Description: "this server"}}
	hc.Info.Description = "rein's headless agent runtime. A POST to a session's messages queues a run " +
		"(202); the session's event stream (SSE) carries its events; permission questions are answered at " +
		"/runs/{id}/permissions/{call_id}. Every resource belongs to its caller: another caller's id is a 404. " +
		"A request must name a host the server answers to (else 421); a request that changes state or opens a stream " +
		"from a web page of another origin than the server's or an allowed one is refused (403); bodies are JSON " +
		"(Content-Type: application/json, else 415)."
	hc.Components.SecuritySchemes = map[string]*huma.SecurityScheme{
		securityScheme: {
			Type: "http", Scheme: "bearer", BearerFormat: "JWT",
			Description: "A JWT signed by the identity upstream (HS256, EdDSA or RS256, as the server is configured) " +
				"whose sub is the caller id and that has exp. Behind a trusted proxy, the proxy's caller header " +
				"replaces it; a server without authentication serves loopback clients as one local caller.",
		},
	}
	return hc
}

// operation returns an operation that needs a caller, documented with the
// errors every such operation may answer besides errs: 401 and 429, 421 (a
// Host the server does not answer to), and for state-changing operations
// and event streams 403 (a foreign Origin) and, with a body, 415.
func (s *Server) operation(method, path, id, summary string, status int, errs ...int) huma.Operation {
	errs = append(errs, http.StatusUnauthorized, http.StatusMisdirectedRequest, http.StatusTooManyRequests)
	if method != http.MethodGet || isEventStream(path) {
		errs = append(errs, http.StatusForbidden)
	}
	if method == http.MethodPost || method == http.MethodPut || method == http.MethodPatch {
		errs = append(errs, http.StatusUnsupportedMediaType)
	}
	return huma.Operation{
		OperationID:   id,
		Method:        method,
		Path:          path,
		Summary:       summary,
		DefaultStatus: status,
		MaxBodyBytes:  s.cfg.MaxBodyBytes,
		Security:      []map[string][]string{{securityScheme: {}}},
		Errors:        errs,
	}
}

// public drops an operation's need for a caller (an empty list, so the
// document says so rather than leaving it out).
func public(op huma.Operation) huma.Operation {
	op.Security = []map[string][]string{}
	op.Errors = []int{http.StatusMisdirectedRequest, http.StatusTooManyRequests}
	return op
}

// caller returns the request's caller; it errs only if the gate did not run.
func caller(ctx context.Context) (string, error) {
	c := callerOf(ctx)
	if c == "" {
		return "", huma.Error401Unauthorized("no caller")
	}
	return c, nil
}

type healthOutput struct {
	Body api.Health
}

type rawOutput struct {
	ContentType string `header:"Content-Type"`
	Body        []byte
}

// registerMeta registers /health, /openapi.json and /metrics.
func (s *Server) registerMeta() {
	op := public(s.operation(http.MethodGet, "/health", "health", "Report that the server is up", http.StatusOK))
	op.Tags = []string{"meta"}
	huma.Register(s.api, op, func(context.Context, *struct{}) (*healthOutput, error) {
		return &healthOutput{Body: api.Health{Status: "ok", Version: s.cfg.Version}}, nil
	})

	op = public(s.operation(http.MethodGet, "/ready", "ready", "Report whether the server's dependencies answer", http.StatusOK))
	op.Tags = []string{"meta"}
	op.Description = "Each dependency (the store, the event bus) is checked within 2 seconds. 503 with Retry-After names the ones that do not answer and the cause; /health says only that the process is up."
	huma.Register(s.api, op, s.ready)

	op = public(s.operation(http.MethodGet, "/openapi.json", "openapi", "This OpenAPI 3.1 document", http.StatusOK))
	op.Tags = []string{"meta"}
	op.Responses = map[string]*huma.Response{"200": {Description: "The document.",
		Content: map[string]*huma.MediaType{"application/json": {Schema: &huma.Schema{Type: huma.TypeObject}}}}}
	huma.Register(s.api, op, func(ctx context.Context, _ *struct{}) (*rawOutput, error) {
		s.specOnce.Do(func() { s.spec, s.specErr = s.api.OpenAPI().MarshalJSON() })
		if s.specErr != nil {
			return nil, s.fail(ctx, "rendering the OpenAPI document", s.specErr)
		}
		return &rawOutput{ContentType: "application/json", Body: s.spec}, nil
	})

	if s.cfg.Metrics == nil {
		return
	}
	op = s.operation(http.MethodGet, "/metrics", "metrics", "Prometheus metrics", http.StatusOK)
	if s.cfg.MetricsPublic {
		op = public(op)
	}
	op.Tags = []string{"meta"}
	op.Responses = map[string]*huma.Response{"200": {Description: "Metrics in the Prometheus text format.",
		Content: map[string]*huma.MediaType{"text/plain": {Schema: &huma.Schema{Type: huma.TypeString}}}}}
	huma.Register(s.api, op, func(context.Context, *struct{}) (*huma.StreamResponse, error) {
		return &huma.StreamResponse{Body: func(ctx huma.Context) {
			r, w := humago.Unwrap(ctx)
			s.cfg.Metrics.ServeHTTP(w, r)
		}}, nil
	})
}
