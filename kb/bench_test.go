package kb_test

import (
	"context"
	"sync"
	"testing"

	"github.com/reinhq/rein/kb"
	"github.com/reinhq/rein/kb/kbtest"
)

var (
	memOnce sync.Once
	memBase *kb.Base
)

// BenchmarkQueryGOROOT runs realistic keyword-only searches on an index
// of GOROOT/src in the memory backend (built once per process): p50 and
// p99 latency of one search, and of its CPU time (on Linux). kb/sqlite
// has the same benchmark on its own index.
func BenchmarkQueryGOROOT(b *testing.B) {
	src := kbtest.GOROOTSrc(b)
	memOnce.Do(func() {
		base, err := kb.New(kb.Config{Root: src, Backend: kb.NewMemory()})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := base.Add(context.Background(), []string{"."}, nil); err != nil {
			b.Fatal(err)
		}
		memBase = base
	})
	if memBase == nil {
		b.Fatal("no index")
	}
	kbtest.BenchSearch(b, memBase)
}
