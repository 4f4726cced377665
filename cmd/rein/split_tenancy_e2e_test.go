package main

// The tenants of the production split (SPEC API-9 over API-5): the attacks
// runner/tenancy_test.go makes against the service, made again through the
// built binary — `rein serve --mode api` with JWT callers, `rein worker`
// processes, PostgreSQL and Redis — where the caller travels from the API
// process to a worker through the store, and a caller's "always" rule
// from one worker to the next.

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/reinhq/rein/agent"
	"github.com/reinhq/rein/api"
	sandbox "github.com/reinhq/rein/exec"
	"github.com/reinhq/rein/llm/llmtest/mockserver"
	"github.com/reinhq/rein/session/postgres/pgtest"
)

// The secrets the attacks look for: alice's (in her workspace, its history
// mirror and the worker's data directory) and the operator's (in HOME).
const (
	splitAliceSecret    = "ALICE-SECRET-KESTREL-71"
	splitOperatorSecret = "OPERATOR-SECRET-HERON-38"
)

// splitTenants is the deployment of the test: one API process with two
// roots and JWT callers, the workers started so far, and the files the
// attacks aim at.
type splitTenants struct {
	in                  *instance
	v                   *tenantVendor
	apiArgs, workerArgs []string
	workerData          string
	aliceRoot, aliceDir string
	bobRoot, bobDir     string
	alice, bob          *jwtCaller
	api                 *served
	// keyFile holds the tokens' secret; pgURL and redisURL are the
	// shared services', which no command may reach either.
	keyFile, pgURL, redisURL string
}

// newSplitTenants writes the callers' workspaces, the operator's secret
// and the worker's data directory, and starts the API process.
func newSplitTenants(t *testing.T, redisURL string) *splitTenants {
	t.Helper()
	pgURL, _ := pgtest.Schema(t)
	base := outsideTmp(t)
	dir := func(name string) string {
		d := filepath.Join(base, name)
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
		return d
	}
	e := &splitTenants{v: newTenantVendor(t), workerData: dir("worker-data"), aliceRoot: dir("root-a"), bobRoot: dir("root-b")}
	e.aliceDir = filepath.Join(e.aliceRoot, "alice-app")
	e.bobDir = filepath.Join(e.bobRoot, "bob-app")
	home, keyDir := dir("operator-home"), dir("etc-rein")
	secret := []byte("a-test-only-hs256-secret-of-forty-bytes!")
	for p, content := range map[string]string{
		filepath.Join(home, "secret"):                            splitOperatorSecret,
		filepath.Join(e.aliceDir, "secret.txt"):                  splitAliceSecret,
		filepath.Join(e.aliceDir, ".rein", "data", "history.db"): splitAliceSecret,
		filepath.Join(e.workerData, "alice-leak.txt"):            splitAliceSecret,
		filepath.Join(e.bobDir, "main.go"):                       "package main\n",
		filepath.Join(keyDir, "jwt-secret"):                      string(secret),
	} {
		writeFile(t, p, content)
	}
	if err := os.Symlink(e.aliceDir, filepath.Join(e.bobDir, "peer")); err != nil {
		t.Fatal(err)
	}
	e.keyFile, e.pgURL, e.redisURL = filepath.Join(keyDir, "jwt-secret"), pgURL, redisURL
	e.in = &instance{t: t, bin: reinBinary(t), home: home, data: dir("api-data"), root: e.aliceRoot, project: e.bobDir, vendorURL: e.v.URL}
	prefix := fmt.Sprintf("rein-tenants-%d:", time.Now().UnixNano())
	t.Cleanup(func() { dropKeys(t, redisURL, prefix) }) // after the processes end
	common := []string{"--database-url", pgURL, "--redis-url", redisURL, "--redis-prefix", prefix, "--lease-ttl", "2s"}
	e.apiArgs = append([]string{"serve", "--mode", "api", "--addr", "127.0.0.1:0", "--data-dir", e.in.data,
		"--root", e.aliceRoot, "--root", e.bobRoot, "--jwt-secret-file", e.keyFile,
		"--allow-bypass", "--rate-limit", "1000"}, common...)
	e.workerArgs = append([]string{"worker", "--data-dir", e.workerData, "--max-concurrent", "2", "--log-level", "debug"}, common...)
	e.api = e.in.launch(e.apiArgs, "rein: serving on http://")
	e.alice = newJWTCaller(t, "alice", secret, e.api.base)
	e.bob = newJWTCaller(t, "bob", secret, e.api.base)
	return e
}

