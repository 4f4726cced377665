package runner

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"sync"
	"time"

	"github.com/reinhq/rein/agent"
	"github.com/reinhq/rein/llm"
	"github.com/reinhq/rein/session"
)

// Recorder persists a run's durable events as they happen (SPEC SESS-1):
//
//   - message → a message entry;
//   - tool_start → a tool_start journal entry, before Record returns (or,
//     staged, before the consumer's write of the event returns), so the
//     journal is durable before the tool runs (the run loop waits for its
//     consumer);
//   - compaction → a compaction entry holding the new history;
//   - done → a run entry and a focus entry, then the session's usage, cost,
//     run count, model and UpdatedAt.
//
// A sub-agent's events (marked [agent.Subagent]) are kept apart: its
// messages and its end become subagent entries, never part of the
// conversation, and its tool calls are not journaled (the parent's call
// that started it is).
//
// The first user message also sets the session's preview when it has none:
// in the same transaction where the store is a [session.LogWriter], else
// after the message is durable, beside the run (see appendPrompt).
// Other events are ignored. With [Recorder.Stage] (the server), the
// entries wait for the stream to store them with their event. Record and
// RecordProcess may be called from different goroutines. Writes outlive a
// cancelled ctx (the done of a cancelled run is still recorded).
//
// A front end resuming a session takes the store's lock first (see
// [session.Locker]), loads it, calls [Recorder.RecordHeal], then records runs.
type Recorder struct {
	store session.Store
	id    string

	mu       sync.Mutex
	runID    string
	runCtx   context.Context // the run's, without its cancellation: its values (a fencing token) apply to RecordProcess
	started  time.Time
	provider string
	model    string
	cont     bool
	preview  bool   // the preview is known to be set
	label    string // the model as the front end names it (SetModelLabel)

	// previewText is the preview the first user message gave, and
	// previewing, closed when its write ends, the write appendPrompt left
	// running beside the run (nil when none was started); previewErr is
	// that write's error, read once previewing is closed.
	previewText string
	previewing  chan struct{}
	previewErr  error

	// staging: the entries of the events Record is given wait in staged
	// for the stream's write of the same event (see Stage).
	smu     sync.Mutex
	staging bool
	staged  []session.Entry
	changes []func(*session.Session) bool
}

// NewRecorder returns a recorder appending to session id of store.
func NewRecorder(store session.Store, id string) *Recorder {
	return &Recorder{store: store, id: id}
}

// SetModelLabel sets the model the session records as its own (see
// [Session.Model]) to label, the model string the front end resolved
// ("work/claude-sonnet-4-5" for a profile named work), so resuming the
// session picks the same profile. Without a label, a run's provider and
// model are recorded ("anthropic/claude-sonnet-4-5").
func (r *Recorder) SetModelLabel(label string) {
	r.mu.Lock()
	r.label = label
	r.mu.Unlock()
}

