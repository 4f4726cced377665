package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/reinhq/rein/llm"
	"github.com/reinhq/rein/llm/llmtest"
	"github.com/reinhq/rein/runner"
	"github.com/reinhq/rein/session"
	"github.com/reinhq/rein/session/jsonl"
)

func TestVersion(t *testing.T) {
	te := newTestEnv(t)
	for _, args := range [][]string{{"version"}, {"--version"}, {"--verbose", "--version"}} {
		out, _ := te.mustRun(ExitOK, args...)
		if !strings.HasPrefix(out, "rein ") || !strings.Contains(out, "go1.") {
			t.Errorf("%v: %q", args, out)
		}
	}
}

// CLI-3, PROV-3: profiles are added, listed and chosen; the chosen one
// becomes the model.
func TestProviderCommands(t *testing.T) {
	te := newTestEnv(t)
	te.env["LOCAL_KEY"] = "k"
	out, _ := te.mustRun(ExitOK, "provider", "add", "local", "--provider", "openai-compatible",
		"--base-url", "http://127.0.0.1:9/v1", "--api-key-env", "LOCAL_KEY", "--default-model", "qwen3")
	if !strings.Contains(out, "rein provider use local") {
		t.Errorf("add: %s", out)
	}
	te.mustRun(ExitOK, "provider", "use", "local")
	out, _ = te.mustRun(ExitOK, "provider", "list")
	if !strings.Contains(out, "* local") || !strings.Contains(out, "LOCAL_KEY (set)") || !strings.Contains(out, "anthropic") {
		t.Errorf("list:\n%s", out)
	}
	out, _ = te.mustRun(ExitOK, "config", "show", "--json")
	var v configView
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatal(err)
	}
	if m := v.Values[0]; m.Key != "model" || m.Value != "local" || m.Source != "user" {
		t.Errorf("model %+v", m)
	}
	if out, _ := te.mustRun(ExitOK, "provider", "use", "local"); strings.Contains(out, "overrides") {
		t.Errorf("use with nothing overriding it:\n%s", out)
	}
	// model: in the user's settings.yaml wins over the default profile.
	settings := filepath.Join(te.home, ".config", "rein", "settings.yaml")
	if err := os.WriteFile(settings, []byte("model: anthropic/claude-sonnet-4-5\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	out, _ = te.mustRun(ExitOK, "provider", "use", "local")
	if want := "Note: anthropic/claude-sonnet-4-5 (user " + settings + ") still overrides it here."; !strings.Contains(out, want) {
		t.Errorf("use under a user model setting:\n%s\nwant %q", out, want)
	}
	if err := os.Remove(settings); err != nil {
		t.Fatal(err)
	}
	_, errs := te.mustRun(ExitUsage, "provider", "add", "bad", "--provider", "nonsense")
	if !strings.Contains(errs, "unknown provider") {
		t.Errorf("bad kind: %s", errs)
	}
	_, errs = te.mustRun(ExitUsage, "provider", "use", "nosuch/model")
	if !strings.Contains(errs, "unknown provider") {
		t.Errorf("use unknown: %s", errs)
	}
	te.mustRun(ExitOK, "provider", "remove", "local")
	te.mustRun(ExitError, "provider", "remove", "local")
}

// WS-3: config show names the layer of every value.
func TestConfigShow(t *testing.T) {
	te := newTestEnv(t)
	te.write(".rein/settings.yaml", "max_turns: 7\npermissions:\n  allow: [\"bash(go test:*)\"]\n")
	te.env["REIN_TIMEOUT"] = "5m"
	out, _ := te.mustRun(ExitOK, "config", "show", "--permission-mode", "bypass")
	for _, want := range []string{
		"max_turns                7", "workspace " + filepath.Join(te.ws, ".rein", "settings.yaml"),
		"timeout                  5m", "env REIN_TIMEOUT",
		"permissions.mode         bypass", "flag --permission-mode",
		"sandbox                  workspace", "default",
		"allow bash(go test:*)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("config show lacks %q:\n%s", want, out)
		}
	}
}

