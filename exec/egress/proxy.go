package egress

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"os"
	"strconv"
	"sync"
	"time"
)

// Proxy decides and carries a sandboxed command's connections: a target on
// the allow-list is dialled, anything else is refused with a 403 whose body
// names the target and Hint. It is safe for concurrent use; one Proxy
// serves any number of [Gate]s.
type Proxy struct {
	// Allow is the allow-list.
	Allow List
	// Hint ends every refusal: the setting that would allow the target.
	// "%s" in it, if any, is replaced by the target's host:port.
	Hint string
	// Lookup resolves a host name; nil means the system resolver.
	Lookup func(ctx context.Context, host string) ([]netip.Addr, error)
	// Dial connects to an address the checks let through; nil means a
	// net.Dialer with a 30 s timeout.
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)

	once      sync.Once
	transport *http.Transport
}

// Denial is one refused connection.
type Denial struct {
	// Target is host:port as the command asked for it.
	Target string
	// Reason says why, in a few words.
	Reason string
}

// errDenied marks a refusal, as opposed to a failure to connect.
type errDenied struct{ reason string }

func (e errDenied) Error() string { return e.reason }

// Gate is a Proxy listening on one socket, for one command: it keeps the
// denials of that command.
type Gate struct {
	p   *Proxy
	ln  net.Listener
	srv *http.Server

	mu      sync.Mutex
	denials []Denial
	done    chan struct{}
}

// Open listens on a unix socket at path (which must not exist) and serves
// until Close. The socket is made readable and writable by its owner only.
func (p *Proxy) Open(path string) (*Gate, error) {
	ln, err := net.Listen("unix", path)
	if err != nil {
		return nil, fmt.Errorf("egress: %w", err)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		ln.Close()
		return nil, fmt.Errorf("egress: %w", err)
	}
	return p.Serve(ln), nil
}

// Serve serves on ln until the Gate is closed.
func (p *Proxy) Serve(ln net.Listener) *Gate {
	g := &Gate{p: p, ln: ln, done: make(chan struct{})}
	g.srv = &http.Server{Handler: g, ReadHeaderTimeout: 30 * time.Second, MaxHeaderBytes: 64 << 10,
		ErrorLog: nil}
	go func() {
		_ = g.srv.Serve(ln)
		close(g.done)
	}()
	return g
}

// Addr is where the Gate listens.
func (g *Gate) Addr() net.Addr { return g.ln.Addr() }

// Denials returns the connections refused so far.
func (g *Gate) Denials() []Denial {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]Denial(nil), g.denials...)
}

// Close stops listening and ends the connections in flight.
func (g *Gate) Close() error {
	err := g.srv.Close()
	<-g.done
	return err
}

func (g *Gate) deny(w http.ResponseWriter, target string, reason string) {
	g.mu.Lock()
	if len(g.denials) < 256 {
		g.denials = append(g.denials, Denial{Target: target, Reason: reason})
	}
	g.mu.Unlock()
	msg := fmt.Sprintf("rein sandbox: the egress proxy refused %s: %s.", target, reason)
	if g.p.Hint != "" {
		msg += " " + expandHint(g.p.Hint, target)
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Rein-Denied", target)
	w.WriteHeader(http.StatusForbidden)
	_, _ = io.WriteString(w, msg+"\n")
}

func expandHint(hint, target string) string {
	out := ""
	for i := 0; i < len(hint); i++ {
		if hint[i] == '%' && i+1 < len(hint) && hint[i+1] == 's' {
			out += target
			i++
			continue
		}
		out += string(hint[i])
	}
	return out
}

// ServeHTTP implements http.Handler: CONNECT opens a tunnel, an
// absolute-form request is forwarded, anything else is a 400.
func (g *Gate) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodConnect {
		g.connect(w, r)
		return
	}
	if !r.URL.IsAbs() || r.URL.Scheme != "http" || r.URL.Host == "" {
		http.Error(w, "rein sandbox: the egress proxy takes CONNECT host:port, or a request for an absolute http:// URL; use it as HTTP_PROXY and HTTPS_PROXY", http.StatusBadRequest)
		return
	}
	t, err := ParseTarget(r.URL.Host, 80)
	if err != nil {
		g.deny(w, r.URL.Host, err.Error())
		return
	}
	if _, err := g.p.decide(r.Context(), t); err != nil {
		g.refuse(w, t, err)
		return
	}
	g.forward(w, r, t)
}

// refuse answers a failed decision: a 403 for a refusal, a 502 otherwise.
func (g *Gate) refuse(w http.ResponseWriter, t Target, err error) {
	var d errDenied
	if errors.As(err, &d) {
		g.deny(w, t.String(), d.reason)
		return
	}
	http.Error(w, fmt.Sprintf("rein sandbox: the egress proxy could not reach %s: %v", t, err), http.StatusBadGateway)
}

