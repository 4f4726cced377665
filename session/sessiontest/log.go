package sessiontest

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/reinhq/rein/llm"
	"github.com/reinhq/rein/session"
)

func userEntry(text string) session.Entry {
	m := llm.UserText(text)
	return session.Entry{Kind: session.KindMessage, Message: &m}
}

func msgEntry(m llm.Message) session.Entry {
	return session.Entry{Kind: session.KindMessage, Message: &m}
}

func callMsg(ids ...string) llm.Message {
	m := llm.Message{Role: llm.RoleAssistant, Provider: "p", Model: "m", Content: []llm.Block{&llm.Text{Text: "running"}}}
	for _, id := range ids {
		m.Content = append(m.Content, &llm.ToolUse{ID: id, Name: "bash", Input: json.RawMessage(`{"command":"ls"}`)})
	}
	return m
}

func resultMsg(ids ...string) llm.Message {
	m := llm.Message{Role: llm.RoleUser}
	for _, id := range ids {
		m.Content = append(m.Content, &llm.ToolResult{ToolUseID: id, Content: []llm.Block{&llm.Text{Text: "out " + id}}})
	}
	return m
}

// texts joins the text of the message entries with "|".
func texts(entries []session.Entry) string {
	var out []string
	for _, e := range entries {
		if e.Message != nil {
			out = append(out, e.Message.TextOf())
		}
	}
	return strings.Join(out, "|")
}

// AllKinds returns one entry of every kind, each payload filled in, so a
// store's encoding can be checked to keep everything.
func AllKinds() []session.Entry {
	t := time.Date(2026, 5, 6, 7, 8, 9, 10_000_000, time.UTC)
	msg := llm.Message{Role: llm.RoleAssistant, Provider: "anthropic", Model: "claude", Content: []llm.Block{
		&llm.Thinking{Text: "hmm", Signature: "sig"},
		&llm.Thinking{Redacted: true, Signature: "opaque", ID: "rs_1"},
		&llm.Text{Text: "héllo <b>&"},
		&llm.Image{MediaType: "image/png", Data: []byte{0x89, 'P', 'N', 'G', 0}},
		&llm.Image{URL: "https://example.com/x.png"},
		&llm.ToolUse{ID: "c1", Name: "bash", Input: json.RawMessage(`{"command":"go test ./..."}`), Signature: "ts"},
	}}
	res := llm.Message{Role: llm.RoleUser, Content: []llm.Block{&llm.ToolResult{ToolUseID: "c1", IsError: true,
		Content: []llm.Block{&llm.Text{Text: "FAIL"}, &llm.Image{MediaType: "image/gif", Data: []byte("GIF89a")}}}}}
	stats := session.RunStats{ModelCalls: 2, ToolCalls: 1, ToolErrors: 1, ErrorsByTool: map[string]map[string]int{"bash": {"error": 1}}, Retries: 1}
	return []session.Entry{
		{Time: t, Kind: session.KindMessage, RunID: "r1", Message: &msg},
		{Time: t, Kind: session.KindToolStart, RunID: "r1", ToolStart: &session.ToolStart{CallID: "c1", Tool: "bash", Input: json.RawMessage(`{"command":"go test ./..."}`)}},
		{Time: t, Kind: session.KindToolProcess, RunID: "r1", ToolProcess: &session.ToolProcess{CallID: "c1", PGID: 4242, Start: 99}},
		{Time: t, Kind: session.KindMessage, RunID: "r1", Message: &res},
		{Time: t, Kind: session.KindCompaction, RunID: "r1", Compaction: &session.Compaction{History: []llm.Message{llm.UserText("summary")},
			TokensBefore: 1000, TokensAfter: 100, Layers: []string{"snip", "summarize"}, Trigger: "budget"}},
		{Time: t, Kind: session.KindRun, RunID: "r1", Run: &session.RunRecord{ID: "r1", Provider: "anthropic", Model: "claude",
			StartedAt: t.Add(-time.Minute), EndedAt: t, Reason: "error", Turns: 2,
			Usage:   llm.Usage{InputTokens: 1, OutputTokens: 2, CacheReadTokens: 3, CacheWriteTokens: 4, ReasoningTokens: 1},
			CostUSD: 0.25, Stats: stats, Error: "boom", Continued: true}},
		{Time: t, Kind: session.KindFocus, RunID: "r1", Focus: json.RawMessage(`{"goal":"g","recent_goals":["old"],` +
			`"files_read":[{"path":"a.go","start":1,"end":9,"preview":"package a"}],"files_changed":["a.go"],"verified":["go test"]}`)},
		{Time: t, Kind: session.KindHeal, Heal: &session.HealRecord{Report: session.Report{Interrupted: []string{"c9"}, NotRun: []string{"c10"}, Merged: 1,
			Damaged: []session.Damage{{Line: 3, Offset: 10, Bytes: 5, Reason: "torn last line"}}}, History: []llm.Message{llm.UserText("healed")}}},
	}
}

