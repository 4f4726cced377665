package runner_test

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/reinhq/rein/agent"
	"github.com/reinhq/rein/llm"
	"github.com/reinhq/rein/llm/llmtest"
	"github.com/reinhq/rein/runner"
	"github.com/reinhq/rein/session"
	"github.com/reinhq/rein/session/sessiontest"
	"github.com/reinhq/rein/tool"
)

var ctx = context.Background()

type echoIn struct {
	Text string `json:"text"`
}

// compactOnce compacts the history the first time it is asked, keeping only
// a summary and the newest message.
type compactOnce struct {
	mu   sync.Mutex
	done bool
}

func (c *compactOnce) Fit(_ context.Context, req *llm.Request, _ *agent.Focus) ([]llm.Message, *agent.CompactionEvent, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.done || len(req.Messages) < 3 || len(req.Messages[len(req.Messages)-1].ToolResults()) > 0 {
		return req.Messages, nil, nil
	}
	c.done = true
	hist := []llm.Message{llm.UserText("summary of earlier work"), req.Messages[len(req.Messages)-1]}
	return hist, &agent.CompactionEvent{TokensBefore: 900, TokensAfter: 100, Layers: []string{"summarize"}}, nil
}

func (c *compactOnce) Overflow(_ context.Context, req *llm.Request, _ *agent.Focus) ([]llm.Message, *agent.CompactionEvent, error) {
	return req.Messages, nil, nil
}

// drive runs one prompt through a and records it, returning the messages
// the run appended and its done event.
func drive(t *testing.T, a *agent.Agent, rec *runner.Recorder, in agent.Input) ([]llm.Message, *agent.DoneEvent) {
	t.Helper()
	var msgs []llm.Message
	var done *agent.DoneEvent
	for ev, err := range a.Run(ctx, in) {
		if err != nil {
			t.Fatal(err)
		}
		if err := rec.Record(ctx, ev); err != nil {
			t.Fatal(err)
		}
		switch ev.Type {
		case agent.EventMessage:
			msgs = append(msgs, *ev.Message)
		case agent.EventCompaction:
			msgs = append([]llm.Message(nil), ev.Compaction.History...)
		case agent.EventDone:
			done = ev.Done
		}
	}
	return msgs, done
}

// journalingEcho is a tool that checks its call was journaled before it
// runs, and reports a process as the shell tool would.
func journalingEcho(t *testing.T, store session.Store, rec *runner.Recorder, journaled *[]string) *tool.Set {
	echo := tool.New("echo", "Echoes.", tool.Meta{ReadOnly: true, ConcurrencySafe: true},
		func(_ context.Context, c tool.Call, in echoIn) (tool.Result, error) {
			for e, err := range store.Entries(ctx, "s", 0) {
				if err == nil && e.Kind == session.KindToolStart && e.ToolStart.CallID == c.ID {
					*journaled = append(*journaled, c.ID)
				}
			}
			if err := rec.RecordProcess(c.ID, os.Getpid()); err != nil {
				t.Error(err)
			}
			return tool.Result{Content: []llm.Block{&llm.Text{Text: in.Text}}, Metadata: map[string]any{"path": "a.go"}}, nil
		})
	tools, err := tool.NewSet(tool.OriginBuiltin, echo)
	if err != nil {
		t.Fatal(err)
	}
	return tools
}

// SESS-1, SESS-4, LOOP-11: two runs of a real agent recorded as they happen
// load back as the same conversation, with runs, usage, cost, focus and
// preview; each tool call is journaled before the tool runs.
func TestRecorderRoundTrip(t *testing.T) {
	store := session.NewMemStore()
	if err := store.Create(ctx, &session.Session{ID: "s", WorkDir: "/w"}); err != nil {
		t.Fatal(err)
	}
	rec := runner.NewRecorder(store, "s")
	var journaled []string
	input, _ := json.Marshal(echoIn{Text: "hi"})
	p := llmtest.NewScripted(
		llmtest.Reply{Text: "Echoing.", ToolCalls: []llm.ToolUse{{ID: "c1", Name: "echo", Input: input}}, Usage: llm.Usage{InputTokens: 10, OutputTokens: 5}},
		llmtest.Reply{Text: "Done.", Usage: llm.Usage{InputTokens: 20, OutputTokens: 2}},
		llmtest.Reply{Text: "Again.", Usage: llm.Usage{InputTokens: 30, OutputTokens: 1, CacheReadTokens: 4}},
	)
	a := agent.New(agent.Config{Provider: p, ProviderName: "scripted", Model: "m1", Tools: journalingEcho(t, store, rec, &journaled),
		NoRetry: true, Compactor: &compactOnce{}, Price: func(u llm.Usage) float64 { return float64(u.InputTokens) / 1000 }})

	first := llm.UserText("please   echo\nhi " + strings.Repeat("x", 200))
	hist1, done1 := drive(t, a, rec, agent.Input{SessionID: "s", RunID: "r1", Prompt: &first})
	if diff := cmp.Diff([]string{"c1"}, journaled); diff != "" {
		t.Errorf("calls journaled before they ran (-want +got):\n%s", diff)
	}
	st := load(t, store)
	if diff := cmp.Diff(hist1, st.Messages, sessiontest.Opts); diff != "" {
		t.Errorf("loaded history (-run +loaded):\n%s", diff)
	}
	second := llm.UserText("once more")
	hist2, done2 := drive(t, a, rec, agent.Input{SessionID: "s", RunID: "r2", Prompt: &second, History: st.Messages, Focus: runner.FocusOf(st)})

	st = load(t, store)
	if diff := cmp.Diff(hist2, st.Messages, sessiontest.Opts); diff != "" {
		t.Errorf("history after a compaction (-run +loaded):\n%s", diff)
	}
	if st.Messages[0].TextOf() != "summary of earlier work" {
		t.Errorf("the compaction did not replace the history: %q", st.Messages[0].TextOf())
	}
	if !st.Heal.Empty() || len(st.Pending) != 0 {
		t.Errorf("a clean session needed healing: %s, pending %v", st.Heal.String(), st.Pending)
	}
	if diff := cmp.Diff(*done2.Focus, runner.FocusOf(st)); diff != "" {
		t.Errorf("focus (-done +loaded):\n%s", diff)
	}
	checkTotals(t, st, done1, done2)
	want := []session.Kind{"message", "message", "tool_start", "tool_process", "tool_end", "message", "message", "run", "focus",
		"message", "compaction", "message", "run", "focus"}
	if diff := cmp.Diff(want, kinds(t, store)); diff != "" {
		t.Errorf("entry kinds (-want +got):\n%s", diff)
	}
}

