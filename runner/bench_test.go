package runner_test

import (
	"context"
	"fmt"
	"iter"
	"strings"
	"sync"
	"testing"

	"github.com/reinhq/rein/agent"
	"github.com/reinhq/rein/llm"
	"github.com/reinhq/rein/llm/llmtest"
	"github.com/reinhq/rein/runner"
	"github.com/reinhq/rein/session"
)

// BenchmarkServiceRun measures runs through the Service (queue, engine
// per run, session load, journal, ledger, bus) over the in-memory stores:
// each run is one read-only tool call and a reply, 8 sessions in parallel.
// The whole server (HTTP, SQLite, SSE) is measured by bench/server.
func BenchmarkServiceRun(b *testing.B) {
	script := []llmtest.Reply{
		{Text: "looking", ToolCalls: []llm.ToolUse{llmtest.Call("c1", "list_dir", `{"path":"."}`)}},
		{Text: "done"},
	}
	var mu sync.Mutex
	turn := map[string]int{}
	p := &llmtest.Scripted{NoRecord: true}
	p.Repeat = &llmtest.Reply{Func: func(ctx context.Context, req *llm.Request) iter.Seq2[llm.Delta, error] {
		mu.Lock()
		i := turn[req.CacheKey] % 2
		turn[req.CacheKey]++
		mu.Unlock()
		return llmtest.NewScripted(script[i]).Stream(ctx, req)
	}}
	h := newHarness(b, p, runner.ServiceConfig{MaxConcurrent: 8})
	const sessions = 8
	ids := make([]string, sessions)
	for i := range ids {
		ids[i] = h.newSession(b).ID
	}
	b.ResetTimer()
	runs := make([]string, 0, b.N)
	for i := range b.N {
		r, err := h.svc.Submit(context.Background(), session.Submission{SessionID: ids[i%sessions], Caller: "alice", Text: fmt.Sprint("run ", i)})
		if err != nil {
			b.Fatal(err)
		}
		runs = append(runs, r.ID)
	}
	for _, id := range runs {
		if r := h.wait(b, id); r.Status != session.RunCompleted {
			b.Fatalf("run %s: %s %s", id, r.Status, r.Error)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Minutes(), "runs/min")
}

// spawnProvider answers a prompt with a call of tool (input in), a tool
// result with "done", and a sub-agent's prompt (system prompt SUB) with
// its report.
func spawnProvider(tool, in string) llm.Provider {
	p := &llmtest.Scripted{NoRecord: true}
	p.Repeat = &llmtest.Reply{Func: func(ctx context.Context, req *llm.Request) iter.Seq2[llm.Delta, error] {
		last := req.Messages[len(req.Messages)-1]
		reply := llmtest.Reply{Text: "done"}
		switch {
		case strings.HasPrefix(req.System, "SUB"):
			reply = llmtest.Reply{Text: "report"}
		case len(last.ToolResults()) == 0:
			reply = llmtest.Reply{ToolCalls: []llm.ToolUse{llmtest.Call("c1", tool, in)}}
		}
		return llmtest.NewScripted(reply).Stream(ctx, req)
	}}
	return p
}

// benchRuns runs one prompt per iteration, each in a new conversation
// over e's setup.
func benchRuns(b *testing.B, e *runner.Conversation) {
	b.ReportAllocs()
	for b.Loop() {
		c := e.Setup().NewConversation()
		for ev, err := range c.Submit(context.Background(), "", "go", nil) {
			if err != nil || ev.Type == agent.EventDone && ev.Done.Reason != agent.ReasonCompleted {
				b.Fatalf("run ended %+v: %v", ev.Done, err)
			}
		}
		c.Close()
	}
}

// BenchmarkSubagentSpawn is a run whose model starts one sub-agent, which
// answers at once (AGENT-4); BenchmarkSubagentBaseline is the same run
// with a read-only built-in call instead. The difference is what a spawn
// costs: building the sub-agent (tools, policy, compactor) and relaying
// its events.
func BenchmarkSubagentSpawn(b *testing.B) {
	e := newEngine(b, spawnProvider("task", `{"agent":"sub","prompt":"look"}`),
		map[string]string{"sub": "---\nname: sub\ndescription: Sub.\n---\nSUB\n"}, nil)
	benchRuns(b, e)
}

// BenchmarkSubagentBaseline: see BenchmarkSubagentSpawn.
func BenchmarkSubagentBaseline(b *testing.B) {
	e := newEngine(b, spawnProvider("todo_write", `{"todos":[]}`), nil, nil)
	benchRuns(b, e)
}
