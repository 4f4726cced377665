package sessiontest

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/reinhq/rein/llm"
	"github.com/reinhq/rein/session"
)

// RunLedger runs the conformance suite of session.Ledger: workspaces
// (create, get, list per caller newest first), runs (defaults, Seq
// increasing across sessions, updates that keep identity, prompt, options
// and Seq, filtered listing), the event log (increasing ids, a bad batch
// rejected whole, reading after an id with a limit, the last id, deletion),
// the audit trail (ids assigned in order, every filter), an event stored
// with its audit record and its run's end (session.WriteEvent: all or
// nothing where the ledger is a session.EventWriter), the callers' kept
// rules (per caller and directory, canonical, each once), the errors callers
// test (ErrNotFound, ErrExists, ErrInvalid) and concurrent use. newLedger
// returns an empty ledger; it is called once per subtest and may register
// cleanups on t.
func RunLedger(t *testing.T, newLedger func(t *testing.T) session.Ledger) {
	tests := []struct {
		name string
		fn   func(*testing.T, session.Ledger)
	}{
		{"Workspaces", testWorkspaces},
		{"WorkspaceErrors", testWorkspaceErrors},
		{"CreateRun", testCreateRun},
		{"UpdateRun", testUpdateRun},
		{"RunErrors", testRunErrors},
		{"ListRuns", testListRuns},
		{"Events", testEvents},
		{"EventOrder", testEventOrder},
		{"DeleteEvents", testDeleteEvents},
		{"Audit", testAudit},
		{"AuditFilter", testAuditFilter},
		{"WriteEvent", testWriteEvent},
		{"WriteEventLog", testWriteEventLog},
		{"Concurrent", testLedgerConcurrent},
		{"CallerRules", testCallerRules},
		{"CallerRuleErrors", testCallerRuleErrors},
		{"CallerRulesConcurrent", testCallerRulesConcurrent},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { tt.fn(t, newLedger(t)) })
	}
}

// t0 is a fixed time in the past, so "now" is always newer.
var t0 = time.Date(2020, 5, 6, 7, 8, 9, 10_000_000, time.UTC)

func testWorkspaces(t *testing.T, l session.Ledger) {
	ctx := t.Context()
	ws := []*session.Workspace{
		{ID: "w1", Caller: "alice", Kind: session.WorkspaceProject, Dir: "/src/a", Name: "a", CreatedAt: t0},
		{ID: "w2", Caller: "alice", Kind: session.WorkspaceChat, Name: "chat", CreatedAt: t0.Add(time.Minute)},
		{ID: "w3", Caller: "bob", Kind: session.WorkspaceProject, Dir: "/src/b", CreatedAt: t0.Add(2 * time.Minute)},
	}
	for _, w := range ws {
		if err := l.CreateWorkspace(ctx, w); err != nil {
			t.Fatalf("CreateWorkspace %s: %v", w.ID, err)
		}
	}
	got, err := l.GetWorkspace(ctx, "w1")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(ws[0], got, Opts); diff != "" {
		t.Errorf("GetWorkspace (-created +got):\n%s", diff)
	}
	got.Name = "changed"
	if again, _ := l.GetWorkspace(ctx, "w1"); again == nil || again.Name != "a" {
		t.Errorf("changing a returned workspace changed the ledger: %+v", again)
	}
	if err := l.CreateWorkspace(ctx, &session.Workspace{ID: "w1", Caller: "carol", Kind: session.WorkspaceChat}); !errors.Is(err, session.ErrExists) {
		t.Errorf("CreateWorkspace of an id in use: %v, want ErrExists", err)
	}
	auto := &session.Workspace{Caller: "alice", Kind: session.WorkspaceChat}
	before := time.Now().Add(-time.Second)
	if err := l.CreateWorkspace(ctx, auto); err != nil {
		t.Fatal(err)
	}
	if err := session.ValidID(auto.ID); err != nil || auto.CreatedAt.Before(before) {
		t.Errorf("CreateWorkspace filled id %q (%v), created at %v; want a valid id, now", auto.ID, err, auto.CreatedAt)
	}
	for caller, want := range map[string][]string{"alice": {auto.ID, "w2", "w1"}, "bob": {"w3"}, "carol": {}} {
		list, err := l.ListWorkspaces(ctx, caller)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, workspaceIDs(list)); diff != "" {
			t.Errorf("ListWorkspaces(%s), newest first (-want +got):\n%s", caller, diff)
		}
	}
	list, _ := l.ListWorkspaces(ctx, "bob")
	if len(list) == 1 {
		if diff := cmp.Diff(ws[2], list[0], Opts); diff != "" {
			t.Errorf("listed workspace (-created +listed):\n%s", diff)
		}
	}
}

