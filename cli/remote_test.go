package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/reinhq/rein/eventbus"
	"github.com/reinhq/rein/llm"
	"github.com/reinhq/rein/llm/llmtest"
	"github.com/reinhq/rein/runner"
	"github.com/reinhq/rein/server"
	"github.com/reinhq/rein/session/sqlite"
)

// serveFor starts, in this process, the server rein serve builds — SQLite,
// the in-memory bus, the runner over the test's scripted models — and
// returns its URL.
func serveFor(t *testing.T, te *testEnv) string {
	t.Helper()
	db, err := sqlite.Open(filepath.Join(t.TempDir(), "rein.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	bus := eventbus.NewMemory(eventbus.Options{})
	a := te.app(&bytes.Buffer{}, &bytes.Buffer{})
	svc, err := runner.NewService(runner.ServiceConfig{Sessions: db, Ledger: db, Bus: bus, Resolve: a.resolveModel,
		DataDir: t.TempDir(), Getenv: a.getenv})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := server.New(server.Config{Runtime: svc, Sessions: db, Ledger: db, Bus: bus,
		Roots: []string{te.ws}, RateLimit: -1, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv.Handler())
	t.Cleanup(func() {
		hs.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		svc.Shutdown(ctx)
		bus.Close()
		db.Close()
	})
	return hs.URL
}

// CLI-1, API-1: rein run --server drives a server's run and prints what a
// local run prints, with the same exit code; sessions --server lists,
// shows, exports, forks and deletes the server's sessions.
func TestRunOnServer(t *testing.T) {
	te := newTestEnv(t)
	te.write("a.txt", "A")
	te.write("b.txt", "B")
	te.script("m", listThenAnswer()...)
	url := serveFor(t, te)
	out, _ := te.mustRun(ExitOK, "run", "--server", url, "--model", "scripted/m", "--output", "json", "what is here?")
	var res struct {
		SessionID    string `json:"session_id"`
		Reason, Text string
		ExitCode     int `json:"exit_code"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if res.Reason != "completed" || res.Text != "The workspace holds a.txt and b.txt." || res.SessionID == "" {
		t.Errorf("result %+v", res)
	}

	// Continue the session: the model sees the first exchange.
	s := te.script("m2", llmtest.Reply{Text: "Still a.txt and b.txt."})
	out, _ = te.mustRun(ExitOK, "run", "--server", url, "--model", "scripted/m2", "--continue", "and now?")
	if strings.TrimSpace(out) != "Still a.txt and b.txt." {
		t.Errorf("continued run printed %q", out)
	}
	if reqs := s.Requests(); len(reqs) != 1 || len(reqs[0].Messages) != 5 {
		t.Errorf("the continued run sent %d requests; want one holding the 4 earlier messages and the new one", len(reqs))
	}

	// A permission nobody can answer is denied at once, as in a local
	// headless run; the run goes on.
	te.script("w", llmtest.Reply{ToolCalls: []llm.ToolUse{llmtest.Call("c1", "write_file", `{"path":"c.txt","content":"x"}`)}},
		llmtest.Reply{Text: "could not write"})
	out, _ = te.mustRun(ExitOK, "run", "--server", url, "--model", "scripted/w", "--output", "stream-json", "write c")
	if !strings.Contains(out, `"decision":"deny","by":"user"`) {
		t.Errorf("no user denial in the stream:\n%s", out)
	}

	// AGENT-1: --agent reaches the server's run: the agent's prompt and
	// tools, from the server's definitions.
	te.userFile("agents/poet.md", agentFile("poet", "Writes poems.", "tools: [read_file]\n", "You write short poems."))
	p := te.script("p", llmtest.Reply{Text: "A poem."})
	te.mustRun(ExitOK, "run", "--server", url, "--model", "scripted/p", "--agent", "poet", "a poem")
	if req := p.Requests()[0]; !strings.Contains(req.System, "You write short poems.") || len(req.Tools) != 1 {
		t.Errorf("the server's run did not run as the agent: %d tools, system:\n%s", len(req.Tools), req.System)
	}

	// A run that fails on the server exits as a local one does.
	te.script("x", llmtest.Reply{Text: "…", Stop: llm.StopMaxTokens})
	te.mustRun(ExitMaxTokens, "run", "--server", url, "--model", "scripted/x", "go")

	list, _ := te.mustRun(ExitOK, "sessions", "--server", url, "list")
	if n := strings.Count(list, "\n"); n < 3 || !strings.Contains(list, res.SessionID) {
		t.Errorf("sessions list:\n%s", list)
	}
	show, _ := te.mustRun(ExitOK, "sessions", "--server", url, "show", res.SessionID)
	if !strings.Contains(show, "completed") || !strings.Contains(show, "what is here?") {
		t.Errorf("sessions show:\n%s", show)
	}
	md, _ := te.mustRun(ExitOK, "sessions", "--server", url, "export", res.SessionID)
	if !strings.Contains(md, "The workspace holds a.txt and b.txt.") {
		t.Errorf("export:\n%s", md)
	}
	forked, _ := te.mustRun(ExitOK, "sessions", "--server", url, "fork", res.SessionID)
	if !strings.Contains(forked, "Forked "+res.SessionID) {
		t.Errorf("fork: %s", forked)
	}
	te.mustRun(ExitOK, "sessions", "--server", url, "rm", res.SessionID)
	if _, errs := te.mustRun(ExitError, "sessions", "--server", url, "show", res.SessionID); !strings.Contains(errs, "404") {
		t.Errorf("show of a deleted session: %s", errs)
	}

	// Local-only flags are refused, not ignored.
	if _, errs := te.mustRun(ExitUsage, "run", "--server", url, "--allowed-tools", "bash", "go"); !strings.Contains(errs, "--allowed-tools") {
		t.Errorf("--allowed-tools with --server: %s", errs)
	}
}

// PERM-3, API-1: the model's ask_user on a server reaches rein run
// --server as a question event; without a terminal the question is
// answered at once with no answer, so the run goes on rather than waiting
// out the server's ask timeout.
func TestRunOnServerQuestion(t *testing.T) {
	te := newTestEnv(t)
	te.script("q", llmtest.Reply{ToolCalls: []llm.ToolUse{llmtest.Call("q1", "ask_user", `{"question":"Which port?","options":["80","8080"]}`)}},
		llmtest.Reply{Text: "went on"})
	url := serveFor(t, te)
	out, _ := te.mustRun(ExitOK, "run", "--server", url, "--model", "scripted/q", "--output", "stream-json", "serve it")
	if !strings.Contains(out, `"type":"question"`) || !strings.Contains(out, `"question":"Which port?"`) {
		t.Errorf("no question event in the stream:\n%s", out)
	}
	// Answered (with nothing), not timed out: the result says the user
	// gave no answer, not that nobody answered in time.
	if !strings.Contains(out, "The user gave no answer; proceed with your best judgement.") {
		t.Errorf("the model was not told there was no answer:\n%s", out)
	}
}