// WS-1: rein init scaffolds and never overwrites.
func TestInit(t *testing.T) {
	te := newTestEnv(t)
	te.mustRun(ExitOK, "init")
	for _, f := range []string{".rein/settings.yaml", "AGENTS.md"} {
		if _, err := os.Stat(filepath.Join(te.ws, f)); err != nil {
			t.Fatal(err)
		}
	}
	te.mustRun(ExitOK, "config", "show") // the template parses
	te.write("AGENTS.md", "mine\n")
	out, errs := te.mustRun(ExitError, "init")
	if !strings.Contains(out, "Kept") || !strings.Contains(errs, "already set up") {
		t.Errorf("second init: %s %s", out, errs)
	}
	if b, _ := os.ReadFile(filepath.Join(te.ws, "AGENTS.md")); string(b) != "mine\n" {
		t.Errorf("AGENTS.md overwritten: %q", b)
	}
}

// CLI-3: doctor says ready, warning or blocked, each problem with the next
// action; --online checks the key.
func TestDoctor(t *testing.T) {
	te := newTestEnv(t)
	out, _ := te.mustRun(ExitError, "doctor", "--json")
	var r report
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	if r.Status != statusBlocked || !hasCheck(r, "model", statusBlocked) || !hasCheck(r, "instructions", statusWarning) {
		t.Errorf("no model: %+v", r)
	}
	for _, c := range r.Checks {
		if c.Status != statusOK && c.Next == "" {
			t.Errorf("check %+v has no next action", c)
		}
	}
	te.write("AGENTS.md", "x")
	te.env["REIN_MODEL"] = "replay:" + filepath.Join(te.home, "c.cassette")
	out, _ = te.mustRun(ExitError, "doctor")
	if !strings.Contains(out, "blocked") || !strings.Contains(out, "c.cassette") {
		t.Errorf("missing cassette:\n%s", out)
	}
	delete(te.env, "REIN_MODEL")
	te.env["ANTHROPIC_API_KEY"] = "k"
	te.env["ANTHROPIC_BASE_URL"] = "http://127.0.0.1:1"
	_, out, _ = te.run("doctor", "--json")
	r = report{}
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	if !hasCheck(r, "model", statusOK) {
		t.Errorf("with a key: %+v", r)
	}
	out, _ = te.mustRun(ExitError, "doctor", "--online", "--json")
	r = report{}
	_ = json.Unmarshal([]byte(out), &r)
	if !hasCheck(r, "auth", statusBlocked) {
		t.Errorf("online against a dead endpoint: %+v", r)
	}
}

func hasCheck(r report, name, status string) bool {
	for _, c := range r.Checks {
		if c.Name == name && c.Status == status {
			return true
		}
	}
	return false
}

// SESS-3: list, show, export, fork and rm.
func TestSessionsCommands(t *testing.T) {
	te := newTestEnv(t)
	te.script("m", llmtest.Reply{Text: "hello there"}, llmtest.Reply{Text: "again"})
	out, _ := te.mustRun(ExitOK, "run", "--model", "scripted/m", "-o", "json", "say hello")
	var res result
	_ = json.Unmarshal([]byte(out), &res)
	id := res.SessionID
	out, _ = te.mustRun(ExitOK, "sessions", "list")
	if !strings.Contains(out, id) || !strings.Contains(out, "say hello") {
		t.Errorf("list:\n%s", out)
	}
	out, _ = te.mustRun(ExitOK, "sessions", "export", id)
	if !strings.Contains(out, "say hello") || !strings.Contains(out, "hello there") {
		t.Errorf("markdown:\n%s", out)
	}
	out, _ = te.mustRun(ExitOK, "sessions", "export", id, "--format", "jsonl")
	if n := strings.Count(out, "\n"); n < 3 {
		t.Errorf("jsonl has %d lines:\n%s", n, out)
	}
	out, _ = te.mustRun(ExitOK, "sessions", "fork", id)
	if !strings.Contains(out, "Forked "+id) {
		t.Errorf("fork: %s", out)
	}
	out, _ = te.mustRun(ExitOK, "sessions", "list", "--json")
	var list []session.Session
	if err := json.Unmarshal([]byte(out), &list); err != nil || len(list) != 2 {
		t.Fatalf("list --json: %v %s", err, out)
	}
	te.mustRun(ExitOK, "sessions", "rm", id)
	if _, err := os.Stat(filepath.Join(te.home, ".local", "share", "rein", "sessions", id)); !os.IsNotExist(err) {
		t.Errorf("session directory left: %v", err)
	}
	te.mustRun(ExitError, "sessions", "show", id)
}

