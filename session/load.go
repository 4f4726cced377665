package session

import (
	"context"
	"encoding/json"
	"slices"
	"time"

	"github.com/reinhq/rein/llm"
)

// State is a session replayed from its log and healed: what a front end
// needs to resume it.
type State struct {
	Session *Session
	// Messages is the healed conversation, ready for agent.Input.History.
	Messages []llm.Message
	// Focus is the newest task focus recorded (agent.Focus as JSON,
	// LOOP-11); nil when none was.
	Focus json.RawMessage
	// Runs lists the session's finished runs, oldest first.
	Runs []RunRecord
	// Pending lists the tool calls journaled as started that never got a
	// result: the calls a crash cut off, oldest first.
	Pending []PendingCall
	// Heal says what healing fixed, including damaged records the store
	// skipped. When it is not empty, resume through the runner's
	// Recorder.RecordHeal so the repairs are stored once.
	Heal Report
	// LastSeq is the seq of the newest entry read.
	LastSeq int64
	// Subagents are the transcripts of the sub-agents the session's runs
	// started (SPEC AGENT-4), in the order they started.
	Subagents []SubagentTranscript
}

// SubagentTranscript is what one sub-agent said and did.
type SubagentTranscript struct {
	Agent        string
	ParentCallID string
	Depth        int
	RunID        string
	Messages     []llm.Message
	// End is nil while the sub-agent runs, or when a crash cut it off.
	End *SubagentEnd
}

// addSubagent files a sub-agent record under its transcript.
func (st *State) addSubagent(runID string, r *SubagentRecord) {
	var t *SubagentTranscript
	for i := len(st.Subagents) - 1; i >= 0; i-- {
		if c := &st.Subagents[i]; c.ParentCallID == r.ParentCallID && c.Agent == r.Agent && c.Depth == r.Depth && c.RunID == runID && c.End == nil {
			t = c
			break
		}
	}
	if t == nil {
		st.Subagents = append(st.Subagents, SubagentTranscript{Agent: r.Agent, ParentCallID: r.ParentCallID, Depth: r.Depth, RunID: runID})
		t = &st.Subagents[len(st.Subagents)-1]
	}
	if r.Message != nil {
		t.Messages = append(t.Messages, *r.Message)
	}
	if r.End != nil {
		t.End = r.End
	}
}

// PendingCall is a tool call journaled as started whose result never made
// it into the log.
type PendingCall struct {
	CallID string          `json:"call_id"`
	Tool   string          `json:"tool"`
	Input  json.RawMessage `json:"input,omitempty"`
	RunID  string          `json:"run_id,omitempty"`
	// Seq and StartedAt locate the journal entry.
	Seq       int64     `json:"seq"`
	StartedAt time.Time `json:"started_at"`
	// PGID is the process group the call started, 0 when none was recorded;
	// Start identifies its leader (see [ToolProcess]).
	PGID  int    `json:"pgid,omitempty"`
	Start uint64 `json:"start,omitempty"`
	// Alive reports whether that process group was still running when the
	// session was loaded; [StopPending] stops it.
	Alive bool `json:"alive,omitempty"`
	// Stopped reports that [StopPending] stopped that group: the result
	// healing gave the call says so ([StoppedText]) once [State.Recheck]
	// has run.
	Stopped bool `json:"stopped,omitempty"`
	// Job is the background job the group ran as (SPEC TOOL-8): its call
	// has its result, but the job outlived the process that ran the
	// session.
	Job string `json:"job,omitempty"`
}

