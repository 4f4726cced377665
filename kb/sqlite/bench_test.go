package sqlite

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reinhq/rein/kb"
)

// goroot returns GOROOT/src (from `go env GOROOT`), skipping the
// benchmark without it.
func goroot(b *testing.B) string {
	b.Helper()
	out, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		b.Skipf("go env GOROOT: %v", err)
	}
	src := filepath.Join(strings.TrimSpace(string(out)), "src")
	if info, err := os.Stat(src); err != nil || !info.IsDir() {
		b.Skipf("no GOROOT/src at %s to index", src)
	}
	return src
}

// indexGOROOT indexes GOROOT/src keyword-only into a database at path.
func indexGOROOT(b *testing.B, src, path string) (*Store, *kb.Base, *kb.Report) {
	b.Helper()
	s, err := Open(path, Options{})
	if err != nil {
		b.Fatal(err)
	}
	base, err := kb.New(kb.Config{Root: src, Backend: s})
	if err != nil {
		b.Fatal(err)
	}
	rep, err := base.Add(context.Background(), []string{"."}, nil)
	if err != nil {
		b.Fatal(err)
	}
	return s, base, rep
}

// BenchmarkIndexGOROOT indexes all of GOROOT/src, keyword only, into a new
// database each time: files/s and MB/s of the whole run.
func BenchmarkIndexGOROOT(b *testing.B) {
	src := goroot(b)
	var files int
	var bytes int64
	start := time.Now()
	for i := range b.N {
		s, _, rep := indexGOROOT(b, src, filepath.Join(b.TempDir(), "kb", "idx"+string(rune('a'+i%26))+".db"))
		s.Close()
		files = rep.Added + len(rep.Skipped)
		bytes = rep.Bytes
		b.Logf("%d files (%d indexed, %d skipped), %.1f MB, %d chunks", files, rep.Added, len(rep.Skipped), float64(bytes)/1e6, rep.Chunks)
	}
	secs := time.Since(start).Seconds() / float64(b.N)
	b.ReportMetric(float64(files)/secs, "files/s")
	b.ReportMetric(float64(bytes)/1e6/secs, "MB/s")
}

// queries are realistic questions about the Go source.
var queries = []string{
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

var (
	queryOnce  sync.Once
	queryStore *Store
	queryBase  *kb.Base
	queryDir   string
)

func TestMain(m *testing.M) {
	code := m.Run()
	if queryStore != nil {
		queryStore.Close()
	}
	if queryDir != "" {
		os.RemoveAll(queryDir)
	}
	os.Exit(code)
}

// BenchmarkQueryGOROOT runs realistic keyword-only searches on an index of
// GOROOT/src (built once per process): p50 and p99 latency of one search,
// and of its CPU time (on Linux), which other work on the machine does not
// inflate.
func BenchmarkQueryGOROOT(b *testing.B) {
	src := goroot(b)
	queryOnce.Do(func() {
		dir, err := os.MkdirTemp("", "kbbench")
		if err != nil {
			b.Fatal(err)
		}
		queryDir = dir
		queryStore, queryBase, _ = indexGOROOT(b, src, filepath.Join(dir, "kb.db"))
	})
	if queryBase == nil {
		b.Fatal("no index")
	}
	ctx := context.Background()
	lat := make([]time.Duration, 0, b.N)
	cpu := make([]time.Duration, 0, b.N)
	// The search runs on this goroutine's thread (the SQLite driver is Go
	// code): its CPU time is the thread's.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	b.ResetTimer()
	for i := range b.N {
		q := queries[i%len(queries)]
		c0, cpuOK := threadCPU()
		t0 := time.Now()
		res, err := queryBase.Search(ctx, q, kb.SearchOptions{})
		if err != nil {
			b.Fatalf("Search(%q): %v", q, err)
		}
		lat = append(lat, time.Since(t0))
		if c1, ok := threadCPU(); ok && cpuOK {
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
