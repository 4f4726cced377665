package builtin

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/reinhq/rein/exec"
	"github.com/reinhq/rein/tool"
)

// recorder is a backend that runs on the host and counts Run calls, so a
// test can tell a refused command never ran.
type recorder struct {
	exec.Local
	runs atomic.Int64
}

func (r *recorder) Run(ctx context.Context, c exec.Command) (exec.Output, error) {
	r.runs.Add(1)
	return r.Local.Run(ctx, c)
}

type bashCase struct {
	t    *testing.T
	be   *recorder
	tool tool.Tool
	call tool.Call
}

func newBash(t *testing.T, opts BashOptions) *bashCase {
	t.Helper()
	be := &recorder{Local: exec.Local{PipeGrace: 100 * time.Millisecond}}
	return &bashCase{t: t, be: be, tool: NewBash(be, opts), call: tool.Call{
		ID: "call_1", Name: "bash", WorkDir: t.TempDir(), SessionDir: t.TempDir(),
	}}
}

// run calls the tool with input (a JSON object, or a bare command string).
func (c *bashCase) run(ctx context.Context, input any) tool.Result {
	c.t.Helper()
	if s, ok := input.(string); ok {
		input = map[string]any{"command": s}
	}
	raw, err := json.Marshal(input)
	if err != nil {
		c.t.Fatal(err)
	}
	call := c.call
	call.Input = raw
	r, err := c.tool.Run(ctx, call)
	if err != nil {
		c.t.Fatalf("Run returned a Go error: %v", err)
	}
	return r
}

func TestBashSpec(t *testing.T) {
	b := NewBash(&exec.Local{}, BashOptions{})
	spec := b.Spec()
	if spec.Name != "bash" {
		t.Fatalf("name %q", spec.Name)
	}
	want := tool.Meta{Category: tool.CategoryExecute}
	if diff := cmp.Diff(want, tool.MetaOf(b)); diff != "" {
		t.Errorf("meta (-want +got):\n%s", diff)
	}
	if _, err := tool.NewSet(tool.OriginBuiltin, b); err != nil {
		t.Fatal(err)
	}
	size := len(spec.Description) + len(spec.InputSchema)
	t.Logf("bash description+schema: %d bytes", size)
	if size > 850 {
		t.Errorf("description+schema is %d bytes; the budget is about 800", size)
	}
}

// TOOL-4: output, exit codes, stdin, environment.
func TestBashRuns(t *testing.T) {
	c := newBash(t, BashOptions{Env: func(call tool.Call) []string { return []string{"REIN_CALL_ID=" + call.ID} }})
	before := os.Environ()
	tests := []struct {
		name    string
		command string
		want    string
		isError bool
		code    int
	}{
		{"echo", "echo hello", "hello", false, 0},
		{"stderr too", "echo out; echo err >&2", "out\nerr", false, 0},
		{"no output", "true", "(no output)", false, 0},
		{"exit code", "echo oops; exit 3", "oops\n\nexit code 3", true, 3},
		{"stdin is closed", "cat; echo done", "done", false, 0},
		{"env per call", "echo $REIN_CALL_ID", "call_1", false, 0},
		{"workdir", "test \"$(pwd -P)\" = \"$(cd " + c.call.WorkDir + " && pwd -P)\" && echo here", "here", false, 0},
	}
	for _, tt := range tests {
		r := c.run(context.Background(), tt.command)
		got := []any{r.TextOf(), r.IsError, r.Metadata["exit_code"]}
		if diff := cmp.Diff([]any{tt.want, tt.isError, tt.code}, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tt.name, diff)
		}
	}
	if os.Getenv("REIN_CALL_ID") != "" {
		t.Error("the call's environment leaked into the process")
	}
	if diff := cmp.Diff(before, os.Environ()); diff != "" {
		t.Errorf("process environment changed:\n%s", diff)
	}
}