func testWorkspaceErrors(t *testing.T, l session.Ledger) {
	ctx := t.Context()
	checks := map[string]error{
		"CreateWorkspace(nil)":          l.CreateWorkspace(ctx, nil),
		"CreateWorkspace(no caller)":    l.CreateWorkspace(ctx, &session.Workspace{Kind: session.WorkspaceChat}),
		"CreateWorkspace(no kind)":      l.CreateWorkspace(ctx, &session.Workspace{Caller: "alice"}),
		"CreateWorkspace(unknown kind)": l.CreateWorkspace(ctx, &session.Workspace{Caller: "alice", Kind: "team"}),
		"CreateWorkspace(bad id)":       l.CreateWorkspace(ctx, &session.Workspace{ID: "../x", Caller: "alice", Kind: session.WorkspaceChat}),
	}
	_, err := l.ListWorkspaces(ctx, "")
	checks["ListWorkspaces(no caller)"] = err
	_, err = l.GetWorkspace(ctx, "")
	checks["GetWorkspace(empty)"] = err
	for name, err := range checks {
		if !errors.Is(err, session.ErrInvalid) {
			t.Errorf("%s: %v, want ErrInvalid", name, err)
		}
	}
	if _, err := l.GetWorkspace(ctx, "nope"); !errors.Is(err, session.ErrNotFound) {
		t.Errorf("GetWorkspace of an unknown id: %v, want ErrNotFound", err)
	}
	if list, err := l.ListWorkspaces(ctx, "alice"); err != nil || len(list) != 0 {
		t.Errorf("rejected workspaces were stored: %v, %v", workspaceIDs(list), err)
	}
}

func testCreateRun(t *testing.T, l session.Ledger) {
	ctx := t.Context()
	before := time.Now().Add(-time.Second)
	r := &session.Run{SessionID: "s1", Caller: "alice", Prompt: "hi", Options: json.RawMessage(`{"model":"m"}`)}
	mustCreateRun(t, l, r)
	if err := session.ValidID(r.ID); err != nil || r.Status != session.RunQueued || r.CreatedAt.Before(before) || r.Seq <= 0 {
		t.Errorf("CreateRun filled id %q (%v), status %q, created at %v, seq %d; want a valid id, queued, now, a seq above 0",
			r.ID, err, r.Status, r.CreatedAt, r.Seq)
	}
	// Seq orders every run of the ledger, whatever its session.
	r2 := &session.Run{SessionID: "s2", Prompt: "other"}
	r3 := &session.Run{ID: "run-3", SessionID: "s1", Status: session.RunRunning, CreatedAt: t0, StartedAt: t0.Add(time.Second)}
	mustCreateRun(t, l, r2)
	mustCreateRun(t, l, r3)
	if !(r.Seq < r2.Seq && r2.Seq < r3.Seq) {
		t.Errorf("seqs %d, %d, %d; want them increasing", r.Seq, r2.Seq, r3.Seq)
	}
	for _, want := range []*session.Run{r, r2, r3} {
		got, err := l.GetRun(ctx, want.ID)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, got, Opts); diff != "" {
			t.Errorf("GetRun %s (-created +got):\n%s", want.ID, diff)
		}
	}
	got, _ := l.GetRun(ctx, r.ID)
	got.Prompt = "changed"
	if again, _ := l.GetRun(ctx, r.ID); again == nil || again.Prompt != "hi" {
		t.Errorf("changing a returned run changed the ledger: %+v", again)
	}
	if err := l.CreateRun(ctx, &session.Run{ID: "run-3", SessionID: "s2"}); !errors.Is(err, session.ErrExists) {
		t.Errorf("CreateRun of an id in use: %v, want ErrExists", err)
	}
	r4 := &session.Run{SessionID: "s2"}
	mustCreateRun(t, l, r4)
	if r4.Seq <= r3.Seq {
		t.Errorf("seq %d after %d", r4.Seq, r3.Seq)
	}
}

