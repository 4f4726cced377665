package exec

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestLocalConformance(t *testing.T) {
	testBackend(t, &Local{PipeGrace: 100 * time.Millisecond}, t.TempDir())
}

// TOOL-4: the grandchild a command leaves in the background is killed with
// the group on timeout.
func TestLocalTimeoutKillsGrandchild(t *testing.T) {
	dir := t.TempDir()
	pidfile := filepath.Join(dir, "pid")
	l := &Local{}
	var pgid int
	out, err := l.Run(context.Background(), Command{
		Script:  "(sleep 1000 & echo $! > " + pidfile + "); sleep 1000",
		Dir:     dir,
		Timeout: short,
		OnStart: func(g int) { pgid = g },
	})
	if err != nil || !out.TimedOut {
		t.Fatalf("got %+v, %v", out, err)
	}
	data, err := os.ReadFile(pidfile)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 250 && alive(pid); i++ {
		time.Sleep(20 * time.Millisecond)
	}
	if alive(pid) {
		syscallKill(pid)
		t.Fatalf("grandchild %d survived the timeout", pid)
	}
	if pgid <= 0 {
		t.Fatalf("OnStart got pgid %d", pgid)
	}
}

// TOOL-4: the command leads its own process group, whose id OnStart gets.
func TestLocalOwnProcessGroup(t *testing.T) {
	var pgid int
	out, err := (&Local{}).Run(context.Background(), Command{
		Script:  "cut -d' ' -f5 /proc/$$/stat",
		Timeout: guard,
		OnStart: func(g int) { pgid = g },
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(string(out.Combined)); got != strconv.Itoa(pgid) {
		t.Fatalf("command's group %s, OnStart got %d", got, pgid)
	}
	if pgid == os.Getpid() {
		t.Fatal("command shares rein's group")
	}
}

// TOOL-4: a group that ignores SIGTERM gets SIGKILL after the kill delay.
func TestLocalKillAfterTermIgnored(t *testing.T) {
	marker := uniqueSleep()
	l := &Local{KillDelay: 100 * time.Millisecond}
	out, err := l.Run(context.Background(), Command{
		Script:  "trap '' TERM; echo ready; sleep " + marker,
		Timeout: short,
	})
	if err != nil || !out.TimedOut || string(out.Combined) != "ready\n" {
		t.Fatalf("got %+v, %v", out, err)
	}
	if out.ExitCode != 137 {
		t.Errorf("exit code %d, want 137 (SIGKILL)", out.ExitCode)
	}
	waitGone(t, marker)
}

// TOOL-4: output beyond the memory cap spills whole to a file; memory keeps
// the head and the tail only.
func TestLocalSpill(t *testing.T) {
	const max = 64 << 10
	const n = 3 << 20
	l := &Local{MaxMemory: max, SpillDir: t.TempDir()}
	out, err := l.Run(context.Background(), Command{
		Script:  "echo START; head -c " + strconv.Itoa(n) + " /dev/zero | tr '\\0' a; echo; echo END",
		Timeout: guard,
	})
	if err != nil {
		t.Fatal(err)
	}
	total := int64(len("START\n") + n + len("\nEND\n"))
	if !out.Truncated || out.TotalBytes != total || len(out.Combined) != max || len(out.Tail) != max {
		t.Fatalf("truncated=%v total=%d (want %d) combined=%d tail=%d", out.Truncated, out.TotalBytes, total, len(out.Combined), len(out.Tail))
	}
	if !bytes.HasPrefix(out.Combined, []byte("START\naaa")) || !bytes.HasSuffix(out.Tail, []byte("aaa\nEND\n")) {
		t.Fatalf("head %q… tail …%q", out.Combined[:10], out.Tail[len(out.Tail)-10:])
	}
	data, err := os.ReadFile(out.SpillPath)
	if err != nil {
		t.Fatal(err)
	}
	if int64(len(data)) != total || !bytes.HasPrefix(data, out.Combined) || !bytes.HasSuffix(data, out.Tail) {
		t.Fatalf("spill file holds %d bytes, want %d", len(data), total)
	}
}

// TOOL-4: memory stays bounded however much a command prints: 64 MiB of
// output allocate a few MiB (head, ring, read buffer), not 64.
func TestLocalSpillMemoryBounded(t *testing.T) {
	const n = 64 << 20
	l := &Local{SpillDir: t.TempDir()}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	out, err := l.Run(context.Background(), Command{Script: "head -c " + strconv.Itoa(n) + " /dev/zero", Timeout: guard})
	runtime.ReadMemStats(&after)
	if err != nil || out.TotalBytes != n || out.SpillPath == "" {
		t.Fatalf("got total %d spill %q, %v", out.TotalBytes, out.SpillPath, err)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 16<<20 {
		t.Fatalf("allocated %d MiB for %d MiB of output", alloc>>20, n>>20)
	}
	if fi, err := os.Stat(out.SpillPath); err != nil || fi.Size() != n {
		t.Fatalf("spill file: %v, %v", fi, err)
	}
}

// TOOL-4: a small output stays in memory, with no spill file.
func TestLocalNoSpillUnderCap(t *testing.T) {
	dir := t.TempDir()
	out, err := (&Local{SpillDir: dir}).Run(context.Background(), Command{Script: "seq 1000", Timeout: guard})
	if err != nil || out.Truncated || out.SpillPath != "" || out.Tail != nil || out.TotalBytes != int64(len(out.Combined)) {
		t.Fatalf("got truncated=%v spill=%q, %v", out.Truncated, out.SpillPath, err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Fatalf("spill dir not empty: %v", ents)
	}
}

func TestCaptureRing(t *testing.T) {
	c := &capture{max: 4, spillDir: t.TempDir()}
	for _, s := range []string{"ab", "cd", "e", "fghij", "k"} {
		c.Write([]byte(s))
	}
	var out Output
	c.finish(&out)
	if string(out.Combined) != "abcd" || string(out.Tail) != "hijk" || out.TotalBytes != 11 {
		t.Fatalf("head %q tail %q total %d", out.Combined, out.Tail, out.TotalBytes)
	}
	data, _ := os.ReadFile(out.SpillPath)
	if string(data) != "abcdefghijk" {
		t.Fatalf("spill %q", data)
	}
}

// TOOL-5: WriteFile writes through a symlink instead of replacing it.
func TestLocalWriteThroughSymlink(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "target")
	link := filepath.Join(dir, "link")
	if err := os.WriteFile(target, []byte("old"), 0o640); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	if err := (&Local{}).WriteFile(context.Background(), link, []byte("new"), 0o600); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("link replaced: %v %v", fi, err)
	}
	data, _ := os.ReadFile(target)
	fi, _ := os.Stat(target)
	if string(data) != "new" || fi.Mode().Perm() != 0o640 {
		t.Fatalf("target %q mode %v", data, fi.Mode())
	}
}

func TestParseStat(t *testing.T) {
	state, pg, ok := parseStat([]byte("42 (a) b (c)) S 1 77 77 0 -1"))
	if !ok || state != 'S' || pg != 77 {
		t.Fatalf("got %c %d %v", state, pg, ok)
	}
}

// BenchmarkLocalRunEcho measures the cost of running `true` (SPEC TOOL-4).
func BenchmarkLocalRunEcho(b *testing.B) {
	l := &Local{}
	ctx := context.Background()
	for _, bc := range []struct {
		name string
		cmd  Command
	}{
		{"script", Command{Script: "true"}},
		{"args", Command{Args: []string{"true"}}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			for b.Loop() {
				out, err := l.Run(ctx, bc.cmd)
				if err != nil || out.ExitCode != 0 {
					b.Fatal(out, err)
				}
			}
		})
	}
}

func syscallKill(pid int) { _ = syscall.Kill(pid, syscall.SIGKILL) }

// TOOL-4: output is bounded (MaxSpill, 64 MiB by default): `yes` is
// stopped once past it, the spill file keeps the first MaxSpill bytes, and
// OutputLimited says so. Command.MaxOutput overrides it; negative is no
// limit.
func TestLocalOutputLimit_TOOL4(t *testing.T) {
	if got := (&Local{}).limits().withDefaults().maxSpill; got != DefaultMaxSpill || DefaultMaxSpill != 64<<20 {
		t.Fatalf("default limit %d", got)
	}
	const limit = 1 << 20
	l := &Local{MaxMemory: 64 << 10, MaxSpill: limit, SpillDir: t.TempDir(), KillDelay: 200 * time.Millisecond}
	out, err := l.Run(context.Background(), Command{Script: "yes", Timeout: guard})
	if err != nil {
		t.Fatal(err)
	}
	if !out.OutputLimited || out.TimedOut || out.SpillBytes != limit || out.TotalBytes <= limit || out.ExitCode != 143 {
		t.Fatalf("limited=%v timedout=%v spill=%d total=%d exit=%d", out.OutputLimited, out.TimedOut, out.SpillBytes, out.TotalBytes, out.ExitCode)
	}
	if fi, err := os.Stat(out.SpillPath); err != nil || fi.Size() != limit {
		t.Fatalf("spill file: %v, %v", fi, err)
	}
	data, _ := os.ReadFile(out.SpillPath)
	if !bytes.HasPrefix(data, []byte("y\ny\n")) {
		t.Fatalf("spill file starts %q", data[:8])
	}

	// Per call: a smaller limit, or none.
	out, err = l.Run(context.Background(), Command{Script: "head -c 1000000 /dev/zero", MaxOutput: 200000, Timeout: guard})
	if err != nil || !out.OutputLimited || out.SpillBytes != 200000 {
		t.Fatalf("MaxOutput 200000: limited=%v spill=%d, %v", out.OutputLimited, out.SpillBytes, err)
	}
	out, err = l.Run(context.Background(), Command{Script: "head -c 3000000 /dev/zero", MaxOutput: -1, Timeout: guard})
	if err != nil || out.OutputLimited || out.SpillBytes != 3000000 || out.ExitCode != 0 {
		t.Fatalf("no limit: limited=%v spill=%d exit=%d, %v", out.OutputLimited, out.SpillBytes, out.ExitCode, err)
	}
}

// PERM-6: a locale whose characters hold ASCII bytes (\, |) would make bash
// split words where the analysis does not; commands get C.UTF-8 instead.
func TestUnsafeCharsetLocale_PERM6(t *testing.T) {
	for _, c := range []struct {
		env  []string
		want bool
	}{
		{[]string{"LANG=zh_TW.Big5"}, true},
		{[]string{"LANG=en_US.UTF-8", "LC_CTYPE=zh_CN.GBK"}, true},
		{[]string{"LC_ALL=ja_JP.SJIS"}, true},
		{[]string{"LC_ALL=C.UTF-8", "LANG=zh_CN.GB18030"}, false},
		{[]string{"LANG=ja_JP.eucJP"}, false},
		{[]string{"LANG=en_US.UTF-8"}, false},
		{nil, false},
	} {
		if got := unsafeCharset(c.env); got != c.want {
			t.Errorf("%v: %v, want %v", c.env, got, c.want)
		}
	}
}
