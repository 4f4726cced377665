package mcpserver

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/reinhq/rein/agent"
	"github.com/reinhq/rein/runner"
	"github.com/reinhq/rein/session"
)

// A run outlives the tool call that started it only while it waits for an
// answer: on the MCP protocol 2026-07-28 and later a server may not send
// elicitation/create while serving a call (SEP-2322), so the call returns
// the question as an input request with a request state, and the client
// calls again with the answer. The run waits, parked under that state, for
// at most parkTimeout; then it is cancelled.
const parkTimeout = 10 * time.Minute

// inputKey names the one input request a parked run asks.
const inputKey = "rein"

// flight is a run in progress: its questions, and its end.
type flight struct {
	ss        *mcp.ServerSession
	questions chan *question
	done      chan flightEnd
	cancel    context.CancelFunc
	// ended is closed once the run has let its session go.
	ended chan struct{}
	// stopping is set once the run is cancelled (stop).
	stopping atomic.Bool
	// driver is the context of the tool call driving the run now (nil
	// while none does: the run is parked): a call cancelled is a run
	// stopping even before drive has seen it (see cancelled).
	driver atomic.Pointer[context.Context]
	// timer cancels the run when it stays parked too long.
	timer *time.Timer
	// asked is the question a parked run waits to have answered.
	asked *question
}

// flightEnd is how a run ended.
type flightEnd struct {
	done      *agent.DoneEvent
	sessionID string
	err       error
}

// question is an elicitation the run waits on.
type question struct {
	params *mcp.ElicitParams
	reply  chan answer
}

// answer is the client's reply to a question.
type answer struct {
	res *mcp.ElicitResult
	err error
}