func testUpdateRun(t *testing.T, l session.Ledger) {
	ctx := t.Context()
	r := &session.Run{SessionID: "s", Caller: "alice", Prompt: "p", Options: json.RawMessage(`{"max_turns":3}`)}
	mustCreateRun(t, l, r)
	steps := []session.Run{
		{Status: session.RunRunning, StartedAt: t0},
		{Status: session.RunCompleted, StartedAt: t0, EndedAt: t0.Add(time.Minute), Reason: "completed", Turns: 3,
			Usage: llm.Usage{InputTokens: 10, OutputTokens: 5, CacheReadTokens: 2}, CostUSD: 0.5},
		{Status: session.RunFailed, StartedAt: t0, EndedAt: t0.Add(time.Hour), Reason: "error", Error: "boom", Turns: 1},
	}
	for i, step := range steps {
		u := step
		// Identity, prompt, options, seq and creation time are kept.
		u.ID, u.SessionID, u.Caller, u.Prompt, u.Options, u.Seq, u.CreatedAt = r.ID, "other", "mallory", "changed", json.RawMessage(`{}`), 999, t0
		if err := l.UpdateRun(ctx, &u); err != nil {
			t.Fatalf("update %d: %v", i, err)
		}
		want := *r
		want.Status, want.StartedAt, want.EndedAt, want.Reason, want.Error = step.Status, step.StartedAt, step.EndedAt, step.Reason, step.Error
		want.Turns, want.Usage, want.CostUSD = step.Turns, step.Usage, step.CostUSD
		got, err := l.GetRun(ctx, r.ID)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(&want, got, Opts); diff != "" {
			t.Errorf("after update %d (-want +got):\n%s", i, diff)
		}
	}
	if err := l.UpdateRun(ctx, &session.Run{ID: "nope", Status: session.RunRunning}); !errors.Is(err, session.ErrNotFound) {
		t.Errorf("UpdateRun of an unknown id: %v, want ErrNotFound", err)
	}
	if _, err := l.GetRun(ctx, "nope"); !errors.Is(err, session.ErrNotFound) {
		t.Errorf("GetRun of an unknown id: %v, want ErrNotFound", err)
	}
}

func testRunErrors(t *testing.T, l session.Ledger) {
	ctx := t.Context()
	r := &session.Run{ID: "r", SessionID: "s"}
	mustCreateRun(t, l, r)
	checks := map[string]error{
		"CreateRun(nil)":            l.CreateRun(ctx, nil),
		"CreateRun(no session)":     l.CreateRun(ctx, &session.Run{}),
		"CreateRun(bad session)":    l.CreateRun(ctx, &session.Run{SessionID: "../s"}),
		"CreateRun(bad id)":         l.CreateRun(ctx, &session.Run{ID: "a/b", SessionID: "s"}),
		"CreateRun(unknown status)": l.CreateRun(ctx, &session.Run{SessionID: "s", Status: "sleeping"}),
		"CreateRun(options)":        l.CreateRun(ctx, &session.Run{SessionID: "s", Options: json.RawMessage(`{"model":`)}),
		"UpdateRun(nil)":            l.UpdateRun(ctx, nil),
		"UpdateRun(no id)":          l.UpdateRun(ctx, &session.Run{Status: session.RunRunning}),
		"UpdateRun(no status)":      l.UpdateRun(ctx, &session.Run{ID: "r"}),
		"UpdateRun(unknown status)": l.UpdateRun(ctx, &session.Run{ID: "r", Status: "sleeping"}),
	}
	_, err := l.GetRun(ctx, "")
	checks["GetRun(empty)"] = err
	for name, err := range checks {
		if !errors.Is(err, session.ErrInvalid) {
			t.Errorf("%s: %v, want ErrInvalid", name, err)
		}
	}
	runs, err := l.ListRuns(ctx, session.RunFilter{})
	if err != nil || len(runs) != 1 || runs[0].Status != session.RunQueued {
		t.Errorf("after rejected calls: runs %v, %v; want only r, still queued", runPrompts(runs), err)
	}
}