// TOOL-4: a timeout keeps the partial output and kills the whole process
// group, the backgrounded grandchild included.
func TestBashTimeoutKillsGroup(t *testing.T) {
	var pgid atomic.Int64
	c := newBash(t, BashOptions{OnStart: func(call tool.Call, g int) {
		if call.ID == "call_1" {
			pgid.Store(int64(g))
		}
	}})
	pidfile := filepath.Join(c.call.WorkDir, "grandchild.pid")
	r := c.run(context.Background(), map[string]any{
		"command": "echo before; (sleep 1000 & echo $! > " + pidfile + "); sleep 1000",
		"timeout": 0.3,
	})
	text := r.TextOf()
	if !r.IsError || !strings.HasPrefix(text, "before\n") || !strings.HasSuffix(text, "command timed out after 0.3 s; partial output above") {
		t.Fatalf("result %v %q", r.IsError, text)
	}
	if r.Metadata["timed_out"] != true || pgid.Load() <= 0 {
		t.Fatalf("metadata %v, pgid %d", r.Metadata, pgid.Load())
	}
	data, err := os.ReadFile(pidfile)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 250 && running(pid); i++ {
		time.Sleep(20 * time.Millisecond)
	}
	if running(pid) {
		p, _ := os.FindProcess(pid)
		p.Kill()
		t.Fatalf("grandchild %d survived the timeout", pid)
	}
}

// running reports whether pid is a live process (zombies wait for init).
func running(pid int) bool {
	st, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	i := strings.LastIndexByte(string(st), ')')
	return i >= 0 && i+2 < len(st) && st[i+2] != 'Z' && st[i+2] != 'X'
}

// TOOL-4: a cancelled ctx ends the command and says so.
func TestBashCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c := newBash(t, BashOptions{OnStart: func(tool.Call, int) { time.AfterFunc(300*time.Millisecond, cancel) }})
	r := c.run(ctx, "echo partial; sleep 1000")
	if !r.IsError || r.Metadata["cancelled"] != true || !strings.Contains(r.TextOf(), "partial\n\ncommand was cancelled") {
		t.Fatalf("got %v %q %v", r.IsError, r.TextOf(), r.Metadata)
	}
}

// TOOL-4: timeouts are bounded.
func TestBashTimeoutBounds(t *testing.T) {
	c := newBash(t, BashOptions{})
	for _, tt := range []struct {
		timeout float64
		want    string
	}{
		{900, "above the maximum of 600 s"},
		{-1, "negative"},
	} {
		r := c.run(context.Background(), map[string]any{"command": "true", "timeout": tt.timeout})
		if !r.IsError || !strings.Contains(r.TextOf(), tt.want) {
			t.Errorf("timeout %v: %q", tt.timeout, r.TextOf())
		}
	}
	if n := c.be.runs.Load(); n != 0 {
		t.Fatalf("%d commands ran", n)
	}
}

// TOOL-4: output above the cap is saved whole; the model gets head, tail,
// the cut size and the path.
func TestBashOutputCap(t *testing.T) {
	c := newBash(t, BashOptions{OutputCap: 1000})
	r := c.run(context.Background(), "seq 1 10000")
	checkCapped(t, r, c.call, seqOutput(10000))
}

// TOOL-4: output beyond the backend's memory is spilled by the backend and
// the spill file becomes the saved output.
func TestBashOutputSpilled(t *testing.T) {
	c := newBash(t, BashOptions{OutputCap: 1000})
	c.be.MaxMemory = 4096
	c.be.SpillDir = t.TempDir()
	r := c.run(context.Background(), "seq 1 100000")
	checkCapped(t, r, c.call, seqOutput(100000))
	if ents, _ := os.ReadDir(c.be.SpillDir); len(ents) != 0 {
		t.Errorf("spill file left behind: %v", ents)
	}
}

// TOOL-4: output under the cap is shown whole even when the backend spilled it.
func TestBashSmallSpillShownWhole(t *testing.T) {
	c := newBash(t, BashOptions{OutputCap: 1000})
	c.be.MaxMemory = 64
	c.be.SpillDir = t.TempDir()
	r := c.run(context.Background(), "seq 1 100")
	if got, want := r.TextOf(), strings.TrimSuffix(seqOutput(100), "\n"); got != want || r.Metadata["output_path"] != nil {
		t.Fatalf("got %q (path %v)", got, r.Metadata["output_path"])
	}
}