// Record persists e when it is durable; it returns once the entries are
// durable. An error means the log may miss e: the caller should end the
// run rather than run tools it cannot journal.
func (r *Recorder) Record(ctx context.Context, e agent.Event) error {
	ctx = context.WithoutCancel(ctx)
	if e.Subagent != nil {
		return r.subagent(ctx, e)
	}
	switch e.Type {
	case agent.EventRunStart:
		r.mu.Lock()
		r.runID, r.started, r.runCtx = e.RunID, e.Time, ctx
		if rs := e.RunStart; rs != nil {
			r.provider, r.model, r.cont = rs.Provider, rs.Model, rs.Continued
		}
		r.mu.Unlock()
	case agent.EventMessage:
		if e.Message == nil {
			return nil
		}
		entry := session.Entry{Kind: session.KindMessage, Time: e.Time, RunID: e.RunID, Message: e.Message}
		if e.Message.Role == llm.RoleUser {
			return r.appendPrompt(ctx, entry)
		}
		return r.record(ctx, entry)
	case agent.EventToolStart:
		if e.Tool == nil {
			return nil
		}
		return r.record(ctx, session.Entry{Kind: session.KindToolStart, Time: e.Time, RunID: e.RunID,
			ToolStart: &session.ToolStart{CallID: e.Tool.ID, Tool: e.Tool.Name, Input: e.Tool.Input}})
	case agent.EventToolEnd:
		if e.Tool == nil {
			return nil
		}
		return r.record(ctx, session.Entry{Kind: session.KindToolEnd, Time: e.Time, RunID: e.RunID, ToolEnd: &session.ToolEnd{
			CallID: e.Tool.ID, Tool: e.Tool.Name, Output: e.Tool.Output, IsError: e.Tool.IsError, Outcome: string(e.Tool.Outcome)}})
	case agent.EventCompaction:
		if c := e.Compaction; c != nil && c.History != nil {
			return r.record(ctx, session.Entry{Kind: session.KindCompaction, Time: e.Time, RunID: e.RunID, Compaction: &session.Compaction{
				History: c.History, TokensBefore: c.TokensBefore, TokensAfter: c.TokensAfter, Layers: c.Layers, Trigger: string(c.Trigger)}})
		}
	case agent.EventDone:
		if e.Done != nil {
			return r.done(ctx, e)
		}
	}
	return nil
}

// subagent records a sub-agent's message or end.
func (r *Recorder) subagent(ctx context.Context, e agent.Event) error {
	rec := &session.SubagentRecord{Agent: e.Subagent.Agent, ParentCallID: e.Subagent.ParentCallID, Depth: e.Subagent.Depth}
	switch {
	case e.Type == agent.EventMessage && e.Message != nil:
		rec.Message = e.Message
	case e.Type == agent.EventSubagentEnd && e.Done != nil:
		d := e.Done
		rec.End = &session.SubagentEnd{Reason: string(d.Reason), Turns: d.Turns, Usage: d.Usage, CostUSD: d.CostUSD, Error: d.Error}
	default:
		return nil
	}
	return r.record(ctx, session.Entry{Kind: session.KindSubagent, Time: e.Time, RunID: e.RunID, Subagent: rec})
}

// RecordProcess journals the process group a call started; give it to the
// shell tool's OnStart hook. It returns once the entry is durable.
func (r *Recorder) RecordProcess(callID string, pgid int) error {
	return r.RecordJob(callID, "", pgid)
}

// RecordJob journals the process group of background job jobID (SPEC
// TOOL-8; "" for a foreground call): its call has its result, but the job
// runs on, and a crash must leave it findable ([session.Load] reports
// it). It returns once the entry is durable.
func (r *Recorder) RecordJob(callID, jobID string, pgid int) error {
	r.mu.Lock()
	run, ctx := r.runID, r.runCtx
	r.mu.Unlock()
	if ctx == nil {
		ctx = context.Background()
	}
	return r.append(ctx, session.Entry{Kind: session.KindToolProcess, RunID: run,
		ToolProcess: &session.ToolProcess{CallID: callID, PGID: pgid, Start: session.ProcessStart(pgid), Job: jobID}})
}

// RecordHeal stores what [session.Load] healed (see [session.SaveHeal]).
// Call it once after loading, before recording a run.
func (r *Recorder) RecordHeal(ctx context.Context, st *session.State) error {
	return session.SaveHeal(ctx, r.store, r.id, st)
}

func (r *Recorder) append(ctx context.Context, e ...session.Entry) error {
	_, err := r.store.Append(ctx, r.id, e...)
	return err
}

// record appends the entries of an event Record was given: at once, or
// staged for the event's own write (see Stage).
func (r *Recorder) record(ctx context.Context, e ...session.Entry) error {
	if r.stage(e, nil) {
		return nil
	}
	return r.append(ctx, e...)
}

// StageFor stages (see Stage) when l, the ledger the run's events are
// stored in, writes an event with its log entries in one transaction
// (a session.EventWriter) and is the store the recorder appends to; it
// says whether it did.
func (r *Recorder) StageFor(l session.Ledger) bool {
	if _, ok := l.(session.EventWriter); !ok {
		return false
	}
	ls, ok := l.(session.Store)
	if !ok || !reflect.TypeOf(ls).Comparable() || ls != r.store { // == on a map-backed store would panic
		return false
	}
	r.Stage()
	return true
}

