package mcptool

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/reinhq/rein/tool"
)

// Server is one MCP server to connect to: a command (stdio) or a URL
// (streamable HTTP), never both.
type Server struct {
	// Name identifies the server; its tools are named mcp__<Name>__<tool>.
	// Names must be unique, also once sanitised (see [ToolName]).
	Name string

	// Command and Args start a stdio server. Command is looked up in rein's
	// PATH when it holds no slash. The process runs in Dir (rein's working
	// directory when empty), in its own process group.
	Command string
	Args    []string
	// Env is the complete environment of the process: the caller builds it
	// and nothing of rein's environment is added. Nil means PATH and HOME
	// only, taken from rein's environment (PATH defaults to the system
	// directories) — never rein's provider keys or tokens.
	Env []string
	Dir string

	// URL is the endpoint of a streamable HTTP server; Headers are sent
	// with every request (Authorization, say).
	URL     string
	Headers map[string]string
	// SSE reaches URL over MCP's older HTTP+SSE transport (a GET stream of
	// server-sent events and POSTs to the endpoint it names) instead of
	// streamable HTTP: Claude Code's type "sse", still common.
	SSE bool

	// CallTimeout bounds each call (tools, resources, prompts), the wait
	// for a reconnection included. Zero means 2 minutes.
	CallTimeout time.Duration

	// transport, when set, replaces Command and URL: tests connect to an
	// in-process server through it.
	transport func(ctx context.Context) (mcp.Transport, error)
}

// Options configures a [Manager]. The zero value means the defaults.
type Options struct {
	// Logger receives connection events, keyed by "mcp_server". Nil
	// discards them.
	Logger *slog.Logger
	// ConnectTimeout bounds one connection attempt: starting the server,
	// the MCP handshake and listing its tools. Zero means 30 seconds.
	ConnectTimeout time.Duration
	// MinBackoff and MaxBackoff bound the wait between connection
	// attempts, which doubles from MinBackoff up to MaxBackoff. Zero means
	// 1 and 30 seconds.
	MinBackoff, MaxBackoff time.Duration
	// OnToolsChanged, if set, is called with the server's name after its
	// tool list was fetched again because the server announced a change
	// (notifications/tools/list_changed), and after a reconnection that
	// changed the list. It runs on the server's connection goroutine: it
	// should return quickly, and must not call Close.
	OnToolsChanged func(server string)
	// ClientName and ClientVersion are how rein introduces itself to the
	// servers. Empty means "rein" and "dev".
	ClientName, ClientVersion string
	// Screen checks one text a server puts in front of the model (its
	// instructions, a tool's name, description or a text of its input
	// schema) and returns the rules it matches, in words, or "" (SPEC
	// MCP-2). The runner passes the memory scanner's document rules
	// (runner.ScreenText). Nil screens nothing: no server is withheld.
	Screen func(text string) string
	// Accepted reports whether the user accepted a server whose screening
	// flagged something, by the [Screening.Hash] of what was flagged
	// (runner.MCPReviews keeps them). It is asked again each time, so an
	// acceptance applies at once. Nil accepts nothing: a flagged server is
	// withheld.
	Accepted func(server, hash string) bool
}

func (o Options) withDefaults() Options {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.ConnectTimeout <= 0 {
		o.ConnectTimeout = 30 * time.Second
	}
	if o.MinBackoff <= 0 {
		o.MinBackoff = time.Second
	}
	if o.MaxBackoff <= 0 {
		o.MaxBackoff = 30 * time.Second
	}
	o.MaxBackoff = max(o.MaxBackoff, o.MinBackoff)
	o.ClientName = cmp.Or(o.ClientName, "rein")
	o.ClientVersion = cmp.Or(o.ClientVersion, "dev")
	return o
}

// State is where a server's connection stands.
type State string

// The states of a server's connection.
const (
	// StateConnecting: the first connection attempt is under way.
	StateConnecting State = "connecting"
	// StateReady: connected; calls go through.
	StateReady State = "ready"
	// StateReconnecting: the connection dropped and is being re-established;
	// calls wait for it, up to their timeout.
	StateReconnecting State = "reconnecting"
	// StateFailed: the last connection attempt failed (Status.Err says
	// why); calls fail at once, and attempts go on in the background
	// unless the configuration itself is wrong.
	StateFailed State = "failed"
	// StateClosed: the manager was closed.
	StateClosed State = "closed"
)

// Status describes one server's connection.
type Status struct {
	Server string
	State  State
	// Err says why the server is failed or reconnecting; for a server that
	// could not start it ends with the last lines of its stderr.
	Err string
	// Tools is the number of tools the server offers (the last list known,
	// while reconnecting).
	Tools int
	// Transport is "stdio", "http" (streamable HTTP) or "sse".
	Transport string
	// Screening is what screening the server's instructions and tool
	// definitions found (SPEC MCP-2).
	Screening Screening
	// Withheld: the screening flagged something the user has not accepted;
	// the server's tools are neither offered nor callable, and the model
	// cannot reach its resources.
	Withheld bool
}

