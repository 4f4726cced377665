package runner_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/reinhq/rein/agent"
	"github.com/reinhq/rein/eventbus"
	"github.com/reinhq/rein/llm"
	"github.com/reinhq/rein/llm/llmtest"
	"github.com/reinhq/rein/llm/registry"
	"github.com/reinhq/rein/permission"
	"github.com/reinhq/rein/runner"
	"github.com/reinhq/rein/session"
)

// askTimeoutEnv is a Service's environment with permissions.ask_timeout
// set to d (REIN_ASK_TIMEOUT) and nothing else.
func askTimeoutEnv(d string) func(string) string {
	return func(k string) string {
		if k == "REIN_ASK_TIMEOUT" {
			return d
		}
		return ""
	}
}

// harness is a Service over the in-memory store, ledger and bus, with a
// provider the test gives, in a fresh HOME and workspace.
type harness struct {
	svc      *runner.Service
	sessions *session.MemStore
	ledger   *session.MemLedger
	bus      eventbus.Bus
	ws       *session.Workspace
	dir      string
	data     string // the service's DataDir
}

func newHarness(t testing.TB, p llm.Provider, cfg runner.ServiceConfig) *harness {
	t.Helper()
	home, dir := t.TempDir(), t.TempDir()
	env := map[string]string{"HOME": home, "PATH": os.Getenv("PATH"), "REIN_SANDBOX": "off"}
	h := &harness{sessions: session.NewMemStore(), ledger: session.NewMemLedger(), bus: eventbus.NewMemory(eventbus.Options{}), dir: dir}
	cfg.Sessions, cfg.Ledger, cfg.Bus, cfg.DataDir = h.sessions, h.ledger, h.bus, t.TempDir()
	h.data = cfg.DataDir
	if extra := cfg.Getenv; extra != nil { // the test's variables win
		cfg.Getenv = func(k string) string {
			if v := extra(k); v != "" {
				return v
			}
			return env[k]
		}
	} else {
		cfg.Getenv = func(k string) string { return env[k] }
	}
	cfg.Resolve = scriptedModel(p)
	svc, err := runner.NewService(cfg)
	if err != nil {
		t.Fatal(err)
	}
	h.svc = svc
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		svc.Shutdown(ctx)
		h.bus.Close()
	})
	h.ws = &session.Workspace{Caller: "alice", Kind: session.WorkspaceProject, Dir: dir}
	if err := h.ledger.CreateWorkspace(context.Background(), h.ws); err != nil {
		t.Fatal(err)
	}
	return h
}

