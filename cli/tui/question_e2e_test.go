package tui

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/reinhq/rein/llm"
	"github.com/reinhq/rein/llm/llmtest/mockserver"
)

// askTurns are the mock model's turns: ask_user with two options (and
// control sequences in the question: a window title, a screen clear),
// a reply, ask_user without options, a reply.
func askTurns() []mockserver.Turn {
	return []mockserver.Turn{
		{ToolCalls: []mockserver.ToolCall{{ID: "q1", Name: "ask_user",
			Input: `{"question":"Which port?\u001b]2;pwned\u0007\u001b[2J\u001b[H Pick one.","options":["80","8080"]}`}}, Usage: usage(1000, 10)},
		{Text: "Using the port you chose.", Usage: usage(1100, 10)},
		{ToolCalls: []mockserver.ToolCall{{ID: "q2", Name: "ask_user", Input: `{"question":"Anything else?"}`}}, Usage: usage(1200, 10)},
		{Text: "Going on.", Usage: usage(1300, 10)},
	}
}

// toolResult is the text of the result of call id in the last request
// the mock got.
func toolResult(t *testing.T, srv *mockserver.Server, id string) string {
	t.Helper()
	reqs := srv.Requests()
	if len(reqs) == 0 || reqs[len(reqs)-1].Decoded == nil {
		t.Fatalf("no decoded request reached the mock: %d", len(reqs))
	}
	for _, m := range reqs[len(reqs)-1].Decoded.Messages {
		for _, b := range m.Content {
			if r, ok := b.(*llm.ToolResult); ok && r.ToolUseID == id {
				return llm.Message{Content: r.Content}.TextOf()
			}
		}
	}
	t.Fatalf("the last request holds no result of %s", id)
	return ""
}

// askUserFlow plays askTurns in rein: the panel (cleaned of the
// question's control sequences: the pane's title and the scrollback are
// untouched), ↓ Enter choosing 8080, Esc declining the second question;
// the model's next requests carry the answers, declineWant for the
// declined one.
func askUserFlow(t *testing.T, rs *reinSession, declineWant string) {
	rs.waitFor("the input box", "> Type a message")
	rs.text("set up the server")
	rs.keys("Enter")
	pane := rs.waitFor("the question panel", "> set up the server", "Question from the model", "Which port? Pick one.",
		"› 1. 80", "2. 8080", "3. Other… (type an answer)", "↑↓ choose · 1-3 or enter answer · esc decline",
		"waiting for your answer", "goes on without an answer in")
	if strings.Contains(pane, "Type a message") {
		t.Errorf("the prompt's input box is shown with the question:\n%s", pane)
	}
	if title := rs.must("display-message", "-p", "-t", rs.name, "#{pane_title}"); strings.Contains(title, "pwned") {
		t.Errorf("the question set the terminal's title: %q", title)
	}
	rs.keys("Down")
	rs.waitFor("the second choice highlighted", "› 2. 8080")
	if *update || testing.Verbose() {
		t.Logf("the question panel:\n%s", rs.screen())
	}
	rs.keys("Enter")
	rs.waitFor("the reply", "✓ ask_user(Which port? Pick one.) · answered", "The user answered: 8080", "Using the port you chose.")
	if got := toolResult(t, rs.srv, "q1"); got != "The user answered: 8080" {
		t.Errorf("the model got %q for the first question", got)
	}

	rs.waitFor("the input box", "> Type a message")
	rs.text("what next?")
	rs.keys("Enter")
	rs.waitFor("the answer box of a question without options", "Anything else?", "Type your answer", "enter send · alt+enter new line · esc decline")
	rs.keys("Escape")
	rs.waitFor("the reply after declining", "Going on.")
	if got := toolResult(t, rs.srv, "q2"); !strings.HasPrefix(got, declineWant) {
		t.Errorf("the model got %q for the declined question, want %q", got, declineWant)
	}
	rs.keys("C-d")
	rs.waitExit()
}

// PERM-3, CLI-6: in rein itself, against the mock vendor, the model's
// ask_user asks in the terminal UI; the answers reach its next requests.
func TestReinAskUser_PERM3(t *testing.T) {
	rs := startRein(t, nil, askTurns())
	askUserFlow(t, rs, "The user declined to answer; proceed with your best judgement")
}

// PERM-3, CLI-2, API-1: the same with rein --server URL: the server's
// question events are asked in the terminal UI and answered over the API,
// a declined question as declined (api.QuestionAnswer.Declined).
func TestReinAskUserOnServer_PERM3(t *testing.T) {
	rs := newReinSession(t, nil, askTurns())
	url := rs.serve()
	rs.launch("--server", url)
	rs.waitFor("the server's session", "the server's default", "on http://127.0")
	askUserFlow(t, rs, "The user declined to answer; proceed with your best judgement")
}

// serve starts rein serve on a free port of 127.0.0.1 in the session's
// workspace and returns its URL; it is stopped when the test ends.
func (rs *reinSession) serve() string {
	t := rs.t
	t.Helper()
	cmd := exec.Command(rs.bin, "serve", "--addr", "127.0.0.1:0", "--root", rs.ws,
		"--data-dir", filepath.Join(t.TempDir(), "data"), "--console=false", "--log-level", "warn")
	cmd.Dir = rs.ws
	cmd.Env = append(rs.env(), "PATH="+os.Getenv("PATH"))
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting rein serve: %v", err)
	}
	var mu sync.Mutex
	var log bytes.Buffer
	urls := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			line := sc.Text()
			mu.Lock()
			log.WriteString(line + "\n")
			mu.Unlock()
			if _, url, ok := strings.Cut(line, "rein: serving on "); ok {
				url, _, _ = strings.Cut(url, " ")
				select {
				case urls <- url:
				default:
				}
			}
		}
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
		if t.Failed() {
			mu.Lock()
			t.Logf("rein serve's log:\n%s", log.String())
			mu.Unlock()
		}
	})
	select {
	case url := <-urls:
		return url
	case <-time.After(waitLimit):
		mu.Lock()
		defer mu.Unlock()
		t.Fatalf("rein serve did not start:\n%s", log.String())
	}
	return ""
}