// ErrUnknownServer is returned for a server name the manager does not know.
var ErrUnknownServer = errors.New("mcp: unknown server")

// ErrUnavailable is returned when a server is not connected (failed,
// reconnecting beyond the call timeout, or closed).
var ErrUnavailable = errors.New("mcp: server unavailable")

// Manager keeps connections to several servers. Its methods are safe for
// concurrent use.
type Manager struct {
	opts   Options
	conns  []*conn // in the order given to Start
	byName map[string]*conn
	cancel context.CancelFunc
	wg     sync.WaitGroup
	once   sync.Once
}

// Start connects to all servers in parallel and returns once each is ready
// or has failed, each attempt bounded by Options.ConnectTimeout, or sooner
// when ctx is done (the attempts go on in the background). A server that
// fails does not fail the others: Status reports it and it is retried in the
// background with exponential backoff — unless its configuration is wrong
// (no name, a name already taken, neither or both of Command and URL), which
// leaves it failed for good. ctx bounds only this wait; the connections
// live until Close.
func Start(ctx context.Context, servers []Server, opts Options) *Manager {
	opts = opts.withDefaults()
	bg, cancel := context.WithCancel(context.WithoutCancel(ctx))
	m := &Manager{opts: opts, byName: map[string]*conn{}, cancel: cancel}
	taken := map[string]bool{}
	var started []chan struct{}
	for _, s := range servers {
		c := newConn(m, s)
		m.conns = append(m.conns, c)
		if err := validate(s, taken); err != nil {
			c.setState(StateFailed, err.Error(), nil)
			continue
		}
		m.byName[s.Name] = c
		started = append(started, c.started)
		m.wg.Go(func() { c.run(bg) })
	}
	for _, ch := range started {
		select {
		case <-ch:
		case <-ctx.Done():
			return m
		}
	}
	return m
}

// validate checks one server's configuration; taken holds the sanitised
// names already used.
func validate(s Server, taken map[string]bool) error {
	if s.Name == "" {
		return errors.New("the server has no name")
	}
	key := sanitize(s.Name)
	if taken[key] {
		return fmt.Errorf("another server is already named %q (names must differ once sanitised to [a-zA-Z0-9_-])", s.Name)
	}
	taken[key] = true
	switch {
	case s.transport != nil:
	case s.Command != "" && s.URL != "":
		return errors.New("both command and url are set; a server is one or the other")
	case s.Command == "" && s.URL == "":
		return errors.New("neither command nor url is set")
	case s.SSE && s.URL == "":
		return errors.New("sse is set without a url; the SSE transport reaches a url")
	}
	return nil
}

// Close stops every server — each stdio server's whole process group is
// killed — and every goroutine of the manager, and waits for them. Calls
// still running end with an error result. Close is idempotent.
func (m *Manager) Close() error {
	m.once.Do(func() {
		m.cancel()
		m.wg.Wait()
		for _, c := range m.conns {
			c.setState(StateClosed, "", nil)
		}
	})
	return nil
}

// Status returns the state of each server, in the order given to Start.
func (m *Manager) Status() []Status {
	out := make([]Status, 0, len(m.conns))
	for _, c := range m.conns {
		out = append(out, c.status())
	}
	return out
}

// Tools returns one tool per server tool, ordered by server name, then tool
// name, so the tool list (and the prompt-cache prefix) is stable. A
// withheld server's tools are left out (see [Status.Withheld]). A server
// that is reconnecting or failed after having been ready keeps its last known
// tools: calling them waits for it or fails with a clear result. Call Tools
// again after OnToolsChanged to see a server's new list.
func (m *Manager) Tools() []tool.Tool {
	conns := slices.Clone(m.conns)
	slices.SortStableFunc(conns, func(a, b *conn) int { return cmp.Compare(a.cfg.Name, b.cfg.Name) })
	var out []tool.Tool
	for _, c := range conns {
		if c.withheld() {
			continue
		}
		for _, t := range c.currentTools() {
			out = append(out, t)
		}
	}
	return out
}

// ServerTools returns every tool of one server as last listed, withheld or
// not, ordered by name: for people to review (rein mcp test), never for the
// model — give it [Manager.Tools].
func (m *Manager) ServerTools(server string) []*Tool {
	c, ok := m.byName[server]
	if !ok {
		return nil
	}
	return slices.Clone(c.currentTools())
}

// accepted asks Options.Accepted.
func (m *Manager) accepted(server, hash string) bool {
	return m.opts.Accepted != nil && m.opts.Accepted(server, hash)
}

// lookup returns the connection of a server by name.
func (m *Manager) lookup(server string) (*conn, error) {
	c, ok := m.byName[server]
	if !ok {
		return nil, fmt.Errorf("%w %q", ErrUnknownServer, server)
	}
	return c, nil
}
