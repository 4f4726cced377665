package mcptool

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/reinhq/rein/llm"
	"github.com/reinhq/rein/tool"
	"go.uber.org/goleak"
)

// These tests run the npm reference servers that scripts/test installs into
// .cache/npm; they skip, saying so, when those are missing.

func TestEverythingStdio(t *testing.T) {
	t.Setenv("REIN_TEST_SECRET", "do-not-leak")
	m := Start(t.Context(), []Server{everything(t)}, Options{})
	defer m.Close()
	if st := statusOf(m, "everything"); st.State != StateReady || st.Transport != "stdio" || st.Tools == 0 {
		t.Fatalf("status = %+v", st)
	}
	tools := m.Tools()
	if !slices.IsSortedFunc(tools, func(a, b tool.Tool) int { return strings.Compare(a.Spec().Name, b.Spec().Name) }) {
		t.Errorf("tools not in a stable order: %v", names(tools))
	}
	if _, err := tool.NewSet(tool.OriginMCP, append(tools, m.ResourceTools()...)...); err != nil {
		t.Fatalf("the tools do not make a set: %v", err)
	}

	echo := find(t, tools, "mcp__everything__echo")
	if res := run(t, echo, `{"message":"hello"}`); res.IsError || res.TextOf() != "Echo: hello" {
		t.Errorf("echo: %+v", res)
	}
	if meta := tool.MetaOf(echo); meta.ReadOnly || meta.ConcurrencySafe || meta.Category != tool.CategoryOther {
		t.Errorf("echo meta = %+v, want the conservative default", meta)
	}
	sum := find(t, tools, "mcp__everything__get-sum")
	if !sum.Annotations().ReadOnlyHint {
		t.Errorf("get-sum annotations = %+v, want the server's readOnlyHint", sum.Annotations())
	}
	if res := run(t, sum, `{"a":2,"b":3}`); res.IsError || !strings.Contains(res.TextOf(), "is 5") {
		t.Errorf("get-sum: %+v", res)
	}
	// The server rejects input rein did not validate (Tool.Run is called
	// directly here): a tool error, not a Go error.
	if res := run(t, sum, `{"a":"two"}`); !res.IsError || !strings.Contains(res.TextOf(), "expected number") {
		t.Errorf("get-sum with a string: %+v", res)
	}

	res := run(t, find(t, tools, "mcp__everything__get-tiny-image"), `{}`)
	var img *llm.Image
	for _, b := range res.Content {
		if i, ok := b.(*llm.Image); ok {
			img = i
		}
	}
	if res.IsError || img == nil || img.MediaType != "image/png" || !strings.HasPrefix(string(img.Data), "\x89PNG") {
		t.Errorf("get-tiny-image: %+v", res)
	}
	res = run(t, find(t, tools, "mcp__everything__get-structured-content"), `{"location":"Chicago"}`)
	if res.IsError || !strings.Contains(res.TextOf(), "temperature") {
		t.Errorf("get-structured-content: %+v", res)
	}

	// The server's environment is PATH and HOME, not rein's.
	res = run(t, find(t, tools, "mcp__everything__get-env"), `{}`)
	if res.IsError || strings.Contains(res.TextOf(), "do-not-leak") || !strings.Contains(res.TextOf(), `"PATH"`) {
		t.Errorf("get-env leaks rein's environment or lacks PATH: %.300s", res.TextOf())
	}
}

func TestEverythingResourcesAndPrompts(t *testing.T) {
	m := Start(t.Context(), []Server{everything(t)}, Options{})
	defer m.Close()
	rs, err := m.Resources(t.Context(), "everything")
	if err != nil || len(rs) == 0 {
		t.Fatalf("resources: %v, %v", rs, err)
	}
	var text, blob string
	for _, r := range rs {
		switch {
		case text == "" && strings.HasPrefix(r.MIMEType, "text/"):
			text = r.URI
		case blob == "" && r.MIMEType != "" && !strings.HasPrefix(r.MIMEType, "text/"):
			blob = r.URI
		}
	}
	if s, err := m.ReadResource(t.Context(), "everything", text); err != nil || s == "" {
		t.Errorf("read %s: %q, %v", text, s, err)
	}
	if blob != "" {
		if s, err := m.ReadResource(t.Context(), "everything", blob); err != nil || !strings.Contains(s, "[binary content of") {
			t.Errorf("read %s: %q, %v", blob, s, err)
		}
	}
	ps, err := m.Prompts(t.Context(), "")
	if err != nil || !slices.ContainsFunc(ps, func(p Prompt) bool { return p.Name == "args-prompt" }) {
		t.Fatalf("prompts: %+v, %v", ps, err)
	}
	p, err := m.GetPrompt(t.Context(), "everything", "args-prompt", map[string]string{"city": "Lyon"})
	if err != nil || !strings.Contains(p, "Lyon") {
		t.Errorf("args-prompt: %q, %v", p, err)
	}
	rt := m.ResourceTools()
	if len(rt) != 2 {
		t.Fatalf("resource tools = %v", names(rt))
	}
	if out := run(t, rt[0], `{"server":"everything"}`).TextOf(); !strings.Contains(out, "everything: "+text) {
		t.Errorf("mcp_list_resources: %.300s", out)
	}
}

