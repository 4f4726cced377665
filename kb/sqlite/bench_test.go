package sqlite

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/reinhq/rein/kb"
	"github.com/reinhq/rein/kb/kbtest"
)

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
	src := kbtest.GOROOTSrc(b)
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
	src := kbtest.GOROOTSrc(b)
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
	kbtest.BenchSearch(b, queryBase)
}