func testEntryKinds(t *testing.T, st session.Store) {
	mustCreate(t, st, &session.Session{ID: "s"})
	want := AllKinds()
	mustAppend(t, st, "s", want...)
	for i := range want {
		want[i].Seq = int64(i + 1)
	}
	if diff := cmp.Diff(want, readAll(t, st, "s", 0), Opts); diff != "" {
		t.Errorf("entries of every kind (-appended +read):\n%s", diff)
	}
}

// forkLog is the log testFork forks:
//
//	1 user "u1"   2 assistant c1   3 tool_start c1   4 results c1
//	5 assistant "a5"   6 user "u6"   7 assistant c2   8 tool_start c2 (no result)
func forkLog(t *testing.T, st session.Store) {
	a5 := llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{&llm.Text{Text: "a5"}}}
	mustAppend(t, st, "p", userEntry("u1"), msgEntry(callMsg("c1")),
		session.Entry{Kind: session.KindToolStart, ToolStart: &session.ToolStart{CallID: "c1", Tool: "bash"}},
		msgEntry(resultMsg("c1")), msgEntry(a5), userEntry("u6"), msgEntry(callMsg("c2")),
		session.Entry{Kind: session.KindToolStart, ToolStart: &session.ToolStart{CallID: "c2", Tool: "bash"}})
}

func testFork(t *testing.T, st session.Store) {
	ctx := t.Context()
	mustCreate(t, st, &session.Session{ID: "p", WorkDir: "/w", Title: "parent", Preview: "u1", Model: "m", Runs: 3, CostUSD: 1})
	forkLog(t, st)
	tests := []struct {
		at      int64
		wantSeq int64
		why     string
	}{
		{5, 5, "at a plain message"},
		{2, 4, "at a call: extended to its results"},
		{3, 4, "inside a call's journal: extended to its results"},
		{4, 4, "at the results"},
		{7, 6, "at a call never answered: cut before it"},
		{8, 6, "after a call never answered: cut before it"},
		{0, 6, "everything: the unanswered call is left out"},
		{100, 6, "beyond the end"},
	}
	for _, tt := range tests {
		child, err := st.Fork(ctx, "p", tt.at)
		if err != nil {
			t.Fatalf("Fork at %d: %v", tt.at, err)
		}
		if child.ID == "p" || child.ParentID != "p" || child.ForkSeq != tt.wantSeq || child.WorkDir != "/w" || child.Runs != 0 {
			t.Errorf("Fork at %d (%s): session %+v; want a new id, parent p, fork seq %d, work dir /w, no runs", tt.at, tt.why, child, tt.wantSeq)
		}
		got := readAll(t, st, child.ID, 0)
		if len(got) == 0 || got[len(got)-1].Seq != tt.wantSeq || int64(len(got)) != tt.wantSeq {
			t.Errorf("Fork at %d (%s): seqs %v, want 1…%d", tt.at, tt.why, seqs(got), tt.wantSeq)
		}
		stored, err := st.Get(ctx, child.ID)
		if err != nil || stored.ParentID != "p" {
			t.Errorf("Get of the fork: %+v, %v", stored, err)
		}
		state, err := session.Load(ctx, st, child.ID)
		if err != nil {
			t.Fatal(err)
		}
		if !state.Heal.Empty() || len(state.Pending) != 0 {
			t.Errorf("Fork at %d (%s) needs healing: %s; pending %v", tt.at, tt.why, state.Heal.String(), state.Pending)
		}
		if last := mustAppend(t, st, child.ID, userEntry("more")); last != tt.wantSeq+1 {
			t.Errorf("Append to the fork at %d: seq %d, want %d", tt.at, last, tt.wantSeq+1)
		}
	}
	if n := len(readAll(t, st, "p", 0)); n != 8 {
		t.Errorf("forking changed the parent: %d entries, want 8", n)
	}
}

