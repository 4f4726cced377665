package memory

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// corpusTexts returns the texts of both corpus files.
func corpusTexts(b *testing.B, files ...string) ([]string, int64) {
	var texts []string
	var size int64
	for _, f := range files {
		for _, e := range readCorpus(b, filepath.Join("testdata", f)) {
			texts = append(texts, e.text)
			size += int64(len(e.text))
		}
	}
	return texts, size
}

// BenchmarkScan measures the scanner's throughput over the corpus, one
// call per note as the store makes them.
func BenchmarkScan(b *testing.B) {
	for _, c := range []struct{ name, file string }{{"benign", "benign.txt"}, {"attacks", "attacks.txt"}} {
		b.Run(c.name, func(b *testing.B) {
			texts, size := corpusTexts(b, c.file)
			b.SetBytes(size)
			cpu, release := threadCPU()
			defer release()
			start, n := cpu(), 0
			for b.Loop() {
				for _, t := range texts {
					Scan(t)
				}
				n++
			}
			reportCPU(b, cpu()-start, int64(n)*size)
		})
	}
}

// BenchmarkScanDocument measures ScanDocument's rules over a long
// AGENTS.md-like text made of the benign notes (the scanner itself, not
// the memo that answers a text scanned before).
func BenchmarkScanDocument(b *testing.B) {
	texts, _ := corpusTexts(b, "benign.txt")
	doc := strings.Join(texts, "\n\n")
	b.SetBytes(int64(len(doc)))
	cpu, release := threadCPU()
	defer release()
	start, n := cpu(), 0
	for b.Loop() {
		scanAt(doc, true, 0)
		n++
	}
	reportCPU(b, cpu()-start, int64(n*len(doc)))
}

// reportCPU reports throughput per second of CPU time, where it is
// measured.
func reportCPU(b *testing.B, d time.Duration, bytes int64) {
	if d > 0 {
		b.ReportMetric(float64(bytes)/d.Seconds()/1e6, "cpu-MB/s")
	}
}

// BenchmarkSection measures reading both scopes and rendering the prompt
// section with every file filled to its cap; it reports the section's
// size.
func BenchmarkSection(b *testing.B) {
	root := b.TempDir()
	cfg := Config{UserDir: filepath.Join(root, "user"), WorkspaceDir: WorkspaceDir(filepath.Join(root, "ws"))}
	s := New(cfg)
	texts, _ := corpusTexts(b, "benign.txt")
	fillTo := func(scope Scope, t Target) {
		for _, e := range texts {
			if _, err := s.Add(context.Background(), scope, t, e); err != nil {
				return // full
			}
		}
	}
	fillTo(ScopeUser, TargetProfile)
	fillTo(ScopeUser, TargetNotes)
	fillTo(ScopeWorkspace, TargetNotes)
	snap := s.Snapshot()
	if len(snap.Warnings) > 0 {
		b.Fatal(snap.Warnings)
	}
	sec := Section(snap)
	var fills []string
	for _, f := range snap.Files {
		fills = append(fills, f.Fill())
	}
	b.Logf("section at full caps: %d bytes, %d characters (%s)", len(sec), len([]rune(sec)), strings.Join(fills, "; "))
	for b.Loop() {
		Section(s.Snapshot())
	}
	b.ReportMetric(float64(len(sec)), "section-bytes")
}

// BenchmarkAdd measures one write: scan, lock, read, render, atomic write
// and index.
func BenchmarkAdd(b *testing.B) {
	dir := b.TempDir()
	s := New(Config{UserDir: dir, NotesCap: 1 << 30})
	i := 0
	for b.Loop() {
		if _, err := s.Add(context.Background(), ScopeUser, TargetNotes, fmt.Sprintf("Fact %d.", i)); err != nil {
			b.Fatal(err)
		}
		i++
		if i%200 == 0 {
			os.Remove(filepath.Join(dir, NotesFile)) // keep the file small
		}
	}
}

// typicalNote is a memory note of the usual size and shape: a convention
// with a command, a URL and an identifier.
const typicalNote = "Run `go test ./...` before committing; CI at https://ci.example.com/job/api (build 2026.11.27-1432) " +
	"fails on vet warnings, and the ops runbook for staging is docs/runbooks/staging.md."

// BenchmarkScanNote measures Scan on one typical note, as the store scans
// each write (issue 22: the cost of normalising and decoding per note).
func BenchmarkScanNote(b *testing.B) {
	b.SetBytes(int64(len(typicalNote)))
	for b.Loop() {
		scanAt(typicalNote, false, 0)
	}
}

// BenchmarkScanDocument64K measures ScanDocument's rules on a 64 KiB
// AGENTS.md-like document made of benign notes (the scanner itself, not
// the memo).
func BenchmarkScanDocument64K(b *testing.B) {
	texts, _ := corpusTexts(b, "benign.txt")
	var sb strings.Builder
	for i := 0; sb.Len() < 64<<10; i++ {
		sb.WriteString(texts[i%len(texts)])
		sb.WriteString("\n\n")
	}
	doc := sb.String()[:64<<10]
	b.SetBytes(int64(len(doc)))
	for b.Loop() {
		scanAt(doc, true, 0)
	}
}
