package llm

import (
	"strconv"
	"strings"
	"sync"
	"testing"
)

// resetDrops empties the registry; the test that fills it restores nothing
// else, so it runs alone (no t.Parallel) and resets after itself.
func resetDrops() {
	drops.mu.Lock()
	defer drops.mu.Unlock()
	drops.m.Clear()
	drops.keys = 0
}

// TestRecordDropBounds is an attack table: a hostile stream's type names
// cannot grow the registry (and the Prometheus series) without bound.
func TestRecordDropBounds(t *testing.T) {
	resetDrops()
	t.Cleanup(resetDrops)
	RecordDrop("p", DropEvent, strings.Repeat("x", maxDropType+1))
	RecordDrop("p", DropEvent, "evil\"}\n# HELP")
	RecordDrop("p", DropEvent, "")
	for _, c := range []struct {
		typ  string
		want uint64
	}{{"invalid", 2}, {"untyped", 1}} {
		if got := DropsOf("p", DropEvent, c.typ); got != c.want {
			t.Errorf("%s: %d, want %d", c.typ, got, c.want)
		}
	}
	for i := range 5000 { // thousands of made-up event types
		RecordDrop("p", DropEvent, "made_up_"+strconv.Itoa(i))
	}
	all := Drops()
	if len(all) > maxDropKeys+1 {
		t.Fatalf("%d series after 5000 distinct types, want at most %d", len(all), maxDropKeys+1)
	}
	var total uint64
	for _, d := range all {
		total += d.N
	}
	if total != 5003 {
		t.Errorf("counted %d drops, want every one of 5003", total)
	}
	if DropsOf("p", DropEvent, "other") == 0 {
		t.Error(`no "other" series for the types past the cap`)
	}
}

// TestRecordDropConcurrent: counts from many goroutines are all kept (run
// with -race).
func TestRecordDropConcurrent(t *testing.T) {
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 1000 {
				RecordDrop("concurrent", DropBlock, "web_search_call")
			}
		}()
	}
	wg.Wait()
	if got := DropsOf("concurrent", DropBlock, "web_search_call"); got != 8000 {
		t.Errorf("count %d, want 8000", got)
	}
}

// BenchmarkRecordDrop measures counting a known key, the path a stream of
// unknown events takes.
func BenchmarkRecordDrop(b *testing.B) {
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			RecordDrop("bench", DropEvent, "brand_new_event")
		}
	})
}
