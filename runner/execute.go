package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"

	"github.com/reinhq/rein/agent"
	"github.com/reinhq/rein/eventbus"
	"github.com/reinhq/rein/hook"
	"github.com/reinhq/rein/llm"
	"github.com/reinhq/rein/permission"
	"github.com/reinhq/rein/runner/queue"
	"github.com/reinhq/rein/session"
	"github.com/reinhq/rein/workspace"
)

// deltaBits is how many low bits of an event id number the deltas after
// the newest durable event (see [EventID]).
const deltaBits = 20

// EventID is the id of an event in a session's stream: the count of
// durable events up to and including the newest one, shifted left by 20
// bits, plus the number of the delta after it (0 for the durable event
// itself). Ids increase; after a crash the next durable event's id is
// above every delta id handed out before, so a client's Last-Event-ID
// still resumes with neither a gap nor a duplicate.
func EventID(durable, delta int64) int64 { return durable<<deltaBits | delta }

// stream numbers a run's events and sends them to the ledger (durable
// ones) and the bus (all).
type stream struct {
	// mu makes publishing one event at a time: the run's loop publishes,
	// and so does an ask_user call waiting for its answer (askuser.go).
	mu      sync.Mutex
	s       *Service
	appr    *remoteApprover
	run     *session.Run
	durable int64 // durable events of the session so far
	delta   int64 // deltas since the newest durable one
	inputs  map[string]json.RawMessage
	// prompted: the run's user message is in the session log, so the run
	// record need not keep its images.
	prompted bool
	// cause is why the run's context ended (nil while it goes on).
	cause func() error
	// log, when set, holds the log entries of the events it was given,
	// which a durable event's write stores with the event (issue 30).
	log *Recorder
}

// publish stores a durable event and publishes any event. A durable event
// that cannot be stored is an error: the run must stop.
func (st *stream) publish(ctx context.Context, ev agent.Event) error {
	st.mu.Lock()
	defer st.mu.Unlock()
	data, err := json.Marshal(ev)
	if err != nil {
		return fmt.Errorf("encode %s event: %w", ev.Type, err)
	}
	if ev.Type == agent.EventPermissionRequest && ev.Permission != nil && st.appr != nil {
		st.appr.expect(ev.Permission.CallID) // open before a client can see it
	}
	durable := ev.Type.Durable()
	var id int64
	var ended *session.Run
	if durable {
		st.durable, st.delta = st.durable+1, 0
		id = EventID(st.durable, 0)
		// A client that sees an event finds what it records: the audit
		// record and, for done, the run's end are stored with it, in one
		// write where the ledger can (session.EventWriter).
		w := session.EventWrite{Event: session.Event{SessionID: st.run.SessionID, ID: id, RunID: st.run.ID,
			Type: string(ev.Type), Time: ev.Time, Data: data}}
		if w.Audit, err = st.audit(ev); err != nil {
			return fmt.Errorf("audit %s event: %w", ev.Type, err)
		}
		if ev.Type == agent.EventDone && ev.Done != nil {
			ended = st.s.ended(st.run, ev.Done, st.cause(), st.prompted)
			w.Run = ended
		}
		if st.log != nil {
			w.Log = st.log.Staged()
		}
		if err := session.WriteEvent(ctx, st.s.cfg.Ledger, w); err != nil {
			if st.log != nil {
				st.log.Restage(w.Log)
			}
			return fmt.Errorf("store %s event: %w", ev.Type, err)
		}
	} else {
		if st.delta+1 >= 1<<deltaBits {
			return nil // a run streaming a million deltas without a message: the rest are not numbered
		}
		st.delta++
		id = EventID(st.durable, st.delta)
	}
	if ev.Type == agent.EventMessage && ev.Subagent == nil {
		st.prompted = true
	}
	if ev.Type == agent.EventPlan && ev.Subagent == nil {
		st.s.planDecided(ctx, st.run, ev.Plan) // before a client sees the approval
	}
	if ended != nil {
		*st.run = *ended
		st.s.NotifyMirror(st.run.SessionID) // its entries are stored: the mirror may copy them
	}
	if err := st.s.cfg.Bus.Publish(ctx, eventbus.Event{SessionID: st.run.SessionID, ID: id, RunID: st.run.ID,
		Type: string(ev.Type), Durable: durable, Data: data}); err != nil {
		st.s.cfg.Logger.Warn("event not published", "session_id", st.run.SessionID, "run_id", st.run.ID, "err", err)
	}
	if o := st.s.cfg.Observer; o != nil {
		o.Event(st.run, ev)
	}
	return nil
}

