package sessiontest

import (
	"encoding/json"
	"errors"
	"fmt"
	"testing"

	"github.com/reinhq/rein/llm"
	"github.com/reinhq/rein/session"
)

// testWriteEvent checks session.WriteEvent: an event with its audit
// record and the run's end are all stored; and, for a ledger that is a
// session.EventWriter, a write failing in any part stores none of it.
func testWriteEvent(t *testing.T, l session.Ledger) {
	ctx := t.Context()
	r := &session.Run{SessionID: "s", Caller: "alice", Prompt: "p"}
	mustCreateRun(t, l, r)
	audit := func(n int) *session.AuditRecord {
		return &session.AuditRecord{Time: t0, Caller: "alice", SessionID: "s", RunID: r.ID, Kind: session.AuditToolCall,
			Data: json.RawMessage(fmt.Sprintf(`{"n":%d}`, n))}
	}
	if err := session.WriteEvent(ctx, l, session.EventWrite{Event: event("s", 1, "tool_start")}); err != nil {
		t.Fatalf("an event alone: %v", err)
	}
	if err := session.WriteEvent(ctx, l, session.EventWrite{Event: event("s", 2, "tool_end"), Audit: audit(1)}); err != nil {
		t.Fatalf("an event with its audit record: %v", err)
	}
	end := &session.Run{ID: r.ID, Status: session.RunCompleted, StartedAt: t0, EndedAt: t0, Reason: "completed", Turns: 2}
	if err := session.WriteEvent(ctx, l, session.EventWrite{Event: event("s", 3, "done"), Audit: audit(2), Run: end}); err != nil {
		t.Fatalf("the done event with its audit record and the run's end: %v", err)
	}
	if got := eventIDs(t, l, "s"); len(got) != 3 || got[2] != 3 {
		t.Errorf("events %v, want 1 2 3", got)
	}
	if got := auditOfRun(t, l, r.ID); len(got) != 2 {
		t.Errorf("%d audit records, want 2", len(got))
	}
	if got, err := l.GetRun(ctx, r.ID); err != nil || got.Status != session.RunCompleted || got.Turns != 2 {
		t.Errorf("run after its done event: %+v, %v; want completed, 2 turns", got, err)
	}
	if _, atomic := l.(session.EventWriter); !atomic {
		return
	}
	for name, c := range map[string]struct {
		w    session.EventWrite
		want error
	}{
		"an event id not above the last": {session.EventWrite{Event: event("s", 3, "message"), Audit: audit(3)}, session.ErrInvalid},
		"an audit record without a kind": {session.EventWrite{Event: event("s", 4, "tool_end"),
			Audit: &session.AuditRecord{Time: t0, Data: json.RawMessage(`{}`)}}, session.ErrInvalid},
		"a run that is not there": {session.EventWrite{Event: event("s", 4, "done"), Audit: audit(4),
			Run: &session.Run{ID: "nope", Status: session.RunCompleted}}, session.ErrNotFound},
	} {
		if err := session.WriteEvent(ctx, l, c.w); !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", name, err, c.want)
		}
	}
	if got := eventIDs(t, l, "s"); len(got) != 3 {
		t.Errorf("after failed writes: events %v, want 1 2 3 (nothing of a failed write is stored)", got)
	}
	if got := auditOfRun(t, l, r.ID); len(got) != 2 {
		t.Errorf("after failed writes: %d audit records, want 2", len(got))
	}
}

