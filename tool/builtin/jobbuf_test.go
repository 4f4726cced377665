package builtin

import (
	"bytes"
	"context"
	"os"
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
		var o *jobOutput
		path := filepath.Join(t.TempDir(), "sub", "out.log")
		if fileCap&1 == 0 { // lazy: made when the ring would drop a byte
			o = newLazyJobOutput(path, rc, fc)
		} else {
			if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
				t.Fatal(err)
			}
			var err error
			if o, err = newJobOutput(path, rc, fc); err != nil {
				t.Fatal(err)
			}
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
		// The file, once made, holds the first bytes; a lazy one is made
		// only when the output outgrew the ring.
		_, err := os.Stat(path)
		if made := len(whole) > rc || fileCap&1 == 1; made != (err == nil) {
			t.Fatalf("%d bytes, ring %d: file made %v (%v)", len(whole), rc, err == nil, err)
		}
		if err == nil {
			got, _ := os.ReadFile(path)
			if want := whole[:min(int64(len(whole)), fc)]; !bytes.Equal(got, want) {
				t.Fatalf("file %q, want %q", got, want)
			}
		}
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
	wantFile := min(fc, total)
	if o.lazy { // not made yet: the ring holds it all
		wantFile = 0
	}
	if got, inFile := o.size(); got != total || inFile != wantFile {
		t.Fatalf("size %d, %d; want %d, %d", got, inFile, total, wantFile)
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