func testConcurrentSessions(t *testing.T, st session.Store) {
	ctx := t.Context()
	const sessions, appends = 6, 20
	for i := range sessions {
		mustCreate(t, st, &session.Session{ID: fmt.Sprintf("s%d", i)})
	}
	var wg sync.WaitGroup
	for i := range sessions {
		wg.Go(func() {
			for k := range appends {
				if _, err := st.Append(ctx, fmt.Sprintf("s%d", i), userEntry(fmt.Sprint(k))); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	for i := range sessions {
		got := readAll(t, st, fmt.Sprintf("s%d", i), 0)
		for k, e := range got {
			if e.Seq != int64(k+1) || e.Message.TextOf() != fmt.Sprint(k) {
				t.Errorf("s%d entry %d: seq %d text %q", i, k, e.Seq, e.Message.TextOf())
			}
		}
		if len(got) != appends {
			t.Errorf("s%d: %d entries, want %d", i, len(got), appends)
		}
	}
}

func testConcurrentSameSession(t *testing.T, st session.Store) {
	ctx := t.Context()
	const writers, appends = 6, 20
	mustCreate(t, st, &session.Session{ID: "s"})
	var wg sync.WaitGroup
	var mu sync.Mutex
	returned := map[int64]string{}
	for w := range writers {
		wg.Go(func() {
			for k := range appends {
				text := fmt.Sprintf("%d/%d", w, k)
				last, err := st.Append(ctx, "s", userEntry(text))
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				if prev, dup := returned[last]; dup {
					t.Errorf("seq %d returned for %q and %q", last, prev, text)
				}
				returned[last] = text
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	got := readAll(t, st, "s", 0)
	if len(got) != writers*appends {
		t.Fatalf("%d entries, want %d", len(got), writers*appends)
	}
	for k, e := range got {
		if e.Seq != int64(k+1) {
			t.Errorf("entry %d has seq %d", k, e.Seq)
		}
		if returned[e.Seq] != e.Message.TextOf() {
			t.Errorf("seq %d holds %q, Append returned it for %q", e.Seq, e.Message.TextOf(), returned[e.Seq])
		}
	}
}

// testLoadHeals: a run cut off between journaling a call and its result
// loads healed, and recording the heal makes the next load clean.
func testLoadHeals(t *testing.T, st session.Store) {
	ctx := t.Context()
	mustCreate(t, st, &session.Session{ID: "s"})
	mustAppend(t, st, "s", userEntry("go"), msgEntry(callMsg("c1", "c2")),
		session.Entry{Kind: session.KindToolStart, RunID: "r1", ToolStart: &session.ToolStart{CallID: "c1", Tool: "bash"}})
	state, err := session.Load(ctx, st, "s")
	if err != nil {
		t.Fatal(err)
	}
	want := session.Report{Interrupted: []string{"c1"}, NotRun: []string{"c2"}}
	if diff := cmp.Diff(want, state.Heal, Opts); diff != "" {
		t.Errorf("heal report (-want +got):\n%s", diff)
	}
	if err := llm.CheckPairing(state.Messages); err != nil {
		t.Errorf("loaded history: %v", err)
	}
	if len(state.Pending) != 1 || state.Pending[0].CallID != "c1" || state.Pending[0].RunID != "r1" || state.Pending[0].Alive {
		t.Errorf("pending %+v, want c1 of run r1, not alive", state.Pending)
	}
	if err := session.SaveHeal(ctx, st, "s", state); err != nil {
		t.Fatal(err)
	}
	again, err := session.Load(ctx, st, "s")
	if err != nil {
		t.Fatal(err)
	}
	if !again.Heal.Empty() || len(again.Pending) != 0 {
		t.Errorf("after RecordHeal: report %q, pending %v; want none", again.Heal.String(), again.Pending)
	}
	if diff := cmp.Diff(state.Messages, again.Messages, Opts); diff != "" {
		t.Errorf("history after RecordHeal (-first load +second):\n%s", diff)
	}
}