// Stage makes the recorder leave the entries of the events Record is
// given, and the session's changes they bring, for [Recorder.Staged] to
// take, instead of writing them: the server's stream stores each durable
// event with its log entries in one write (session.EventWrite.Log, issue
// 30), where they were two commits, one after the other. It is for a
// consumer that stores every durable event Record saw before the run
// goes on — Record's events are all durable ones — so an entry is durable
// when the event's write returns, as before the tool it journals runs
// (SPEC SESS-1); entries it did not take are written by
// [Recorder.Flush]. RecordProcess and RecordJob still write at once.
func (r *Recorder) Stage() {
	r.smu.Lock()
	r.staging = true
	r.smu.Unlock()
}

// stage keeps entries and change for Staged when staging and says
// whether it did.
func (r *Recorder) stage(entries []session.Entry, change func(*session.Session) bool) bool {
	r.smu.Lock()
	defer r.smu.Unlock()
	if !r.staging {
		return false
	}
	r.staged = append(r.staged, entries...)
	if change != nil {
		r.changes = append(r.changes, change)
	}
	return true
}

// Staged takes what Record staged since the last call: nil when nothing.
func (r *Recorder) Staged() *session.LogAppend {
	r.smu.Lock()
	defer r.smu.Unlock()
	if len(r.staged) == 0 && len(r.changes) == 0 {
		return nil
	}
	l := &session.LogAppend{Entries: r.staged}
	if changes := r.changes; len(changes) > 0 {
		l.Change = func(s *session.Session) bool {
			changed := false
			for _, f := range changes {
				changed = f(s) || changed
			}
			return changed
		}
	}
	r.staged, r.changes = nil, nil
	return l
}

// Restage gives back what Staged took when the write meant to store it
// failed: Flush or the next event's write stores it.
func (r *Recorder) Restage(l *session.LogAppend) {
	if l == nil {
		return
	}
	r.smu.Lock()
	defer r.smu.Unlock()
	r.staged = append(slices.Clip(l.Entries), r.staged...)
	if l.Change != nil {
		r.changes = append([]func(*session.Session) bool{l.Change}, r.changes...)
	}
}

// Flush writes what Record staged and no event's write took, and stops
// staging: what Record is given from now on is written at once.
func (r *Recorder) Flush(ctx context.Context) error {
	l := r.Staged()
	r.smu.Lock()
	r.staging = false
	r.smu.Unlock()
	if l == nil {
		return nil
	}
	if _, err := session.AppendUpdate(ctx, r.store, r.id, l.Entries, l.Change); err != nil {
		return fmt.Errorf("session %s: record the run's last events: %w", r.id, err)
	}
	return nil
}

// appendPrompt appends a user message and, the first time the session
// gets one, gives the session its preview: in one write where the store
// can (session.LogWriter). Elsewhere the message is appended, and durable,
// when appendPrompt returns (SESS-1: the run acknowledges it only then),
// and the preview — the session record's rewrite, a temporary file, two
// fsyncs and a rename in the file store — is written on another goroutine,
// beside the run's first model request rather than before it (issue 30,
// CLI-1). The run's end waits for that write and sets the preview again
// if it failed (see done); Close waits for it too. A crash before it ends
// leaves the session without a preview, as a crash between the two
// writes always could.
func (r *Recorder) appendPrompt(ctx context.Context, e session.Entry) error {
	text := session.PreviewOf(e.Message.TextOf())
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.preview || text == "" {
		return r.record(ctx, e)
	}
	if r.stage([]session.Entry{e}, func(s *session.Session) bool { return setPreview(s, text) }) {
		r.preview = true
		return nil
	}
	if _, ok := r.store.(session.LogWriter); !ok {
		if err := r.append(ctx, e); err != nil {
			return fmt.Errorf("session %s: record the prompt: %w", r.id, err)
		}
		r.preview, r.previewText = true, text
		written := make(chan struct{})
		r.previewing = written
		go func() {
			defer close(written)
			r.previewErr = r.setPreview(ctx, text)
		}()
		return nil
	}
	_, err := session.AppendUpdate(ctx, r.store, r.id, []session.Entry{e}, func(s *session.Session) bool {
		return setPreview(s, text)
	})
	if err != nil {
		return fmt.Errorf("session %s: record the prompt and the preview: %w", r.id, err)
	}
	r.preview = true
	return nil
}