func (g *Gate) connect(w http.ResponseWriter, r *http.Request) {
	// The authority as sent: Go's parse would drop a user part
	// (evil@host:443) and keep the host.
	t, err := ParseTarget(r.RequestURI, 0)
	if err != nil {
		g.deny(w, r.RequestURI, err.Error())
		return
	}
	up, err := g.p.dialTarget(r.Context(), t)
	if err != nil {
		g.refuse(w, t, err)
		return
	}
	hj, ok := w.(http.Hijacker)
	if !ok {
		up.Close()
		http.Error(w, "rein sandbox: cannot tunnel", http.StatusInternalServerError)
		return
	}
	down, rw, err := hj.Hijack()
	if err != nil {
		up.Close()
		return
	}
	if _, err := io.WriteString(down, "HTTP/1.1 200 Connection Established\r\n\r\n"); err != nil {
		up.Close()
		down.Close()
		return
	}
	splice(down, rw.Reader, up)
}

// splice copies both ways until both are done; what the client sent past
// its request (buffered) goes first.
func splice(down net.Conn, buffered *bufio.Reader, up net.Conn) {
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		_, _ = io.Copy(up, io.MultiReader(io.LimitReader(buffered, int64(buffered.Buffered())), down))
		closeWrite(up)
	}()
	_, _ = io.Copy(down, up)
	closeWrite(down)
	wg.Wait()
	up.Close()
	down.Close()
}

func closeWrite(c net.Conn) {
	if cw, ok := c.(interface{ CloseWrite() error }); ok {
		_ = cw.CloseWrite()
		return
	}
	_ = c.Close()
}

// hopHeaders are the headers of one hop, never forwarded.
var hopHeaders = []string{"Connection", "Proxy-Connection", "Keep-Alive", "Proxy-Authenticate",
	"Proxy-Authorization", "Te", "Trailer", "Transfer-Encoding", "Upgrade"}

func (g *Gate) forward(w http.ResponseWriter, r *http.Request, t Target) {
	out := r.Clone(r.Context())
	out.RequestURI = ""
	out.Host = r.URL.Host
	for _, h := range hopHeaders {
		out.Header.Del(h)
	}
	res, err := g.p.roundTripper().RoundTrip(out)
	if err != nil {
		g.refuse(w, t, err)
		return
	}
	defer res.Body.Close()
	for _, h := range hopHeaders {
		res.Header.Del(h)
	}
	for k, v := range res.Header {
		w.Header()[k] = v
	}
	w.WriteHeader(res.StatusCode)
	_, _ = io.Copy(w, res.Body)
}

func (p *Proxy) roundTripper() *http.Transport {
	p.once.Do(func() {
		p.transport = &http.Transport{
			Proxy: nil,
			DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
				t, err := ParseTarget(addr, 80)
				if err != nil {
					return nil, err
				}
				return p.dialTarget(ctx, t)
			},
			MaxIdleConns: 16, IdleConnTimeout: 30 * time.Second, ResponseHeaderTimeout: 5 * time.Minute,
		}
	})
	return p.transport
}

// decide returns the addresses to dial for t, or why not: t must be on the
// allow-list; a name must resolve, and to no loopback, link-local,
// multicast or unspecified address (those are reached only when listed as
// addresses).
func (p *Proxy) decide(ctx context.Context, t Target) ([]netip.Addr, error) {
	if !p.Allow.Allows(t) {
		return nil, errDenied{"it is not on the sandbox's allow-list"}
	}
	switch {
	case t.Name == "":
		return []netip.Addr{t.Addr}, nil
	case t.Name == "localhost":
		return []netip.Addr{netip.AddrFrom4([4]byte{127, 0, 0, 1})}, nil
	}
	lookup := p.Lookup
	if lookup == nil {
		lookup = func(ctx context.Context, host string) ([]netip.Addr, error) {
			return net.DefaultResolver.LookupNetIP(ctx, "ip", host)
		}
	}
	addrs, err := lookup(ctx, t.Name)
	if err != nil {
		return nil, fmt.Errorf("cannot resolve %s: %w", t.Name, err)
	}
	if len(addrs) == 0 {
		return nil, fmt.Errorf("%s has no address", t.Name)
	}
	for i, a := range addrs {
		a = a.Unmap()
		addrs[i] = a
		if special(a) {
			return nil, errDenied{fmt.Sprintf("%s resolves to %s, a local address; to reach it, list %s itself",
				t.Name, a, net.JoinHostPort(a.String(), strconv.Itoa(t.Port)))}
		}
	}
	return addrs, nil
}

// special reports addresses a name on the allow-list must not lead to: the
// host itself, its link (cloud metadata at 169.254.169.254), multicast,
// "this network".
func special(a netip.Addr) bool {
	return a.IsLoopback() || a.IsLinkLocalUnicast() || a.IsLinkLocalMulticast() || a.IsMulticast() ||
		a.IsInterfaceLocalMulticast() || a.IsUnspecified() || a.Is4() && a.As4()[0] == 0
}

func (p *Proxy) dialTarget(ctx context.Context, t Target) (net.Conn, error) {
	addrs, err := p.decide(ctx, t)
	if err != nil {
		return nil, err
	}
	dial := p.Dial
	if dial == nil {
		d := &net.Dialer{Timeout: 30 * time.Second}
		dial = d.DialContext
	}
	var last error
	for _, a := range addrs {
		c, err := dial(ctx, "tcp", netip.AddrPortFrom(a, uint16(t.Port)).String())
		if err == nil {
			return c, nil
		}
		last = err
	}
	return nil, last
}