func checkCapped(t *testing.T, r tool.Result, call tool.Call, whole string) {
	t.Helper()
	text := r.TextOf()
	path, _ := r.Metadata["output_path"].(string)
	if want := filepath.Join(call.SessionDir, "bash-call_1.log"); path != want {
		t.Fatalf("output_path %q, want %q", path, want)
	}
	data, err := os.ReadFile(path)
	if err != nil || string(data) != whole {
		t.Fatalf("saved output: %d bytes, %v; want %d bytes", len(data), err, len(whole))
	}
	if n := len([]rune(text)); n > 1000 || n < 700 {
		t.Errorf("model sees %d characters, want about 80%% of 1000 plus a line", n)
	}
	if !strings.HasPrefix(text, "1\n2\n3\n") || !strings.HasSuffix(text, whole[len(whole)-20:len(whole)-1]) {
		t.Errorf("head or tail missing:\n%s", text)
	}
	if !strings.Contains(text, "bytes cut; the whole output ("+strconv.Itoa(len(whole))+" bytes) is in "+path+": read it with read_file") {
		t.Errorf("no cut line naming the file:\n%s", text)
	}
	if r.IsError {
		t.Error("a long output is not an error")
	}
}

func seqOutput(n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "%d\n", i)
	}
	return b.String()
}

// TOOL-4: the dir input stays inside the workspace unless allowed.
func TestBashDir(t *testing.T) {
	outside := t.TempDir()
	for _, allow := range []bool{false, true} {
		c := newBash(t, BashOptions{AllowOutsideWorkspace: allow})
		sub := filepath.Join(c.call.WorkDir, "sub")
		if err := os.Mkdir(sub, 0o755); err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(c.call.WorkDir, "file"), nil, 0o644)
		os.Symlink(outside, filepath.Join(c.call.WorkDir, "link"))
		const outsideErr = "outside the workspace"
		tests := []struct {
			dir  string
			ok   bool
			want string // the directory's base name when ok, a piece of the error when not
		}{
			{"sub", true, "sub"},
			{sub, true, "sub"},
			{"missing", false, "does not exist"},
			{"file", false, "not a directory"},
			{outside, allow, pick(allow, filepath.Base(outside), outsideErr)},
			{"..", allow, pick(allow, filepath.Base(filepath.Dir(realDir(t, c.call.WorkDir))), outsideErr)},
			{"link", allow, pick(allow, filepath.Base(outside), outsideErr)},
		}
		for _, tt := range tests {
			r := c.run(context.Background(), map[string]any{"command": "basename \"$(pwd -P)\"", "dir": tt.dir})
			if r.IsError == tt.ok || !strings.Contains(r.TextOf(), tt.want) {
				t.Errorf("allow=%v dir %s: error=%v %q, want ok=%v and %q", allow, tt.dir, r.IsError, r.TextOf(), tt.ok, tt.want)
			}
		}
	}
}

func pick(cond bool, a, b string) string {
	if cond {
		return a
	}
	return b
}