// setPreview stores text as the session's preview unless it has one.
func (r *Recorder) setPreview(ctx context.Context, text string) error {
	s, err := r.store.Get(ctx, r.id)
	if err != nil || !setPreview(s, text) {
		return err
	}
	return r.store.Update(ctx, s)
}

// setPreview sets s's preview to text unless it has one, and says whether
// it did.
func setPreview(s *session.Session, text string) bool {
	if s.Preview != "" || text == "" {
		return false
	}
	s.Preview = text
	return true
}

// waitPreview waits for the preview's write that recording the first user
// message left running, if any, and returns its error.
func (r *Recorder) waitPreview() error {
	r.mu.Lock()
	written := r.previewing
	r.mu.Unlock()
	if written == nil {
		return nil
	}
	<-written
	return r.previewErr
}

// done records the end of a run and adds it to the session's totals.
func (r *Recorder) done(ctx context.Context, e agent.Event) error {
	d := e.Done
	r.mu.Lock()
	rec := session.RunRecord{ID: e.RunID, Provider: r.provider, Model: r.model, StartedAt: r.started, EndedAt: e.Time,
		Reason: string(d.Reason), Turns: d.Turns, Usage: d.Usage, CostUSD: d.CostUSD, Stats: session.RunStats(d.Stats),
		Error: d.Error, Continued: r.cont}
	label, preview := r.label, r.previewText
	if r.runID != e.RunID || rec.StartedAt.IsZero() {
		rec.StartedAt = e.Time.Add(-time.Duration(d.DurationMS) * time.Millisecond)
	}
	r.mu.Unlock()
	// The preview's write ends first: both rewrite the session's record. Its
	// error is not the run's: the record below sets the preview again.
	_ = r.waitPreview()
	entries := []session.Entry{{Kind: session.KindRun, Time: e.Time, RunID: e.RunID, Run: &rec}}
	if d.Focus != nil {
		f, err := json.Marshal(d.Focus)
		if err != nil {
			return fmt.Errorf("session %s: record run %s: focus: %w", r.id, e.RunID, err)
		}
		entries = append(entries, session.Entry{Kind: session.KindFocus, Time: e.Time, RunID: e.RunID, Focus: f})
	}
	totals := func(s *session.Session) bool {
		s.Usage.Add(d.Usage)
		s.CostUSD += d.CostUSD
		s.Runs++
		setPreview(s, preview)
		switch {
		case label != "":
			s.Model = label
		case rec.Model != "":
			s.Model = rec.Model
			if rec.Provider != "" {
				s.Model = rec.Provider + "/" + rec.Model
			}
		}
		s.UpdatedAt = e.Time
		if s.UpdatedAt.IsZero() {
			s.UpdatedAt = time.Now()
		}
		return true
	}
	if r.stage(entries, totals) {
		return nil
	}
	_, err := session.AppendUpdate(ctx, r.store, r.id, entries, totals)
	if err != nil {
		return fmt.Errorf("session %s: record run %s: %w", r.id, e.RunID, err)
	}
	return nil
}

// FocusOf returns the task focus a loaded session recorded (agent.Focus,
// SPEC LOOP-11); the zero focus when it recorded none or the record does
// not decode (the focus guides, it is not the conversation).
func FocusOf(st *session.State) agent.Focus {
	var f agent.Focus
	if st == nil || len(st.Focus) == 0 {
		return f
	}
	if err := json.Unmarshal(st.Focus, &f); err != nil {
		return agent.Focus{}
	}
	return f
}
