package session

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/reinhq/rein/llm"
)

// Kind says what an [Entry] records, and so which of its payloads is set.
type Kind string

// The kinds of entry. The names are the "kind" field of the JSON encoding and
// never change.
const (
	// KindMessage: a message appended to the conversation (Message).
	KindMessage Kind = "message"
	// KindRun: a finished run (Run).
	KindRun Kind = "run"
	// KindCompaction: the history was compacted; Compaction.History replaces
	// every message before it.
	KindCompaction Kind = "compaction"
	// KindToolStart: a tool call is about to run (ToolStart); appended before
	// the tool runs, so a crash leaves a trace of it.
	KindToolStart Kind = "tool_start"
	// KindToolProcess: a tool call started a process group (ToolProcess).
	KindToolProcess Kind = "tool_process"
	// KindToolEnd: a tool call finished (ToolEnd); after a crash in the
	// middle of a batch, its output replaces the "interrupted" note.
	KindToolEnd Kind = "tool_end"
	// KindFocus: the task focus after a run (Focus, SPEC LOOP-11).
	KindFocus Kind = "focus"
	// KindHeal: what healing fixed (Heal). A stored one is written when a
	// healed session is resumed; a store also yields unstored ones (Seq 0)
	// for damaged records it skipped.
	KindHeal Kind = "heal"
	// KindSubagent: a message or the end of a sub-agent's run (Subagent,
	// SPEC AGENT-4). Kept with the session, never part of its
	// conversation: the parent's history holds only the call's result.
	KindSubagent Kind = "subagent"
)

// Entry is one record of a session's log. Exactly the payload named by Kind
// is set. Its JSON is stable: {"seq":…,"time":…,"kind":"message","message":{…}}.
type Entry struct {
	// Seq numbers the entries of a session, increasing; the store assigns
	// it on Append. 0 marks an entry that is not stored (a damage report).
	Seq int64 `json:"seq"`
	// Time is when the entry was made; Append sets it when zero.
	Time time.Time `json:"time"`
	Kind Kind      `json:"kind"`
	// RunID is the run that produced the entry, when there is one.
	RunID string `json:"run_id,omitempty"`

	Message     *llm.Message `json:"message,omitempty"`
	Run         *RunRecord   `json:"run,omitempty"`
	Compaction  *Compaction  `json:"compaction,omitempty"`
	ToolStart   *ToolStart   `json:"tool_start,omitempty"`
	ToolProcess *ToolProcess `json:"tool_process,omitempty"`
	ToolEnd     *ToolEnd     `json:"tool_end,omitempty"`
	// Focus is the run loop's task state (agent.Focus, SPEC LOOP-11) as
	// JSON: the store keeps it without knowing the loop's types.
	Focus    json.RawMessage `json:"focus,omitempty"`
	Heal     *HealRecord     `json:"heal,omitempty"`
	Subagent *SubagentRecord `json:"subagent,omitempty"`
}

// SubagentRecord is one record of a sub-agent's transcript: a message of
// its conversation, or its end.
type SubagentRecord struct {
	// Agent is the sub-agent's name; ParentCallID the call of its parent
	// that started it; Depth 1 for a child of the top run.
	Agent        string       `json:"agent"`
	ParentCallID string       `json:"parent_call_id"`
	Depth        int          `json:"depth"`
	Message      *llm.Message `json:"message,omitempty"`
	End          *SubagentEnd `json:"end,omitempty"`
}

// SubagentEnd is how a sub-agent's run ended.
type SubagentEnd struct {
	Reason  string    `json:"reason"`
	Turns   int       `json:"turns"`
	Usage   llm.Usage `json:"usage"`
	CostUSD float64   `json:"cost_usd,omitempty"`
	Error   string    `json:"error,omitempty"`
}

// RunRecord is what a finished run leaves in the session (SPEC SESS-4,
// LOOP-7).
type RunRecord struct {
	ID        string    `json:"id"`
	Provider  string    `json:"provider,omitempty"`
	Model     string    `json:"model,omitempty"`
	StartedAt time.Time `json:"started_at"`
	EndedAt   time.Time `json:"ended_at"`
	Reason    string    `json:"reason"`
	Turns     int       `json:"turns"`
	Usage     llm.Usage `json:"usage"`
	CostUSD   float64   `json:"cost_usd,omitempty"`
	Stats     RunStats  `json:"stats"`
	// Error describes the failure of a run that did not complete.
	Error string `json:"error,omitempty"`
	// Continued is set on a run that continued a pending conversation
	// without a new prompt (SPEC LOOP-9).
	Continued bool `json:"continued,omitempty"`
}

// RunStats counts what a run did (SPEC LOOP-7). Its fields are those of
// agent.Stats, so one converts to the other.
type RunStats struct {
	ModelCalls int `json:"model_calls"`
	ToolCalls  int `json:"tool_calls"`
	ToolErrors int `json:"tool_errors"`
	// ErrorsByTool counts failed calls per tool, then per outcome
	// ("error", "denied", "invalid", …).
	ErrorsByTool map[string]map[string]int `json:"errors_by_tool,omitempty"`
	Retries      int                       `json:"retries,omitempty"`
	Compactions  int                       `json:"compactions,omitempty"`
	Subagents    int                       `json:"subagents,omitempty"`
}