// Load reads a session and replays its log into a healed [State]: messages
// are appended in order, a compaction (or a stored heal) replaces the
// messages before it, journaled calls that never got a result become
// [State.Pending], and the conversation is healed ([Heal]) with the journal
// deciding what each unanswered call's result says. Damaged records the
// store skipped are reported in State.Heal.Damaged, never fatal.
func Load(ctx context.Context, store Store, id string) (*State, error) {
	s, err := store.Get(ctx, id)
	if err != nil {
		return nil, err
	}
	st := &State{Session: s}
	var r replay
	for e, err := range store.Entries(ctx, id, 0) {
		if err != nil {
			return nil, err
		}
		r.apply(st, e)
	}
	// A call's process group is checked before healing, so the result
	// healing writes says whether the command still runs (SESS-1, SESS-2).
	for _, p := range r.pending {
		if p != nil {
			p.Alive = p.PGID > 0 && groupAlive(p.PGID, p.Start)
		}
	}
	var journal map[string]string
	if len(r.started) > 0 {
		journal = make(map[string]string, len(r.started))
		for id := range r.started {
			journal[id] = ""
		}
		for _, p := range r.pending {
			if p != nil && p.PGID > 0 {
				journal[p.CallID] = ProcessText(p.PGID, p.Alive)
			}
		}
		for id, end := range r.finished {
			journal[id] = FinishedText(end)
		}
	}
	msgs, rep := Heal(r.msgs, journal)
	rep.Damaged = r.damage
	st.Heal = rep
	for _, p := range r.pending {
		if p != nil {
			if r.repaired[p.CallID] && !p.Alive {
				continue // answered by a stored repair, and nothing of it runs
			}
			st.Pending = append(st.Pending, *p)
		}
	}
	st.Pending = append(st.Pending, r.liveJobs()...)
	// A stored repair wrote the state of a group as it was then; say what
	// it is now.
	st.Messages = restate(msgs, r.processTexts())
	return st, nil
}

// Recheck looks again at the process groups of st.Pending (after
// [StopPending], say) and brings their Alive flags and the results healing
// gave their calls up to date, so the conversation does not tell the model a
// stopped command still runs: a group StopPending stopped gets
// [StoppedText]. Calls whose group is gone stay in Pending.
func (st *State) Recheck() {
	texts := map[string]string{}
	for i := range st.Pending {
		p := &st.Pending[i]
		if p.PGID <= 0 {
			continue
		}
		p.Alive = groupAlive(p.PGID, p.Start)
		texts[p.CallID] = ProcessText(p.PGID, p.Alive)
		if p.Stopped && !p.Alive {
			texts[p.CallID] = StoppedText(p.PGID)
		}
	}
	st.Messages = restate(st.Messages, texts)
}

// processTexts returns the current [ProcessText] of every journaled call
// with a process group that has no result of its own: the calls healing (now
// or in a stored repair) answered.
func (r *replay) processTexts() map[string]string {
	texts := map[string]string{}
	for _, p := range r.pending {
		if p != nil && p.PGID > 0 {
			texts[p.CallID] = ProcessText(p.PGID, p.Alive)
		}
	}
	return texts
}

// restate replaces, in the results of the calls in texts, a text healing
// wrote about a process group by the one in texts. Messages it changes are
// copied; the others are shared.
func restate(msgs []llm.Message, texts map[string]string) []llm.Message {
	if len(texts) == 0 {
		return msgs
	}
	var out []llm.Message
	for i, m := range msgs {
		if m.Role != llm.RoleUser {
			continue
		}
		var content []llm.Block
		for j, b := range m.Content {
			r, ok := b.(*llm.ToolResult)
			if !ok || !r.IsError {
				continue
			}
			text, want := llm.Message{Content: r.Content}.TextOf(), texts[r.ToolUseID]
			if want == "" || text == want || !isProcessText(text) || keepsStopped(text, want) {
				continue
			}
			if content == nil {
				content = slices.Clone(m.Content)
			}
			nr := *r
			nr.Content = []llm.Block{&llm.Text{Text: want}}
			content[j] = &nr
		}
		if content != nil {
			if out == nil {
				out = slices.Clone(msgs)
			}
			out[i].Content = content
		}
	}
	if out == nil {
		return msgs
	}
	return out
}

