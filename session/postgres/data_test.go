package postgres

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/reinhq/rein/llm"
	"github.com/reinhq/rein/session"
)

// SESS-1, SESS-2: a row that does not hold its entry is reported as damage
// (a heal entry with Seq 0), never fatal; the session loads, forks and
// takes appends; once a resume stored the report, it is not news.
func TestDamagedRows(t *testing.T) {
	baseURL(t)
	t.Parallel()
	tests := []struct {
		name, data, reason string
	}{
		{"another seq", `{"seq":7,"time":"2026-01-01T00:00:00Z","kind":"message","message":{"role":"user","content":[]}}`,
			"corrupt: the row of seq 2 holds entry 7"},
		{"payload of another kind", `{"seq":2,"time":"2026-01-01T00:00:00Z","kind":"run","message":{"role":"user","content":[]}}`,
			"corrupt: invalid session input: run entry also carries a message payload"},
		{"not an entry", `[1, 2]`, "corrupt: json: cannot unmarshal array into Go value of type session.Entry"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			st := newStore(t, Options{})
			if err := st.Create(ctx, &session.Session{ID: "s"}); err != nil {
				t.Fatal(err)
			}
			if _, err := st.Append(ctx, "s", userEntry("m1"), userEntry("m2"), userEntry("m3")); err != nil {
				t.Fatal(err)
			}
			if _, err := st.exec(`UPDATE entries SET data = $1 WHERE seq = 2`, tt.data); err != nil {
				t.Fatal(err)
			}
			state, err := session.Load(ctx, st, "s")
			if err != nil {
				t.Fatalf("Load: %v", err)
			}
			want := []session.Damage{{Line: 2, Bytes: int64(len(tt.data)), Reason: tt.reason}}
			if diff := cmp.Diff(want, state.Heal.Damaged); diff != "" {
				t.Errorf("damage (-want +got):\n%s", diff)
			}
			if got := messageTexts(state.Messages); got != "m1 m3" {
				t.Errorf("messages %q, want %q", got, "m1 m3")
			}
			fork, err := st.Fork(ctx, "s", 0)
			if err != nil {
				t.Fatal(err)
			}
			if fs, err := session.Load(ctx, st, fork.ID); err != nil || !fs.Heal.Empty() || messageTexts(fs.Messages) != "m1 m3" {
				t.Errorf("the fork: %v, heal %q, messages %q; want the good entries only", err, fs.Heal.String(), messageTexts(fs.Messages))
			}
			if err := session.SaveHeal(ctx, st, "s", state); err != nil {
				t.Fatal(err)
			}
			again, err := session.Load(ctx, st, "s")
			if err != nil || !again.Heal.Empty() || messageTexts(again.Messages) != "m1 m3" {
				t.Errorf("after SaveHeal: %v, heal %q, messages %q", err, again.Heal.String(), messageTexts(again.Messages))
			}
		})
	}
}

func messageTexts(msgs []llm.Message) string {
	var out []string
	for _, m := range msgs {
		out = append(out, m.TextOf())
	}
	return strings.Join(out, " ")
}

// JSON comes back as it was written: a tool call's input keeps its key
// order (encoding/json compacts it; jsonb would also sort the keys), an
// event's data its very bytes, and a NUL character in a tool's output (the
// \u0000 escape, which jsonb would refuse) is stored, in entries, events
// and audit records alike.
func TestJSONKeptExactly(t *testing.T) {
	t.Parallel()
	st := newStore(t, Options{})
	if err := st.Create(ctx, &session.Session{ID: "s", Title: "nul \x00 title"}); err != nil {
		t.Fatal(err)
	}
	input := json.RawMessage(`{"b": 1,  "a": [1, 2.50]}`)
	call := llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{&llm.ToolUse{ID: "c1", Name: "bash", Input: input}}}
	end := session.Entry{Kind: session.KindToolEnd, ToolEnd: &session.ToolEnd{CallID: "c1", Tool: "bash", Output: "bin\x00ary"}}
	if _, err := st.Append(ctx, "s", session.Entry{Kind: session.KindMessage, Message: &call}, end); err != nil {
		t.Fatal(err)
	}
	var got []session.Entry
	for e, err := range st.Entries(ctx, "s", 0) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, e)
	}
	if len(got) != 2 {
		t.Fatalf("%d entries, want 2", len(got))
	}
	if in, want := got[0].Message.ToolUses()[0].Input, `{"b":1,"a":[1,2.50]}`; string(in) != want {
		t.Errorf("tool input read back as %s, want %s", in, want)
	}
	if out := got[1].ToolEnd.Output; out != "bin\x00ary" {
		t.Errorf("tool output read back as %q", out)
	}
	if s, err := st.Get(ctx, "s"); err != nil || s.Title != "nul \x00 title" {
		t.Errorf("title read back as %q, %v", s.Title, err)
	}
	data := json.RawMessage(`{"output": "bin\u0000ary",  "z": 1}`)
	if err := st.AppendEvents(ctx, session.Event{SessionID: "s", ID: 1, Type: "tool_result", Data: data}); err != nil {
		t.Fatal(err)
	}
	if evs, err := st.Events(ctx, "s", 0, 0); err != nil || len(evs) != 1 || !bytes.Equal(evs[0].Data, data) {
		t.Errorf("events read back as %v, %v; want data %s", evs, err, data)
	}
	if err := st.AppendAudit(ctx, session.AuditRecord{Kind: session.AuditToolCall, Data: data}); err != nil {
		t.Fatal(err)
	}
	if recs, err := st.Audit(ctx, session.AuditFilter{}); err != nil || len(recs) != 1 || !bytes.Equal(recs[0].Data, data) {
		t.Errorf("audit read back as %v, %v; want data %s", recs, err, data)
	}
}