func load(t *testing.T, store session.Store) *session.State {
	t.Helper()
	st, err := session.Load(ctx, store, "s")
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func kinds(t *testing.T, store session.Store) []session.Kind {
	var out []session.Kind
	for e, err := range store.Entries(ctx, "s", 0) {
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, e.Kind)
	}
	return out
}

// checkTotals checks the run records and the session's totals (SESS-4).
func checkTotals(t *testing.T, st *session.State, done ...*agent.DoneEvent) {
	t.Helper()
	if len(st.Runs) != 2 || st.Runs[0].ID != "r1" || st.Runs[1].ID != "r2" || st.Runs[0].Model != "m1" ||
		st.Runs[0].Stats.ToolCalls != 1 || st.Runs[0].Reason != string(agent.ReasonCompleted) || st.Runs[0].StartedAt.After(st.Runs[0].EndedAt) {
		t.Errorf("runs %+v", st.Runs)
	}
	s := st.Session
	var want llm.Usage
	for _, d := range done {
		want.Add(d.Usage)
	}
	if s.Runs != 2 || s.Usage != want || s.CostUSD < 0.059 || s.CostUSD > 0.061 || s.Model != "scripted/m1" {
		t.Errorf("session totals: runs %d usage %+v cost %v model %q", s.Runs, s.Usage, s.CostUSD, s.Model)
	}
	if !strings.HasPrefix(s.Preview, "please echo hi xxx") || len([]rune(s.Preview)) != session.PreviewLen+1 {
		t.Errorf("preview %q", s.Preview)
	}
}

// A cancelled context does not stop the done of a cancelled run from being
// recorded.
func TestRecorderOutlivesCancel(t *testing.T) {
	store := session.NewMemStore()
	if err := store.Create(ctx, &session.Session{ID: "s"}); err != nil {
		t.Fatal(err)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	rec := runner.NewRecorder(store, "s")
	now := time.Now()
	for _, ev := range []agent.Event{
		{Type: agent.EventRunStart, RunID: "r", Time: now, RunStart: &agent.RunStart{Model: "m"}},
		{Type: agent.EventTextDelta, Text: "ignored"},
		{Type: agent.EventDone, RunID: "r", Time: now, Done: &agent.DoneEvent{Reason: agent.ReasonCancelled, Usage: llm.Usage{InputTokens: 5}}},
	} {
		if err := rec.Record(cctx, ev); err != nil {
			t.Fatal(err)
		}
	}
	st, err := session.Load(ctx, store, "s")
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Runs) != 1 || st.Runs[0].Reason != string(agent.ReasonCancelled) || st.Session.Usage.InputTokens != 5 || st.Session.Runs != 1 {
		t.Errorf("runs %+v, session %+v", st.Runs, st.Session)
	}
}

// The session records the model as the front end named it (a profile), so
// resuming it picks that profile; without a label, provider/model.
func TestRecorderModelLabel(t *testing.T) {
	tests := []struct {
		name, label, want string
	}{
		{"profile label", "work/claude-sonnet-4-5", "work/claude-sonnet-4-5"},
		{"no label", "", "anthropic/claude-sonnet-4-5"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			store := session.NewMemStore()
			if err := store.Create(ctx, &session.Session{ID: "s"}); err != nil {
				t.Fatal(err)
			}
			rec := runner.NewRecorder(store, "s")
			if tt.label != "" {
				rec.SetModelLabel(tt.label)
			}
			now := time.Now()
			for _, ev := range []agent.Event{
				{Type: agent.EventRunStart, RunID: "r", Time: now, RunStart: &agent.RunStart{Provider: "anthropic", Model: "claude-sonnet-4-5"}},
				{Type: agent.EventDone, RunID: "r", Time: now, Done: &agent.DoneEvent{Reason: agent.ReasonCompleted}},
			} {
				if err := rec.Record(ctx, ev); err != nil {
					t.Fatal(err)
				}
			}
			s, err := store.Get(ctx, "s")
			if err != nil {
				t.Fatal(err)
			}
			if s.Model != tt.want {
				t.Errorf("session model %q, want %q", s.Model, tt.want)
			}
			st, err := session.Load(ctx, store, "s")
			if err != nil {
				t.Fatal(err)
			}
			if r := st.Runs[0]; r.Provider != "anthropic" || r.Model != "claude-sonnet-4-5" {
				t.Errorf("run record %+v", r)
			}
		})
	}
}
