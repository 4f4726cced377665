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
}

// newSplitTenants writes the callers' workspaces, the operator's secret
// and the worker's data directory, and starts the API process.
func newSplitTenants(t *testing.T, redisURL string) *splitTenants {
	t.Helper()
	pgURL, _ := pgtest.Schema(t)
	e := &splitTenants{v: newTenantVendor(t), workerData: t.TempDir(), aliceRoot: t.TempDir(), bobRoot: t.TempDir()}
	e.aliceDir = filepath.Join(e.aliceRoot, "alice-app")
	e.bobDir = filepath.Join(e.bobRoot, "bob-app")
	home, keyDir := t.TempDir(), t.TempDir()
	secret := []byte("a-test-only-hs256-secret-of-forty-bytes!")
	for p, content := range map[string]string{
		filepath.Join(home, "secret"):                            splitOperatorSecret,
		filepath.Join(e.aliceDir, "secret.txt"):                  splitAliceSecret,
		filepath.Join(e.aliceDir, ".rein", "data", "history.db"): splitAliceSecret,
		filepath.Join(e.workerData, "alice-leak.txt"):            splitAliceSecret,
		filepath.Join(e.bobDir, "main.go"):                       "package main\n",
		filepath.Join(keyDir, "jwt.key"):                         string(secret),
	} {
		writeFile(t, p, content)
	}
	e.in = &instance{t: t, bin: reinBinary(t), home: home, data: t.TempDir(), root: e.aliceRoot, project: e.bobDir, vendorURL: e.v.URL}
	prefix := fmt.Sprintf("rein-tenants-%d:", time.Now().UnixNano())
	t.Cleanup(func() { dropKeys(t, redisURL, prefix) }) // after the processes end
	common := []string{"--database-url", pgURL, "--redis-url", redisURL, "--redis-prefix", prefix, "--lease-ttl", "2s"}
	e.apiArgs = append([]string{"serve", "--mode", "api", "--addr", "127.0.0.1:0", "--data-dir", e.in.data,
		"--root", e.aliceRoot, "--root", e.bobRoot, "--jwt-secret-file", filepath.Join(keyDir, "jwt.key"),
		"--allow-bypass", "--rate-limit", "1000"}, common...)
	e.workerArgs = append([]string{"worker", "--data-dir", e.workerData, "--max-concurrent", "2"}, common...)
	e.api = e.in.launch(e.apiArgs, "rein: serving on http://")
	e.alice = newJWTCaller(t, "alice", secret, e.api.base)
	e.bob = newJWTCaller(t, "bob", secret, e.api.base)
	return e
}

func writeFile(t *testing.T, p, content string) {
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
// the operator's files: its result is an error, free of both secrets and
// of leaks (names a listing would give away).
type tenantAttack struct {
	name, tool string
	input      map[string]string
	leaks      []string
}

// API-9 through API-5: with the production split — `rein serve --mode
// api` with two JWT callers and two roots, `rein worker` processes,
// PostgreSQL and Redis — bob, approving everything for himself (bypass),
// reads nothing of alice's workspace, of the worker's data directory or of
// the operator's home, while his harmless command runs; bob's "always"
// answer is his rule, kept in PostgreSQL: a fresh worker runs his command
// again unasked, alice's same command in the same directory is still
// asked, and no settings.local.yaml or trust.json is written; bob cannot
// read or answer alice's run through the API.
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
	t.Run("bob's attacks through a worker", e.attacks)
	if t.Failed() {
		return
	}
	t.Run("bob's always stays bob's across workers", func(t *testing.T) { e.always(t, w1) })
}

