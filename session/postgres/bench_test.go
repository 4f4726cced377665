package postgres

import (
	"encoding/json"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/reinhq/rein/llm"
	"github.com/reinhq/rein/session"
)

// benchEntries returns n entries of a typical coding conversation: a
// prompt, a reply calling a tool, the tool's result, a final reply (the
// entries of session/sqlite's benchmarks, so the figures compare).
func benchEntries(n int) []session.Entry {
	out := make([]session.Entry, 0, n)
	output := strings.Repeat("main.go:12: some compiler output line\n", 8)
	for i := 0; len(out) < n; i++ {
		id := fmt.Sprintf("call_%d", i)
		input := json.RawMessage(fmt.Sprintf(`{"command":"go test ./pkg%d/..."}`, i))
		for _, m := range []llm.Message{
			llm.UserText(fmt.Sprintf("Please fix the failing test number %d in the package and run the suite again.", i)),
			{Role: llm.RoleAssistant, Provider: "anthropic", Model: "claude-sonnet-4-5", Content: []llm.Block{
				&llm.Text{Text: "Let me run the tests first."}, &llm.ToolUse{ID: id, Name: "bash", Input: input}}},
			{Role: llm.RoleUser, Content: []llm.Block{&llm.ToolResult{ToolUseID: id, Content: []llm.Block{&llm.Text{Text: output}}}}},
			{Role: llm.RoleAssistant, Provider: "anthropic", Model: "claude-sonnet-4-5", Content: []llm.Block{
				&llm.Text{Text: "The test passes now; the bug was an off-by-one in the loop bound."}}},
		} {
			if len(out) < n {
				out = append(out, session.Entry{Kind: session.KindMessage, Message: &m})
			}
		}
	}
	return out
}

// latencies records the duration of each operation and reports the median
// and the 99th percentile.
type latencies []time.Duration

func (l *latencies) time(b *testing.B, op func() error) {
	start := time.Now()
	if err := op(); err != nil {
		b.Fatal(err)
	}
	*l = append(*l, time.Since(start))
}

func (l latencies) report(b *testing.B) {
	if len(l) == 0 {
		return
	}
	slices.Sort(l)
	pct := func(p float64) float64 { return float64(l[int(p*float64(len(l)-1))].Microseconds()) }
	b.ReportMetric(pct(0.50), "p50-µs")
	b.ReportMetric(pct(0.99), "p99-µs")
}

// BenchmarkAppend measures one durable Append of one message, reporting the
// median and 99th percentile latencies.
func BenchmarkAppend(b *testing.B) {
	st := newStore(b, Options{})
	if err := st.Create(ctx, &session.Session{ID: "s"}); err != nil {
		b.Fatal(err)
	}
	e := benchEntries(2)[1]
	var took latencies
	for b.Loop() {
		took.time(b, func() error { _, err := st.Append(ctx, "s", e); return err })
	}
	took.report(b)
}

// BenchmarkAppendParallel measures Append of one message from GOMAXPROCS
// goroutines at once, each to a session of its own (system parallel, SPEC
// API-3): ns/op is the store's throughput, not one append's latency.
func BenchmarkAppendParallel(b *testing.B) {
	st := newStore(b, Options{MaxConns: runtime.GOMAXPROCS(0)})
	e := benchEntries(2)[1]
	var n atomic.Int64
	b.RunParallel(func(pb *testing.PB) {
		id := fmt.Sprint("s", n.Add(1))
		if err := st.Create(ctx, &session.Session{ID: id}); err != nil {
			b.Error(err)
			return
		}
		for pb.Next() {
			if _, err := st.Append(ctx, id, e); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// BenchmarkEntries1000 measures reading a log of 1,000 entries.
func BenchmarkEntries1000(b *testing.B) {
	st := newStore(b, Options{})
	if err := st.Create(ctx, &session.Session{ID: "s"}); err != nil {
		b.Fatal(err)
	}
	if _, err := st.Append(ctx, "s", benchEntries(1000)...); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		n := 0
		for _, err := range st.Entries(ctx, "s", 0) {
			if err != nil {
				b.Fatal(err)
			}
			n++
		}
		if n != 1000 {
			b.Fatalf("%d entries", n)
		}
	}
}

// BenchmarkRun measures a run's bookkeeping: CreateRun (queued) and the
// UpdateRun that starts it, two durable writes. Each run is of a session
// of its own (a session has one running run at a time).
func BenchmarkRun(b *testing.B) {
	st := newStore(b, Options{})
	opts := json.RawMessage(`{"model":"anthropic/claude-sonnet-4-5","max_turns":20}`)
	var took latencies
	i := 0
	for b.Loop() {
		i++
		took.time(b, func() error {
			r := &session.Run{SessionID: fmt.Sprint("s", i), Caller: "alice", Prompt: "fix the test", Options: opts}
			if err := st.CreateRun(ctx, r); err != nil {
				return err
			}
			r.Status, r.StartedAt = session.RunRunning, time.Now()
			return st.UpdateRun(ctx, r)
		})
	}
	took.report(b)
}

// BenchmarkAppendEvents measures storing one durable event (a complete
// assistant message, as the runner stores it).
func BenchmarkAppendEvents(b *testing.B) {
	st := newStore(b, Options{})
	msg, err := json.Marshal(benchEntries(2)[1].Message)
	if err != nil {
		b.Fatal(err)
	}
	data := json.RawMessage(`{"type":"message","message":` + string(msg) + `}`)
	var took latencies
	id := int64(0)
	for b.Loop() {
		id++
		ev := session.Event{SessionID: "s", ID: id << 20, RunID: "r", Type: "message", Data: data}
		took.time(b, func() error { return st.AppendEvents(ctx, ev) })
	}
	took.report(b)
}

// BenchmarkListCallerRules is what a server run pays at its start to load
// its caller's kept rules from PostgreSQL (SPEC API-9): one round trip
// over the owner index, 20 rules of the caller in the directory among
// 10,000 of others.
func BenchmarkListCallerRules(b *testing.B) {
	st := newStore(b, Options{})
	for c := range 500 {
		for k := range 20 {
			r := &session.CallerRule{Caller: fmt.Sprint("caller", c), Dir: fmt.Sprint("/srv/project", c%7),
				Action: "allow", Rule: fmt.Sprintf("bash(make target%d:*)", k)}
			if err := st.AddCallerRule(ctx, r); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		rules, err := st.ListCallerRules(ctx, "caller42", "/srv/project0")
		if err != nil || len(rules) != 20 {
			b.Fatalf("%d rules, %v", len(rules), err)
		}
	}
}
