package client_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"time"

	"github.com/reinhq/rein/agent"
	"github.com/reinhq/rein/api"
	"github.com/reinhq/rein/client"
	"github.com/reinhq/rein/eventbus"
	"github.com/reinhq/rein/llm"
	"github.com/reinhq/rein/llm/llmtest"
	"github.com/reinhq/rein/permission"
	"github.com/reinhq/rein/server"
	"github.com/reinhq/rein/session"
	"github.com/reinhq/rein/tool"
)

// Example reads a session's event stream from an in-process rein server
// (SPEC API-1, API-2): it opens a chat workspace and a session, sends a
// message, and prints the run's events as they arrive. The connection is cut
// right after the tool_end event; the client reconnects by itself with
// Last-Event-ID, and the stream goes on with neither a gap nor a duplicate.
// A second Events call shows the same resumption done by hand, as a program
// that restarted would do with the last id it saw.
//
// The server is the one `rein serve` runs, over in-memory stores and the
// in-memory event bus; the runs are made by agentRuntime below, a small
// server.Runtime that runs an agent over a scripted model and publishes its
// real events. `rein serve` uses the runner's service instead.
func Example() {
	bus := eventbus.NewMemory(eventbus.Options{})
	defer bus.Close()
	store, ledger := session.NewMemStore(), session.NewMemLedger()
	model := llmtest.NewScripted(
		llmtest.Reply{ToolCalls: []llm.ToolUse{llmtest.Call("c1", "clock", `{}`)}},
		llmtest.Reply{Text: "It is 09:30."},
	)
	rt := &agentRuntime{model: model, store: store, ledger: ledger, bus: bus}
	srv, err := server.New(server.Config{Runtime: rt, Sessions: store, Ledger: ledger, Bus: bus,
		RateLimit: -1, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	ts := httptest.NewServer(srv.Handler()) // listens on 127.0.0.1
	defer ts.Close()
	defer srv.CloseStreams()
	defer rt.wait()

	c, err := client.New(ts.URL, client.Options{
		HTTPClient:   &http.Client{Transport: &cutAfter{event: "tool_end", next: http.DefaultTransport}},
		ReconnectMin: 10 * time.Millisecond,
	})
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ws, err := c.CreateWorkspace(ctx, api.CreateWorkspace{Kind: "chat", Name: "desk"})
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	s, err := c.CreateSession(ctx, api.CreateSession{WorkspaceID: ws.ID, Title: "time"})
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	acc, err := c.Send(ctx, s.ID, api.Message{Text: "What time is it?"})
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	fmt.Println("accepted:", acc.Status)

	var toolEnd int64
	for ev, err := range c.Events(ctx, s.ID, 0) {
		if err != nil {
			fmt.Println("error:", err)
			return
		}
		fmt.Println(ev.ID, ev.Type)
		if ev.Type == "tool_end" {
			toolEnd = ev.ID
		}
		if ev.Type == "done" {
			break
		}
	}
	run, err := c.Wait(ctx, acc.RunID)
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	fmt.Println("run:", run.Status)

	fmt.Println("after", toolEnd, "again:")
	for ev, err := range c.Events(ctx, s.ID, toolEnd) {
		if err != nil {
			fmt.Println("error:", err)
			return
		}
		var e agent.Event
		if err := json.Unmarshal(ev.Data, &e); err != nil {
			fmt.Println("error:", err)
			return
		}
		if e.Type == agent.EventDone {
			fmt.Println(ev.ID, ev.Type, e.Done.Reason, e.Done.Text)
			break
		}
		fmt.Println(ev.ID, ev.Type)
	}
	// Output:
	// accepted: queued
	// GET events, Last-Event-ID: none
	// 1 run_start
	// 2 message
	// 3 usage
	// 4 message
	// 5 tool_start
	// 6 tool_end
	// connection lost
	// GET events, Last-Event-ID: 6
	// 7 message
	// 8 text_delta
	// 9 usage
	// 10 message
	// 11 done
	// run: completed
	// after 6 again:
	// GET events, Last-Event-ID: 6
	// 7 message
	// 8 text_delta
	// 9 usage
	// 10 message
	// 11 done completed It is 09:30.
}

// agentRuntime is a server.Runtime that runs each submitted message with
// an agent, in the process: it stores the queued run, then runs it in the
// background, appending the conversation's messages to the session, storing
// the durable events in the ledger and publishing every event on the bus,
// numbered 1, 2, 3, … per session. It is the least a runtime does: it
// ignores a submission's model, mode and agent, runs a session's runs
// side by side instead of one after the other, and asks no permission
// questions — the runner's service does all of that.
type agentRuntime struct {
	model  llm.Provider
	store  session.Store
	ledger session.Ledger
	bus    eventbus.Bus

	mu      sync.Mutex
	last    map[string]int64 // session → last event id
	cancels map[string]context.CancelFunc
	running sync.WaitGroup
}

// Submit implements server.Runtime.
func (r *agentRuntime) Submit(ctx context.Context, s session.Submission) (*session.Run, error) {
	run := &session.Run{SessionID: s.SessionID, Caller: s.Caller, Prompt: s.Text}
	if err := r.ledger.CreateRun(ctx, run); err != nil {
		return nil, err
	}
	st, err := session.Load(ctx, r.store, s.SessionID)
	if err != nil {
		return nil, err
	}
	runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	r.mu.Lock()
	if r.cancels == nil {
		r.cancels, r.last = map[string]context.CancelFunc{}, map[string]int64{}
	}
	r.cancels[run.ID] = cancel
	r.mu.Unlock()
	queued := *run
	r.running.Go(func() {
		defer func() {
			r.mu.Lock()
			delete(r.cancels, run.ID)
			r.mu.Unlock()
			cancel()
		}()
		r.execute(runCtx, run, st.Messages)
	})
	return &queued, nil
}

// execute runs a queued run to its end; a run that fails before its done
// event is marked failed with the reason.
func (r *agentRuntime) execute(ctx context.Context, run *session.Run, history []llm.Message) {
	if err := r.drive(ctx, run, history); err != nil && !run.Status.Final() {
		run.Status, run.Reason, run.Error, run.EndedAt = session.RunFailed, string(agent.ReasonError), err.Error(), time.Now()
		_ = r.ledger.UpdateRun(context.WithoutCancel(ctx), run) // nothing is left to tell if this fails too
	}
}

// drive runs the agent and records and publishes its events.
func (r *agentRuntime) drive(ctx context.Context, run *session.Run, history []llm.Message) error {
	clock := tool.New("clock", "Tells the time.", tool.Meta{ReadOnly: true, Category: tool.CategoryRead},
		func(ctx context.Context, call tool.Call, _ struct{}) (tool.Result, error) {
			return tool.Text("09:30"), nil
		})
	tools, err := tool.NewSet(tool.OriginBuiltin, clock)
	if err != nil {
		return err
	}
	run.Status, run.StartedAt = session.RunRunning, time.Now()
	if err := r.ledger.UpdateRun(ctx, run); err != nil {
		return fmt.Errorf("start run %s: %w", run.ID, err)
	}
	a := agent.New(agent.Config{Provider: r.model, Model: "test-model", Tools: tools, NoRetry: true})
	prompt := llm.UserText(run.Prompt)
	for ev, err := range a.Run(ctx, agent.Input{SessionID: run.SessionID, RunID: run.ID, History: history, Prompt: &prompt}) {
		if err != nil {
			return err
		}
		if ev.Type == agent.EventMessage {
			if _, err := r.store.Append(ctx, run.SessionID, session.Entry{Kind: session.KindMessage, RunID: run.ID, Message: ev.Message}); err != nil {
				return fmt.Errorf("store a message of run %s: %w", run.ID, err)
			}
		}
		if ev.Type == agent.EventDone { // a client that sees done finds the run ended
			run.Status, run.Reason, run.Error, run.Turns, run.EndedAt = session.RunFailed, string(ev.Done.Reason), ev.Done.Error, ev.Done.Turns, time.Now()
			if ev.Done.Reason == agent.ReasonCompleted {
				run.Status = session.RunCompleted
			}
			if err := r.ledger.UpdateRun(context.WithoutCancel(ctx), run); err != nil {
				return fmt.Errorf("end run %s: %w", run.ID, err)
			}
		}
		if err := r.publish(ctx, run, ev); err != nil {
			return fmt.Errorf("publish a %s event of run %s: %w", ev.Type, run.ID, err)
		}
	}
	return nil
}

// publish numbers an event, stores it when it is durable and publishes it.
func (r *agentRuntime) publish(ctx context.Context, run *session.Run, ev agent.Event) error {
	data, err := json.Marshal(ev)
	if err != nil {
		return err
	}
	r.mu.Lock()
	r.last[run.SessionID]++
	id := r.last[run.SessionID]
	r.mu.Unlock()
	durable := ev.Type.Durable()
	if durable {
		if err := r.ledger.AppendEvents(ctx, session.Event{SessionID: run.SessionID, ID: id, RunID: run.ID,
			Type: string(ev.Type), Time: ev.Time, Data: data}); err != nil {
			return err
		}
	}
	return r.bus.Publish(ctx, eventbus.Event{SessionID: run.SessionID, ID: id, RunID: run.ID,
		Type: string(ev.Type), Durable: durable, Data: data})
}

// Cancel implements server.Runtime.
func (r *agentRuntime) Cancel(ctx context.Context, runID string) (*session.Run, error) {
	run, err := r.ledger.GetRun(ctx, runID)
	if err != nil {
		return nil, err
	}
	if run.Status.Final() {
		return nil, fmt.Errorf("run %s already ended: %w", runID, session.ErrConflict)
	}
	r.mu.Lock()
	cancel := r.cancels[runID]
	r.mu.Unlock()
	if cancel != nil {
		cancel()
	}
	return run, nil
}

// Answer implements server.Runtime: this runtime asks no questions.
func (r *agentRuntime) Answer(ctx context.Context, runID, callID string, v permission.Verdict) error {
	return fmt.Errorf("run %s asks no permission questions: %w", runID, session.ErrNotFound)
}

// wait waits for the runs to end.
func (r *agentRuntime) wait() { r.running.Wait() }

// cutAfter is an http.RoundTripper that cuts the first event stream it
// carries right after the first event of type event, as a network failure
// would, and prints the Last-Event-ID each request for events sends.
type cutAfter struct {
	event string
	next  http.RoundTripper

	mu  sync.Mutex
	cut bool
}

func (t *cutAfter) RoundTrip(req *http.Request) (*http.Response, error) {
	if !strings.HasSuffix(req.URL.Path, "/events") {
		return t.next.RoundTrip(req)
	}
	last := req.Header.Get("Last-Event-ID")
	if last == "" {
		last = "none"
	}
	fmt.Println("GET events, Last-Event-ID:", last)
	resp, err := t.next.RoundTrip(req)
	if err != nil {
		return resp, err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.cut {
		t.cut = true
		resp.Body = &cutBody{ReadCloser: resp.Body, r: bufio.NewReader(resp.Body), event: t.event}
	}
	return resp, nil
}

// cutBody passes a stream through line by line and ends it with an error
// after the blank line that closes the first event of type event.
type cutBody struct {
	io.ReadCloser
	r      *bufio.Reader
	event  string
	seen   bool
	buf    bytes.Buffer
	broken bool
}

func (b *cutBody) Read(p []byte) (int, error) {
	for b.buf.Len() == 0 {
		if b.broken {
			fmt.Println("connection lost")
			return 0, io.ErrUnexpectedEOF
		}
		line, err := b.r.ReadString('\n')
		b.buf.WriteString(line)
		if err != nil {
			if b.buf.Len() > 0 {
				break
			}
			return 0, err
		}
		switch {
		case strings.TrimSpace(line) == "event: "+b.event:
			b.seen = true
		case line == "\n" && b.seen:
			b.broken = true
		}
	}
	return b.buf.Read(p)
}