// The times kept in timestamptz columns are kept to the microsecond: what
// Create and CreateWorkspace leave in their argument is exactly what is
// read back, and listings order and page by it.
func TestMicroseconds(t *testing.T) {
	t.Parallel()
	st := newStore(t, Options{})
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 123_456_789, time.UTC)
	s := &session.Session{ID: "s", CreatedAt: t0, UpdatedAt: t0}
	if err := st.Create(ctx, s); err != nil {
		t.Fatal(err)
	}
	want := time.Date(2026, 1, 2, 3, 4, 5, 123_456_000, time.UTC)
	if !s.CreatedAt.Equal(want) || !s.UpdatedAt.Equal(want) {
		t.Errorf("Create left times %v, %v; want %v", s.CreatedAt, s.UpdatedAt, want)
	}
	if got, err := st.Get(ctx, "s"); err != nil || !got.CreatedAt.Equal(want) || !got.UpdatedAt.Equal(want) {
		t.Errorf("Get: %+v, %v; want times %v", got, err, want)
	}
	w := &session.Workspace{Caller: "alice", Kind: session.WorkspaceChat, CreatedAt: t0}
	if err := st.CreateWorkspace(ctx, w); err != nil {
		t.Fatal(err)
	}
	if got, err := st.GetWorkspace(ctx, w.ID); err != nil || got.CreatedAt != w.CreatedAt || !w.CreatedAt.Equal(want) {
		t.Errorf("GetWorkspace: %+v, %v; want created at %v, as CreateWorkspace left it", got, err, w.CreatedAt)
	}
	// Sessions a few nanoseconds apart are one microsecond: they are
	// ordered by id, and paging by one finds them all.
	for _, id := range []string{"a", "b", "c"} {
		if err := st.Create(ctx, &session.Session{ID: id, UpdatedAt: t0.Add(time.Duration(len(id)) * time.Nanosecond)}); err != nil {
			t.Fatal(err)
		}
	}
	var ids []string
	cursor := ""
	for range 10 {
		page, next, err := st.List(ctx, session.ListOptions{Limit: 1, Cursor: cursor})
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range page {
			ids = append(ids, s.ID)
		}
		if cursor = next; cursor == "" {
			break
		}
	}
	if diff := cmp.Diff([]string{"s", "c", "b", "a"}, ids); diff != "" {
		t.Errorf("paged listing (-want +got):\n%s", diff)
	}
}

// A string a text column cannot hold (a NUL, bytes that are not UTF-8) is
// ErrInvalid, and the batch that held it is not stored in part.
func TestBadText(t *testing.T) {
	t.Parallel()
	st := newStore(t, Options{})
	ok := session.AuditRecord{Kind: session.AuditHook, Data: json.RawMessage(`{}`)}
	bad := session.AuditRecord{Kind: session.AuditHook, Caller: "a\x00b"}
	if err := st.AppendAudit(ctx, ok, bad); !errors.Is(err, session.ErrInvalid) {
		t.Errorf("AppendAudit with a NUL in a caller: %v, want ErrInvalid", err)
	}
	if recs, err := st.Audit(ctx, session.AuditFilter{}); err != nil || len(recs) != 0 {
		t.Errorf("after a refused batch: %d records, %v; want none", len(recs), err)
	}
	ev := session.Event{SessionID: "s", ID: 1, Type: "message"}
	badEv := session.Event{SessionID: "s", ID: 2, Type: "message", RunID: "r\xff"}
	if err := st.AppendEvents(ctx, ev, badEv); !errors.Is(err, session.ErrInvalid) {
		t.Errorf("AppendEvents with a run id that is not UTF-8: %v, want ErrInvalid", err)
	}
	if last, err := st.LastEventID(ctx, "s"); err != nil || last != 0 {
		t.Errorf("after a refused batch: last event %d, %v; want none", last, err)
	}
	if err := st.Create(ctx, &session.Session{ID: "w", WorkDir: "/tmp/\xff"}); !errors.Is(err, session.ErrInvalid) {
		t.Errorf("Create with a work dir that is not UTF-8: %v, want ErrInvalid", err)
	}
}
