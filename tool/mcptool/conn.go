package mcptool

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// defaultCallTimeout bounds a call when Server.CallTimeout is zero.
const defaultCallTimeout = 2 * time.Minute

// conn is the connection to one server. One goroutine (run) owns the
// connection's life: it connects, serves, notices the end, tears down and
// reconnects. Calls read the current session under mu.
type conn struct {
	m       *Manager
	cfg     Server
	prefix  string        // "mcp__<server>__"
	kind    string        // "stdio", "http" or "sse"
	started chan struct{} // closed once the first attempt is over
	refresh chan struct{} // the server said its tool list changed
	client  *mcp.Client
	log     *slog.Logger

	mu      sync.Mutex
	state   State
	err     string
	live    *live   // the session, while ready
	tools   []*Tool // the last list known
	offered map[string]bool
	// instructions are the server's (from its initialize result); screen
	// is what screening them and the tools found (SPEC MCP-2).
	instructions string
	screen       Screening
	changed      chan struct{} // closed and replaced on every state change

	inflight atomic.Int32 // requests under way (tests watch it)
}

// live is one session with a server and what it holds: the process of a
// stdio server, the HTTP client of a remote one.
type live struct {
	ctx    context.Context // done at teardown: calls in flight end
	cancel context.CancelFunc
	cs     *mcp.ClientSession
	caps   *mcp.ServerCapabilities
	proc   *process
	httpc  *http.Client
	broken chan struct{} // closed by fail
	once   sync.Once
	why    error
}

// fail marks the session dead (a call found its connection broken); the
// connection goroutine tears it down and reconnects.
func (l *live) fail(err error) {
	l.once.Do(func() {
		l.why = err
		close(l.broken)
	})
}

func newConn(m *Manager, s Server) *conn {
	c := &conn{
		m:       m,
		cfg:     s,
		prefix:  "mcp__" + sanitize(s.Name) + "__",
		kind:    "stdio",
		started: make(chan struct{}),
		refresh: make(chan struct{}, 1),
		state:   StateConnecting,
		changed: make(chan struct{}),
	}
	switch {
	case s.URL != "" && s.SSE:
		c.kind = "sse"
	case s.URL != "":
		c.kind = "http"
	}
	c.log = m.opts.Logger.With("mcp_server", s.Name)
	c.client = mcp.NewClient(&mcp.Implementation{Name: m.opts.ClientName, Version: m.opts.ClientVersion},
		&mcp.ClientOptions{
			Logger: c.log,
			// No roots, sampling or elicitation: rein offers none of them.
			Capabilities: &mcp.ClientCapabilities{},
			ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
				select {
				case c.refresh <- struct{}{}:
				default:
				}
			},
		})
	return c
}

// setState records a new state; l is the session when ready.
func (c *conn) setState(st State, err string, l *live) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.transition(st, err, l)
}

// transition is setState with mu held.
func (c *conn) transition(st State, err string, l *live) {
	if c.state == StateClosed {
		return
	}
	c.state, c.err, c.live = st, err, l
	close(c.changed)
	c.changed = make(chan struct{})
}

func (c *conn) status() Status {
	c.mu.Lock()
	st := Status{Server: c.cfg.Name, State: c.state, Err: c.err, Tools: len(c.tools), Transport: c.kind, Screening: c.screen}
	c.mu.Unlock()
	st.Withheld = c.withholds(st.Screening)
	return st
}

// withheld reports whether the server's screening flagged something the
// user has not accepted: its tools are then neither offered nor callable.
func (c *conn) withheld() bool {
	c.mu.Lock()
	s := c.screen
	c.mu.Unlock()
	return c.withholds(s)
}

// withholds reports whether the screening s of the server flagged
// something the user has not accepted.
func (c *conn) withholds(s Screening) bool {
	return s.Flagged() && !c.m.accepted(c.cfg.Name, s.Hash)
}

func (c *conn) currentTools() []*Tool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.tools
}

// offers reports whether the server's current list holds a tool.
func (c *conn) offers(remote string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.offered[remote]
}

func (c *conn) callTimeout() time.Duration {
	if c.cfg.CallTimeout > 0 {
		return c.cfg.CallTimeout
	}
	return defaultCallTimeout
}

// markStarted ends Start's wait for this server.
func (c *conn) markStarted() {
	select {
	case <-c.started:
	default:
		close(c.started)
	}
}