// replay accumulates the log while Load reads it.
type replay struct {
	msgs    []llm.Message
	started map[string]bool // every call ever journaled as started
	// finished holds the journaled ends of calls, for calls whose results
	// message a crash lost.
	finished map[string]*ToolEnd
	// repaired holds calls a stored heal answered whose process group was
	// journaled: pending only while that group still runs.
	repaired map[string]bool
	// pending is in journal order; a resolved call's slot is set to nil.
	pending []*PendingCall
	open    map[string]int // call id → index in pending
	damage  []Damage
	// jobs are the background jobs journaled, in journal order.
	jobs []PendingCall
}

func (r *replay) apply(st *State, e Entry) {
	if e.Seq > st.LastSeq {
		st.LastSeq = e.Seq
	}
	switch e.Kind {
	case KindMessage:
		r.msgs = append(r.msgs, *e.Message)
		for _, b := range e.Message.Content {
			if res, ok := b.(*llm.ToolResult); ok {
				r.resolve(res.ToolUseID)
			}
		}
	case KindCompaction:
		r.msgs = slices.Clone(e.Compaction.History)
	case KindToolStart:
		r.start(e)
	case KindToolEnd:
		if r.finished == nil {
			r.finished = map[string]*ToolEnd{}
		}
		r.finished[e.ToolEnd.CallID] = e.ToolEnd
		r.resolve(e.ToolEnd.CallID)
	case KindToolProcess:
		if e.ToolProcess.Job != "" {
			r.job(e)
			return
		}
		if k, ok := r.open[e.ToolProcess.CallID]; ok {
			r.pending[k].PGID, r.pending[k].Start = e.ToolProcess.PGID, e.ToolProcess.Start
		}
	case KindFocus:
		st.Focus = e.Focus
	case KindRun:
		st.Runs = append(st.Runs, *e.Run)
	case KindSubagent:
		st.addSubagent(e.RunID, e.Subagent)
	case KindHeal:
		if e.Seq == 0 {
			r.damage = append(r.damage, e.Heal.Report.Damaged...)
			return
		}
		if e.Heal.History != nil {
			r.msgs = slices.Clone(e.Heal.History)
		}
		// Damage already reported and stored is not news.
		r.damage = slices.DeleteFunc(r.damage, func(d Damage) bool { return slices.Contains(e.Heal.Report.Damaged, d) })
		// A call whose process group was journaled stays pending: the
		// repair gave it a result, but its processes may still run, and
		// StopPending (which checks Alive) must still find them.
		for _, id := range e.Heal.Report.Interrupted {
			if k, ok := r.open[id]; ok && r.pending[k].PGID == 0 {
				r.resolve(id)
			} else if ok {
				if r.repaired == nil {
					r.repaired = map[string]bool{}
				}
				r.repaired[id] = true
			}
		}
		for _, id := range e.Heal.Report.NotRun {
			r.resolve(id)
		}
	}
}

func (r *replay) start(e Entry) {
	ts := e.ToolStart
	if r.started == nil {
		r.started, r.open = map[string]bool{}, map[string]int{}
	}
	r.started[ts.CallID] = true
	r.resolve(ts.CallID)
	r.open[ts.CallID] = len(r.pending)
	r.pending = append(r.pending, &PendingCall{CallID: ts.CallID, Tool: ts.Tool, Input: ts.Input, RunID: e.RunID,
		Seq: e.Seq, StartedAt: e.Time})
}

func (r *replay) resolve(id string) {
	if k, ok := r.open[id]; ok {
		r.pending[k] = nil
		delete(r.open, id)
	}
}

// SaveHeal stores what [Load] healed in session id, when anything was: a
// heal entry holding the report and, when the messages changed, the healed
// history, so the next load starts from it and reports nothing. Call it once
// after Load, before the session's next run is recorded.
func SaveHeal(ctx context.Context, store Store, id string, st *State) error {
	if st.Heal.Empty() {
		return nil
	}
	h := &HealRecord{Report: st.Heal}
	if st.Heal.Changed() {
		h.History = st.Messages
		if h.History == nil {
			h.History = []llm.Message{}
		}
	}
	_, err := store.Append(context.WithoutCancel(ctx), id, Entry{Kind: KindHeal, Heal: h})
	return err
}
