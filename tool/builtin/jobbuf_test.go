package builtin

import (
	"bytes"
	"context"
	"path/filepath"
	"testing"

	"github.com/reinhq/rein/exec"
	"github.com/reinhq/rein/tool"
)

// FuzzJobOutput checks the ring and the file against the whole output:
// any read returns exactly the bytes written at [from, next), starts at
// the offset asked whenever that byte is kept, and says where it starts
// when it is not.
func FuzzJobOutput(f *testing.F) {
	f.Add([]byte("\x05\x03hello world, this is a job's output\n"), uint16(7), uint16(13))
	f.Add(bytes.Repeat([]byte("abcdefgh"), 200), uint16(1), uint16(1))
	f.Add([]byte{}, uint16(0), uint16(3))
	f.Fuzz(func(t *testing.T, data []byte, ringCap, fileCap uint16) {
		rc, fc := int(ringCap%64)+1, int64(fileCap%256)+1
		o, err := newJobOutput(filepath.Join(t.TempDir(), "out.log"), rc, fc)
		if err != nil {
			t.Fatal(err)
		}
		defer o.close()
		var whole []byte
		// Chunk sizes come from the data itself.
		rest := data
		for len(rest) > 0 {
			n := int(rest[0])%17 + 1
			n = min(n, len(rest))
			o.Write(rest[:n])
			whole = append(whole, rest[:n]...)
			rest = rest[n:]
			check(t, o, whole, rc, fc)
		}
		check(t, o, whole, rc, fc)
	})
}

func check(t *testing.T, o *jobOutput, whole []byte, rc int, fc int64) {
	t.Helper()
	total := int64(len(whole))
	ringStart := max(0, total-int64(rc))
	for off := int64(0); off <= total+1; off++ {
		for _, n := range []int{1, 5, 1 << 20} {
			data, from, next := o.read(off, n)
			if from < off && off <= total || next != from+int64(len(data)) || len(data) > n {
				t.Fatalf("read(%d, %d) = %d bytes from %d to %d (total %d)", off, n, len(data), from, next, total)
			}
			if off < total && len(data) == 0 {
				t.Fatalf("read(%d, %d) gave nothing of %d bytes", off, n, total)
			}
			if !bytes.Equal(data, whole[min(from, total):min(next, total)]) {
				t.Fatalf("read(%d, %d): %q, want %q", off, n, data, whole[from:next])
			}
			kept := off < min(fc, total) || off >= ringStart
			if off < total && kept && from != off {
				t.Fatalf("read(%d, %d) started at %d though byte %d is kept (file %d, ring from %d)", off, n, from, off, fc, ringStart)
			}
		}
	}
	if got, inFile := o.size(); got != total || inFile != min(fc, total) {
		t.Fatalf("size %d, %d; want %d, %d", got, inFile, total, min(fc, total))
	}
}

// BenchmarkJob measures what a background job costs beyond the command
// (SPEC TOOL-8): start `true` as a job and wait for its end, against the
// same command run in the foreground.
func BenchmarkJob(b *testing.B) {
	be := &exec.Local{PipeGrace: 1}
	dir := b.TempDir()
	b.Run("foreground", func(b *testing.B) {
		for b.Loop() {
			if _, err := be.Run(context.Background(), exec.Command{Script: "true", Dir: dir}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("job", func(b *testing.B) {
		jobs := NewJobs(JobsOptions{Dir: b.TempDir(), Max: 1 << 20})
		defer jobs.Close()
		for b.Loop() {
			job, err := jobs.start(be, tool.Call{ID: "c"}, exec.Command{Script: "true", Dir: dir}, "true", "", true)
			if err != nil {
				b.Fatal(err)
			}
			<-job.Done()
		}
	})
	b.Run("write", func(b *testing.B) {
		o, err := newJobOutput(filepath.Join(b.TempDir(), "out.log"), JobsDefaultRing, 1<<62)
		if err != nil {
			b.Fatal(err)
		}
		defer o.close()
		chunk := bytes.Repeat([]byte("x"), 32<<10)
		b.SetBytes(int64(len(chunk)))
		for b.Loop() {
			o.Write(chunk)
		}
	})
}