// run connects, serves and reconnects until ctx is done.
func (c *conn) run(ctx context.Context) {
	defer c.markStarted()
	failures := 0
	for {
		l, list, err := c.dial(ctx)
		if ctx.Err() != nil {
			if l != nil {
				c.teardown(l)
			}
			return
		}
		if err != nil {
			failures++
			c.setState(StateFailed, err.Error(), nil)
			c.log.Warn("mcp server failed", "err", err, "attempt", failures)
			c.markStarted()
			if !sleep(ctx, c.backoff(failures)) {
				return
			}
			continue
		}
		c.setTools(list, false)
		c.setState(StateReady, "", l)
		c.log.Debug("mcp server ready", "tools", len(list), "transport", c.kind)
		c.markStarted()
		since := time.Now()
		why := c.serve(ctx, l)
		c.setState(StateReconnecting, errText(why), nil)
		c.teardown(l)
		if ctx.Err() != nil {
			return
		}
		c.log.Info("mcp server connection lost; reconnecting", "err", why)
		if time.Since(since) > c.m.opts.MaxBackoff {
			failures = 0
		}
		failures++
		if !sleep(ctx, c.backoff(failures)) {
			return
		}
	}
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// backoff is the wait before attempt n+1 after n failures: MinBackoff
// doubled n-1 times, capped at MaxBackoff, less up to a tenth of jitter so
// that many clients of one server do not reconnect in step.
func (c *conn) backoff(n int) time.Duration {
	d := c.m.opts.MinBackoff
	for i := 1; i < n && d < c.m.opts.MaxBackoff; i++ {
		d *= 2
	}
	d = min(d, c.m.opts.MaxBackoff)
	return d - rand.N(d/10+1)
}

// sleep waits d or until ctx is done; it reports whether d passed.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// dial makes one connection attempt: start or reach the server, the MCP
// handshake, the tool list.
func (c *conn) dial(ctx context.Context) (*live, []*mcp.Tool, error) {
	ctx, cancel := context.WithTimeout(ctx, c.m.opts.ConnectTimeout)
	defer cancel()
	select { // a change announced by the session before is moot
	case <-c.refresh:
	default:
	}
	l, tr, err := c.open(ctx)
	if err != nil {
		return nil, nil, err
	}
	cs, err := c.client.Connect(ctx, tr, nil)
	if err != nil {
		c.teardown(l)
		return nil, nil, c.startError(fmt.Errorf("connect: %w", err), l)
	}
	l.cs = cs
	l.caps = &mcp.ServerCapabilities{}
	if r := cs.InitializeResult(); r != nil {
		if r.Capabilities != nil {
			l.caps = r.Capabilities
		}
		c.mu.Lock()
		c.instructions = r.Instructions
		c.mu.Unlock()
	}
	var list []*mcp.Tool
	if l.caps.Tools != nil {
		if list, err = listTools(ctx, cs); err != nil {
			c.teardown(l)
			return nil, nil, c.startError(fmt.Errorf("list tools: %w", err), l)
		}
	}
	return l, list, nil
}

// startError adds to err what the server process said before it died.
func (c *conn) startError(err error, l *live) error {
	if l.proc == nil {
		return err
	}
	return fmt.Errorf("%w%s", err, l.proc.describe())
}

// open starts the server process or prepares the HTTP client, and returns
// the transport to connect over.
func (c *conn) open(ctx context.Context) (*live, mcp.Transport, error) {
	lctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	l := &live{ctx: lctx, cancel: cancel, broken: make(chan struct{})}
	switch {
	case c.cfg.transport != nil:
		tr, err := c.cfg.transport(ctx)
		if err != nil {
			cancel()
			return nil, nil, err
		}
		return l, tr, nil
	case c.cfg.URL != "" && c.cfg.SSE:
		l.httpc = newHTTPClient(c.cfg.Headers)
		return l, &sseTransport{inner: &mcp.SSEClientTransport{Endpoint: c.cfg.URL, HTTPClient: l.httpc}, live: lctx}, nil
	case c.cfg.URL != "":
		l.httpc = newHTTPClient(c.cfg.Headers)
		return l, &mcp.StreamableClientTransport{Endpoint: c.cfg.URL, HTTPClient: l.httpc}, nil
	}
	p, stdout, stdin, err := startProcess(c.cfg)
	if err != nil {
		cancel()
		return nil, nil, err
	}
	l.proc = p
	return l, &mcp.IOTransport{Reader: stdout, Writer: stdin}, nil
}

// teardown ends a session: calls in flight end, the session closes (a
// stdio server sees its stdin close), the process group is killed.
func (c *conn) teardown(l *live) {
	l.cancel()
	if l.cs != nil {
		_ = l.cs.Close()
	}
	if l.proc != nil {
		l.proc.stop()
	}
	if l.httpc != nil {
		l.httpc.CloseIdleConnections()
	}
}

// serve watches a ready session until it ends, fetching the tool list again
// when the server says it changed. It returns why the session ended (nil
// when ctx is done).
func (c *conn) serve(ctx context.Context, l *live) error {
	waited := make(chan error, 1)
	go func() { waited <- l.cs.Wait() }()
	var exited <-chan struct{}
	if l.proc != nil {
		exited = l.proc.exited
	}
	for {
		select {
		case <-ctx.Done():
			return nil
		case err := <-waited:
			return fmt.Errorf("the connection closed%s%s", suffix(err), c.exitNote(l))
		case <-exited:
			return fmt.Errorf("the server process exited%s", l.proc.describe())
		case <-l.broken:
			return l.why
		case <-c.refresh:
			if err := c.refetch(ctx, l); err != nil {
				c.lost(l, err)
				return err
			}
		}
	}
}

func suffix(err error) string {
	if err == nil {
		return ""
	}
	return ": " + err.Error()
}

// exitNote describes the process when it has exited.
func (c *conn) exitNote(l *live) string {
	if l.proc == nil {
		return ""
	}
	select {
	case <-l.proc.exited:
		return l.proc.describe()
	default:
		return ""
	}
}

// refetch lists the tools again after notifications/tools/list_changed. It
// returns an error only when the connection is gone.
func (c *conn) refetch(ctx context.Context, l *live) error {
	ctx, cancel := context.WithTimeout(ctx, c.m.opts.ConnectTimeout)
	defer cancel()
	list, err := listTools(ctx, l.cs)
	if err != nil {
		if ctx.Err() == nil && brokenConn(err) {
			return fmt.Errorf("list tools: %w", err)
		}
		c.log.Warn("mcp server: list tools after a change", "err", err)
		return nil
	}
	c.setTools(list, true)
	return nil
}

// setTools replaces the tool list. OnToolsChanged is called when the server
// announced the change (announced), or when the list differs from the one
// known before a reconnection.
func (c *conn) setTools(list []*mcp.Tool, announced bool) {
	tools, offered := c.buildTools(list)
	c.mu.Lock()
	instructions := c.instructions
	c.mu.Unlock()
	sc := screen(c.cfg.Name, instructions, tools, c.m.opts.Screen)
	if sc.Flagged() {
		c.log.Warn("mcp server: its tool definitions look like a prompt injection", "findings", sc.Explain(3))
	}
	c.mu.Lock()
	old := c.tools
	hadList := c.offered != nil
	c.tools, c.offered, c.screen = tools, offered, sc
	c.mu.Unlock()
	if f := c.m.opts.OnToolsChanged; f != nil && (announced || hadList && !sameTools(old, tools)) {
		f(c.cfg.Name)
	}
}

// listTools fetches every page of a server's tool list.
func listTools(ctx context.Context, cs *mcp.ClientSession) ([]*mcp.Tool, error) {
	var out []*mcp.Tool
	for t, err := range cs.Tools(ctx, nil) {
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, nil
}

// brokenConn reports whether err from a request means the connection is
// gone, rather than an answer from the server.
func brokenConn(err error) bool {
	if errors.Is(err, mcp.ErrConnectionClosed) {
		return true
	}
	var rpc *jsonrpc.Error
	return !errors.As(err, &rpc)
}

// session returns the ready session, waiting while the server connects or
// reconnects, until ctx is done (timeout is what ctx was given, for the
// message).
func (c *conn) session(ctx context.Context, timeout time.Duration) (*live, error) {
	for {
		c.mu.Lock()
		st, l, why, changed := c.state, c.live, c.err, c.changed
		c.mu.Unlock()
		switch st {
		case StateReady:
			return l, nil
		case StateClosed:
			return nil, unavailable("mcp server %q is closed", c.cfg.Name)
		case StateFailed:
			return nil, unavailable("mcp server %q is not connected: %s (retrying in the background)",
				c.cfg.Name, why)
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return nil, unavailable("mcp server %q is %s; gave up waiting after %s",
				c.cfg.Name, st, timeout)
		}
	}
}

// with runs fn on the ready session, bounded by the call timeout (the wait
// for a reconnection included). A connection found broken is handed to the
// connection goroutine, which reconnects. The error, if any, says in words
// what happened; what names the request ("tool echo").
func (c *conn) with(ctx context.Context, what string, fn func(context.Context, *live) error) error {
	timeout := c.callTimeout()
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	l, err := c.session(cctx, timeout)
	if err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("mcp server %q: %s: cancelled", c.cfg.Name, what)
		}
		return err
	}
	stop := context.AfterFunc(l.ctx, cancel)
	defer stop()
	c.inflight.Add(1)
	err = fn(cctx, l)
	c.inflight.Add(-1)
	switch {
	case err == nil:
		return nil
	case ctx.Err() != nil:
		return fmt.Errorf("mcp server %q: %s: cancelled", c.cfg.Name, what)
	case l.ctx.Err() != nil:
		return unavailable("mcp server %q: %s: the connection closed during the call", c.cfg.Name, what)
	case errors.Is(cctx.Err(), context.DeadlineExceeded):
		return fmt.Errorf("mcp server %q: %s: timed out after %s", c.cfg.Name, what, timeout)
	case !brokenConn(err):
		return fmt.Errorf("mcp server %q: %s: %w", c.cfg.Name, what, err)
	}
	c.lost(l, err)
	return unavailable("mcp server %q: %s: connection lost (%v); reconnecting", c.cfg.Name, what, err)
}

// lost marks a session found broken: the server is reconnecting from now
// on, for the callers that follow, and the connection goroutine tears the
// session down.
func (c *conn) lost(l *live, err error) {
	l.fail(err)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.live == l && c.state == StateReady {
		c.transition(StateReconnecting, err.Error(), nil)
	}
}

// unavailableError is an error that says in words why a server could not
// be reached, and matches ErrUnavailable.
type unavailableError struct{ msg string }

func (e *unavailableError) Error() string        { return e.msg }
func (e *unavailableError) Is(target error) bool { return target == ErrUnavailable }

func unavailable(format string, args ...any) error {
	return &unavailableError{msg: fmt.Sprintf(format, args...)}
}