// elicit asks the client through whichever tool call drives the run, and
// waits for the answer or ctx.
func (f *flight) elicit(ctx context.Context, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
	q := &question{params: p, reply: make(chan answer, 1)}
	select {
	case f.questions <- q:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	select {
	case a := <-q.reply:
		return a.res, a.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// run runs a prompt in a new session.
func (s *Server) run(ctx context.Context, req *mcp.CallToolRequest, in RunInput) (*mcp.CallToolResult, RunResult, error) {
	if f, err := s.resumed(req); f != nil || err != nil {
		return s.drive(ctx, req, f, err)
	}
	if err := s.checkPrompt(in.Prompt); err != nil {
		return nil, RunResult{}, err
	}
	dir, err := s.workspaceDir(in.Workspace)
	if err != nil {
		return nil, RunResult{}, err
	}
	conv, closeConv, err := s.open(ctx, dir, Options{Model: in.Model, PermissionMode: in.PermissionMode}, nil)
	if err != nil {
		return nil, RunResult{}, err
	}
	f := s.newFlight(req)
	s.start(req, f, conv, closeConv, in.Prompt)
	return s.drive(ctx, req, f, nil)
}

// continueSession runs a prompt in a stored session.
func (s *Server) continueSession(ctx context.Context, req *mcp.CallToolRequest, in ContinueInput) (*mcp.CallToolResult, RunResult, error) {
	if f, err := s.resumed(req); f != nil || err != nil {
		return s.drive(ctx, req, f, err)
	}
	if err := s.checkPrompt(in.Prompt); err != nil {
		return nil, RunResult{}, err
	}
	sess, err := s.session(ctx, in.SessionID)
	if err != nil {
		return nil, RunResult{}, err
	}
	f := s.newFlight(req)
	if err := s.hold(ctx, sess.ID, f); err != nil {
		return nil, RunResult{}, err
	}
	conv, closeConv, err := s.open(ctx, sess.WorkDir, Options{PermissionMode: in.PermissionMode}, sess)
	if err != nil {
		s.release(sess.ID, f)
		return nil, RunResult{}, err
	}
	st, err := conv.Resume(ctx, sess.ID)
	if err == nil {
		err = conv.Resumed(ctx, st)
	}
	if err != nil {
		closeConv()
		s.release(sess.ID, f)
		if errors.Is(err, session.ErrLocked) {
			return nil, RunResult{}, fmt.Errorf("session %s is in use by another run; wait for it to end, or start a new one with run", sess.ID)
		}
		return nil, RunResult{}, fmt.Errorf("session %s: %v", sess.ID, err)
	}
	s.start(req, f, conv, closeConv, in.Prompt)
	return s.drive(ctx, req, f, nil)
}

// open builds the Setup of the workspace at dir, with the model a new run
// (sess nil) or sess names, and a conversation over it; closeConv ends both.
func (s *Server) open(ctx context.Context, dir string, o Options, sess *session.Session) (_ *runner.Conversation, closeConv func(), _ error) {
	base, err := s.cfg.Open(ctx, dir, o)
	if err != nil {
		return nil, nil, err
	}
	if root := base.Workspace().Root; !s.inRoot(root) {
		base.Close()
		return nil, nil, fmt.Errorf("the workspace of %s is %s, above %s, the directory rein mcp serve was started in: start the server there to work in it", dir, root, s.cfg.Root)
	}
	setup, err := base.WithModel(base.ModelSpec(sess))
	if err != nil {
		base.Close()
		return nil, nil, fmt.Errorf("model: %v", err)
	}
	conv := setup.NewConversation()
	return conv, func() { conv.Close(); base.Close() }, nil
}

// newFlight is the flight of a run a tool call starts.
func (s *Server) newFlight(req *mcp.CallToolRequest) *flight {
	return &flight{ss: req.Session, questions: make(chan *question), done: make(chan flightEnd, 1), ended: make(chan struct{})}
}

// stop cancels the run (its call was cancelled, or it stayed parked too
// long): a continue of its session waits for it to end (hold).
func (f *flight) stop() {
	f.stopping.Store(true)
	f.cancel()
}

// cancelled reports whether the run is stopping: stopped, or its driving
// call cancelled (the client's notifications/cancelled is handled as it
// is read, before the client's next request, which may continue the
// session, is served).
func (f *flight) cancelled() bool {
	if f.stopping.Load() {
		return true
	}
	ctx := f.driver.Load()
	return ctx != nil && (*ctx).Err() != nil
}

// start runs prompt in conv in the background as f, its permission
// questions going to the client by elicitation when it declared the
// capability. The run's context is its own: the tool calls that drive it
// cancel it when they are cancelled (see drive). The run holds its session
// (hold) from the moment it has one; it lets it go — the conversation
// closed, the session's lock released — before it tells how it ended, so
// the client may continue the session as soon as it has the result.
func (s *Server) start(req *mcp.CallToolRequest, f *flight, conv *runner.Conversation, closeConv func(), prompt string) {
	ctx, cancel := context.WithCancel(context.Background())
	f.cancel = cancel
	var token any
	if req.Params != nil {
		token = req.Params.GetProgressToken()
	}
	go func() {
		defer cancel()
		var end flightEnd
		id := conv.SessionID()
		tools := 0
		for ev, err := range conv.Submit(ctx, "", prompt, approverFor(req.Session, f)) {
			if err != nil {
				end.err = err
			}
			if id == "" {
				if id = conv.SessionID(); id != "" {
					s.holdNew(id, f)
				}
			}
			switch ev.Type {
			case agent.EventDone:
				end.done = ev.Done
			case agent.EventToolStart:
				tools++
				if token != nil && ev.Tool != nil {
					// Progress is best effort: a client gone away cancels the run.
					_ = req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: token,
						Progress: float64(tools), Message: "running " + ev.Tool.Name})
				}
			}
		}
		conv.EndSession(context.WithoutCancel(ctx), "exit")
		end.sessionID = conv.SessionID()
		closeConv()
		s.release(id, f)
		close(f.ended)
		f.done <- end
	}()
}

// drive follows f on behalf of one tool call until the run ends, or asks
// a question the client must answer in a new call (protocol 2026-07-28 and
// later), or the call is cancelled — which cancels the run. On older
// protocols it asks the client directly (elicitation/create).
func (s *Server) drive(ctx context.Context, req *mcp.CallToolRequest, f *flight, err error) (*mcp.CallToolResult, RunResult, error) {
	if err != nil {
		return nil, RunResult{}, err
	}
	f.driver.Store(&ctx)
	defer f.driver.Store(nil)
	for {
		select {
		case q := <-f.questions:
			if !multiRoundTrip(req.Session) {
				res, err := req.Session.Elicit(ctx, q.params)
				q.reply <- answer{res, err}
				continue
			}
			state := s.park(f, q)
			return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{inputKey: q.params}, RequestState: state}, RunResult{}, nil
		case end := <-f.done:
			return result(end)
		case <-ctx.Done():
			f.stop()
			end := <-f.done
			if end.done == nil {
				return nil, RunResult{}, ctx.Err()
			}
			return result(end)
		}
	}
}