// attackTable is bob's tool calls, each an attempt that must fail.
func (e *splitTenants) attackTable() []tenantAttack {
	home := e.in.home
	aliceFile := filepath.Join(e.aliceDir, "secret.txt")
	up, _ := filepath.Rel(e.bobDir, aliceFile)
	var homeNames []string // what ls /home would give away
	if ents, err := os.ReadDir("/home"); err == nil {
		for _, d := range ents {
			homeNames = append(homeNames, d.Name())
		}
	}
	cmd := func(c string) map[string]string { return map[string]string{"command": c} }
	return []tenantAttack{
		{"the worker's data directory (cat)", "bash", cmd("cat " + filepath.Join(e.workerData, "alice-leak.txt")), nil},
		{"the worker's data directory (read_file)", "read_file", map[string]string{"path": filepath.Join(e.workerData, "alice-leak.txt")}, nil},
		{"the worker's data directory (ls)", "bash", cmd("ls " + e.workerData), []string{"alice-leak"}},
		{"alice's file by absolute path (read_file)", "read_file", map[string]string{"path": aliceFile}, nil},
		{"alice's file through .. (read_file)", "read_file", map[string]string{"path": up}, nil},
		{"alice's file by absolute path (cat)", "bash", cmd("cat " + aliceFile), nil},
		{"bash run in alice's directory", "bash", map[string]string{"command": "cat secret.txt", "dir": e.aliceDir}, nil},
		{"the operator's home (cat ~/secret)", "bash", cmd("cat ~/secret"), nil},
		{"the operator's home by absolute path (cat)", "bash", cmd("cat " + filepath.Join(home, "secret")), nil},
		{"the operator's home (read_file)", "read_file", map[string]string{"path": filepath.Join(home, "secret")}, nil},
		{"other users' homes (ls /home)", "bash", cmd("ls /home"), homeNames},
		{"alice's history mirror (cat)", "bash", cmd("cat " + filepath.Join(e.aliceDir, ".rein", "data", "history.db")), nil},
		{"alice's history mirror (read_file)", "read_file", map[string]string{"path": filepath.Join(e.aliceDir, ".rein", "data", "history.db")}, nil},
		{"a glob over alice's root", "glob", map[string]string{"pattern": "**/*", "path": e.aliceRoot}, []string{"alice-app", "secret.txt", "history.db"}},
		{"a glob naming alice's root in its pattern", "glob", map[string]string{"pattern": e.aliceRoot + "/**/*"}, []string{"alice-app", "secret.txt", "history.db"}},
		{"a grep over alice's root", "grep", map[string]string{"pattern": "KESTREL", "path": e.aliceRoot}, []string{"secret.txt"}},
		{"list_dir of alice's root", "list_dir", map[string]string{"path": e.aliceRoot}, []string{"alice-app"}},
		{"a shell grep of /tmp", "bash", cmd("grep -r KESTREL /tmp"), nil},
	}
}

// attacks runs bob's attack table in one bypass run in his own workspace,
// with a harmless command beside it that must run.
func (e *splitTenants) attacks(t *testing.T) {
	table := e.attackTable()
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

	sid := e.bob.session(e.bobDir)
	run := e.bob.finalRun(e.bob.post(sid, "msg-tenant-attack", "bypass"))
	if run.Status != "completed" {
		t.Fatalf("bob's run ended %s (%s), want completed", run.Status, run.Error)
	}
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
			t.Logf("%s %v: error=%v %.200q", a.tool, a.input, tr.IsError, text)
			for _, s := range append([]string{splitAliceSecret, splitOperatorSecret}, a.leaks...) {
				if strings.Contains(text, s) {
					t.Errorf("the result gives away %q: %q", s, text)
				}
			}
			if !tr.IsError {
				t.Errorf("the %s call succeeded (%q); want an error or a refusal", a.tool, text)
			}
		})
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
	for _, l := range []string{"msg-always-bob1", "msg-always-bob2", "msg-always-alice"} {
		e.v.script(l, mockserver.ToolCall{ID: "call_touch", Name: "bash", Input: touchHarmless})
	}
	bobSid := e.bob.session(e.aliceDir)
	st := e.bob.events(bobSid)
	r1 := e.bob.post(bobSid, "msg-always-bob1", "default")
	ask := waitAsk(t, st, r1)
	e.bob.must(http.StatusNoContent, http.MethodPost, "/runs/"+r1+"/permissions/"+ask.CallID, api.PermissionAnswer{Answer: "always"}, nil)
	if r := e.bob.finalRun(r1); r.Status != "completed" {
		t.Fatalf("bob's run answered always ended %s (%s)", r.Status, r.Error)
	}
	stopWorker(t, w1)
	e.startWorker(t)

	r2 := e.bob.post(bobSid, "msg-always-bob2", "default")
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

	aliceSid := e.alice.session(e.aliceDir)
	ast := e.alice.events(aliceSid)
	ar := e.alice.post(aliceSid, "msg-always-alice", "default")
	aask := waitAsk(t, ast, ar)
	e.bobAtAlice(t, aliceSid, ar, aask.CallID)
	e.alice.must(http.StatusNoContent, http.MethodPost, "/runs/"+ar+"/permissions/"+aask.CallID, api.PermissionAnswer{Answer: "deny"}, nil)
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

// waitAsk waits for the permission request of run, bounded by guard.
func waitAsk(t *testing.T, st *stream, run string) *agent.PermissionEvent {
	t.Helper()
	evs := st.until("the permission request of run "+run, func(ev sseEvent) bool {
		return ev.Ev.Type == agent.EventPermissionRequest && ev.Ev.RunID == run
	})
	p := evs[len(evs)-1].Ev.Permission
	if p.Tool != "bash" || !strings.Contains(string(p.Input), "touch harmless.txt") {
		t.Fatalf("run %s asked about %s %s, want the bash touch", run, p.Tool, p.Input)
	}
	return p
}

// bobAtAlice is the API half of the attack table: while alice's question
// waits, every attempt of bob's on her session or run is refused as
// unknown to him.
func (e *splitTenants) bobAtAlice(t *testing.T, sid, run, call string) {
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
		code, raw := e.bob.call(r.method, r.path, r.body, nil)
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
