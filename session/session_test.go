package session_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/reinhq/rein/llm"
	"github.com/reinhq/rein/session"
)

var agentFocus = json.RawMessage(`{"goal":"g"}`)

func TestPreviewOf(t *testing.T) {
	long := strings.Repeat("é", 150)
	tests := []struct{ in, want string }{
		{"", ""},
		{"  hello\n\n  world\t ", "hello world"},
		{long, strings.Repeat("é", 100) + "…"},
		{strings.Repeat("a ", 50) + "b", strings.TrimSpace(strings.Repeat("a ", 50)) + "…"},
		{strings.Repeat("x", 100), strings.Repeat("x", 100)},
	}
	for _, tt := range tests {
		if got := session.PreviewOf(tt.in); got != tt.want {
			t.Errorf("PreviewOf(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestValidID(t *testing.T) {
	for id, ok := range map[string]bool{
		"abc": true, "A-b_c.9": true, session.NewID(): true, strings.Repeat("a", 128): true,
		"": false, ".hidden": false, "a/b": false, "..": false, "a b": false, "é": false, strings.Repeat("a", 129): false, "a\x00": false,
	} {
		err := session.ValidID(id)
		if (err == nil) != ok {
			t.Errorf("ValidID(%q) = %v, want ok=%v", id, err, ok)
		}
		if err != nil && !errors.Is(err, session.ErrInvalid) {
			t.Errorf("ValidID(%q) = %v, not ErrInvalid", id, err)
		}
	}
	a, b := session.NewID(), session.NewID()
	if a == b || len(a) != 20 {
		t.Errorf("NewID gave %q and %q", a, b)
	}
}

func TestPage(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var all []*session.Session
	for i := range 7 {
		// Pairs share an UpdatedAt; the id breaks the tie.
		all = append(all, &session.Session{ID: fmt.Sprint("s", i), UpdatedAt: t0.Add(time.Duration(i/2) * time.Minute)})
	}
	var got []string
	cursor := ""
	for range 10 {
		page, next, err := session.Page(all, session.ListOptions{Limit: 3, Cursor: cursor})
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range page {
			got = append(got, s.ID)
		}
		if cursor = next; cursor == "" {
			break
		}
	}
	if diff := cmp.Diff([]string{"s6", "s5", "s4", "s3", "s2", "s1", "s0"}, got); diff != "" {
		t.Errorf("pages (-want +got):\n%s", diff)
	}
	for _, bad := range []string{"%%", "bm9jb2xvbg", "eDp5"} {
		if _, _, err := session.Page(all, session.ListOptions{Cursor: bad}); !errors.Is(err, session.ErrInvalid) {
			t.Errorf("cursor %q: %v, want ErrInvalid", bad, err)
		}
	}
}

func TestContinueLatest(t *testing.T) {
	store := session.NewMemStore()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i, dir := range []string{"/a", "/b", "/a", "/b"} {
		if err := store.Create(ctx, &session.Session{ID: fmt.Sprint("s", i), WorkDir: dir, UpdatedAt: t0.Add(time.Duration(i) * time.Hour)}); err != nil {
			t.Fatal(err)
		}
	}
	s, err := session.ContinueLatest(ctx, store, "/a")
	if err != nil || s.ID != "s2" {
		t.Errorf("ContinueLatest(/a) = %v, %v; want s2", s, err)
	}
	if _, err := session.ContinueLatest(ctx, store, "/c"); !errors.Is(err, session.ErrNotFound) {
		t.Errorf("ContinueLatest(/c): %v, want ErrNotFound", err)
	}
}

// fixedStore is a store stand-in for Load: a fixed log, with a damage report.
type fixedStore struct {
	session.Store
	entries []session.Entry
}

func (f fixedStore) Get(_ context.Context, id string) (*session.Session, error) {
	return &session.Session{ID: id}, nil
}

func (f fixedStore) Entries(context.Context, string, int64) iter.Seq2[session.Entry, error] {
	return func(yield func(session.Entry, error) bool) {
		for _, e := range f.entries {
			if !yield(e, nil) {
				return
			}
		}
	}
}

func msgE(seq int64, m llm.Message) session.Entry {
	return session.Entry{Seq: seq, Kind: session.KindMessage, Message: &m}
}

func callMessage(ids ...string) llm.Message {
	m := llm.Message{Role: llm.RoleAssistant}
	for _, id := range ids {
		m.Content = append(m.Content, &llm.ToolUse{ID: id, Name: "bash", Input: []byte(`{}`)})
	}
	return m
}

// SESS-2: Load replays compactions and stored heals, collects damage the
// store reported, and lists journaled calls with no result as pending.
func TestLoadReplay(t *testing.T) {
	results := llm.Message{Role: llm.RoleUser, Content: []llm.Block{&llm.ToolResult{ToolUseID: "c1", Content: []llm.Block{&llm.Text{Text: "ok"}}}}}
	damage := session.Damage{Line: 4, Bytes: 9, Reason: "corrupt: x"}
	store := fixedStore{entries: []session.Entry{
		msgE(1, llm.UserText("old")),
		{Seq: 2, Kind: session.KindCompaction, Compaction: &session.Compaction{History: []llm.Message{llm.UserText("summary")}}},
		msgE(3, callMessage("c1")),
		{Seq: 4, Kind: session.KindToolStart, RunID: "r", ToolStart: &session.ToolStart{CallID: "c1", Tool: "bash"}},
		{Kind: session.KindHeal, Heal: &session.HealRecord{Report: session.Report{Damaged: []session.Damage{damage}}}},
		msgE(5, results),
		msgE(6, callMessage("c2", "c3")),
		{Seq: 7, Kind: session.KindToolStart, RunID: "r", ToolStart: &session.ToolStart{CallID: "c2", Tool: "bash"}},
		{Seq: 8, Kind: session.KindToolProcess, ToolProcess: &session.ToolProcess{CallID: "c2", PGID: 1 << 30}},
		{Seq: 9, Kind: session.KindFocus, Focus: agentFocus},
	}}
	st, err := session.Load(ctx, store, "s")
	if err != nil {
		t.Fatal(err)
	}
	want := session.Report{Interrupted: []string{"c2"}, NotRun: []string{"c3"}, Damaged: []session.Damage{damage}}
	if diff := cmp.Diff(want, st.Heal); diff != "" {
		t.Errorf("report (-want +got):\n%s", diff)
	}
	if got := len(st.Messages); got != 5 || st.Messages[0].TextOf() != "summary" {
		t.Errorf("%d messages, first %q; want 5 from the summary", got, st.Messages[0].TextOf())
	}
	if len(st.Pending) != 1 || st.Pending[0].CallID != "c2" || st.Pending[0].PGID != 1<<30 || st.Pending[0].Alive || st.Pending[0].Seq != 7 {
		t.Errorf("pending %+v; want c2 with its (dead) group", st.Pending)
	}
	if st.LastSeq != 9 || string(st.Focus) != `{"goal":"g"}` {
		t.Errorf("last seq %d, focus %s", st.LastSeq, st.Focus)
	}
}

// SESS-1: a crash after some calls of a batch finished, before the results
// message was written: the finished calls keep their journaled output, the
// unfinished one is marked interrupted.
func TestLoadRecoversFinishedCalls(t *testing.T) {
	store := session.NewMemStore()
	ctx := context.Background()
	if err := store.Create(ctx, &session.Session{ID: "s"}); err != nil {
		t.Fatal(err)
	}
	user := llm.UserText("go")
	asst := llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{
		&llm.ToolUse{ID: "c1", Name: "read_file", Input: []byte(`{"path":"a"}`)},
		&llm.ToolUse{ID: "c2", Name: "bash", Input: []byte(`{"command":"make"}`)},
	}}
	_, err := store.Append(ctx, "s",
		session.Entry{Kind: session.KindMessage, Message: &user},
		session.Entry{Kind: session.KindMessage, Message: &asst},
		session.Entry{Kind: session.KindToolStart, ToolStart: &session.ToolStart{CallID: "c1", Tool: "read_file"}},
		session.Entry{Kind: session.KindToolEnd, ToolEnd: &session.ToolEnd{CallID: "c1", Tool: "read_file", Output: "1\tpackage a", Outcome: "ok"}},
		session.Entry{Kind: session.KindToolStart, ToolStart: &session.ToolStart{CallID: "c2", Tool: "bash"}},
	)
	if err != nil {
		t.Fatal(err)
	}
	st, err := session.Load(ctx, store, "s")
	if err != nil {
		t.Fatal(err)
	}
	if err := llm.CheckPairing(st.Messages); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, r := range st.Messages[2].ToolResults() {
		got[r.ToolUseID] = llm.Message{Content: r.Content}.TextOf()
	}
	if !strings.Contains(got["c1"], "recovered after a crash") || !strings.Contains(got["c1"], "1\tpackage a") {
		t.Errorf("finished call: %q", got["c1"])
	}
	if got["c2"] != session.StartedText {
		t.Errorf("unfinished call: %q", got["c2"])
	}
	if len(st.Pending) != 1 || st.Pending[0].CallID != "c2" {
		t.Errorf("pending = %+v, want only c2", st.Pending)
	}
}
