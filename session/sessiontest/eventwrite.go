package sessiontest

import (
	"encoding/json"
	"errors"
	"fmt"
	"testing"

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