func testListRuns(t *testing.T, l session.Ledger) {
	ctx := t.Context()
	var runs []*session.Run
	for i, spec := range []struct {
		sess, caller string
		status       session.RunStatus
	}{
		{"s1", "alice", session.RunQueued},
		{"s2", "bob", session.RunQueued},
		{"s1", "alice", session.RunRunning},
		{"s1", "alice", session.RunCompleted},
		{"s2", "bob", session.RunFailed},
	} {
		r := &session.Run{SessionID: spec.sess, Caller: spec.caller, Status: spec.status, Prompt: fmt.Sprint("r", i+1)}
		mustCreateRun(t, l, r)
		runs = append(runs, r)
	}
	tests := []struct {
		name string
		f    session.RunFilter
		want []string
	}{
		{"all", session.RunFilter{}, []string{"r1", "r2", "r3", "r4", "r5"}},
		{"session", session.RunFilter{SessionID: "s1"}, []string{"r1", "r3", "r4"}},
		{"caller", session.RunFilter{Caller: "bob"}, []string{"r2", "r5"}},
		{"live", session.RunFilter{Statuses: []session.RunStatus{session.RunQueued, session.RunRunning}}, []string{"r1", "r2", "r3"}},
		{"queued of s2", session.RunFilter{SessionID: "s2", Statuses: []session.RunStatus{session.RunQueued}}, []string{"r2"}},
		{"after", session.RunFilter{AfterSeq: runs[1].Seq}, []string{"r3", "r4", "r5"}},
		{"limit", session.RunFilter{Limit: 2}, []string{"r1", "r2"}},
		{"page of a session", session.RunFilter{SessionID: "s1", AfterSeq: runs[0].Seq, Limit: 1}, []string{"r3"}},
		{"unknown session", session.RunFilter{SessionID: "none"}, []string{}},
		{"no match", session.RunFilter{Caller: "alice", Statuses: []session.RunStatus{session.RunFailed}}, []string{}},
	}
	for _, tt := range tests {
		got, err := l.ListRuns(ctx, tt.f)
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if diff := cmp.Diff(tt.want, runPrompts(got)); diff != "" {
			t.Errorf("ListRuns %s (-want +got):\n%s", tt.name, diff)
		}
	}
	all, _ := l.ListRuns(ctx, session.RunFilter{})
	if diff := cmp.Diff(runs, all, Opts); diff != "" {
		t.Errorf("listed runs (-created +listed):\n%s", diff)
	}
}

func event(sessionID string, id int64, typ string) session.Event {
	return session.Event{SessionID: sessionID, ID: id, RunID: "r1", Type: typ, Time: t0.Add(time.Duration(id) * time.Millisecond),
		Data: json.RawMessage(fmt.Sprintf(`{"type":%q,"n":%d}`, typ, id))}
}

