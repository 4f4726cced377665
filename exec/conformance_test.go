package exec

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// short is the timeout tests use for commands meant to be cut off.
const short = time.Second

// guard is a timeout for commands meant to finish at once, so a bug fails a
// test instead of hanging it.
const guard = 20 * time.Second

// testBackend is the conformance suite every Backend passes (SPEC TOOL-5).
// dir is a writable workspace the backend accepts as a working directory.
func testBackend(t *testing.T, b Backend, dir string) {
	s := suite{b: b, dir: dir}
	t.Run("TOOL-4/combined output and exit codes", s.outputs)
	t.Run("TOOL-4/stdin env and OnStart", s.process)
	t.Run("TOOL-4/timeout and cancel", s.stops)
	t.Run("TOOL-4/bad commands are errors", s.badCommands)
	t.Run("TOOL-5/files", s.files)
}

type suite struct {
	b   Backend
	dir string
}

func (s suite) run(t *testing.T, c Command) Output {
	t.Helper()
	if c.Dir == "" {
		c.Dir = s.dir
	}
	out, err := s.b.Run(context.Background(), c)
	if err != nil {
		t.Fatalf("Run(%q %q): %v", c.Script, c.Args, err)
	}
	return out
}

func (s suite) outputs(t *testing.T) {
	tests := []struct {
		name string
		cmd  Command
		want string
		code int
	}{
		{"echo", Command{Script: "echo hello"}, "hello\n", 0},
		{"stderr in write order", Command{Script: "echo 1; echo 2 >&2; echo 3"}, "1\n2\n3\n", 0},
		{"exit code", Command{Script: "echo x; exit 3"}, "x\n", 3},
		{"args", Command{Args: []string{"echo", "a  b"}}, "a  b\n", 0},
		{"killed by signal", Command{Script: "kill -9 $$"}, "", 137},
		{"working dir", Command{Script: "pwd -P"}, realPath(t, s.dir) + "\n", 0},
	}
	type result struct {
		Out  string
		Code int
	}
	for _, tt := range tests {
		tt.cmd.Timeout = guard
		out := s.run(t, tt.cmd)
		got := result{string(out.Combined), out.ExitCode}
		if diff := cmp.Diff(result{tt.want, tt.code}, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tt.name, diff)
		}
	}
}

func (s suite) process(t *testing.T) {
	// stdin is closed: cat sees EOF at once.
	out := s.run(t, Command{Script: "cat; echo done", Timeout: guard})
	if out.TimedOut || string(out.Combined) != "done\n" {
		t.Fatalf("cat did not see EOF at once: %+v", out)
	}

	// The environment is per call, from a clean base; rein's is untouched.
	t.Setenv("REIN_TEST_SECRET", "leak")
	before := os.Environ()
	out = s.run(t, Command{
		Script:  `echo "x=$REIN_X secret=$REIN_TEST_SECRET term=$TERM path=${PATH:+set}"`,
		Env:     []string{"REIN_X=1"},
		Timeout: guard,
	})
	if got, want := string(out.Combined), "x=1 secret= term=dumb path=set\n"; got != want {
		t.Errorf("env: got %q, want %q", got, want)
	}
	if diff := cmp.Diff(before, os.Environ()); diff != "" {
		t.Errorf("process environment changed:\n%s", diff)
	}

	var pgid atomic.Int64
	s.run(t, Command{Script: "true", Timeout: guard, OnStart: func(g int) { pgid.Store(int64(g)) }})
	if pgid.Load() <= 0 {
		t.Errorf("OnStart got %d", pgid.Load())
	}

	// A process left in the background does not hold Run.
	marker := uniqueSleep()
	out = s.run(t, Command{Script: "sleep " + marker + " & echo bg", Timeout: guard})
	killMarker(marker)
	if out.TimedOut || out.ExitCode != 0 || string(out.Combined) != "bg\n" {
		t.Errorf("background: got %+v", out)
	}
}