// audit returns the audit record of a run's tool call or end (SPEC
// API-7), nil for other events; it keeps a tool call's input until its
// end.
func (st *stream) audit(ev agent.Event) (*session.AuditRecord, error) {
	var kind session.AuditKind
	var data any
	switch {
	case ev.Type == agent.EventToolStart && ev.Tool != nil:
		st.inputs[ev.Tool.ID] = ev.Tool.Input
		return nil, nil
	case ev.Type == agent.EventToolEnd && ev.Tool != nil:
		t := *ev.Tool
		t.Input, t.Output = permission.Redact(st.inputs[t.ID]), ""
		delete(st.inputs, t.ID)
		kind, data = session.AuditToolCall, t
	case ev.Type == agent.EventDone && ev.Done != nil:
		d := *ev.Done
		d.Focus, d.Text = nil, ""
		kind, data = session.AuditRun, d
	default:
		return nil, nil
	}
	b, err := json.Marshal(data)
	if err != nil {
		return nil, err
	}
	return &session.AuditRecord{Time: ev.Time, Caller: st.run.Caller, SessionID: st.run.SessionID, RunID: st.run.ID, Kind: kind, Data: b}, nil
}

// execute runs a run that was queued to its end; ctx cancels it.
func (s *Service) execute(ctx context.Context, run *session.Run, appr *remoteApprover) {
	log := s.cfg.Logger.With("session_id", run.SessionID, "run_id", run.ID, "caller", run.Caller)
	store := context.WithoutCancel(ctx)
	run.Status, run.StartedAt = session.RunRunning, s.cfg.Now()
	if err := s.cfg.Ledger.UpdateRun(store, run); err != nil {
		log.Error("run not started: its state could not be stored", "err", err)
		return
	}
	if err := s.drive(ctx, run, appr, log); err != nil {
		log.Warn("run failed", "err", err)
		if !run.Status.Final() { // it ended without a done event
			s.NotifyMirror(run.SessionID)
			run.Status, run.Reason, run.Error, run.EndedAt = session.RunFailed, string(agent.ReasonError), err.Error(), s.cfg.Now()
			if err := s.cfg.Ledger.UpdateRun(store, run); err != nil {
				log.Error("the run's end could not be stored", "err", err)
			}
		}
	}
}

// ended returns run as its done event ends it; cause is why the run's
// context ended, if it did; prompted says the session log holds the run's
// user message (so the record need not keep its images). A run cut off
// because its worker lost the session's lease is interrupted, as the next
// holder would mark it.
func (s *Service) ended(run *session.Run, d *agent.DoneEvent, cause error, prompted bool) *session.Run {
	r := *run
	if prompted {
		r.Images = nil // the session log holds them now
	}
	r.Reason, r.Error, r.Turns, r.Usage, r.CostUSD = string(d.Reason), d.Error, d.Turns, d.Usage, d.CostUSD
	r.Status, r.EndedAt = statusOf(d.Reason), s.cfg.Now()
	if errors.Is(cause, queue.ErrLeaseLost) {
		r.Status = session.RunInterrupted
		r.Error = fmt.Sprintf("this worker lost the session (%v); another worker takes it up", cause)
	}
	return &r
}

// statusOf maps a done reason to the run's final state.
func statusOf(r agent.Reason) session.RunStatus {
	switch r {
	case agent.ReasonCompleted, agent.ReasonPlanReady: // a plan waiting for approval is a normal end (PERM-7)
		return session.RunCompleted
	case agent.ReasonCancelled:
		return session.RunCancelled
	}
	return session.RunFailed
}

// drive builds the run's setup, resumes and heals its session in a
// conversation, and streams
// the run's events to the ledger and the bus. A failure before the loop
// starts is published as a done event too, so SSE clients see the end.
func (s *Service) drive(ctx context.Context, run *session.Run, appr *remoteApprover, log *slog.Logger) error {
	store := context.WithoutCancel(ctx)
	last, err := s.cfg.Ledger.LastEventID(store, run.SessionID)
	if err != nil {
		return err
	}
	st := &stream{s: s, appr: appr, run: run, durable: last >> deltaBits, inputs: map[string]json.RawMessage{},
		cause: func() error { return context.Cause(ctx) }}
	if appr != nil {
		appr.publish = func(ev agent.Event) error {
			ev.Time, ev.SessionID, ev.RunID = s.cfg.Now(), run.SessionID, run.ID
			return st.publish(store, ev)
		}
	}
	setup, err := s.setup(ctx, run)
	var c *Conversation
	if err == nil {
		defer setup.Close()
		c = setup.NewConversation()
		defer c.Close()
		var stt *session.State
		if stt, err = c.Resume(ctx, run.SessionID); err == nil {
			err = c.Heal(ctx, stt)
		}
		if err == nil && c.rec.StageFor(s.cfg.Ledger) {
			st.log = c.rec
			defer func() {
				if err := c.rec.Flush(store); err != nil {
					log.Error("the run's last log entries could not be stored", "err", err)
				}
			}()
		}
	}
	if err != nil {
		ev := failedEvent(s.cfg.Now(), run.SessionID, run.ID, err)
		if perr := st.publish(store, ev); perr != nil {
			log.Warn("the failed run's end could not be stored", "err", perr)
		}
		return err
	}
	done := false
	for ev, rerr := range c.SubmitMessage(ctx, run.ID, runPrompt(run), appr) {
		if perr := st.publish(store, ev); perr != nil {
			return perr
		}
		done = done || ev.Type == agent.EventDone
		if rerr != nil {
			err = rerr
		}
	}
	if !done && err == nil {
		err = errors.New("the run ended without a result")
	}
	return err
}