func TestEverythingListChanged(t *testing.T) {
	// server-everything registers simulate-research-query once the session is
	// initialised, and announces it with notifications/tools/list_changed.
	changed := make(chan string, 10)
	m := Start(t.Context(), []Server{everything(t)}, Options{OnToolsChanged: func(s string) { changed <- s }})
	defer m.Close()
	select {
	case s := <-changed:
		if s != "everything" {
			t.Errorf("OnToolsChanged(%q)", s)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("no list_changed in 30s")
	}
	find(t, m.Tools(), "mcp__everything__simulate-research-query")
}

func TestFilesystem(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(path, []byte("rein was here\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	fs := Server{Name: "fs", Command: "node", Args: []string{npmServer(t, "server-filesystem"), dir}}
	m := Start(t.Context(), []Server{fs}, Options{})
	defer m.Close()
	if st := statusOf(m, "fs"); st.State != StateReady {
		t.Fatalf("status = %+v", st)
	}
	res := run(t, find(t, m.Tools(), "mcp__fs__read_text_file"), fmt.Sprintf(`{"path":%q}`, path))
	if res.IsError || !strings.Contains(res.TextOf(), "rein was here") {
		t.Errorf("read_text_file: %+v", res)
	}
	res = run(t, find(t, m.Tools(), "mcp__fs__read_text_file"), `{"path":"/etc/passwd"}`)
	if !res.IsError {
		t.Errorf("reading outside the allowed directory: %+v", res)
	}
}

// freePort returns a TCP port free on 127.0.0.1 a moment ago.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func TestEverythingStreamableHTTP(t *testing.T) {
	entry := npmServer(t, "server-everything")
	port := freePort(t)
	cmd := exec.Command("node", entry, "streamableHttp")
	cmd.Env = append(envOf(nil), "PORT="+strconv.Itoa(port))
	setProcessGroup(cmd)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		killGroup(cmd)
		_ = cmd.Wait()
	})
	addr := "127.0.0.1:" + strconv.Itoa(port)
	waitFor(t, "the HTTP server to listen", func() bool {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			c.Close()
		}
		return err == nil
	})
	m := Start(t.Context(), []Server{{Name: "web", URL: "http://" + addr + "/mcp"}}, Options{})
	defer m.Close()
	if st := statusOf(m, "web"); st.State != StateReady || st.Transport != "http" {
		t.Fatalf("status = %+v", st)
	}
	if res := run(t, find(t, m.Tools(), "mcp__web__echo"), `{"message":"over http"}`); res.TextOf() != "Echo: over http" {
		t.Errorf("echo: %+v", res)
	}
	if res := run(t, find(t, m.Tools(), "mcp__web__get-sum"), `{"a":20,"b":22}`); !strings.Contains(res.TextOf(), "42") {
		t.Errorf("get-sum: %+v", res)
	}
}

