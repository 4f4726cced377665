package runner_test

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reinhq/rein/agent"
	"github.com/reinhq/rein/eventbus"
	"github.com/reinhq/rein/llm"
	"github.com/reinhq/rein/llm/llmtest"
	"github.com/reinhq/rein/runner"
	"github.com/reinhq/rein/session"
	"github.com/reinhq/rein/session/sqlite"
)

// SESS-1: a staging recorder writes nothing itself; what it staged is
// taken once, given back after a failed write, and written by Flush,
// after which Record writes at once again.
func TestRecorderStaging_SESS1(t *testing.T) {
	store := session.NewMemStore()
	if err := store.Create(ctx, &session.Session{ID: "s"}); err != nil {
		t.Fatal(err)
	}
	rec := runner.NewRecorder(store, "s")
	if rec.StageFor(session.NewMemLedger()) {
		t.Error("staged for a ledger that is not the recorder's store")
	}
	rec.Stage()
	prompt := llm.UserText("hello there")
	reply := llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{&llm.Text{Text: "hi"}}}
	for _, m := range []*llm.Message{&prompt, &reply} {
		if err := rec.Record(ctx, agent.Event{Type: agent.EventMessage, Time: time.Now(), RunID: "r1", Message: m}); err != nil {
			t.Fatal(err)
		}
	}
	if got := kinds(t, store); len(got) != 0 {
		t.Fatalf("a staging recorder wrote %v", got)
	}
	l := rec.Staged()
	if l == nil || len(l.Entries) != 2 || l.Change == nil {
		t.Fatalf("staged %+v, want the two messages and the preview", l)
	}
	if again := rec.Staged(); again != nil {
		t.Errorf("staged twice: %+v", again)
	}
	rec.Restage(l) // its write failed
	if err := rec.Record(ctx, agent.Event{Type: agent.EventDone, Time: time.Now(), RunID: "r1",
		Done: &agent.DoneEvent{Reason: agent.ReasonCompleted, Turns: 1}}); err != nil {
		t.Fatal(err)
	}
	if err := rec.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(kinds(t, store)); got != "[message message run]" {
		t.Errorf("log after Flush: %s, want the messages, then the run", got)
	}
	s, err := store.Get(ctx, "s")
	if err != nil || s.Preview != "hello there" || s.Runs != 1 {
		t.Errorf("session after Flush: %+v, %v; want the preview and 1 run", s, err)
	}
	tool := agent.Event{Type: agent.EventToolStart, Time: time.Now(), RunID: "r2", Tool: &agent.ToolEvent{ID: "c1", Name: "echo"}}
	if err := rec.Record(ctx, tool); err != nil {
		t.Fatal(err)
	}
	if got := kinds(t, store); len(got) != 4 {
		t.Errorf("after Flush a Record wrote %v, want it written at once", got)
	}
}

// SESS-1, API-2: through the server's Service over SQLite (one store for
// the sessions and the ledger), a run's log entries are stored with its
// events: when the model is called again after the tool, the session's
// log holds the prompt, the tool call, its journal entries and its
// result, and the stream the events of them, all committed; at the end
// the log and the stream hold the whole run, and the session its preview
// and totals.
func TestServiceStoresEntriesWithEvents_SESS1(t *testing.T) {
	db, err := sqlite.Open(filepath.Join(t.TempDir(), "rein.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	var mu sync.Mutex
	var seen []string // what each model call found stored
	p := &llmtest.Scripted{NoRecord: true}
	p.Repeat = &llmtest.Reply{Func: func(ctx context.Context, req *llm.Request) iter.Seq2[llm.Delta, error] {
		var kinds []string
		for e, err := range db.Entries(ctx, req.CacheKey, 0) {
			if err != nil {
				return func(yield func(llm.Delta, error) bool) { yield(llm.Delta{}, err) }
			}
			kinds = append(kinds, string(e.Kind))
		}
		evs, err := db.Events(ctx, req.CacheKey, 0, 0)
		if err != nil {
			return func(yield func(llm.Delta, error) bool) { yield(llm.Delta{}, err) }
		}
		var types []string
		for _, e := range evs {
			types = append(types, e.Type)
		}
		mu.Lock()
		seen = append(seen, strings.Join(kinds, " ")+" | "+strings.Join(types, " "))
		mu.Unlock()
		reply := llmtest.Reply{Text: "done"}
		if len(req.Messages[len(req.Messages)-1].ToolResults()) == 0 {
			reply = llmtest.Reply{Text: "looking", ToolCalls: []llm.ToolUse{llmtest.Call("c1", "list_dir", `{"path":"."}`)}}
		}
		return llmtest.NewScripted(reply).Stream(ctx, req)
	}}
	bus := eventbus.NewMemory(eventbus.Options{})
	t.Cleanup(func() { bus.Close() })
	dir := t.TempDir()
	svc, s := scriptedService(t, db, db, bus, p, dir, 2)
	r, err := svc.Submit(ctx, session.Submission{SessionID: s.ID, Caller: "alice", Text: "list the files"})
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		got, err := db.GetRun(ctx, r.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.Status.Final() {
			if got.Status != session.RunCompleted {
				t.Fatalf("run %s: %s", got.Status, got.Error)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal(errors.New("the run did not end in 30s"))
		}
		time.Sleep(5 * time.Millisecond)
	}
	want := []string{
		"message | message",
		"message message tool_start tool_end message | message message tool_start tool_end message",
	}
	mu.Lock()
	got := seen
	mu.Unlock()
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("stored when the model was called:\n got %q\nwant %q", got, want)
	}
	st, err := session.Load(ctx, db, s.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Messages) != 4 || !st.Heal.Empty() {
		t.Errorf("loaded %d messages (heal %s), want 4 and nothing to heal", len(st.Messages), st.Heal.String())
	}
	evs, err := db.Events(ctx, s.ID, 0, 0)
	if err != nil || len(evs) == 0 || evs[len(evs)-1].Type != "done" {
		t.Errorf("events %d, %v; want the run's, ending with done", len(evs), err)
	}
	if ss, err := db.Get(ctx, s.ID); err != nil || ss.Preview != "list the files" || ss.Runs != 1 {
		t.Errorf("session %+v, %v; want the preview and 1 run", ss, err)
	}
}