func testEvents(t *testing.T, l session.Ledger) {
	ctx := t.Context()
	if err := l.AppendEvents(ctx); err != nil {
		t.Errorf("AppendEvents of nothing: %v", err)
	}
	// Ids need not be contiguous (deltas take the ones between).
	want := []session.Event{event("s", 1, "message"), event("s", 2, "tool_result"), event("s", 5, "message"), event("s", 3<<20, "done")}
	mustAppendEvents(t, l, want[:2]...)
	mustAppendEvents(t, l, want[2])
	mustAppendEvents(t, l, want[3], event("other", 1, "message"))
	tests := []struct {
		after int64
		limit int
		want  []session.Event
	}{
		{0, 0, want},
		{2, 0, want[2:]},
		{1, 2, want[1:3]},
		{0, 1, want[:1]},
		{3, 0, want[2:]},
		{3 << 20, 0, nil},
	}
	for _, tt := range tests {
		got, err := l.Events(ctx, "s", tt.after, tt.limit)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(tt.want, got, Opts); diff != "" {
			t.Errorf("Events after %d, limit %d (-want +got):\n%s", tt.after, tt.limit, diff)
		}
	}
	got, _ := l.Events(ctx, "s", 0, 1)
	if len(got) == 1 && len(got[0].Data) > 0 {
		got[0].Data[0] = 'X'
		if again, _ := l.Events(ctx, "s", 0, 1); len(again) != 1 || !json.Valid(again[0].Data) {
			t.Errorf("changing a returned event changed the ledger: %s", again[0].Data)
		}
	}
	for id, want := range map[string]int64{"s": 3 << 20, "other": 1, "none": 0} {
		if last, err := l.LastEventID(ctx, id); err != nil || last != want {
			t.Errorf("LastEventID(%s) = %d, %v; want %d", id, last, err, want)
		}
	}
	if none, err := l.Events(ctx, "none", 0, 0); err != nil || len(none) != 0 {
		t.Errorf("Events of a session with none: %v, %v", none, err)
	}
}