func TestKilledMidCall(t *testing.T) {
	m := Start(t.Context(), []Server{everything(t)}, Options{MinBackoff: 10 * time.Millisecond})
	defer m.Close()
	old := pid(m, "everything")
	long := find(t, m.Tools(), "mcp__everything__trigger-long-running-operation")
	done := make(chan tool.Result, 1)
	go func() {
		res, _ := long.Run(context.Background(), tool.Call{Input: []byte(`{"duration":120,"steps":2}`)})
		done <- res
	}()
	c := m.byName["everything"]
	waitFor(t, "the call to be under way", func() bool { return c.inflight.Load() == 1 })
	time.Sleep(200 * time.Millisecond) // let the request reach the server
	if err := syscall.Kill(-old, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	res := <-done
	if !res.IsError || !strings.Contains(res.TextOf(), "connection") {
		t.Errorf("call whose server died: %+v", res)
	}
	if st := statusOf(m, "everything"); st.State == StateReady && pid(m, "everything") == old {
		t.Errorf("status = %+v after the connection was lost", st)
	}
	waitFor(t, "the reconnection", func() bool {
		return statusOf(m, "everything").State == StateReady && pid(m, "everything") != old
	})
	if res := run(t, find(t, m.Tools(), "mcp__everything__echo"), `{"message":"still here"}`); res.TextOf() != "Echo: still here" {
		t.Errorf("echo after the reconnection: %+v", res)
	}
}

func TestFailedStartDoesNotFailOthers(t *testing.T) {
	servers := []Server{
		everything(t),
		{Name: "noisy", Command: "sh", Args: []string{"-c", "echo 'fatal: no config file' >&2; exit 3"}},
		{Name: "missing", Command: "/nonexistent/mcp-server"},
	}
	m := Start(t.Context(), servers, Options{})
	defer m.Close()
	if st := statusOf(m, "everything"); st.State != StateReady {
		t.Errorf("everything: %+v", st)
	}
	if st := statusOf(m, "noisy"); st.State != StateFailed || !strings.Contains(st.Err, "fatal: no config file") ||
		!strings.Contains(st.Err, "exit status 3") {
		t.Errorf("noisy: %+v, want failed with its stderr and exit status", st)
	}
	if st := statusOf(m, "missing"); st.State != StateFailed || !strings.Contains(st.Err, "no such file") {
		t.Errorf("missing: %+v", st)
	}
	if res := run(t, find(t, m.Tools(), "mcp__everything__echo"), `{"message":"ok"}`); res.TextOf() != "Echo: ok" {
		t.Errorf("echo: %+v", res)
	}
}

func TestCloseLeavesNothing(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	entry := npmServer(t, "server-everything")
	// The shell leaves a child in the server's process group: Close must
	// kill it too.
	withChild := Server{Name: "child", Command: "sh", Args: []string{"-c",
		"sleep 1000 </dev/null >/dev/null 2>&1 & exec node \"$0\" stdio", entry}}
	m := Start(context.Background(), []Server{everything(t), withChild}, Options{})
	var pids []int
	for _, s := range []string{"everything", "child"} {
		if st := statusOf(m, s); st.State != StateReady {
			t.Fatalf("%s: %+v", s, st)
		}
		pids = append(pids, pid(m, s))
	}
	if err := m.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	for _, p := range pids {
		// The server itself was waited for by Close.
		if err := syscall.Kill(p, 0); !errors.Is(err, syscall.ESRCH) {
			t.Errorf("process %d still exists after Close (kill: %v)", p, err)
		}
		// Its children got SIGKILL, which takes effect asynchronously, and
		// are reaped by init, not by us.
		waitFor(t, fmt.Sprintf("process group %d to die", p), func() bool { return len(alive(t, p)) == 0 })
	}
	if err := m.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

func BenchmarkCallStdio(b *testing.B) {
	m := Start(context.Background(), []Server{everything(b)}, Options{})
	defer m.Close()
	echo := find(b, m.Tools(), "mcp__everything__echo")
	call := tool.Call{Name: "mcp__everything__echo", Input: []byte(`{"message":"bench"}`)}
	for b.Loop() {
		res, err := echo.Run(context.Background(), call)
		if err != nil || res.IsError {
			b.Fatalf("echo: %+v, %v", res, err)
		}
	}
}

// alive returns the processes of a group that are not dead: neither gone
// nor zombies waiting for init to reap them.
func alive(t *testing.T, pgid int) []int {
	t.Helper()
	stats, err := filepath.Glob("/proc/[0-9]*/stat")
	if err != nil || len(stats) == 0 {
		if err := syscall.Kill(-pgid, 0); errors.Is(err, syscall.ESRCH) {
			return nil
		}
		return []int{pgid} // no /proc: the group counts as alive while it exists
	}
	var out []int
	for _, f := range stats {
		b, err := os.ReadFile(f)
		if err != nil {
			continue // gone meanwhile
		}
		// pid (comm) state ppid pgrp …; comm may hold spaces and parentheses.
		s := string(b)
		fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(fields) < 3 || fields[0] == "Z" || fields[0] == "X" || fields[2] != strconv.Itoa(pgid) {
			continue
		}
		p, _ := strconv.Atoi(strings.Fields(s)[0])
		out = append(out, p)
	}
	return out
}
