package mcptool

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

const (
	// stderrTail is how much of a server's stderr is kept, for the status
	// of a server that failed.
	stderrTail = 4 << 10
	// stopGrace is how long a stdio server may take to exit once its stdin
	// is closed, before its process group is killed.
	stopGrace = time.Second
	// defaultPath is PATH when rein's environment has none.
	defaultPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
)

// process is a running stdio server.
type process struct {
	cmd    *exec.Cmd
	stderr *tail
	exited chan struct{} // closed once the process has been waited for
	err    error         // Wait's error, set before exited is closed
}

// startProcess starts a stdio server in its own process group and returns
// its stdout and stdin.
func startProcess(s Server) (*process, io.ReadCloser, io.WriteCloser, error) {
	cmd := exec.Command(s.Command, s.Args...)
	cmd.Env = envOf(s.Env)
	cmd.Dir = s.Dir
	p := &process{cmd: cmd, stderr: &tail{max: stderrTail}, exited: make(chan struct{})}
	cmd.Stderr = p.stderr
	// A grandchild that keeps stderr open must not hold Wait forever.
	cmd.WaitDelay = stopGrace
	setProcessGroup(cmd)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, nil, nil, fmt.Errorf("start %s: %w", s.Command, err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		_ = stdin.Close()
		return nil, nil, nil, fmt.Errorf("start %s: %w", s.Command, err)
	}
	if err := cmd.Start(); err != nil {
		return nil, nil, nil, fmt.Errorf("start %s: %w", s.Command, err)
	}
	go func() {
		p.err = cmd.Wait()
		close(p.exited)
	}()
	return p, stdout, stdin, nil
}

// envOf is the environment of a stdio server: env as given, or PATH and
// HOME from rein's environment when env is nil.
func envOf(env []string) []string {
	if env != nil {
		return env
	}
	out := []string{"PATH=" + defaultPath}
	if p := os.Getenv("PATH"); p != "" {
		out[0] = "PATH=" + p
	}
	if h := os.Getenv("HOME"); h != "" {
		out = append(out, "HOME="+h)
	}
	return out
}

// stop waits a moment for the server to exit on its own (its stdin is
// closed by then), then kills its process group — the server's children
// included — and waits for it.
func (p *process) stop() {
	t := time.NewTimer(stopGrace)
	select {
	case <-p.exited:
	case <-t.C:
	}
	t.Stop()
	killGroup(p.cmd)
	<-p.exited
}

// describe says how the process ended and what it last wrote on stderr;
// empty while it runs.
func (p *process) describe() string {
	select {
	case <-p.exited:
	default:
		return ""
	}
	var b strings.Builder
	if p.err != nil {
		fmt.Fprintf(&b, "; the server exited (%v)", p.err)
	} else {
		b.WriteString("; the server exited")
	}
	if s := p.stderr.String(); s != "" {
		b.WriteString("; stderr: ")
		b.WriteString(s)
	}
	return b.String()
}

// tail keeps the last max bytes written to it.
type tail struct {
	mu  sync.Mutex
	max int
	buf []byte
	cut bool
}

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - t.max; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
		t.cut = true
	}
	return len(p), nil
}

// String returns the text kept, trimmed, "…" first when older text was
// dropped.
func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	b := t.buf
	if t.cut {
		for len(b) > 0 && !utf8.RuneStart(b[0]) {
			b = b[1:]
		}
	}
	s := strings.TrimSpace(strings.ToValidUTF8(string(b), "\uFFFD"))
	if t.cut && s != "" {
		s = "…" + s
	}
	return s
}

// newHTTPClient returns the client of one streamable HTTP session: its own
// connection pool (closed at teardown), headers added to every request.
func newHTTPClient(headers map[string]string) *http.Client {
	base := http.DefaultTransport.(*http.Transport).Clone()
	return &http.Client{Transport: &headerTransport{base: base, headers: headers}}
}

// headerTransport adds configured headers to requests that do not set them.
type headerTransport struct {
	base    *http.Transport
	headers map[string]string
}

func (t *headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if len(t.headers) > 0 {
		r = r.Clone(r.Context())
		for k, v := range t.headers {
			if r.Header.Get(k) == "" {
				r.Header.Set(k, v)
			}
		}
	}
	return t.base.RoundTrip(r)
}

// CloseIdleConnections closes the pool's idle connections, so no goroutine
// of the session outlives it.
func (t *headerTransport) CloseIdleConnections() { t.base.CloseIdleConnections() }

// sseTransport opens an SSE session whose event stream outlives the
// connection attempt: the SSE client's GET lasts as long as the context it
// was made with, so it is made with the session's own (live, ended at
// teardown), while the attempt's context still bounds the wait for the
// stream to open.
type sseTransport struct {
	inner *mcp.SSEClientTransport
	live  context.Context
}

// Connect opens the event stream.
func (t *sseTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	sctx, cancel := context.WithCancel(t.live)
	detach := context.AfterFunc(ctx, cancel)
	conn, err := t.inner.Connect(sctx)
	if !detach() { // the attempt ended while the stream opened
		cancel()
		if err == nil {
			_ = conn.Close()
		}
		return nil, fmt.Errorf("open the SSE stream: %w", context.Cause(ctx))
	}
	if err != nil {
		cancel()
		return nil, err
	}
	return conn, nil
}