// testEventOrder: a batch holding an id not above the one before it in its
// session, or any malformed event, is rejected whole.
func testEventOrder(t *testing.T, l session.Ledger) {
	ctx := t.Context()
	stored := []session.Event{event("s", 1, "message"), event("s", 2, "message"), event("s", 3, "message")}
	mustAppendEvents(t, l, stored...)
	noType := event("s", 4, "")
	badData := event("s", 4, "message")
	badData.Data = json.RawMessage(`{"n":`)
	tests := []struct {
		name  string
		batch []session.Event
	}{
		{"repeats the last id", []session.Event{event("s", 3, "message")}},
		{"goes back", []session.Event{event("s", 2, "message")}},
		{"repeats an id in the batch", []session.Event{event("s", 4, "message"), event("s", 4, "message")}},
		{"goes back in the batch", []session.Event{event("s", 5, "message"), event("s", 4, "message")}},
		{"bad event after good ones of two sessions", []session.Event{event("other", 1, "message"), event("s", 4, "message"), event("s", 4, "message")}},
		{"id 0", []session.Event{event("other", 1, "message"), event("s", 0, "message")}},
		{"negative id", []session.Event{event("other", -1, "message")}},
		{"no type", []session.Event{event("other", 1, "message"), noType}},
		{"data not JSON", []session.Event{badData}},
		{"no session", []session.Event{event("", 4, "message")}},
		{"bad session", []session.Event{event("a/b", 4, "message")}},
	}
	for _, tt := range tests {
		if err := l.AppendEvents(ctx, tt.batch...); !errors.Is(err, session.ErrInvalid) {
			t.Errorf("AppendEvents, batch that %s: %v, want ErrInvalid", tt.name, err)
		}
		got, err := l.Events(ctx, "s", 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(stored, got, Opts); diff != "" {
			t.Fatalf("after a batch that %s (-stored before +now):\n%s", tt.name, diff)
		}
		if last, _ := l.LastEventID(ctx, "other"); last != 0 {
			t.Fatalf("after a batch that %s: session other has event %d; want none stored", tt.name, last)
		}
	}
	mustAppendEvents(t, l, event("other", 1, "message"), event("s", 4, "message"), event("other", 2, "message"))
	if last, _ := l.LastEventID(ctx, "s"); last != 4 {
		t.Errorf("a good batch after rejected ones: last id %d, want 4", last)
	}
	_, err := l.Events(ctx, "", 0, 0)
	_, err2 := l.LastEventID(ctx, "")
	for name, err := range map[string]error{"Events": err, "LastEventID": err2, "DeleteEvents": l.DeleteEvents(ctx, "")} {
		if !errors.Is(err, session.ErrInvalid) {
			t.Errorf("%s of an empty session id: %v, want ErrInvalid", name, err)
		}
	}
}

func testDeleteEvents(t *testing.T, l session.Ledger) {
	ctx := t.Context()
	r1 := &session.Run{ID: "r1", SessionID: "gone"}
	r2 := &session.Run{ID: "r2", SessionID: "kept"}
	mustCreateRun(t, l, r1)
	mustCreateRun(t, l, r2)
	mustAppendEvents(t, l, event("gone", 1, "message"), event("gone", 2, "done"), event("kept", 1, "message"))
	mustAppendAudit(t, l, session.AuditRecord{SessionID: "gone", RunID: "r1", Kind: session.AuditRun, Data: json.RawMessage(`{}`)})
	if err := l.DeleteEvents(ctx, "gone"); err != nil {
		t.Fatal(err)
	}
	if evs, err := l.Events(ctx, "gone", 0, 0); err != nil || len(evs) != 0 {
		t.Errorf("Events after DeleteEvents: %d, %v; want none", len(evs), err)
	}
	if last, err := l.LastEventID(ctx, "gone"); err != nil || last != 0 {
		t.Errorf("LastEventID after DeleteEvents: %d, %v; want 0", last, err)
	}
	if _, err := l.GetRun(ctx, "r1"); !errors.Is(err, session.ErrNotFound) {
		t.Errorf("GetRun of a run of the session: %v, want ErrNotFound", err)
	}
	if runs, _ := l.ListRuns(ctx, session.RunFilter{}); len(runs) != 1 || runs[0].ID != "r2" {
		t.Errorf("runs after DeleteEvents: %v, want r2 only", runPrompts(runs))
	}
	if evs, _ := l.Events(ctx, "kept", 0, 0); len(evs) != 1 {
		t.Errorf("another session's events: %d, want 1", len(evs))
	}
	if recs, _ := l.Audit(ctx, session.AuditFilter{SessionID: "gone"}); len(recs) != 1 {
		t.Errorf("audit records of the session: %d, want 1 (the audit trail stays)", len(recs))
	}
	if err := l.DeleteEvents(ctx, "never"); err != nil {
		t.Errorf("DeleteEvents of a session with none: %v", err)
	}
	// The session's stream can start again.
	mustAppendEvents(t, l, event("gone", 1, "message"))
}

func testAudit(t *testing.T, l session.Ledger) {
	ctx := t.Context()
	if err := l.AppendAudit(ctx); err != nil {
		t.Errorf("AppendAudit of nothing: %v", err)
	}
	recs := []session.AuditRecord{
		{Time: t0, Caller: "alice", SessionID: "s", RunID: "r", Kind: session.AuditToolCall, Data: json.RawMessage(`{"tool":"bash","n":1}`)},
		{Time: t0, Caller: "alice", SessionID: "s", Kind: session.AuditPermission, Data: json.RawMessage(`{"n":2}`)},
		{Time: t0.Add(time.Second), Kind: session.AuditHook, Data: json.RawMessage(`{"n":3}`)},
	}
	mustAppendAudit(t, l, recs[:2]...)
	mustAppendAudit(t, l, recs[2])
	for name, bad := range map[string][]session.AuditRecord{
		"no kind":       {recs[0], {Time: t0, Data: json.RawMessage(`{}`)}},
		"data not JSON": {recs[0], {Time: t0, Kind: session.AuditRun, Data: json.RawMessage(`{"n"`)}},
	} {
		if err := l.AppendAudit(ctx, bad...); !errors.Is(err, session.ErrInvalid) {
			t.Errorf("AppendAudit, record with %s: %v, want ErrInvalid", name, err)
		}
	}
	got, err := l.Audit(ctx, session.AuditFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(recs) {
		t.Fatalf("%d records, want %d (a rejected batch stores nothing)", len(got), len(recs))
	}
	for i := range got {
		if got[i].ID <= 0 || i > 0 && got[i].ID <= got[i-1].ID {
			t.Errorf("record %d: id %d; want ids above 0, increasing", i, got[i].ID)
		}
		recs[i].ID = got[i].ID
	}
	if diff := cmp.Diff(recs, got, Opts); diff != "" {
		t.Errorf("Audit (-appended +read):\n%s", diff)
	}
}

func testAuditFilter(t *testing.T, l session.Ledger) {
	ctx := t.Context()
	for i, r := range []struct {
		caller, sess, run string
		kind              session.AuditKind
	}{
		{"alice", "s1", "r1", session.AuditRun},
		{"alice", "s1", "r1", session.AuditToolCall},
		{"bob", "s2", "r2", session.AuditPermission},
		{"alice", "s2", "r3", session.AuditHook},
		{"alice", "s1", "r4", session.AuditToolCall},
	} {
		mustAppendAudit(t, l, session.AuditRecord{Time: t0.Add(time.Duration(i) * time.Minute), Caller: r.caller, SessionID: r.sess,
			RunID: r.run, Kind: r.kind, Data: json.RawMessage(fmt.Sprintf(`{"n":%d}`, i+1))})
	}
	all, err := l.Audit(ctx, session.AuditFilter{})
	if err != nil || len(all) != 5 {
		t.Fatalf("Audit: %d records, %v", len(all), err)
	}
	tests := []struct {
		name string
		f    session.AuditFilter
		want []int
	}{
		{"all", session.AuditFilter{}, []int{1, 2, 3, 4, 5}},
		{"caller", session.AuditFilter{Caller: "bob"}, []int{3}},
		{"session", session.AuditFilter{SessionID: "s1"}, []int{1, 2, 5}},
		{"run", session.AuditFilter{RunID: "r1"}, []int{1, 2}},
		{"kind", session.AuditFilter{Kind: session.AuditToolCall}, []int{2, 5}},
		{"since, inclusive", session.AuditFilter{Since: t0.Add(2 * time.Minute)}, []int{3, 4, 5}},
		{"until, exclusive", session.AuditFilter{Until: t0.Add(2 * time.Minute)}, []int{1, 2}},
		{"between", session.AuditFilter{Since: t0.Add(time.Minute), Until: t0.Add(3 * time.Minute)}, []int{2, 3}},
		{"after id", session.AuditFilter{AfterID: all[1].ID}, []int{3, 4, 5}},
		{"limit", session.AuditFilter{Limit: 2}, []int{1, 2}},
		{"combined", session.AuditFilter{Caller: "alice", Kind: session.AuditToolCall, Limit: 1}, []int{2}},
		{"page of a session", session.AuditFilter{SessionID: "s1", AfterID: all[1].ID}, []int{5}},
		{"no match", session.AuditFilter{Caller: "bob", Kind: session.AuditRun}, []int{}},
	}
	for _, tt := range tests {
		got, err := l.Audit(ctx, tt.f)
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if diff := cmp.Diff(tt.want, auditNumbers(t, got)); diff != "" {
			t.Errorf("Audit %s (-want +got):\n%s", tt.name, diff)
		}
	}
}

// testLedgerConcurrent: writers on several sessions at once each get
// their runs, events and records stored, with unique increasing seqs and
// ids.
func testLedgerConcurrent(t *testing.T, l session.Ledger) {
	ctx := t.Context()
	const workers, n = 6, 15
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			sid := fmt.Sprint("s", w)
			for k := range n {
				r := &session.Run{SessionID: sid, Prompt: fmt.Sprint(k)}
				err := l.CreateRun(ctx, r)
				if err == nil {
					r.Status = session.RunRunning
					err = l.UpdateRun(ctx, r)
				}
				if err == nil {
					err = l.AppendEvents(ctx, event(sid, int64(k+1), "message"))
				}
				if err == nil {
					err = l.AppendAudit(ctx, session.AuditRecord{SessionID: sid, Kind: session.AuditRun, Data: json.RawMessage(`{}`)})
				}
				if err == nil { // one running run per session at a time (API-3)
					r.Status = session.RunCompleted
					err = l.UpdateRun(ctx, r)
				}
				if err != nil {
					t.Error(err)
					return
				}
				if _, err := l.ListRuns(ctx, session.RunFilter{SessionID: sid}); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	runs, err := l.ListRuns(ctx, session.RunFilter{})
	if err != nil || len(runs) != workers*n {
		t.Fatalf("ListRuns: %d runs, %v; want %d", len(runs), err, workers*n)
	}
	if !slices.IsSortedFunc(runs, func(a, b *session.Run) int { return int(a.Seq - b.Seq) }) || hasDup(runs, func(r *session.Run) int64 { return r.Seq }) {
		t.Errorf("run seqs are not unique and increasing")
	}
	recs, err := l.Audit(ctx, session.AuditFilter{})
	if err != nil || len(recs) != workers*n || hasDup(recs, func(r session.AuditRecord) int64 { return r.ID }) {
		t.Fatalf("Audit: %d records, %v; want %d with unique ids", len(recs), err, workers*n)
	}
	for w := range workers {
		sid := fmt.Sprint("s", w)
		runs, _ := l.ListRuns(ctx, session.RunFilter{SessionID: sid, Statuses: []session.RunStatus{session.RunCompleted}})
		want := make([]string, n)
		for k := range want {
			want[k] = fmt.Sprint(k)
		}
		if diff := cmp.Diff(want, runPrompts(runs)); diff != "" {
			t.Errorf("runs of %s, in submission order (-want +got):\n%s", sid, diff)
		}
		if last, _ := l.LastEventID(ctx, sid); last != n {
			t.Errorf("%s: last event %d, want %d", sid, last, n)
		}
	}
}

func hasDup[T any](list []T, key func(T) int64) bool {
	seen := map[int64]bool{}
	for _, x := range list {
		if seen[key(x)] {
			return true
		}
		seen[key(x)] = true
	}
	return false
}

func mustCreateRun(t *testing.T, l session.Ledger, r *session.Run) {
	t.Helper()
	ctx := t.Context()
	if err := l.CreateRun(ctx, r); err != nil {
		t.Fatalf("CreateRun: %v", err)
	}
}

func mustAppendEvents(t *testing.T, l session.Ledger, evs ...session.Event) {
	t.Helper()
	ctx := t.Context()
	if err := l.AppendEvents(ctx, evs...); err != nil {
		t.Fatalf("AppendEvents: %v", err)
	}
}

func mustAppendAudit(t *testing.T, l session.Ledger, recs ...session.AuditRecord) {
	t.Helper()
	ctx := t.Context()
	if err := l.AppendAudit(ctx, recs...); err != nil {
		t.Fatalf("AppendAudit: %v", err)
	}
}

func workspaceIDs(list []*session.Workspace) []string {
	out := []string{}
	for _, w := range list {
		out = append(out, w.ID)
	}
	return out
}

func runPrompts(list []*session.Run) []string {
	out := []string{}
	for _, r := range list {
		out = append(out, r.Prompt)
	}
	return out
}

// auditNumbers returns the "n" of each record's data.
func auditNumbers(t *testing.T, recs []session.AuditRecord) []int {
	t.Helper()
	out := []int{}
	for _, r := range recs {
		var d struct{ N int }
		if err := json.Unmarshal(r.Data, &d); err != nil {
			t.Fatalf("record %d: data %s: %v", r.ID, r.Data, err)
		}
		out = append(out, d.N)
	}
	return out
}
