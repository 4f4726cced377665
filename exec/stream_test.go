package exec

import (
	"bytes"
	"context"
	"os"
	"strconv"
	"sync"
	"testing"
)

// lockedBuffer is a Stream a test reads while the command writes.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TOOL-8: with Stream set, the output goes to the writer as written and
// the Output keeps only its ends (the memory cap, at most StreamKeep), but
// counts it all; MaxOutput still stops the
// command and the writer gets exactly the bytes below the limit; no spill
// file is made.
func TestStream_TOOL8(t *testing.T) {
	spill := t.TempDir()
	l := &Local{SpillDir: spill, MaxMemory: 16}
	var buf lockedBuffer
	out, err := l.Run(context.Background(), Command{Script: "seq 1 1000; echo err >&2; exit 4", Stream: &buf})
	if err != nil {
		t.Fatal(err)
	}
	want := seq(1000) + "err\n"
	if buf.String() != want || string(out.Combined) != want[:16] || !out.Truncated || string(out.Tail) != want[len(want)-16:] ||
		out.SpillPath != "" || out.TotalBytes != int64(len(want)) || out.ExitCode != 4 {
		t.Fatalf("stream %d bytes, output %+v", len(buf.String()), out)
	}
	// Without a smaller memory cap, Run keeps StreamKeep of each end.
	var big lockedBuffer
	out, err = (&Local{SpillDir: spill}).Run(context.Background(), Command{Script: "seq 1 100000", Stream: &big})
	if err != nil || len(out.Combined) != StreamKeep || len(out.Tail) != StreamKeep || big.String() != seq(100000) {
		t.Fatalf("kept %d and %d bytes, streamed %d; %v", len(out.Combined), len(out.Tail), len(big.String()), err)
	}
	var limited lockedBuffer
	out, err = l.Run(context.Background(), Command{Script: "yes", Stream: &limited, MaxOutput: 100_000})
	if err != nil {
		t.Fatal(err)
	}
	if !out.OutputLimited || out.OutputLimit != 100_000 || len(limited.String()) != 100_000 {
		t.Fatalf("limited: %d bytes streamed, %+v", len(limited.String()), out)
	}
	if ents, _ := os.ReadDir(spill); len(ents) != 0 {
		t.Fatalf("a spill file was made: %v", ents)
	}
}

func seq(n int) string {
	var b bytes.Buffer
	for i := 1; i <= n; i++ {
		b.WriteString(strconv.Itoa(i))
		b.WriteByte('\n')
	}
	return b.String()
}
