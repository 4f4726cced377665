package acp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"sync"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/reinhq/rein/runner"
	"github.com/reinhq/rein/session"
)

// Workspace is what a front opens for one ACP session in one directory:
// the runner's Setup (its model not yet chosen: the session's own is, see
// [runner.Setup.ModelSpec]) and the store its sessions are kept in.
type Workspace struct {
	Setup *runner.Setup
	Store session.Store
	// Close releases what Open took (the Setup, the store).
	Close func() error
}

// Config configures [Serve].
type Config struct {
	// Open opens the workspace of dir, an absolute directory the client
	// named as a session's cwd. The CLI loads the configuration there,
	// with the workspace's trust settled as for a headless run.
	Open func(ctx context.Context, dir string) (*Workspace, error)
	// Version is rein's version, sent as agentInfo.
	Version string
	// Logger receives the connection's and the runs' logs (never stdout:
	// stdout carries the protocol). Nil discards them.
	Logger *slog.Logger
}

// Serve speaks ACP as the agent on in (the client's requests) and out
// (rein's answers and notifications) until in ends or ctx is done; it
// closes every session it opened before it returns.
func Serve(ctx context.Context, cfg Config, in io.Reader, out io.Writer) error {
	if cfg.Open == nil {
		return errors.New("acp: Config.Open is required")
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	a := newAgent(cfg)
	ctx, stop := context.WithCancel(ctx)
	defer stop() // a pump waiting for answers gives up
	fl := newFlight(ctx)
	pr, pw := io.Pipe()
	conn := sdk.NewAgentSideConnection(a, fl.writer(out), pr)
	conn.SetLogger(cfg.Logger)
	a.conn = conn
	// The input flows once the logger is set: the SDK's reader logs.
	go fl.pump(in, pw)
	defer a.closeAll()
	defer pr.Close() // the pump stops at its next line
	select {
	case <-conn.Done():
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// maxLine is the SDK's bound on one message; a longer line is passed on
// uncounted, and the SDK ends the connection.
const maxLine = 10 << 20

// flight holds back the end of the client's input until every request
// read has been answered: a client that writes its requests and closes
// stdin (printf … | rein acp) gets its answers before the connection
// closes, which would cancel the requests still running.
type flight struct {
	ctx      context.Context
	mu       sync.Mutex
	cond     *sync.Cond
	requests int // requests read
	answered int // responses written
}

func newFlight(ctx context.Context) *flight {
	f := &flight{ctx: ctx}
	f.cond = sync.NewCond(&f.mu)
	context.AfterFunc(ctx, func() {
		f.mu.Lock()
		f.cond.Broadcast()
		f.mu.Unlock()
	})
	return f
}

// pump copies in to w line by line, counting the requests among them; at
// in's end it waits for their answers, then closes w.
func (f *flight) pump(in io.Reader, w *io.PipeWriter) {
	br := bufio.NewReaderSize(in, 64<<10)
	var line []byte
	long := false // the line passed maxLine and is being passed on as it comes
	for {
		chunk, err := br.ReadSlice('\n')
		switch {
		case long:
			if _, werr := w.Write(chunk); werr != nil {
				return
			}
		case len(line)+len(chunk) > maxLine:
			long = true
			if _, werr := w.Write(append(line, chunk...)); werr != nil {
				return
			}
			line = line[:0]
		default:
			line = append(line, chunk...)
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if !long && len(line) > 0 {
			if isRequest(line) {
				f.mu.Lock()
				f.requests++
				f.mu.Unlock()
			}
			if _, werr := w.Write(line); werr != nil {
				return
			}
		}
		line, long = line[:0], false
		if err != nil {
			f.wait()
			w.CloseWithError(err)
			return
		}
	}
}

// isRequest says whether a line is a JSON-RPC request: an id and a method.
func isRequest(line []byte) bool {
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	return json.Unmarshal(line, &m) == nil && len(m.ID) > 0 && string(m.ID) != "null" && m.Method != ""
}

// wait blocks until every request read is answered, or ctx is done.
func (f *flight) wait() {
	f.mu.Lock()
	for f.answered < f.requests && f.ctx.Err() == nil {
		f.cond.Wait()
	}
	f.mu.Unlock()
}

func (f *flight) writer(w io.Writer) io.Writer { return flightWriter{f, w} }

type flightWriter struct {
	f *flight
	w io.Writer
}

// Write writes one message (the SDK writes each in one call) and counts
// it when it is a response.
func (fw flightWriter) Write(p []byte) (int, error) {
	n, err := fw.w.Write(p)
	if isResponse(p) {
		fw.f.mu.Lock()
		fw.f.answered++
		fw.f.cond.Broadcast()
		fw.f.mu.Unlock()
	}
	return n, err
}

// isResponse says whether a message the SDK wrote is a response: its keys
// come in a fixed order (jsonrpc, id, method, params, result, error), so a
// request or a notification names its method before any result or error.
func isResponse(msg []byte) bool {
	r := bytes.Index(msg, []byte(`"result":`))
	if e := bytes.Index(msg, []byte(`"error":`)); e >= 0 && (r < 0 || e < r) {
		r = e
	}
	m := bytes.Index(msg, []byte(`"method":`))
	return r >= 0 && (m < 0 || m > r)
}