// orphanSession stores a session cut off while bash ran `sleep 60`: the
// call is journaled with its process group, which still runs. It returns
// the session's id and a channel closed when the process exits.
func orphanSession(t *testing.T, te *testEnv) (string, <-chan struct{}) {
	t.Helper()
	store, err := jsonl.New(filepath.Join(te.home, ".local", "share", "rein", "sessions"))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	ctx := context.Background()
	s := &session.Session{WorkDir: te.ws, Model: "scripted/m"}
	if err := store.Create(ctx, s); err != nil {
		t.Fatal(err)
	}
	sleeper := exec.Command("sleep", "60")
	sleeper.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := sleeper.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sleeper.Process.Kill() })
	exited := make(chan struct{})
	go func() { sleeper.Wait(); close(exited) }()
	call := &llm.ToolUse{ID: "c1", Name: "bash", Input: json.RawMessage(`{"command":"sleep 60"}`)}
	if _, err := store.Append(ctx, s.ID,
		session.Entry{Kind: session.KindMessage, Message: &llm.Message{Role: llm.RoleUser, Content: []llm.Block{&llm.Text{Text: "wait"}}}},
		session.Entry{Kind: session.KindMessage, Message: &llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{call}}},
		session.Entry{Kind: session.KindToolStart, ToolStart: &session.ToolStart{CallID: "c1", Tool: "bash", Input: call.Input}},
	); err != nil {
		t.Fatal(err)
	}
	if err := runner.NewRecorder(store, s.ID).RecordProcess("c1", sleeper.Process.Pid); err != nil {
		t.Fatal(err)
	}
	return s.ID, exited
}

func waitExit(t *testing.T, exited <-chan struct{}) {
	t.Helper()
	select {
	case <-exited:
	case <-time.After(10 * time.Second):
		t.Fatal("the orphaned process still runs")
	}
}

// SESS-1, SESS-2: a session cut off mid-tool reports the process its
// command left running, stops it on request, and is healed on resume.
func TestHealAndOrphans(t *testing.T) {
	t.Run("sessions show", func(t *testing.T) {
		te := newTestEnv(t)
		id, exited := orphanSession(t, te)
		out, _ := te.mustRun(ExitOK, "sessions", "show", id)
		if !strings.Contains(out, "still running") || !strings.Contains(out, "Healed") {
			t.Errorf("show:\n%s", out)
		}
		_, errs := te.mustRun(ExitOK, "sessions", "show", id, "--kill-orphans")
		if !strings.Contains(errs, "Stopped pgid") {
			t.Errorf("show --kill-orphans: %s", errs)
		}
		waitExit(t, exited)
	})
	t.Run("sessions show, open in another rein", func(t *testing.T) {
		te := newTestEnv(t)
		id, exited := orphanSession(t, te)
		other, err := jsonl.New(filepath.Join(te.home, ".local", "share", "rein", "sessions"))
		if err != nil {
			t.Fatal(err)
		}
		defer other.Close()
		if err := other.Acquire(id); err != nil { // the other rein runs the call
			t.Fatal(err)
		}
		_, errs := te.mustRun(ExitError, "sessions", "show", id, "--kill-orphans")
		want := fmt.Sprintf("session %s is open in another rein process (pid %d); its calls are running, not interrupted. Stop that rein first.", id, os.Getpid())
		if !strings.Contains(errs, want) {
			t.Errorf("show --kill-orphans of a live session:\n%s\nwant %q", errs, want)
		}
		select {
		case <-exited:
			t.Fatal("the live session's command was killed")
		case <-time.After(100 * time.Millisecond):
		}
		out, _ := te.mustRun(ExitOK, "sessions", "show", id)
		if strings.Contains(out, "Interrupted") || strings.Contains(out, "still running") || strings.Contains(out, "Healed") ||
			!strings.Contains(out, fmt.Sprintf("Open       in rein process %d", os.Getpid())) {
			t.Errorf("show of a live session:\n%s", out)
		}
		out, _ = te.mustRun(ExitOK, "sessions", "show", id, "--json")
		var rep sessionReport
		if err := json.Unmarshal([]byte(out), &rep); err != nil {
			t.Fatal(err)
		}
		if len(rep.Pending) != 0 || !rep.Heal.Empty() || rep.LiveIn != strconv.Itoa(os.Getpid()) {
			t.Errorf("show --json of a live session: %+v", rep)
		}
		// Once that rein is gone, the call is interrupted, and show takes
		// and gives back the lock.
		if err := other.Release(id); err != nil {
			t.Fatal(err)
		}
		out, _ = te.mustRun(ExitOK, "sessions", "show", id)
		if !strings.Contains(out, "still running") {
			t.Errorf("show after release:\n%s", out)
		}
		if err := other.Acquire(id); err != nil {
			t.Errorf("show kept the lock: %v", err)
		}
	})
	t.Run("resume", func(t *testing.T) {
		te := newTestEnv(t)
		id, _ := orphanSession(t, te)
		s := te.script("m", llmtest.Reply{Text: "resumed"})
		out, errs := te.mustRun(ExitOK, "run", "--resume", id, "-o", "stream-json", "go on")
		if !strings.Contains(errs, "healed on load") || !strings.Contains(errs, "kill -TERM -- -") {
			t.Errorf("resume notes:\n%s", errs)
		}
		// SESS-2: the loop surfaces the repair as part of its run_start event.
		first, _, _ := strings.Cut(out, "\n")
		if !strings.Contains(first, `"type":"run_start"`) || !strings.Contains(first, `"healed":"`) {
			t.Errorf("run_start does not report the healing: %s", first)
		}
		msgs := s.Requests()[0].Messages
		if len(msgs) != 4 || !msgs[2].ToolResults()[0].IsError {
			t.Errorf("healed history sent: %+v", msgs)
		}
	})
	t.Run("resume --kill-orphans", func(t *testing.T) {
		te := newTestEnv(t)
		id, exited := orphanSession(t, te)
		s := te.script("m", llmtest.Reply{Text: "resumed"}, llmtest.Reply{Text: "again"})
		_, errs := te.mustRun(ExitOK, "run", "--resume", id, "--kill-orphans", "go on")
		if !strings.Contains(errs, "stopped 1 process group") {
			t.Errorf("notes:\n%s", errs)
		}
		waitExit(t, exited)
		// SESS-1: the model is told rein stopped the command, not that it
		// still runs (issue 30, item 7) — in this run and the next.
		for i, want := range []string{"go on", "once more"} {
			if i > 0 {
				te.mustRun(ExitOK, "run", "--resume", id, want)
			}
			msgs := s.Requests()[i].Messages
			text := llm.Message{Content: msgs[2].ToolResults()[0].Content}.TextOf()
			if strings.Contains(text, "STILL RUNNING") || !strings.Contains(text, "rein stopped it") {
				t.Errorf("run %d: the result the model got for the stopped call: %q", i+1, text)
			}
		}
	})
}