func (h *harness) newSession(t testing.TB) *session.Session {
	t.Helper()
	s := &session.Session{Caller: "alice", Workspace: h.ws.ID, WorkDir: h.dir}
	if err := h.sessions.Create(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	return s
}

// wait polls the ledger until the run has ended.
func (h *harness) wait(t testing.TB, runID string) *session.Run {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		r, err := h.ledger.GetRun(context.Background(), runID)
		if err != nil {
			t.Fatal(err)
		}
		if r.Status.Final() {
			return r
		}
		if time.Now().After(deadline) {
			t.Fatalf("run %s still %s after a minute", runID, r.Status)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// API-3: 50 sessions × 20 runs each, submitted concurrently. Per session
// the model sees the prompts in submission order and never two at once;
// across sessions runs overlap; every run completes.
func TestSessionSerialSystemParallel_API3(t *testing.T) {
	const sessions, runs = 50, 20
	var (
		mu      sync.Mutex
		seen    = map[string][]string{} // session id → prompts in the order the model saw them
		active  = map[string]int{}
		errs    []string
		running atomic.Int32
		overlap = make(chan struct{})
		once    sync.Once
	)
	p := &llmtest.Scripted{NoRecord: true, Repeat: &llmtest.Reply{Func: func(ctx context.Context, req *llm.Request) iter.Seq2[llm.Delta, error] {
		sid, text := req.CacheKey, llmtest.LastUserText(req)
		mu.Lock()
		seen[sid] = append(seen[sid], text)
		active[sid]++
		if active[sid] > 1 {
			errs = append(errs, fmt.Sprintf("session %s: two runs at once (%s)", sid, text))
		}
		mu.Unlock()
		if running.Add(1) > 1 {
			once.Do(func() { close(overlap) })
		}
		// Until two model calls have been seen at once, wait (a bounded
		// while) for another session's: runs of different sessions overlap.
		select {
		case <-overlap:
		case <-time.After(5 * time.Second):
		}
		running.Add(-1)
		mu.Lock()
		active[sid]--
		mu.Unlock()
		return llmtest.NewScripted(llmtest.Reply{Text: "ok " + text}).Stream(ctx, req)
	}}}
	h := newHarness(t, p, runner.ServiceConfig{MaxConcurrent: 8})
	ids := make([]string, sessions)
	for i := range ids {
		ids[i] = h.newSession(t).ID
	}
	var wg sync.WaitGroup
	runIDs := make(chan string, sessions*runs)
	for i, sid := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range runs {
				r, err := h.svc.Submit(context.Background(), session.Submission{SessionID: sid, Caller: "alice", Text: fmt.Sprintf("s%d-r%d", i, j)})
				if err != nil {
					t.Error(err)
					return
				}
				runIDs <- r.ID
			}
		}()
	}
	wg.Wait()
	close(runIDs)
	for id := range runIDs {
		if r := h.wait(t, id); r.Status != session.RunCompleted {
			t.Errorf("run %s: %s (%s)", id, r.Status, r.Error)
		}
	}
	select {
	case <-overlap:
	default:
		t.Error("no two sessions ever ran at once")
	}
	mu.Lock()
	defer mu.Unlock()
	for _, e := range errs {
		t.Error(e)
	}
	for i, sid := range ids {
		var want []string
		for j := range runs {
			want = append(want, fmt.Sprintf("s%d-r%d", i, j))
		}
		if got := strings.Join(seen[sid], " "); got != strings.Join(want, " ") {
			t.Errorf("session %d saw %s\nwant %s", i, got, strings.Join(want, " "))
		}
		st, err := session.Load(context.Background(), h.sessions, sid)
		if err != nil {
			t.Fatal(err)
		}
		if len(st.Messages) != 2*runs || st.Session.Runs != runs {
			t.Errorf("session %d: %d messages, %d runs stored; want %d, %d", i, len(st.Messages), st.Session.Runs, 2*runs, runs)
		}
	}
}

// API-2: a run's events reach the bus with increasing ids, durable ones
// are in the ledger under the same ids, and a subscriber that starts late
// gets them all.
func TestEventsNumberedAndStored_API2(t *testing.T) {
	p := llmtest.NewScripted(
		llmtest.Reply{Text: "let me look", ToolCalls: []llm.ToolUse{llmtest.Call("c1", "list_dir", `{"path":"."}`)}, Chunk: 3},
		llmtest.Reply{Text: "done", Chunk: 2})
	h := newHarness(t, p, runner.ServiceConfig{})
	s := h.newSession(t)
	ctx := context.Background()
	sub, err := h.bus.Subscribe(ctx, s.ID, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	r, err := h.svc.Submit(ctx, session.Submission{SessionID: s.ID, Caller: "alice", Text: "look"})
	if err != nil {
		t.Fatal(err)
	}
	var got []eventbus.Event
	for ev := range sub.Events() {
		got = append(got, *ev)
		if ev.Type == string(agent.EventDone) {
			break
		}
	}
	if run := h.wait(t, r.ID); run.Status != session.RunCompleted {
		t.Fatalf("run %s: %s", run.Status, run.Error)
	}
	var last int64
	var durable []int64
	deltas := 0
	for _, ev := range got {
		if ev.ID <= last {
			t.Errorf("event %s id %d after %d", ev.Type, ev.ID, last)
		}
		last = ev.ID
		if ev.Durable {
			durable = append(durable, ev.ID)
		} else if ev.Type == string(agent.EventTextDelta) {
			deltas++
		}
		var a agent.Event
		if err := json.Unmarshal(ev.Data, &a); err != nil || string(a.Type) != ev.Type || a.RunID != r.ID {
			t.Errorf("event %d: data %s (%v)", ev.ID, ev.Data, err)
		}
	}
	if deltas < 3 {
		t.Errorf("%d text deltas published, want the chunks", deltas)
	}
	stored, err := h.ledger.Events(ctx, s.ID, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	var storedIDs []int64
	for _, e := range stored {
		storedIDs = append(storedIDs, e.ID)
	}
	if fmt.Sprint(storedIDs) != fmt.Sprint(durable) {
		t.Errorf("ledger ids %v, durable bus ids %v", storedIDs, durable)
	}
	audit, err := h.ledger.Audit(ctx, session.AuditFilter{RunID: r.ID})
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[session.AuditKind]int{}
	for _, a := range audit {
		kinds[a.Kind]++
	}
	if kinds[session.AuditToolCall] != 1 || kinds[session.AuditRun] != 1 || kinds[session.AuditPermission] < 1 {
		t.Errorf("audit kinds %v, want a tool call, a permission decision and the run", kinds)
	}
}

// PERM-3: a question is answered over the API; an unanswered one is denied
// by the timeout, and the decision says so.
func TestPermissionAnswered_PERM3(t *testing.T) {
	p := llmtest.NewScripted(
		llmtest.Reply{ToolCalls: []llm.ToolUse{llmtest.Call("c1", "write_file", `{"path":"a.txt","content":"hi"}`)}},
		llmtest.Reply{Text: "written"},
		llmtest.Reply{ToolCalls: []llm.ToolUse{llmtest.Call("c2", "write_file", `{"path":"b.txt","content":"hi"}`)}},
		llmtest.Reply{Text: "gave up"})
	h := newHarness(t, p, runner.ServiceConfig{Getenv: askTimeoutEnv("1s")})
	s := h.newSession(t)
	ctx := context.Background()
	sub, err := h.bus.Subscribe(ctx, s.ID, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	r, err := h.svc.Submit(ctx, session.Submission{SessionID: s.ID, Caller: "alice", Text: "write a"})
	if err != nil {
		t.Fatal(err)
	}
	decision := func() agent.PermissionEvent {
		for ev := range sub.Events() {
			var a agent.Event
			json.Unmarshal(ev.Data, &a)
			switch a.Type {
			case agent.EventPermissionRequest:
				if err := h.svc.Answer(ctx, a.RunID, a.Permission.CallID, permission.Verdict{Answer: permission.AnswerOnce}); err != nil {
					t.Errorf("answer: %v", err)
				}
			case agent.EventPermissionDecision:
				return *a.Permission
			}
		}
		t.Fatal("stream ended without a decision")
		return agent.PermissionEvent{}
	}
	if d := decision(); d.Decision != "allow" || d.By != "user" {
		t.Errorf("answered question: %+v", d)
	}
	h.wait(t, r.ID)
	if b, err := os.ReadFile(h.dir + "/a.txt"); err != nil || string(b) != "hi" {
		t.Errorf("a.txt: %q, %v", b, err)
	}
	if err := h.svc.Answer(ctx, r.ID, "c1", permission.Verdict{Answer: permission.AnswerOnce}); err == nil {
		t.Error("answering an ended run's question succeeded")
	}
	// Nobody answers the second run's question: the timeout denies it, and
	// the decision says who decided.
	r2, err := h.svc.Submit(ctx, session.Submission{SessionID: s.ID, Caller: "alice", Text: "write b"})
	if err != nil {
		t.Fatal(err)
	}
	for ev := range sub.Events() {
		var a agent.Event
		json.Unmarshal(ev.Data, &a)
		if a.Type == agent.EventPermissionDecision {
			if a.Permission.Decision != "deny" || a.Permission.By != "timeout" {
				t.Errorf("unanswered question: %+v", *a.Permission)
			}
			break
		}
	}
	if run := h.wait(t, r2.ID); run.Status != session.RunCompleted {
		t.Errorf("run after the denial: %s %s", run.Status, run.Error)
	}
	if _, err := os.Stat(h.dir + "/b.txt"); err == nil {
		t.Error("b.txt written although the question timed out")
	}
}

// API-4: a caller cannot name a file of the server's as the model, nor
// bypass permissions unless the server allows it; nothing is queued.
func TestSubmissionChecked_API4(t *testing.T) {
	h := newHarness(t, llmtest.NewScripted(), runner.ServiceConfig{})
	s := h.newSession(t)
	ctx := context.Background()
	for _, sub := range []session.Submission{
		{Text: "hi", Model: "replay:/etc/passwd"},
		{Text: "hi", Model: " replay:x.cassette"},
		{Text: "hi", PermissionMode: "bypass"},
		{Text: "hi", PermissionMode: "yolo"},
		{Text: "hi", MaxTurns: -1},
		{Text: ""}, // nothing to continue
	} {
		sub.SessionID, sub.Caller = s.ID, "alice"
		if _, err := h.svc.Submit(ctx, sub); !errors.Is(err, session.ErrInvalid) {
			t.Errorf("%+v: %v, want ErrInvalid", sub, err)
		}
	}
	if _, err := h.svc.Submit(ctx, session.Submission{SessionID: s.ID, Caller: "mallory", Text: "hi"}); !errors.Is(err, session.ErrNotFound) {
		t.Errorf("another caller's session: %v, want ErrNotFound", err)
	}
	if runs, _ := h.ledger.ListRuns(ctx, session.RunFilter{SessionID: s.ID}); len(runs) != 0 {
		t.Errorf("%d runs queued by refused submissions", len(runs))
	}
}

// API-3: a queued run that is cancelled never starts; a running one is
// cancelled through its context and ends cancelled; an ended one cannot be.
func TestCancel_API3(t *testing.T) {
	started := make(chan string, 4)
	p := &llmtest.Scripted{Repeat: &llmtest.Reply{Func: func(ctx context.Context, req *llm.Request) iter.Seq2[llm.Delta, error] {
		started <- llmtest.LastUserText(req)
		return llmtest.NewScripted(llmtest.Reply{Text: "…", Hang: true}).Stream(ctx, req)
	}}}
	h := newHarness(t, p, runner.ServiceConfig{})
	s := h.newSession(t)
	ctx := context.Background()
	first, err := h.svc.Submit(ctx, session.Submission{SessionID: s.ID, Caller: "alice", Text: "first"})
	if err != nil {
		t.Fatal(err)
	}
	second, err := h.svc.Submit(ctx, session.Submission{SessionID: s.ID, Caller: "alice", Text: "second"})
	if err != nil {
		t.Fatal(err)
	}
	if got := <-started; got != "first" {
		t.Fatalf("the model got %q first", got)
	}
	if r, err := h.svc.Cancel(ctx, second.ID); err != nil || r.Status != session.RunCancelled {
		t.Fatalf("cancel the queued run: %+v, %v", r, err)
	}
	if _, err := h.svc.Cancel(ctx, first.ID); err != nil {
		t.Fatal(err)
	}
	if r := h.wait(t, first.ID); r.Status != session.RunCancelled || r.Reason != string(agent.ReasonCancelled) {
		t.Errorf("the running run ended %s (%s)", r.Status, r.Reason)
	}
	if r := h.wait(t, second.ID); r.Status != session.RunCancelled || !r.StartedAt.IsZero() {
		t.Errorf("the queued run: %s, started %v", r.Status, r.StartedAt)
	}
	select {
	case got := <-started:
		t.Errorf("the model got %q after the queued run was cancelled", got)
	default:
	}
	if _, err := h.svc.Cancel(ctx, first.ID); !errors.Is(err, session.ErrConflict) {
		t.Errorf("cancelling an ended run: %v, want ErrConflict", err)
	}
}

// MEM-1, API-4: a server's runs never show the operator's own memory (the
// user-level profile and notes) to its callers; the workspace's notes
// apply.
func TestServerRunsHideUserMemory_MEM1(t *testing.T) {
	home := t.TempDir()
	userMem := filepath.Join(home, ".config", "rein", "memory")
	if err := os.MkdirAll(userMem, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(userMem, "USER.md"), []byte("# Profile\n\n- The operator's name is Zebulon Quartz.\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	p := llmtest.NewScripted(llmtest.Reply{Text: "hi"})
	h := newHarness(t, p, runner.ServiceConfig{Getenv: func(k string) string {
		if k == "HOME" {
			return home
		}
		return ""
	}})
	wsMem := filepath.Join(h.dir, ".rein", "memory")
	if err := os.MkdirAll(wsMem, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(wsMem, "NOTES.md"), []byte("# Notes\n\n- The build uses Bazel 7.\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s := h.newSession(t)
	r, err := h.svc.Submit(context.Background(), session.Submission{SessionID: s.ID, Caller: "alice", Text: "hello"})
	if err != nil {
		t.Fatal(err)
	}
	if run := h.wait(t, r.ID); run.Status != session.RunCompleted {
		t.Fatalf("run: %s %s", run.Status, run.Error)
	}
	reqs := p.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d model requests", len(reqs))
	}
	if strings.Contains(reqs[0].System, "Zebulon") {
		t.Error("the operator's profile reached a caller's run")
	}
	if !strings.Contains(reqs[0].System, "Bazel 7") {
		t.Errorf("the workspace's notes are missing from the prompt:\n%s", reqs[0].System)
	}
}

// startService starts a service of cfg, shut down when the test ends
// (its runs get 30 s).
func startService(tb testing.TB, cfg runner.ServiceConfig) *runner.Service {
	tb.Helper()
	svc, err := runner.NewService(cfg)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		svc.Shutdown(ctx)
	})
	return svc
}

// scriptedModel is a ServiceConfig.Resolve that gives every run the
// scripted model p, with a 200k window.
func scriptedModel(p llm.Provider) func(*registry.Registry, string) (*runner.Model, error) {
	return func(*registry.Registry, string) (*runner.Model, error) {
		return &runner.Model{Provider: p, ProviderName: "scripted", Name: "m", Label: "scripted/m",
			Caps: registry.Model{Name: "m", ContextWindow: 200_000, MaxOutput: 8_000}}, nil
	}
}