func (s suite) stops(t *testing.T) {
	out := s.run(t, Command{Script: "echo before; sleep 1000; echo after", Timeout: short})
	if !out.TimedOut || out.Cancelled || string(out.Combined) != "before\n" {
		t.Fatalf("timeout: got %+v", out)
	}

	// The whole group goes, backgrounded grandchildren included.
	marker := uniqueSleep()
	out = s.run(t, Command{
		Script: fmt.Sprintf("(sleep %s &); sleep %s & echo started; wait", marker, marker),
		// Long enough for a sandbox to start its helper on a loaded machine
		// before the timeout; the command never ends by itself.
		Timeout: 2 * time.Second,
	})
	if !out.TimedOut || !strings.Contains(string(out.Combined), "started") {
		t.Fatalf("group: got %+v", out)
	}
	waitGone(t, marker)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c := Command{Script: "echo partial; sleep 1000", Dir: s.dir, Timeout: guard}
	c.OnStart = func(int) { time.AfterFunc(short, cancel) }
	out, err := s.b.Run(ctx, c)
	if err != nil || !out.Cancelled || out.TimedOut || string(out.Combined) != "partial\n" {
		t.Fatalf("cancel: got %+v, %v", out, err)
	}
	out, err = s.b.Run(ctx, Command{Script: "echo never", Dir: s.dir})
	if err != nil || !out.Cancelled || len(out.Combined) != 0 {
		t.Fatalf("already cancelled: got %+v, %v", out, err)
	}
}

func (s suite) badCommands(t *testing.T) {
	for _, c := range []Command{
		{},
		{Script: "true", Args: []string{"true"}},
		{Script: "true", Dir: filepath.Join(s.dir, "missing")},
	} {
		if _, err := s.b.Run(context.Background(), c); err == nil {
			t.Errorf("Run(%+v): want an error", c)
		}
	}
}

func (s suite) files(t *testing.T) {
	ctx := context.Background()
	p := filepath.Join(s.dir, "sub", "deeper", "f.txt")
	if err := s.b.WriteFile(ctx, p, []byte("one"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := s.b.WriteFile(ctx, p, []byte("two"), 0o644); err != nil {
		t.Fatal(err)
	}
	data, err := s.b.ReadFile(ctx, p)
	if err != nil || string(data) != "two" {
		t.Fatalf("ReadFile: %q, %v", data, err)
	}
	fi, err := s.b.Stat(ctx, p)
	if err != nil || fi.Mode().Perm() != 0o600 || fi.Size() != 3 {
		t.Fatalf("Stat: %v, %v (want the first mode kept)", fi, err)
	}
	if ents, _ := os.ReadDir(filepath.Dir(p)); len(ents) != 1 {
		t.Errorf("temporary files left: %v", ents)
	}
}

func realPath(t *testing.T, p string) string {
	t.Helper()
	r, err := filepath.EvalSymlinks(p)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

var sleepSeq atomic.Int64

// uniqueSleep returns a sleep duration no other process uses, so the test
// can find its sleeps in /proc whatever PID namespace they ran in.
func uniqueSleep() string {
	return fmt.Sprintf("%d.%03d%d", 900+os.Getpid()%99, time.Now().UnixNano()%1000, sleepSeq.Add(1))
}

// liveWith returns the pids of live (non-zombie) processes whose command
// line contains marker.
func liveWith(marker string) []int {
	var pids []int
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cl, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err != nil || !bytes.Contains(cl, []byte(marker)) {
			continue
		}
		if alive(pid) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// alive reports whether pid exists and is not a zombie.
func alive(pid int) bool {
	st, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	state, _, ok := parseStat(st)
	return ok && state != 'Z' && state != 'X'
}

// waitGone fails unless every process with marker is gone soon (the kernel
// delivers the group's signal asynchronously).
func waitGone(t *testing.T, marker string) {
	t.Helper()
	for i := 0; i < 250; i++ {
		if len(liveWith(marker)) == 0 {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	left := liveWith(marker)
	killMarker(marker)
	t.Fatalf("processes of the command survived: %v", left)
}

func killMarker(marker string) {
	for _, pid := range liveWith(marker) {
		p, err := os.FindProcess(pid)
		if err == nil {
			p.Kill()
		}
	}
}

// tcpProbe listens on loopback and returns a script that connects to it
// and the count of connections accepted, for the network rules (TOOL-5).
func tcpProbe(t *testing.T) (string, *atomic.Int64) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	var accepted atomic.Int64
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			accepted.Add(1)
			conn.Close()
		}
	}()
	return fmt.Sprintf("echo hi > /dev/tcp/127.0.0.1/%d", ln.Addr().(*net.TCPAddr).Port), &accepted
}