// A session another rein has open cannot be resumed: the message says so
// once and names the fork that goes on from it. sessions list warns about a
// session whose metadata cannot be read instead of hiding it silently.
func TestSessionErrors(t *testing.T) {
	te := newTestEnv(t)
	te.script("m", llmtest.Reply{Text: "hello"}, llmtest.Reply{Text: "again"})
	out, _ := te.mustRun(ExitOK, "run", "--model", "scripted/m", "-o", "json", "say hello")
	var res result
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatal(err)
	}
	id := res.SessionID
	dir := filepath.Join(te.home, ".local", "share", "rein", "sessions")
	other, err := jsonl.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if err := other.Acquire(id); err != nil {
		t.Fatal(err)
	}
	_, errs := te.mustRun(ExitError, "run", "--model", "scripted/m", "--resume", id, "go on")
	if !strings.Contains(errs, "or fork it: rein sessions fork "+id) || strings.Count(errs, "wait") != 1 ||
		strings.Contains(errs, "Another rein process") {
		t.Errorf("resume of a locked session:\n%s", errs)
	}
	if err := other.Release(id); err != nil {
		t.Fatal(err)
	}

	te.script("n", llmtest.Reply{Text: "second"})
	out, _ = te.mustRun(ExitOK, "run", "--model", "scripted/n", "-o", "json", "another")
	var res2 result
	if err := json.Unmarshal([]byte(out), &res2); err != nil {
		t.Fatal(err)
	}
	meta := filepath.Join(dir, res2.SessionID+".meta.json")
	if err := os.WriteFile(meta, []byte("{not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	out, errs = te.mustRun(ExitOK, "sessions", "list")
	if !strings.Contains(out, id) || strings.Contains(out, res2.SessionID) {
		t.Errorf("list:\n%s", out)
	}
	if !strings.Contains(errs, "warning: session "+res2.SessionID+" is left out: "+meta+" cannot be read") {
		t.Errorf("list stderr lacks the warning:\n%s", errs)
	}
}