// eventIDs returns the ids of the session's stored events.
func eventIDs(t *testing.T, l session.Ledger, sessionID string) []int64 {
	t.Helper()
	evs, err := l.Events(t.Context(), sessionID, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	var ids []int64
	for _, e := range evs {
		ids = append(ids, e.ID)
	}
	return ids
}

// auditOfRun returns the run's audit records.
func auditOfRun(t *testing.T, l session.Ledger, runID string) []session.AuditRecord {
	t.Helper()
	recs, err := l.Audit(t.Context(), session.AuditFilter{RunID: runID})
	if err != nil {
		t.Fatal(err)
	}
	return recs
}

// testWriteEventLog checks an EventWrite's Log, for a ledger that is also
// the sessions' store: the entries are appended and the record changed
// with the event; for a session.EventWriter, a write failing in any part
// stores none of it (SPEC SESS-1: a run's entry and its event are one
// write). A ledger that keeps no session log refuses a Log.
func testWriteEventLog(t *testing.T, l session.Ledger) {
	ctx := t.Context()
	st, ok := l.(session.Store)
	if !ok {
		err := session.WriteEvent(ctx, l, session.EventWrite{Event: event("s", 1, "message"), Log: &session.LogAppend{}})
		if !errors.Is(err, session.ErrInvalid) {
			t.Errorf("a Log for a ledger that is no Store: %v, want ErrInvalid", err)
		}
		if got := eventIDs(t, l, "s"); len(got) != 0 {
			t.Errorf("events %v after a refused write, want none", got)
		}
		return
	}
	if err := st.Create(ctx, &session.Session{ID: "logged", CreatedAt: t0, UpdatedAt: t0}); err != nil {
		t.Fatal(err)
	}
	hi := llm.UserText("hello")
	msg := session.Entry{Kind: session.KindMessage, Time: t0, Message: &hi}
	preview := func(s *session.Session) bool { s.Preview = "hello"; return true }
	w := session.EventWrite{Event: event("logged", 1, "message"), Log: &session.LogAppend{Entries: []session.Entry{msg}, Change: preview}}
	if err := session.WriteEvent(ctx, l, w); err != nil {
		t.Fatalf("an event with its log entry and the session's change: %v", err)
	}
	if err := session.WriteEvent(ctx, l, session.EventWrite{Event: event("logged", 2, "tool_start"),
		Log: &session.LogAppend{Entries: []session.Entry{msg, msg}}}); err != nil {
		t.Fatalf("an event with two entries and no change: %v", err)
	}
	check := func(step string, entries int, events []int64) {
		t.Helper()
		n := 0
		for e, err := range st.Entries(ctx, "logged", 0) {
			if err != nil {
				t.Fatal(err)
			}
			n++
			if e.Seq != int64(n) {
				t.Errorf("%s: entry %d has seq %d", step, n, e.Seq)
			}
		}
		if n != entries {
			t.Errorf("%s: %d entries, want %d", step, n, entries)
		}
		if got := eventIDs(t, l, "logged"); fmt.Sprint(got) != fmt.Sprint(events) {
			t.Errorf("%s: events %v, want %v", step, got, events)
		}
		if s, err := st.Get(ctx, "logged"); err != nil || s.Preview != "hello" {
			t.Errorf("%s: session %+v, %v; want the preview set", step, s, err)
		}
	}
	check("stored", 3, []int64{1, 2})
	if _, atomic := l.(session.EventWriter); !atomic {
		return
	}
	for name, w := range map[string]session.EventWrite{
		"an event id not above the last": {Event: event("logged", 2, "message"), Log: &session.LogAppend{Entries: []session.Entry{msg}, Change: preview}},
		"an invalid entry":               {Event: event("logged", 3, "message"), Log: &session.LogAppend{Entries: []session.Entry{{Kind: session.KindMessage}}}},
		"a session that is not there":    {Event: event("nobody", 1, "message"), Log: &session.LogAppend{Entries: []session.Entry{msg}}},
	} {
		if err := session.WriteEvent(ctx, l, w); err == nil {
			t.Errorf("%s: stored", name)
		}
	}
	check("after failed writes (nothing of a failed write is stored)", 3, []int64{1, 2})
	if got := eventIDs(t, l, "nobody"); len(got) != 0 {
		t.Errorf("events %v of a session that is not there", got)
	}
}