// Compaction records a compaction of the history (SPEC CTX-5).
type Compaction struct {
	// History is the conversation after compaction; it replaces every
	// message before this entry.
	History      []llm.Message `json:"history"`
	TokensBefore int           `json:"tokens_before"`
	TokensAfter  int           `json:"tokens_after"`
	Layers       []string      `json:"layers,omitempty"`
	// Trigger is "budget", "overflow" or "manual".
	Trigger string `json:"trigger,omitempty"`
}

// ToolStart journals a tool call about to run.
type ToolStart struct {
	CallID string          `json:"call_id"`
	Tool   string          `json:"tool"`
	Input  json.RawMessage `json:"input,omitempty"`
}

// ToolEnd records how a tool call finished.
type ToolEnd struct {
	CallID  string `json:"call_id"`
	Tool    string `json:"tool"`
	Output  string `json:"output,omitempty"`
	IsError bool   `json:"is_error,omitempty"`
	Outcome string `json:"outcome,omitempty"`
}

// ToolProcess records the process group a tool call started.
type ToolProcess struct {
	CallID string `json:"call_id"`
	PGID   int    `json:"pgid"`
	// Start identifies the group's leader beyond its pid (its start time in
	// clock ticks since boot, on Linux), so a later pid reuse is not taken
	// for the same process. 0 when unknown.
	Start uint64 `json:"start,omitempty"`
	// Job, when set, is the id of the background job the process group
	// runs as (SPEC TOOL-8): it runs on after its call's result, so [Load]
	// reports it while it lives (see jobs.go).
	Job string `json:"job,omitempty"`
}

// HealRecord is the payload of a heal entry.
type HealRecord struct {
	Report Report `json:"report"`
	// History, when set, is the healed conversation: it replaces every
	// message before the entry, so the repairs are made once and for all.
	History []llm.Message `json:"history,omitempty"`
}

// Validate checks that e's payload matches its kind.
func (e *Entry) Validate() error {
	payloads := [...]struct {
		kind Kind
		set  bool
	}{
		{KindMessage, e.Message != nil},
		{KindRun, e.Run != nil},
		{KindCompaction, e.Compaction != nil},
		{KindToolStart, e.ToolStart != nil},
		{KindToolProcess, e.ToolProcess != nil},
		{KindToolEnd, e.ToolEnd != nil},
		{KindFocus, e.Focus != nil},
		{KindHeal, e.Heal != nil},
		{KindSubagent, e.Subagent != nil},
	}
	known, has := false, false
	for _, p := range payloads {
		switch {
		case p.kind == e.Kind:
			known, has = true, p.set
		case p.set:
			return fmt.Errorf("%w: %s entry also carries a %s payload", ErrInvalid, e.Kind, p.kind)
		}
	}
	if !known {
		return fmt.Errorf("%w: entry kind %q (want message, run, compaction, tool_start, tool_process, tool_end, focus, heal or subagent)", ErrInvalid, e.Kind)
	}
	if !has {
		return fmt.Errorf("%w: %s entry without its %s payload", ErrInvalid, e.Kind, e.Kind)
	}
	return nil
}

// PrepareAppend validates entries and numbers them from next, setting a
// zero Time to now. It returns the seq of the last one. Stores call it on
// Append; entries is modified in place.
func PrepareAppend(entries []Entry, next int64, now time.Time) (int64, error) {
	for i := range entries {
		if err := entries[i].Validate(); err != nil {
			return 0, fmt.Errorf("entry %d: %w", i, err)
		}
	}
	last := next - 1
	for i := range entries {
		last = next + int64(i)
		entries[i].Seq = last
		if entries[i].Time.IsZero() {
			entries[i].Time = now
		}
	}
	return last, nil
}

// DecodeRow decodes the entry a SQL store keeps at seq (its JSON), or
// returns the heal entry reporting the row damaged: one that does not
// decode, holds the entry of another seq, or whose payload does not
// match its kind.
func DecodeRow(seq int64, data []byte) Entry {
	var e Entry
	err := json.Unmarshal(data, &e)
	if err == nil && e.Seq != seq {
		err = fmt.Errorf("the row of seq %d holds entry %d", seq, e.Seq)
	}
	if err == nil {
		err = e.Validate()
	}
	if err == nil {
		return e
	}
	reason := err.Error()
	if len(reason) > 200 {
		reason = reason[:200] + "…"
	}
	// Line is the row's seq: the record's number in the log.
	d := Damage{Line: seq, Bytes: int64(len(data)), Reason: "corrupt: " + reason}
	return Entry{Kind: KindHeal, Heal: &HealRecord{Report: Report{Damaged: []Damage{d}}}}
}
