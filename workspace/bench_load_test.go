package workspace

import (
	"path/filepath"
	"testing"
)

// loadBenchOptions are the options of a server's run (Root set, a HOME
// of its own) in ws, with user settings like the server bench's.
func loadBenchOptions(b *testing.B, ws string) Options {
	home := b.TempDir()
	writeTB(b, filepath.Join(home, ".config", "rein", "settings.yaml"), "permissions:\n  allow: [\"Bash(echo:*)\"]\n")
	env := map[string]string{"HOME": home, "ANTHROPIC_API_KEY": "k"}
	return Options{WorkDir: ws, Root: ws, Getenv: func(k string) string { return env[k] },
		ClaudeManagedDir: filepath.Join(home, "managed")}
}

// BenchmarkLoad loads a server run's configuration, without and through
// a Cache (whose clock runs ahead, so that the files just written count
// as settled): an almost empty project (the server bench's), and one with
// what a real one brings. paths/op are the paths a cached result is
// revalidated by.
func BenchmarkLoad(b *testing.B) {
	for _, c := range []struct {
		name string
		ws   func(b *testing.B) string
	}{
		{"bare", func(b *testing.B) string {
			ws := filepath.Join(b.TempDir(), "project")
			writeTB(b, filepath.Join(ws, "main.go"), "// main.go\n")
			return ws
		}},
		{"full", trustBenchWorkspace},
	} {
		b.Run(c.name+"/uncached", func(b *testing.B) {
			opts := loadBenchOptions(b, c.ws(b))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Load(opts); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(c.name+"/missed", func(b *testing.B) {
			// The files were just written: never settled, so every Load
			// through the cache loads, walks what it read, and keeps nothing.
			opts := loadBenchOptions(b, c.ws(b))
			cache := NewCache()
			b.ReportAllocs()
			for b.Loop() {
				if _, err := cache.Load("", opts); err != nil {
					b.Fatal(err)
				}
			}
			if cache.hits.Load() != 0 || len(cache.entries) != 0 {
				b.Fatal("a result whose files just changed was kept")
			}
		})
		b.Run(c.name+"/cached", func(b *testing.B) {
			opts := loadBenchOptions(b, c.ws(b))
			cache := settledCache()
			if _, err := cache.Load("", opts); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := cache.Load("", opts); err != nil {
					b.Fatal(err)
				}
			}
			if cache.hits.Load() < int64(b.N) {
				b.Fatalf("%d of %d loads served from the cache", cache.hits.Load(), b.N)
			}
			for _, e := range cache.entries {
				b.ReportMetric(float64(len(e.files)), "paths/op")
			}
		})
	}
}