// outsideTmp is a fresh directory outside /tmp (under the user's cache
// directory), removed after the test: a confined sandbox mounts an empty
// /tmp, so files under /tmp are out of its sight whatever the allow-list
// says, and the attacks would not test it. Where none can be made, it is
// a t.TempDir, said in the log.
func outsideTmp(t testing.TB) string {
	t.Helper()
	if cache, err := os.UserCacheDir(); err == nil {
		if err := os.MkdirAll(cache, 0o755); err == nil {
			if d, err := os.MkdirTemp(cache, "rein-tenancy-e2e-"); err == nil {
				t.Cleanup(func() { os.RemoveAll(d) })
				return d
			}
		}
	}
	t.Log("no directory outside /tmp could be made: the files attacked lie under /tmp, which the sandbox empties anyway")
	return t.TempDir()
}

// devTCP is bash's /dev/tcp/HOST/PORT name of a service's URL.
func devTCP(t *testing.T, raw, port string) string {
	host, p, err := net.SplitHostPort(hostPort(t, raw, port))
	if err != nil {
		t.Fatal(err)
	}
	return "/dev/tcp/" + host + "/" + p
}

// writeFile writes content to p, making its directories.
func writeFile(t testing.TB, p, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// startWorker starts a worker on the shared data directory and checks
// that it says its commands run confined.
func (e *splitTenants) startWorker(t *testing.T) *served {
	t.Helper()
	w := e.in.launch(e.workerArgs, "rein: working (")
	w.waitLog("commands run confined")
	return w
}

// stopWorker ends a worker with SIGTERM, as a process manager would.
func stopWorker(t *testing.T, w *served) {
	t.Helper()
	w.signal(syscall.SIGTERM)
	if state := w.wait(); !state.Success() {
		t.Fatalf("the worker ended %v after SIGTERM:\n%s", state, w.log())
	}
}

// tenantAttack is one tool call bob makes that must not reach alice's or
// the operator's files: its result is free of both secrets, of alice's
// prompt and of leaks (names a listing would give away), and is an error
// unless lists is set (a listing of what the sandbox makes of a hidden
// directory: the mount points of the run's own cache).
type tenantAttack struct {
	name, tool string
	input      map[string]string
	leaks      []string
	lists      bool
}

// aliceWarmup is alice's first prompt: her conversation, which bob must
// not read either.
const aliceWarmup = "msg-alice-warmup"

// API-9 through API-5: with the production split — `rein serve --mode
// api` with two JWT callers and two roots, `rein worker` processes,
// PostgreSQL and Redis — bob, approving everything for himself (bypass,
// and "once" to every question), reads nothing of alice's workspace, of
// her conversation, of the worker's data directory or of the operator's
// home, while his harmless command runs; bob's "always" answer is his
// rule, kept in PostgreSQL: a fresh worker runs his command again
// unasked, alice's same command in the same directory is still asked, and
// no settings.local.yaml or trust.json is written; bob can neither read
// nor answer alice's run through the API.
func TestSplitTenancy_API9(t *testing.T) {
	redisURL := os.Getenv("REIN_TEST_REDIS_URL")
	if redisURL == "" || os.Getenv(pgtest.EnvURL) == "" {
		t.Skip("the split tenancy test needs PostgreSQL and Redis: set " + pgtest.EnvURL +
			" (e.g. postgres://postgres@127.0.0.1:5432/test?sslmode=disable) and REIN_TEST_REDIS_URL (e.g. redis://127.0.0.1:6379/0)")
	}
	if err := (&sandbox.Sandbox{}).Available(); err != nil {
		t.Skipf("environment: bubblewrap cannot create namespaces here, so a worker refuses every command and the confined split is untested: %v", err)
	}
	e := newSplitTenants(t, redisURL)
	w1 := e.startWorker(t)
	aliceSid := e.warmup(t)
	t.Run("bob's attacks through a worker", func(t *testing.T) { e.attacks(t, aliceSid) })
	if t.Failed() {
		return
	}
	t.Run("bob's always stays bob's across workers", func(t *testing.T) { e.always(t, w1) })
}

// warmup has alice run a command in her workspace, so that the worker
// holds her session's directory and her conversation exists; it returns
// her session.
func (e *splitTenants) warmup(t *testing.T) string {
	t.Helper()
	e.v.script(aliceWarmup, mockserver.ToolCall{ID: "call_warm", Name: "bash", Input: `{"command":"echo warm > warm.txt"}`})
	sid := e.alice.session(e.aliceDir)
	if r := e.alice.finalRun(e.alice.post(sid, aliceWarmup, "bypass")); r.Status != "completed" {
		t.Fatalf("alice's run ended %s (%s)", r.Status, r.Error)
	}
	if tr := e.v.resultsOf(aliceWarmup)["call_warm"]; tr.IsError {
		t.Fatalf("alice's command failed: %q", toolResultText(tr))
	}
	return sid
}

// attackTable is bob's tool calls, each an attempt that must fail.
func (e *splitTenants) attackTable(t *testing.T, aliceSid string) []tenantAttack {
	home := e.in.home
	aliceFile := filepath.Join(e.aliceDir, "secret.txt")
	up, _ := filepath.Rel(e.bobDir, aliceFile)
	var homeNames []string // what ls /home would give away
	if ents, err := os.ReadDir("/home"); err == nil {
		for _, d := range ents {
			homeNames = append(homeNames, d.Name())
		}
	}
	mirror := filepath.Join(e.aliceDir, ".rein", "data", "history.db")
	listed := []string{"alice-app", "secret.txt", "history.db"}
	cmd := func(c string) map[string]string { return map[string]string{"command": c} }
	path := func(p string) map[string]string { return map[string]string{"path": p} }
	return []tenantAttack{
		{name: "the worker's data directory (cat)", tool: "bash", input: cmd("cat " + filepath.Join(e.workerData, "alice-leak.txt"))},
		{name: "the worker's data directory (read_file)", tool: "read_file", input: path(filepath.Join(e.workerData, "alice-leak.txt"))},
		{name: "the worker's data directory listed (ls -R)", tool: "bash", input: cmd("ls -aR " + e.workerData),
			leaks: []string{"alice-leak", aliceSid}, lists: true},
		{name: "alice's session files on the worker (cat)", tool: "bash", input: cmd("cat " + filepath.Join(e.workerData, "sessions", aliceSid, "*"))},
		{name: "alice's file by absolute path (read_file)", tool: "read_file", input: path(aliceFile)},
		{name: "alice's file through .. (read_file)", tool: "read_file", input: path(up)},
		{name: "alice's file by absolute path (cat)", tool: "bash", input: cmd("cat " + aliceFile)},
		{name: "bash run in alice's directory", tool: "bash", input: map[string]string{"command": "cat secret.txt", "dir": e.aliceDir}},
		{name: "the operator's home (cat ~/secret)", tool: "bash", input: cmd("cat ~/secret")},
		{name: "the operator's home by absolute path (cat)", tool: "bash", input: cmd("cat " + filepath.Join(home, "secret"))},
		{name: "the operator's home (read_file)", tool: "read_file", input: path(filepath.Join(home, "secret"))},
		{name: "other users' homes (ls /home)", tool: "bash", input: cmd("ls /home"), leaks: homeNames},
		{name: "alice's history mirror (cat)", tool: "bash", input: cmd("cat " + mirror)},
		{name: "alice's history mirror (read_file)", tool: "read_file", input: path(mirror)},
		{name: "a glob over alice's root", tool: "glob", input: map[string]string{"pattern": "**/*", "path": e.aliceRoot}, leaks: listed},
		{name: "a glob naming alice's root in its pattern", tool: "glob", input: map[string]string{"pattern": e.aliceRoot + "/**/*"}, leaks: listed},
		{name: "a grep over alice's root", tool: "grep", input: map[string]string{"pattern": "KESTREL", "path": e.aliceRoot}, leaks: listed},
		{name: "list_dir of alice's root", tool: "list_dir", input: path(e.aliceRoot), leaks: listed},
		{name: "a shell grep over the parent of the roots, the data and HOME (approved once)", tool: "bash",
			input: cmd("grep -r KESTREL " + filepath.Dir(e.aliceRoot)), leaks: listed},
		{name: "a shell grep of /tmp", tool: "bash", input: cmd("grep -r KESTREL /tmp")},
		{name: "a shell find over alice's root", tool: "bash", input: cmd("find " + e.aliceRoot), leaks: listed},
		{name: "a link in bob's workspace to alice's (cat)", tool: "bash", input: cmd("cat peer/secret.txt")},
		{name: "a link in bob's workspace to alice's (read_file)", tool: "read_file", input: path("peer/secret.txt")},
		{name: "the tokens' secret (cat)", tool: "bash", input: cmd("cat " + e.keyFile), leaks: []string{"hs256-secret"}},
		{name: "the tokens' secret (read_file)", tool: "read_file", input: path(e.keyFile), leaks: []string{"hs256-secret"}},
		{name: "the worker's command line and environment (store URLs, provider key)", tool: "bash",
			input: cmd(`cat /proc/*/cmdline /proc/*/environ | tr '\0' '\n'; env`), lists: true,
			leaks: []string{e.pgURL, e.redisURL, "--database-url", fakeKey}},
		{name: "PostgreSQL from a command", tool: "bash", input: cmd("exec 3<>" + devTCP(t, e.pgURL, "5432") + " && echo CONNECTED"), leaks: []string{"CONNECTED"}},
		{name: "Redis from a command", tool: "bash", input: cmd("exec 3<>" + devTCP(t, e.redisURL, "6379") + " && echo CONNECTED"), leaks: []string{"CONNECTED"}},
	}
}

// attacks runs bob's attack table in one bypass run in his own workspace,
// with a harmless command beside it that must run; bob answers "once" to
// every question the run still asks.
func (e *splitTenants) attacks(t *testing.T, aliceSid string) {
	bob := e.bob.as(t)
	table := e.attackTable(t, aliceSid)
	const control = "call_control"
	var calls []mockserver.ToolCall
	for i, a := range table {
		in, err := json.Marshal(a.input)
		if err != nil {
			t.Fatal(err)
		}
		calls = append(calls, mockserver.ToolCall{ID: fmt.Sprintf("call_a%02d", i), Name: a.tool, Input: string(in)})
	}
	calls = append(calls, mockserver.ToolCall{ID: control, Name: "bash", Input: `{"command":"echo ok-$((40+2)) && ls /usr/bin >/dev/null"}`})
	e.v.script("msg-tenant-attack", calls...)

	sid := bob.session(e.bobDir)
	st := bob.events(t, sid)
	runID := bob.post(sid, "msg-tenant-attack", "bypass")
	asked := drive(t, bob, st, runID, "once")
	st.stop()
	if run := bob.finalRun(runID); run.Status != "completed" {
		t.Fatalf("bob's run ended %s (%s), want completed", run.Status, run.Error)
	}
	t.Logf("bob was asked %d times and answered once to each: %v", len(asked), asked)
	got := e.v.resultsOf("msg-tenant-attack")
	if c, ok := got[control]; !ok || c.IsError || !strings.Contains(toolResultText(c), "ok-42") {
		t.Fatalf("the harmless command did not run in the confined worker (%v): %q — every attack below would fail for the wrong reason",
			ok, toolResultText(c))
	}
	for i, a := range table {
		t.Run(a.name, func(t *testing.T) {
			tr, ok := got[fmt.Sprintf("call_a%02d", i)]
			if !ok {
				t.Fatalf("no result of the %s call reached the model", a.tool)
			}
			text := toolResultText(tr)
			t.Logf("%s %v: error=%v %.240q", a.tool, a.input, tr.IsError, text)
			for _, s := range append([]string{splitAliceSecret, splitOperatorSecret, aliceWarmup}, a.leaks...) {
				if strings.Contains(text, s) {
					t.Errorf("the result gives away %q: %q", s, text)
				}
			}
			if !tr.IsError && !a.lists {
				t.Errorf("the %s call succeeded (%q); want an error or a refusal", a.tool, text)
			}
		})
	}
}

// drive reads a run's events until its done event, answering each of its
// permission questions with answer, and returns the calls asked about.
// It is bounded by guard (through until) and by 100 questions.
func drive(t *testing.T, c *jwtCaller, st *stream, run, answer string) []string {
	t.Helper()
	var asked []string
	for {
		evs := st.until("run "+run+"'s next question or its end", func(ev sseEvent) bool {
			return ev.Ev.RunID == run && (ev.Type == string(agent.EventDone) || ev.Type == string(agent.EventPermissionRequest))
		})
		last := evs[len(evs)-1]
		if last.Type == string(agent.EventDone) {
			return asked
		}
		if len(asked) == 100 {
			t.Fatalf("run %s asked 100 questions: %v", run, asked)
		}
		p := last.Ev.Permission
		asked = append(asked, p.CallID)
		c.must(http.StatusNoContent, http.MethodPost, "/runs/"+run+"/permissions/"+p.CallID, api.PermissionAnswer{Answer: answer}, nil)
	}
}

// touchHarmless is the harmless command asked about in default mode.
const touchHarmless = `{"command":"touch harmless.txt"}`

// always: bob, in alice's directory (both may open it), answers "always"
// for a harmless command on worker 1; worker 1 stops and worker 2 starts,
// so what follows reads the rule from PostgreSQL only: bob's same command
// runs unasked, alice's is asked — and bob can neither see nor answer
// her question through the API.
func (e *splitTenants) always(t *testing.T, w1 *served) {
	alice, bob := e.alice.as(t), e.bob.as(t)
	for _, l := range []string{"msg-always-bob1", "msg-always-bob2", "msg-always-alice"} {
		e.v.script(l, mockserver.ToolCall{ID: "call_touch", Name: "bash", Input: touchHarmless})
	}
	bobSid := bob.session(e.aliceDir)
	st := bob.events(t, bobSid)
	r1 := bob.post(bobSid, "msg-always-bob1", "default")
	ask := waitAsk(t, st, r1)
	bob.must(http.StatusNoContent, http.MethodPost, "/runs/"+r1+"/permissions/"+ask.CallID, api.PermissionAnswer{Answer: "always"}, nil)
	if r := bob.finalRun(r1); r.Status != "completed" {
		t.Fatalf("bob's run answered always ended %s (%s)", r.Status, r.Error)
	}
	t.Logf("bob answered always to %s %s on worker 1 (pid %d)", ask.Tool, ask.Input, w1.cmd.Process.Pid)
	stopWorker(t, w1)
	w2 := e.startWorker(t)
	t.Logf("worker 1 stopped; worker 2 (pid %d) knows bob's rule only from PostgreSQL", w2.cmd.Process.Pid)

	r2 := bob.post(bobSid, "msg-always-bob2", "default")
	evs := st.until("bob's second run's done event", doneOf(r2))
	for _, ev := range evs {
		if ev.Ev.Type == agent.EventPermissionRequest && ev.Ev.RunID == r2 {
			t.Errorf("bob was asked again on the second worker (%+v): his always rule did not travel through PostgreSQL", ev.Ev.Permission)
		}
	}
	if tr, ok := e.v.resultsOf("msg-always-bob2")["call_touch"]; !ok || tr.IsError {
		t.Errorf("bob's command allowed by his rule did not run: %v %q", ok, toolResultText(tr))
	}
	st.stop()

	aliceSid := alice.session(e.aliceDir)
	ast := alice.events(t, aliceSid)
	ar := alice.post(aliceSid, "msg-always-alice", "default")
	aask := waitAsk(t, ast, ar)
	t.Logf("alice was asked about %s %s: bob's rule is not hers", aask.Tool, aask.Input)
	e.bobAtAlice(t, bob, aliceSid, ar, aask.CallID)
	alice.must(http.StatusNoContent, http.MethodPost, "/runs/"+ar+"/permissions/"+aask.CallID, api.PermissionAnswer{Answer: "deny"}, nil)
	var denied bool
	for _, ev := range ast.until("alice's run's done event", doneOf(ar)) {
		if p := ev.Ev.Permission; ev.Ev.Type == agent.EventPermissionDecision && p.CallID == aask.CallID {
			denied = p.Decision == "deny" && p.By == "user"
		}
	}
	if !denied {
		t.Errorf("alice's denial was not the decision on her call")
	}
	ast.stop()
	noRuleFiles(t, e.aliceDir, e.bobDir, e.in.home)
}

// waitAsk waits for the permission request of run, bounded by guard; the
// run ending unasked fails the test at once.
func waitAsk(t *testing.T, st *stream, run string) *agent.PermissionEvent {
	t.Helper()
	evs := st.until("the permission request of run "+run, func(ev sseEvent) bool {
		return ev.Ev.RunID == run && (ev.Type == string(agent.EventPermissionRequest) || ev.Type == string(agent.EventDone))
	})
	last := evs[len(evs)-1]
	if last.Type == string(agent.EventDone) {
		t.Fatalf("run %s ended (%+v) without asking about touch harmless.txt: a rule not its caller's allowed it", run, last.Ev.Done)
	}
	p := last.Ev.Permission
	if p.Tool != "bash" || !strings.Contains(string(p.Input), "touch harmless.txt") {
		t.Fatalf("run %s asked about %s %s, want the bash touch", run, p.Tool, p.Input)
	}
	return p
}

// bobAtAlice is the API half of the attack table: while alice's question
// waits, every attempt of bob's on her session or run is refused as
// unknown to him.
func (e *splitTenants) bobAtAlice(t *testing.T, bob *jwtCaller, sid, run, call string) {
	t.Helper()
	rows := []struct {
		name, method, path string
		body               any
	}{
		{"bob answers alice's question (always)", http.MethodPost, "/runs/" + run + "/permissions/" + call, api.PermissionAnswer{Answer: "always"}},
		{"bob reads alice's run", http.MethodGet, "/runs/" + run, nil},
		{"bob cancels alice's run", http.MethodPost, "/runs/" + run + "/cancel", nil},
		{"bob exports alice's session", http.MethodGet, "/sessions/" + sid + "/export?format=jsonl", nil},
		{"bob posts into alice's session", http.MethodPost, "/sessions/" + sid + "/messages", map[string]any{"text": "msg-always-bob3", "permission_mode": "bypass"}},
	}
	for _, r := range rows {
		code, raw := bob.call(r.method, r.path, r.body, nil)
		if code != http.StatusNotFound && code != http.StatusForbidden {
			t.Errorf("%s: %s %s answered %d %s, want 404 (or 403)", r.name, r.method, r.path, code, raw)
		}
		if strings.Contains(string(raw), "msg-always-alice") {
			t.Errorf("%s: the answer shows alice's prompt: %s", r.name, raw)
		}
	}
}

// noRuleFiles checks that no "always" answer was written where the CLI or
// other callers read it: no settings.local.yaml, no trust.json.
func noRuleFiles(t *testing.T, dirs ...string) {
	t.Helper()
	for _, d := range dirs {
		err := filepath.WalkDir(d, func(p string, de fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if n := de.Name(); n == "settings.local.yaml" || n == "trust.json" {
				b, _ := os.ReadFile(p)
				t.Errorf("%s was written: %q", p, b)
			}
			return nil
		})
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("walk %s: %v", d, err)
		}
	}
}
