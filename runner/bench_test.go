package runner_test

import (
	"context"
	"fmt"
	"iter"
	"sync"
	"testing"

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
		r, err := h.svc.Submit(context.Background(), runner.Submission{SessionID: ids[i%sessions], Caller: "alice", Text: fmt.Sprint("run ", i)})
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
