package runner_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/reinhq/rein/agent"
	"github.com/reinhq/rein/llm"
	"github.com/reinhq/rein/llm/llmtest"
	"github.com/reinhq/rein/llm/registry"
	"github.com/reinhq/rein/runner"
	"github.com/reinhq/rein/session"
	"github.com/reinhq/rein/workspace"
)

// jobsSetup is a project workspace on the host (sandbox off, bypass
// mode) with a scripted model.
func jobsSetup(t *testing.T, model *llmtest.Scripted, env map[string]string) (*runner.Setup, session.Store, string) {
	t.Helper()
	dir := t.TempDir()
	home, work := filepath.Join(dir, "home"), filepath.Join(dir, "project")
	for _, d := range []string{home, work} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	vars := map[string]string{"HOME": home, "REIN_SANDBOX": "off", "REIN_MODEL": "scripted/demo", "REIN_PERMISSION_MODE": "bypass"}
	for k, v := range env {
		vars[k] = v
	}
	getenv := func(k string) string { return vars[k] }
	loaded, err := workspace.Load(workspace.Options{WorkDir: work, Getenv: getenv})
	if err != nil {
		t.Fatal(err)
	}
	store := session.NewMemStore()
	setup, err := runner.NewSetup(runner.Config{Loaded: loaded, Store: store, SessionsDir: filepath.Join(dir, "sessions"), Getenv: getenv,
		Resolve: func(_ *registry.Registry, spec string) (*runner.Model, error) {
			return &runner.Model{Provider: model, ProviderName: "scripted", Name: "demo", Label: spec,
				Caps: registry.Model{Name: "demo", ContextWindow: 100_000, MaxOutput: 4_000}}, nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { setup.Close() })
	if setup, err = setup.WithModel(setup.ModelSpec(nil)); err != nil {
		t.Fatal(err)
	}
	return setup, store, work
}

// submit runs a prompt and returns its done event.
func submit(t *testing.T, c *runner.Conversation, prompt string) *agent.DoneEvent {
	t.Helper()
	var done *agent.DoneEvent
	for ev, err := range c.Submit(context.Background(), "", prompt, nil) {
		if err != nil {
			t.Fatal(err)
		}
		if ev.Type == agent.EventDone {
			done = ev.Done
		}
	}
	if done == nil || done.Reason != agent.ReasonCompleted {
		t.Fatalf("run ended %+v", done)
	}
	return done
}

func jobCall(id, command string, background bool) llm.ToolUse {
	in, _ := json.Marshal(map[string]any{"command": command, "run_in_background": background})
	return llmtest.Call(id, "bash", string(in))
}

// TOOL-8, end to end with real bash through the runner: a job started in
// one run goes on after it; its end is told to the model with the next
// prompt, stored and sent again unchanged; the session's end stops the
// jobs; a job left running by a crash is found when the session is
// loaded, with its job id, and can be stopped.
func TestJobsEndToEnd_TOOL8(t *testing.T) {
	model := llmtest.NewScripted(
		llmtest.Reply{ToolCalls: []llm.ToolUse{jobCall("c1", "echo up; while [ ! -e stop ]; do sleep 0.02; done; echo bye; exit 3", true)}},
		llmtest.Reply{Text: "started"},
		llmtest.Reply{Text: "noted"},
		llmtest.Reply{ToolCalls: []llm.ToolUse{jobCall("c2", "sleep 1000", true)}},
		llmtest.Reply{Text: "again"},
	)
	setup, store, work := jobsSetup(t, model, nil)
	conv := setup.NewConversation()
	defer conv.Close()
	submit(t, conv, "start it")
	names := conv.Tools().Names()
	if !strings.Contains(strings.Join(names, ","), "bash,job_output,job_kill,job_list") {
		t.Fatalf("tools %v", names)
	}
	jobs := conv.Jobs()
	job, err := jobs.Get("1")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(work, "stop"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	select {
	case <-job.Done():
	case <-time.After(time.Minute):
		t.Fatal("the job did not end")
	}
	submit(t, conv, "what happened?")
	reqs := model.Requests()
	last := reqs[2].Messages[len(reqs[2].Messages)-1]
	// The prompt, the notice, and (in the request only) the task focus.
	if last.Role != llm.RoleUser || len(last.Content) != 3 || last.Content[0].(*llm.Text).Text != "what happened?" {
		j, _ := json.Marshal(last)
		t.Fatalf("the prompt was sent as %s", j)
	}
	notice := last.Content[1].(*llm.Text).Text
	if !strings.Contains(notice, "Background job 1 (`echo up;") || !strings.Contains(notice, "exited with code 3") ||
		!strings.Contains(notice, "not a message from the user") {
		t.Fatalf("notice %q", notice)
	}
	// Stored: the next run sends the same bytes.
	submit(t, conv, "once more")
	n := len(reqs[2].Messages)
	sent := append(slices.Clone(reqs[2].Messages[:n-1]), llm.Message{Role: llm.RoleUser, Content: last.Content[:2]})
	a, _ := json.Marshal(sent)
	b, _ := json.Marshal(model.Requests()[3].Messages[:n])
	if string(a) != string(b) {
		t.Fatalf("the history sent changed between runs:\n%s\n%s", a, b)
	}
	if strings.Count(string(b), "Background job 1") != 1 {
		t.Error("the notice was told twice")
	}

	// A crash: the process that ran the session is gone (here: its
	// conversation is abandoned), the job runs on; loading finds it.
	info := jobs.List()[1]
	if info.State != "running" || info.PGID <= 0 {
		t.Fatalf("job 2: %+v", info)
	}
	st, err := session.Load(context.Background(), store, conv.SessionID())
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Pending) != 1 || st.Pending[0].Job != "2" || !st.Pending[0].Alive || st.Pending[0].PGID != info.PGID {
		t.Fatalf("pending after a crash: %+v", st.Pending)
	}
	// The session's end stops its jobs.
	conv.Close()
	for range 500 {
		if syscall.Kill(-info.PGID, 0) != nil {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if syscall.Kill(-info.PGID, 0) == nil {
		t.Fatal("a job survived the session's end")
	}
	if st, err = session.Load(context.Background(), store, st.Session.ID); err != nil || len(st.Pending) != 0 {
		t.Fatalf("pending once the job ended: %+v %v", st.Pending, err)
	}
}

// TOOL-8: jobs.max_per_session 0 leaves background jobs out.
func TestJobsOff_TOOL8(t *testing.T) {
	model := llmtest.NewScripted(llmtest.Reply{Text: "hi"})
	setup, _, _ := jobsSetup(t, model, map[string]string{"REIN_JOBS_MAX_PER_SESSION": "0"})
	conv := setup.NewConversation()
	defer conv.Close()
	submit(t, conv, "hello")
	if conv.Jobs() != nil || strings.Contains(strings.Join(conv.Tools().Names(), ","), "job_") {
		t.Fatalf("tools %v", conv.Tools().Names())
	}
	for _, spec := range model.Requests()[0].Tools {
		if spec.Name == "bash" && strings.Contains(string(spec.InputSchema), "run_in_background") {
			t.Error("bash offers run_in_background with jobs off")
		}
	}
}
