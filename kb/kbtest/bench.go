package kbtest

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/reinhq/rein/kb"
)

// GOROOTSrc returns GOROOT/src (from `go env GOROOT`), a real corpus of
// some 10,000 files for benchmarks; it skips tb, saying why, without one.
func GOROOTSrc(tb testing.TB) string {
	tb.Helper()
	out, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		tb.Skipf("environment: go env GOROOT failed (%v): no GOROOT/src to index", err)
	}
	src := filepath.Join(strings.TrimSpace(string(out)), "src")
	if info, err := os.Stat(src); err != nil || !info.IsDir() {
		tb.Skipf("environment: no GOROOT/src at %s to index", src)
	}
	return src
}

// Queries are realistic questions about the Go source, for benchmarks
// of searches on GOROOT/src.
var Queries = []string{
	"how to parse a URL query string", "tls handshake client certificate", "sort slice stable",
	"goroutine stack growth", "json unmarshal into interface", "http server graceful shutdown",
	"read file line by line", "base64 encode url safe", "sha256 hash of a file", "time parse layout rfc3339",
	"regexp compile must", "context with timeout cancel", "mutex lock unlock", "channel select default case",
	"garbage collector write barrier", "escape analysis heap allocation", "map iteration order random",
	"utf8 decode rune", "strings builder grow", "bufio scanner max token size", "os exec command output",
	"filepath walk dir", "net dial timeout", "http cookie jar", "gzip reader writer", "zip archive extract",
	"template execute html escape", "reflect value set field", "atomic compare and swap", "sync once do",
	"errors is as wrap", "fmt sprintf verbs", "strconv parse int base", "bytes buffer reset", "io copy buffer",
	"crypto rand read", "x509 certificate verify chain", "dns lookup host", "unix socket listen",
	"signal notify interrupt", "testing benchmark report allocs", "go vet printf check", "linker dead code elimination",
	"scheduler preemption signal", "memory allocator span class", "slices binary search", "maps keys sorted",
	"ReadFile", "ServeHTTP", "newobject mallocgc",
}

// BenchSearch runs Queries as keyword-only searches of base, round
// robin, b.N in all, and reports the p50 and p99 latency of one search and
// of its CPU time (on Linux: its thread's), which other work on the
// machine does not inflate as it does the wall clock.
func BenchSearch(b *testing.B, base *kb.Base) {
	ctx := context.Background()
	lat := make([]time.Duration, 0, b.N)
	cpu := make([]time.Duration, 0, b.N)
	// The search runs on this goroutine's thread (every backend's client
	// is Go code): its CPU time is the thread's.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	b.ResetTimer()
	for i := range b.N {
		q := Queries[i%len(Queries)]
		c0, cpuOK := ThreadCPU()
		t0 := time.Now()
		res, err := base.Search(ctx, q, kb.SearchOptions{})
		if err != nil {
			b.Fatalf("Search(%q): %v", q, err)
		}
		lat = append(lat, time.Since(t0))
		if c1, ok := ThreadCPU(); ok && cpuOK {
			cpu = append(cpu, c1-c0)
		}
		if len(res.Hits) == 0 {
			b.Errorf("Search(%q): no hit", q)
		}
	}
	b.StopTimer()
	report := func(d []time.Duration, name string) {
		if len(d) == 0 {
			return
		}
		slices.Sort(d)
		b.ReportMetric(float64(d[len(d)/2].Microseconds())/1000, name+"p50-ms")
		b.ReportMetric(float64(d[len(d)*99/100].Microseconds())/1000, name+"p99-ms")
	}
	report(lat, "")
	// CPU time: what a quiet machine's latency would be, near enough.
	report(cpu, "cpu-")
}
