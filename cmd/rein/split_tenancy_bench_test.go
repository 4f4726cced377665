package main

// The cost of a tenant's run in the production split (SPEC API-9 over
// API-5): a JWT caller's run posted to `rein serve --mode api`, run by a
// `rein worker` under runner.Tenancy, until its done event reaches the
// caller — with no tool, with one command in the confined sandbox, and
// with one fenced file read.

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/reinhq/rein/agent"
	sandbox "github.com/reinhq/rein/exec"
	"github.com/reinhq/rein/llm/llmtest/mockserver"
	"github.com/reinhq/rein/session/postgres/pgtest"
)

// BenchmarkSplitTenantRun reports the wall time of one run of bob's
// (ns/op), from POST /sessions/{id}/messages to its done event on the
// session's stream, each in a fresh session: "no tool" is the split's own
// cost; the others add one model turn and one tool call, "confined bash"
// through bubblewrap with the read allow-list, "fenced read_file" through
// the workspace fence.
func BenchmarkSplitTenantRun(b *testing.B) {
	redisURL := os.Getenv("REIN_TEST_REDIS_URL")
	if redisURL == "" || os.Getenv(pgtest.EnvURL) == "" {
		b.Skip("needs PostgreSQL and Redis: set " + pgtest.EnvURL + " and REIN_TEST_REDIS_URL")
	}
	if err := (&sandbox.Sandbox{}).Available(); err != nil {
		b.Skipf("environment: bubblewrap cannot create namespaces here: %v", err)
	}
	bin := buildRein(b, b.TempDir())
	pgURL, _ := pgtest.Schema(b)
	v := newTenantVendor(b)
	base := outsideTmp(b)
	bobDir, home, data, keyDir := filepath.Join(base, "root-b", "bob-app"), filepath.Join(base, "home"), filepath.Join(base, "data"), b.TempDir()
	secret := "a-test-only-hs256-secret-of-forty-bytes!"
	writeFile(b, filepath.Join(bobDir, "main.go"), "package main\n")
	writeFile(b, filepath.Join(keyDir, "jwt.key"), secret)
	if err := os.MkdirAll(home, 0o755); err != nil {
		b.Fatal(err)
	}
	prefix := fmt.Sprintf("rein-tenants-bench-%d:", time.Now().UnixNano())
	b.Cleanup(func() { dropKeys(b, redisURL, prefix) })
	common := []string{"--database-url", pgURL, "--redis-url", redisURL, "--redis-prefix", prefix}
	env := []string{"HOME=" + home, "PATH=" + os.Getenv("PATH"), "ANTHROPIC_API_KEY=" + fakeKey, "ANTHROPIC_BASE_URL=" + v.URL}
	apiLine := benchProcess(b, bin, env, "rein: serving on http://", append([]string{"serve", "--mode", "api", "--addr", "127.0.0.1:0",
		"--data-dir", filepath.Join(base, "api-data"), "--root", filepath.Dir(bobDir), "--jwt-secret-file", filepath.Join(keyDir, "jwt.key"),
		"--allow-bypass", "--rate-limit", "100000", "--max-streams-per-caller", "100000"}, common...)...) // a stream closed is released at the next heartbeat
	benchProcess(b, bin, env, "rein: working (", append([]string{"worker", "--data-dir", data}, common...)...)
	addr := strings.TrimPrefix(apiLine[strings.Index(apiLine, "http://"):], "http://")
	bob := newJWTCaller(b, "bob", []byte(secret), "http://"+strings.Fields(addr)[0])

	v.script("msg-bench-bash", mockserver.ToolCall{ID: "call_b", Name: "bash", Input: `{"command":"cat main.go"}`})
	v.script("msg-bench-read", mockserver.ToolCall{ID: "call_r", Name: "read_file", Input: `{"path":"main.go"}`})
	for _, c := range []struct{ name, label string }{
		{"no tool", "msg-bench-none"}, {"confined bash", "msg-bench-bash"}, {"fenced read_file", "msg-bench-read"},
	} {
		b.Run(c.name, func(b *testing.B) {
			bob := bob.as(b)
			for b.Loop() {
				b.StopTimer()
				sid := bob.session(bobDir)
				done, stop := benchDone(bob, sid)
				b.StartTimer()
				run := bob.post(sid, c.label, "bypass")
				select {
				case id := <-done:
					if id != run {
						b.Fatalf("done of run %s, want %s", id, run)
					}
				case <-time.After(guard):
					b.Fatalf("run %s not done within %s", run, guard)
				}
				b.StopTimer()
				stop()
				b.StartTimer()
			}
		})
	}
}

// benchDone follows the session's events and sends the id of the first
// run whose done event arrives; stop ends the stream.
func benchDone(c *jwtCaller, sid string) (done <-chan string, stop func()) {
	resp, cancel := c.openEvents(sid)
	ch := make(chan string, 1)
	ended := make(chan struct{})
	stop = func() {
		cancel()
		resp.Body.Close()
		<-ended
	}
	go func() {
		defer close(ended)
		_ = readSSE(bufio.NewReader(resp.Body), func(ev sseEvent) bool {
			if ev.Ev.Type == agent.EventDone {
				ch <- ev.Ev.RunID
				return false
			}
			return true
		})
	}()
	return ch, stop
}

// benchProcess starts the rein binary with args, waits (bounded by guard)
// for the stderr line holding ready and returns it; the process is killed
// when the benchmark ends.
func benchProcess(b *testing.B, bin string, env []string, ready string, args ...string) string {
	b.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = env
	stderr, err := cmd.StderrPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatalf("rein %s: %v", args[0], err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), guard)
	defer cancel()
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 64<<10), 4<<20)
		for sc.Scan() {
			if strings.Contains(sc.Text(), ready) {
				found <- sc.Text()
				break
			}
		}
		for sc.Scan() { // drain, so the process never blocks on its log
		}
	}()
	b.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	select {
	case line := <-found:
		return line
	case <-ctx.Done():
		b.Fatalf("rein %s did not log %q within %s", args[0], ready, guard)
		return ""
	}
}