func realDir(t *testing.T, p string) string {
	t.Helper()
	r, err := filepath.EvalSymlinks(p)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TOOL-5: a backend that cannot run (the sandbox without bwrap) gives the
// model an error result, not a Go error, and runs nothing.
func TestBashBackendError(t *testing.T) {
	ws := t.TempDir()
	b := NewBash(&exec.Sandbox{Workspace: ws, Bwrap: filepath.Join(ws, "no-bwrap")}, BashOptions{})
	r, err := b.Run(context.Background(), tool.Call{ID: "x", WorkDir: ws, Input: json.RawMessage(`{"command":"touch ran"}`)})
	if err != nil || !r.IsError || !strings.Contains(r.TextOf(), "sandbox required but bwrap is not available") {
		t.Fatalf("got %v %q, %v", r.IsError, r.TextOf(), err)
	}
	if _, err := os.Stat(filepath.Join(ws, "ran")); err == nil {
		t.Fatal("the command ran unsandboxed")
	}
}

// TOOL-4: a command whose output passes the limit (64 MiB by default;
// BashOptions.MaxOutput) is stopped; the model is told the limit, where the
// first part is saved, and how to keep more.
func TestBashOutputLimit_TOOL4(t *testing.T) {
	c := newBash(t, BashOptions{OutputCap: 1000, MaxOutput: 1 << 20})
	c.be.MaxMemory = 64 << 10
	c.be.SpillDir = t.TempDir()
	c.be.KillDelay = 200 * time.Millisecond
	r := c.run(context.Background(), "yes")
	text := r.TextOf()
	path, _ := r.Metadata["output_path"].(string)
	if fi, err := os.Stat(path); err != nil || fi.Size() != 1<<20 {
		t.Fatalf("saved output %s: %v, %v", path, fi, err)
	}
	for _, want := range []string{"the output passed the limit of 1 MiB, so the command was stopped; the first 1 MiB are in " + path,
		"command was stopped: its output passed the limit of 1 MiB; to keep more, send it to a file (cmd > out.log 2>&1)"} {
		if !strings.Contains(text, want) {
			t.Errorf("missing %q in:\n%s", want, text[max(0, len(text)-600):])
		}
	}
	if !r.IsError || r.Metadata["output_limited"] != true || !strings.HasPrefix(text, "y\ny\n") {
		t.Errorf("is_error %v, metadata %v", r.IsError, r.Metadata)
	}
}

// TOOL-5: what the sandbox moved aside after a command is told to the model.
func TestBashSandboxNotes_TOOL5(t *testing.T) {
	b := &bash{opts: BashOptions{OutputCap: 1000}}
	r := b.result(tool.Call{}, bashIn{}, time.Second, exec.Output{Combined: []byte("ok\n"),
		Notes: []string{"rein moved x/.git/hooks to hooks.rein-quarantine: it holds hook pre-commit"}})
	if want := "ok\n\nsandbox: rein moved x/.git/hooks"; !strings.HasPrefix(r.TextOf(), want) {
		t.Fatalf("text %q", r.TextOf())
	}
}

func TestFmtBytes(t *testing.T) {
	for n, want := range map[int64]string{512: "512 B", 1536: "1.5 KiB", 64 << 20: "64 MiB", 2684354560: "2.5 GiB"} {
		if got := FormatBytes(n); got != want {
			t.Errorf("FormatBytes(%d) = %q, want %q", n, got, want)
		}
	}
}

// LOOP-11: a check run (test, build, lint) that exits 0 is reported as a
// verified step under MetaVerified; other commands and failed checks are not.
func TestBashVerifiedStep_LOOP11(t *testing.T) {
	for cmd, want := range map[string]bool{
		"go test ./...": true, "cd sub && go vet ./pkg": true, "GOFLAGS=-race go test -run X .": true,
		"cargo clippy": true, "make -j4 check": true, "npm test": true, "npm run build": true, "npm run dev": false,
		"python -m pytest -q": true, "python -m http.server": false, "./node_modules/.bin/tsc --noEmit": true,
		"ls -la": false, "go mod tidy": false, "echo go test": false, "git status | grep test": false, "": false,
	} {
		if got := isCheck(cmd); got != want {
			t.Errorf("isCheck(%q) = %v, want %v", cmd, got, want)
		}
	}
	c := newBash(t, BashOptions{})
	script := filepath.Join(c.call.WorkDir, "pytest")
	if err := os.WriteFile(script, []byte("#!/bin/sh\nexit \"${1:-0}\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if r := c.run(context.Background(), "./pytest 0"); r.Metadata[MetaVerified] != "./pytest 0" {
		t.Errorf("passed check: metadata %v", r.Metadata)
	}
	if r := c.run(context.Background(), "./pytest 1"); r.Metadata[MetaVerified] != nil {
		t.Errorf("failed check recorded as verified: %v", r.Metadata)
	}
	if r := c.run(context.Background(), "true"); r.Metadata[MetaVerified] != nil {
		t.Errorf("plain command recorded as verified: %v", r.Metadata)
	}
}

// TOOL-7: unsandboxed: true runs on the Unsandboxed backend (the policy
// asked the user first); without one the command is refused, not run.
func TestBashUnsandboxed_TOOL7(t *testing.T) {
	c := newBash(t, BashOptions{})
	r := c.run(context.Background(), map[string]any{"command": "echo hi", "unsandboxed": true})
	if !r.IsError || !strings.Contains(r.TextOf(), "outside the sandbox") || c.be.runs.Load() != 0 {
		t.Fatalf("without a backend outside: %q, runs %d", r.TextOf(), c.be.runs.Load())
	}
	outside := &recorder{Local: exec.Local{PipeGrace: 100 * time.Millisecond}}
	c = newBash(t, BashOptions{Unsandboxed: outside})
	if r := c.run(context.Background(), map[string]any{"command": "echo hi", "unsandboxed": true}); r.IsError || outside.runs.Load() != 1 || c.be.runs.Load() != 0 {
		t.Fatalf("outside: %q, runs %d/%d", r.TextOf(), outside.runs.Load(), c.be.runs.Load())
	}
	if r := c.run(context.Background(), "echo hi"); r.IsError || outside.runs.Load() != 1 || c.be.runs.Load() != 1 {
		t.Fatalf("inside: %q, runs %d/%d", r.TextOf(), outside.runs.Load(), c.be.runs.Load())
	}
}