// result is a finished run as the tool's result.
func result(end flightEnd) (*mcp.CallToolResult, RunResult, error) {
	if end.done == nil {
		err := end.err
		if err == nil {
			err = errors.New("the run ended without a result")
		}
		return nil, RunResult{}, fmt.Errorf("run: %v", err)
	}
	d := end.done
	out := RunResult{SessionID: end.sessionID, Text: d.Text, StopReason: string(d.Reason), Error: d.Error,
		Turns: d.Turns, CostUSD: d.CostUSD, Usage: d.Usage}
	// The text is the answer, then what a client showing only text needs to
	// go on: the session to continue, and why the run ended.
	text := fmt.Sprintf("%s\n\n[rein: %s%s · session %s · %d turns · $%.4f]", out.Text, out.StopReason, errSuffix(out.Error),
		out.SessionID, out.Turns, out.CostUSD)
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: strings.TrimSpace(text)}},
		IsError: d.Reason == agent.ReasonError}, out, nil
}

// errSuffix is ": err", or nothing.
func errSuffix(err string) string {
	if err == "" {
		return ""
	}
	return ": " + err
}

// multiRoundTrip reports whether the session's protocol forbids sending
// elicitation/create while serving a call (2026-07-28 and later, SEP-2322).
func multiRoundTrip(ss *mcp.ServerSession) bool {
	ip := ss.InitializeParams()
	return ip == nil || ip.ProtocolVersion >= "2026-07-28"
}

// parked holds the runs waiting for an answer, by request state.
type parked struct {
	mu sync.Mutex
	m  map[string]*flight
}

// park keeps f, waiting on q, under a new random request state, for at
// most parkTimeout.
func (s *Server) park(f *flight, q *question) string {
	b := make([]byte, 16)
	rand.Read(b)
	state := hex.EncodeToString(b)
	s.parked.mu.Lock()
	defer s.parked.mu.Unlock()
	if s.parked.m == nil {
		s.parked.m = map[string]*flight{}
	}
	f.asked = q
	f.timer = time.AfterFunc(parkTimeout, func() {
		if s.unpark(state, f.ss) != nil {
			f.stop()
		}
	})
	s.parked.m[state] = f
	return state
}

// unpark takes the run parked under state by session ss; nil when there is
// none (a state is used once, and only by the session it was given to).
func (s *Server) unpark(state string, ss *mcp.ServerSession) *flight {
	s.parked.mu.Lock()
	defer s.parked.mu.Unlock()
	f := s.parked.m[state]
	if f == nil || f.ss != ss {
		return nil
	}
	delete(s.parked.m, state)
	f.timer.Stop()
	return f
}

// resumed returns the run a retried call (one with a request state)
// answers, with the answer delivered; nil, nil for a first call.
func (s *Server) resumed(req *mcp.CallToolRequest) (*flight, error) {
	if req.Params == nil || req.Params.RequestState == "" {
		return nil, nil
	}
	f := s.unpark(req.Params.RequestState, req.Session)
	if f == nil {
		return nil, errors.New("requestState names no run waiting for an answer (it was answered already, timed out, or belongs to another client): start the run again")
	}
	a := answer{err: errors.New("the client's retry carried no answer to the question")}
	if r, ok := req.Params.InputResponses[inputKey].(*mcp.ElicitResult); ok {
		a = answer{res: r}
	}
	f.asked.reply <- a
	return f, nil
}
