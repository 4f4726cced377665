package builtin

import (
	"bufio"
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/reinhq/rein/exec"
	"github.com/reinhq/rein/tool"
)

// swapAttempts is how many calls each race row makes while the link flips:
// before the fix about one read in 150 and one write in a few hundred got
// through, so a row that lets none through in this many is closed.
const swapAttempts = 3000

// API-9: the attack table of the window between the fence's check and the
// file operation. A command of the same caller (a second session in the
// workspace, a parallel sub-agent) flips a link in the workspace between a
// harmless target and a forbidden one — links may name paths the sandbox
// does not show — while the tool is called again and again. No call may
// read the forbidden file or write outside the workspace. The backend is
// the confined sandbox's, as in a server's run.
func TestFenceSwapRaceAttacks_API9(t *testing.T) {
	w := newFenceWorld(t)
	if err := os.Mkdir(filepath.Join(w.ws, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	backend := &exec.Sandbox{Workspace: w.ws, ConfineReads: true}
	tools := map[string]tool.Tool{}
	for _, tl := range FileTools(backend, nil, w.fence) {
		tools[tl.Spec().Name] = tl
	}
	tools["grep"] = NewGrep(GrepOptions{Fence: w.fence}) // rg where installed, as a server has it
	tools["glob"] = NewGlob(GlobOptions{Fence: w.fence})
	tools["list_dir"] = NewListDir(ListDirOptions{Fence: w.fence})
	// Names are secrets too: a listing of the data directory or another
	// workspace must not show this one.
	for _, d := range []string{w.data, w.other} {
		if err := os.WriteFile(filepath.Join(d, fenceSecret+".name"), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, a := range []struct {
		name, tool, link string
		// good is the harmless target, bad the forbidden one.
		good, bad string
		in        map[string]any
		// wrote is a file that must not exist afterwards.
		wrote string
		// n is the number of calls, swapAttempts when 0 (a write syncs
		// to disk: fewer).
		n int
	}{
		{name: "read_file of a link flipped to the server's database", tool: "read_file", link: "swap",
			good: filepath.Join(w.ws, "main.go"), bad: filepath.Join(w.data, "rein.db"), in: map[string]any{"path": "swap"}},
		{name: "read_file of a link flipped to another workspace", tool: "read_file", link: "swap",
			good: filepath.Join(w.ws, "main.go"), bad: filepath.Join(w.other, "notes.txt"), in: map[string]any{"path": "swap"}},
		{name: "read_file of a link flipped to the history mirror", tool: "read_file", link: "swap",
			good: filepath.Join(w.ws, "main.go"), bad: filepath.Join(w.ws, ".rein", "data", "history.db"), in: map[string]any{"path": "swap"}},
		{name: "read_file through a directory link flipped to the data directory", tool: "read_file", link: "d",
			good: filepath.Join(w.ws, "inner"), bad: w.data, in: map[string]any{"path": "d/rein.db"}},
		{name: "grep of a directory link flipped to the data directory", tool: "grep", link: "d",
			good: filepath.Join(w.ws, "inner"), bad: w.data, in: map[string]any{"pattern": "SECRET", "path": "d", "output_mode": "content"}, n: 1000},
		{name: "grep of a file link flipped to another workspace", tool: "grep", link: "swap",
			good: filepath.Join(w.ws, "main.go"), bad: filepath.Join(w.other, "notes.txt"), in: map[string]any{"pattern": "SECRET", "path": "swap", "output_mode": "content"}, n: 1000},
		{name: "glob through a directory link flipped to the data directory", tool: "glob", link: "d",
			good: filepath.Join(w.ws, "inner"), bad: w.data, in: map[string]any{"pattern": "d/*"}, n: 3 * swapAttempts},
		{name: "list_dir of a directory link flipped to another workspace", tool: "list_dir", link: "d",
			good: filepath.Join(w.ws, "inner"), bad: w.other, in: map[string]any{"path": "d"}, n: 3 * swapAttempts},
		{name: "write_file through a directory link flipped to another workspace", tool: "write_file", link: "d",
			good: filepath.Join(w.ws, "sub"), bad: w.other, in: map[string]any{"path": "d/pwned", "content": "x"},
			wrote: filepath.Join(w.other, "pwned"), n: 500},
	} {
		t.Run(a.name, func(t *testing.T) {
			if err := os.MkdirAll(filepath.Join(w.ws, "inner"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(w.ws, "inner", "rein.db"), []byte("harmless"), 0o644); err != nil {
				t.Fatal(err)
			}
			stop := flipLink(t, filepath.Join(w.ws, a.link), a.good, a.bad)
			leaks, n := 0, a.n
			if n == 0 {
				n = swapAttempts
			}
			for range n {
				if strings.Contains(runTool(t, tools[a.tool], w.ws, a.in).TextOf(), fenceSecret) {
					leaks++
				}
			}
			stop()
			if leaks > 0 {
				t.Errorf("%d of %d calls showed the forbidden file or its name", leaks, n)
			}
			if a.wrote != "" {
				if _, err := os.Lstat(a.wrote); err == nil {
					t.Errorf("a call wrote %s", a.wrote)
				}
			}
		})
	}
}

// flipLink makes link point at good and bad in turn, atomically (a new
// link renamed over it), until the returned stop is called.
func flipLink(t *testing.T, link, good, bad string) (stop func()) {
	t.Helper()
	var done atomic.Bool
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		tmp := link + ".flip"
		for i := 0; !done.Load(); i++ {
			target := good
			if i%2 == 1 {
				target = bad
			}
			_ = os.Remove(tmp)
			if os.Symlink(target, tmp) == nil {
				_ = os.Rename(tmp, link)
			}
		}
	}()
	return func() {
		done.Store(true)
		wg.Wait()
		_ = os.Remove(link)
	}
}

// API-9: the attack table of files that block. A command of the caller
// makes a FIFO in the workspace and a file tool is pointed at it: opening
// it would wait for a writer for ever, past the run's cancel, holding one
// of the server's --max-concurrent run slots (a few calls, and no caller's
// run starts). Each call must return, refusing the FIFO. The bound below
// is liveness only (a blocked open never returns; a refusal takes
// microseconds).
func TestFenceFIFOAttacks_API9(t *testing.T) {
	w := newFenceWorld(t)
	if err := syscall.Mkfifo(filepath.Join(w.ws, "fifo"), 0o644); err != nil {
		t.Skipf("environment: cannot make a FIFO here: %v", err)
	}
	backend := &exec.Sandbox{Workspace: w.ws, ConfineReads: true}
	tools := map[string]tool.Tool{}
	for _, tl := range FileTools(backend, nil, w.fence) {
		tools[tl.Spec().Name] = tl
	}
	tools["grep"] = NewGrep(GrepOptions{Fence: w.fence})
	for _, a := range []struct {
		name, tool string
		in         map[string]any
	}{
		{"read_file of a FIFO", "read_file", map[string]any{"path": "fifo"}},
		{"edit_file of a FIFO", "edit_file", map[string]any{"path": "fifo", "old_string": "a", "new_string": "b"}},
		{"grep of a FIFO", "grep", map[string]any{"pattern": "a", "path": "fifo"}},
	} {
		t.Run(a.name, func(t *testing.T) {
			done := make(chan tool.Result, 1)
			go func() { done <- runTool(t, tools[a.tool], w.ws, a.in) }()
			select {
			case res := <-done:
				if a.tool != "grep" && !res.IsError {
					t.Errorf("not refused: %q", res.TextOf())
				}
			case <-time.After(10 * time.Second):
				t.Fatalf("%s blocks on the FIFO (a writer never comes)", a.tool)
			}
		})
	}
}

// API-9: the attack table of files too large to hold. A command makes a
// sparse file (one truncate: no disk used) and a tool that reads files
// whole is pointed at it; each must refuse it rather than take the
// server's memory, which every caller shares (read_file measured first,
// but edit_file and write_file did not, and a file can grow after it was
// measured).
func TestFenceHugeFileAttacks_API9(t *testing.T) {
	w := newFenceWorld(t)
	huge := filepath.Join(w.ws, "huge.txt")
	f, err := os.Create(huge)
	if err == nil {
		err = f.Truncate(exec.MaxReadFile + 1)
		f.Close()
	}
	if err != nil {
		t.Skipf("environment: cannot make a sparse file here: %v", err)
	}
	backend := &exec.Sandbox{Workspace: w.ws, ConfineReads: true}
	tools := map[string]tool.Tool{}
	for _, tl := range FileTools(backend, nil, w.fence) {
		tools[tl.Spec().Name] = tl
	}
	for _, a := range []struct {
		name, tool string
		in         map[string]any
	}{
		{"edit_file of a sparse file beyond the cap", "edit_file", map[string]any{"path": "huge.txt", "old_string": "a", "new_string": "b"}},
		{"write_file over a sparse file beyond the cap (it reads the old content)", "write_file", map[string]any{"path": "huge.txt", "content": "x"}},
	} {
		t.Run(a.name, func(t *testing.T) {
			res := runTool(t, tools[a.tool], w.ws, a.in)
			if !res.IsError || !strings.Contains(res.TextOf(), "more than") {
				t.Errorf("not refused: error=%v %.200q", res.IsError, res.TextOf())
			}
		})
	}
}

// API-9: grep's Go engine, which a fenced grep uses, holds at most
// grepMaxLine of a line: a workspace file of gigabytes without a newline
// stops its search instead of filling the server's memory.
func TestGrepLineCap(t *testing.T) {
	long := bytes.Repeat([]byte("a"), grepMaxLine+(1<<20))
	var buf []byte
	r := bufio.NewReaderSize(bytes.NewReader(append(long, '\n')), 64<<10)
	if line, err := readLine(r, &buf); !errors.Is(err, errLineTooLong) || len(buf) > grepMaxLine+(128<<10) {
		t.Errorf("readLine: %d bytes held, %d returned, err %v; want errLineTooLong", len(buf), len(line), err)
	}
	r = bufio.NewReaderSize(bytes.NewReader([]byte("short\nnext")), 64<<10)
	if line, err := readLine(r, &buf); err != nil || string(line) != "short" {
		t.Errorf("a short line: %q %v", line, err)
	}
}

// BenchmarkFencedRead is the cost of a fenced read of a 4 KiB file through
// the confined sandbox's backend: "path" judges the path and reads it (as
// before issue 22's red team), "opened" judges what it opened (a server's
// run now).
func BenchmarkFencedRead(b *testing.B) {
	ws := b.TempDir()
	file := filepath.Join(ws, "src", "a.go")
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(file, bytes.Repeat([]byte("x"), 4096), 0o644); err != nil {
		b.Fatal(err)
	}
	backend := &exec.Sandbox{Workspace: ws, ConfineReads: true}
	ctx := b.Context()
	b.Run("path", func(b *testing.B) {
		fb := Fence{}.Backend(backend) // no Root: the path is judged
		for b.Loop() {
			if _, err := fb.ReadFile(ctx, file); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("opened", func(b *testing.B) {
		fb := Fence{Root: ws}.Backend(backend)
		for b.Loop() {
			if _, err := fb.ReadFile(ctx, file); err != nil {
				b.Fatal(err)
			}
		}
	})
}
