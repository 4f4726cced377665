package runner_test

import (
	"context"
	"fmt"
	"iter"
	"os"
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

// BenchmarkServiceRun measures runs through the Service (queue, engine
// per run, session load, journal, ledger, bus) over the in-memory stores:
// each run is one read-only tool call and a reply, 8 sessions in parallel.
// The whole server (HTTP, SQLite, SSE) is measured by bench/server.
func BenchmarkServiceRun(b *testing.B) {
	h := newHarness(b, toolThenReply(), runner.ServiceConfig{MaxConcurrent: 8})
	const sessions = 8
	ids := make([]string, sessions)
	for i := range ids {
		ids[i] = h.newSession(b).ID
	}
	b.ResetTimer()
	submitRuns(b, h.svc, h.ledger, ids)
}

// BenchmarkServiceRunSQLite is BenchmarkServiceRun over the SQLite store
// and ledger in a file of b.TempDir() (synchronous=FULL, the server's
// default), for 1, 4 and 16 sessions at once (SPEC API-2: runs of
// different sessions do not wait for each other's commits). Its mutex and
// block profiles show where runs of concurrent sessions serialise.
func BenchmarkServiceRunSQLite(b *testing.B) {
	for _, sessions := range []int{1, 4, 16} {
		b.Run(fmt.Sprintf("sessions=%d", sessions), func(b *testing.B) {
			db, err := sqlite.Open(filepath.Join(b.TempDir(), "rein.db"), sqlite.Options{})
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { db.Close() })
			bus := eventbus.NewMemory(eventbus.Options{})
			b.Cleanup(func() { bus.Close() })
			dir := b.TempDir()
			env := map[string]string{"HOME": b.TempDir(), "PATH": os.Getenv("PATH"), "REIN_SANDBOX": "off"}
			p := toolThenReply()
			svc := startService(b, runner.ServiceConfig{Sessions: db, Ledger: db, Bus: bus, DataDir: b.TempDir(),
				MaxConcurrent: sessions, Getenv: func(k string) string { return env[k] },
				Resolve: scriptedModel(p)})
			ws := &session.Workspace{Caller: "alice", Kind: session.WorkspaceProject, Dir: dir}
			if err := db.CreateWorkspace(context.Background(), ws); err != nil {
				b.Fatal(err)
			}
			ids := make([]string, sessions)
			for i := range ids {
				s := &session.Session{Caller: "alice", Workspace: ws.ID, WorkDir: dir}
				if err := db.Create(context.Background(), s); err != nil {
					b.Fatal(err)
				}
				ids[i] = s.ID
			}
			b.ResetTimer()
			submitRuns(b, svc, db, ids)
		})
	}
}

// toolThenReply is a provider whose runs call list_dir and then reply.
func toolThenReply() llm.Provider {
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
	return p
}

// submitRuns submits b.N runs over the sessions in turn, waits until each
// completed and reports runs per minute and the process's CPU time a run
// (steadier than the wall clock on a shared machine).
func submitRuns(b *testing.B, svc *runner.Service, ledger session.Ledger, ids []string) {
	cpu := processCPU()
	runs := make([]string, 0, b.N)
	for i := range b.N {
		r, err := svc.Submit(context.Background(), session.Submission{SessionID: ids[i%len(ids)], Caller: "alice", Text: fmt.Sprint("run ", i)})
		if err != nil {
			b.Fatal(err)
		}
		runs = append(runs, r.ID)
	}
	for _, id := range runs {
		for {
			r, err := ledger.GetRun(context.Background(), id)
			if err != nil {
				b.Fatal(err)
			}
			if r.Status.Final() {
				if r.Status != session.RunCompleted {
					b.Fatalf("run %s: %s %s", id, r.Status, r.Error)
				}
				break
			}
			time.Sleep(time.Millisecond)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Minutes(), "runs/min")
	b.ReportMetric(float64(processCPU()-cpu)/float64(time.Millisecond)/float64(b.N), "cpu-ms/run")
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
