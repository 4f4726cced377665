package llmtest

import (
	"runtime"
	"testing"

	"github.com/reinhq/rein/llm"
)

// BenchStream benchmarks one adapter's streaming: each op streams req to
// its end and expects wantText text deltas. prepare runs before each op,
// off the clock (enqueue the mock's reply there). Besides ns/op and allocs/op
// it reports allocs/delta: the process's allocations per delta yielded.
func BenchStream(b *testing.B, p llm.Provider, req *llm.Request, wantText int, prepare func()) {
	ctx := b.Context()
	b.ReportAllocs()
	var deltas int
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for b.Loop() {
		b.StopTimer()
		prepare()
		b.StartTimer()
		n := 0
		for d, err := range p.Stream(ctx, req) {
			if err != nil {
				b.Fatal(err)
			}
			if d.Kind == llm.DeltaText {
				n++
			}
		}
		if n != wantText {
			b.Fatalf("%d text deltas, want %d", n, wantText)
		}
		deltas += n + 1 // the text deltas and DeltaDone
	}
	runtime.ReadMemStats(&after)
	b.ReportMetric(float64(after.Mallocs-before.Mallocs)/float64(deltas), "allocs/delta")
}
