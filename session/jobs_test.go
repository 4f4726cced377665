//go:build unix

package session

import (
	"context"
	"testing"

	"github.com/reinhq/rein/llm"
)

// TOOL-8, SESS-1: a background job journaled with its process group, whose
// call got its result at once, is reported after a crash while it runs —
// alive, with its job id, and stoppable — and healing has nothing to say
// about its call; once it is gone it is not reported.
func TestJobOrphanReported_TOOL8(t *testing.T) {
	ctx := context.Background()
	pgid := startGroup(t, "sleep 30")
	store := NewMemStore()
	if err := store.Create(ctx, &Session{ID: "s"}); err != nil {
		t.Fatal(err)
	}
	user := llm.UserText("start the server")
	asst := llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{
		&llm.ToolUse{ID: "c1", Name: "bash", Input: []byte(`{"command":"serve","run_in_background":true}`)}}}
	res := llm.Message{Role: llm.RoleUser, Content: []llm.Block{&llm.ToolResult{ToolUseID: "c1",
		Content: []llm.Block{&llm.Text{Text: "Started background job 1"}}}}}
	if _, err := store.Append(ctx, "s",
		Entry{Kind: KindMessage, Message: &user},
		Entry{Kind: KindMessage, Message: &asst},
		Entry{Kind: KindToolStart, ToolStart: &ToolStart{CallID: "c1", Tool: "bash"}},
		Entry{Kind: KindToolProcess, ToolProcess: &ToolProcess{CallID: "c1", PGID: pgid, Start: processStart(pgid), Job: "1"}},
		Entry{Kind: KindToolEnd, ToolEnd: &ToolEnd{CallID: "c1"}},
		Entry{Kind: KindMessage, Message: &res},
	); err != nil {
		t.Fatal(err)
	}
	st, err := Load(ctx, store, "s")
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Pending) != 1 || !st.Pending[0].Alive || st.Pending[0].Job != "1" || st.Pending[0].PGID != pgid || st.Pending[0].CallID != "c1" {
		t.Fatalf("pending = %+v, want job 1 alive", st.Pending)
	}
	if !st.Heal.Empty() || resultText(t, st.Messages, "c1") != "Started background job 1" {
		t.Fatalf("healing touched the job's call: %s", st.Heal.String())
	}
	if err := StopPending(ctx, st.Pending); err != nil {
		t.Fatal(err)
	}
	waitGone(t, pgid)
	st.Recheck()
	if st.Pending[0].Alive {
		t.Error("Recheck still sees the stopped job alive")
	}
	if st, err = Load(ctx, store, "s"); err != nil || len(st.Pending) != 0 {
		t.Fatalf("after the job is gone: pending %+v, %v", st.Pending, err)
	}
}