// runPrompt is the user message of a run: its prompt and images; nil
// continues a pending conversation.
func runPrompt(run *session.Run) *llm.Message {
	if run.Prompt == "" && len(run.Images) == 0 {
		return nil
	}
	m := llm.Message{Role: llm.RoleUser}
	if run.Prompt != "" {
		m.Content = append(m.Content, &llm.Text{Text: run.Prompt})
	}
	for i := range run.Images {
		img := run.Images[i]
		m.Content = append(m.Content, &img)
	}
	return &m
}

// setup builds what the run's workspace determines: its configuration
// layers for the session's directory with the run's overrides, the chat
// kind's absence of tools (WS-2), the ledger as the audit trail, and the
// session's model.
func (s *Service) setup(ctx context.Context, run *session.Run) (*Setup, error) {
	sess, err := s.cfg.Sessions.Get(ctx, run.SessionID)
	if err != nil {
		return nil, err
	}
	var sub session.Submission
	if len(run.Options) > 0 {
		if err := json.Unmarshal(run.Options, &sub); err != nil {
			return nil, fmt.Errorf("run %s: options: %w", run.ID, err)
		}
	}
	chat := false
	var ws *session.Workspace
	if sess.Workspace != "" {
		ws, err = s.cfg.Ledger.GetWorkspace(ctx, sess.Workspace)
		if err != nil {
			return nil, err
		}
		chat = ws.Kind == session.WorkspaceChat
		if !chat {
			if err := checkWorkspaceDir(ws); err != nil {
				return nil, err
			}
		}
	}
	dir := sess.WorkDir
	if chat || dir == "" {
		dir = filepath.Join(s.cfg.DataDir, sess.ID, "chat")
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, err
		}
	}
	fl := flags(sub)
	if err := sessionMode(fl, sess); err != nil {
		return nil, err
	}
	loaded, err := s.loadWorkspace(run.Caller, dir, fl)
	if err != nil {
		return nil, err
	}
	logger := s.cfg.Logger.With("session_id", run.SessionID, "run_id", run.ID, "caller", run.Caller)
	rules, kept, err := s.callerRules(ctx, run, ws, loaded.Workspace.Root, logger)
	if err != nil {
		return nil, err
	}
	cfg := Config{Loaded: loaded, Store: s.cfg.Sessions, SessionsDir: s.cfg.DataDir, Resolve: s.cfg.Resolve, ResolveEmbedder: s.cfg.ResolveEmbedder,
		RuleStore: rules, CallerRules: kept,
		NoTools: chat, NoUserMemory: !s.cfg.UserMemory, Persona: s.cfg.Persona, MCP: &s.mcp, Agent: sub.Agent, Audit: s.auditors(run), UserAgent: s.cfg.UserAgent, Tenancy: s.cfg.Tenancy, Getenv: s.cfg.Getenv,
		heldJobs: s.heldJobs, Logger: logger, Now: s.cfg.Now}
	if ws != nil && !chat && s.cfg.KnowledgeBases != nil {
		cfg.KnowledgeBases, cfg.KBNamespace = s.cfg.KnowledgeBases, KBNamespace(ws.Caller, ws.ID)
	}
	setup, err := NewSetup(cfg)
	if err != nil {
		return nil, err
	}
	return setup.WithModel(setup.modelFor(sess))
}

// modelFor is the model string of a run in sess: ModelSpec, with the
// session's own model when the configuration only has the default.
func (s *Setup) modelFor(sess *session.Session) string {
	v := s.ev.Get(workspace.Model)
	if v.Source == workspace.SourceDefault && sess.Model != "" {
		return sess.Model
	}
	return v.Value
}

// auditors write a run's permission decisions and hook runs to the ledger.
func (s *Service) auditors(run *session.Run) func(*session.Session) (permission.Auditor, hook.Auditor, error) {
	put := func(ctx context.Context, kind session.AuditKind, v any) error {
		b, err := json.Marshal(v)
		if err != nil {
			return err
		}
		return s.cfg.Ledger.AppendAudit(context.WithoutCancel(ctx), session.AuditRecord{Time: s.cfg.Now(), Caller: run.Caller,
			SessionID: run.SessionID, RunID: run.ID, Kind: kind, Data: b})
	}
	return func(*session.Session) (permission.Auditor, hook.Auditor, error) {
		pa := auditFunc(func(ctx context.Context, r permission.AuditRecord) error {
			r.Input = permission.Redact(r.Input)
			return put(ctx, session.AuditPermission, r)
		})
		ha := hook.AuditFunc(func(ctx context.Context, r hook.Record) error {
			if o := s.cfg.Observer; o != nil {
				o.Hook(run, r)
			}
			return put(ctx, session.AuditHook, r)
		})
		return pa, ha, nil
	}
}

// auditFunc adapts a function to permission.Auditor.
type auditFunc func(ctx context.Context, r permission.AuditRecord) error

// Record implements permission.Auditor.
func (f auditFunc) Record(ctx context.Context, r permission.AuditRecord) error { return f(ctx, r) }
