package tui

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/reinhq/rein/llm"
	"github.com/reinhq/rein/llm/llmtest/mockserver"
)

// update rewrites the golden screens under testdata/screens.
var update = flag.Bool("update", false, "rewrite the golden screens of the end-to-end tests")

// The rein binary the end-to-end tests run, built once per test process.
var (
	reinOnce sync.Once
	reinBin  string
	reinErr  error
	reinDir  string
)

func TestMain(m *testing.M) {
	code := m.Run()
	if reinDir != "" {
		os.RemoveAll(reinDir)
	}
	os.Exit(code)
}

// buildRein builds cmd/rein once.
func buildRein(t *testing.T, goBin string) string {
	t.Helper()
	reinOnce.Do(func() {
		reinDir, reinErr = os.MkdirTemp("", "rein-e2e-")
		if reinErr != nil {
			return
		}
		reinBin = filepath.Join(reinDir, "rein")
		out, err := exec.Command(goBin, "build", "-o", reinBin, "../../cmd/rein").CombinedOutput()
		if err != nil {
			reinErr = fmt.Errorf("building rein: %v\n%s", err, out)
		}
	})
	if reinErr != nil {
		t.Fatal(reinErr)
	}
	return reinBin
}

// reinSession is rein itself running in tmux against the mock vendor
// (package mockserver): a workspace and a HOME of its own.
type reinSession struct {
	*tmuxSession
	srv      *mockserver.Server
	ws, home string
	bin      string
	launches int
}

// startRein starts rein (the interactive session) in a 100×30 tmux pane,
// in a fresh workspace holding files (name → content), talking to a mock
// Anthropic server that plays turns. args are rein's arguments.
func startRein(t *testing.T, files map[string]string, turns []mockserver.Turn, args ...string) *reinSession {
	t.Helper()
	rs := newReinSession(t, files, turns)
	rs.launch(args...)
	return rs
}

// newReinSession prepares what startRein starts rein in, without starting
// it.
func newReinSession(t *testing.T, files map[string]string, turns []mockserver.Turn) *reinSession {
	t.Helper()
	tmux, goBin := tmuxTools(t)
	bin := buildRein(t, goBin)
	dir := t.TempDir()
	rs := &reinSession{srv: mockserver.New(), ws: filepath.Join(dir, "ws"), home: filepath.Join(dir, "home")}
	t.Cleanup(rs.srv.Close)
	rs.srv.Enqueue(turns...)
	for _, d := range []string{rs.ws, rs.home} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for name, content := range files {
		p := filepath.Join(rs.ws, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	s := &tmuxSession{t: t, bin: tmux, sock: filepath.Join(dir, "tmux.sock"), name: "rein"}
	rs.tmuxSession, rs.bin = s, bin
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("last capture:\n%s", s.last)
		}
		_, _ = s.run("kill-server")
	})
	return rs
}

// launch starts rein with args in a new tmux session named after the
// count of launches ("rein", "rein2", …).
func (rs *reinSession) launch(args ...string) {
	rs.t.Helper()
	rs.launches++
	if rs.launches > 1 {
		rs.name = fmt.Sprintf("rein%d", rs.launches)
	}
	cmd := []string{"new-session", "-d", "-x", "100", "-y", "30", "-s", rs.name, "-c", rs.ws}
	for _, e := range rs.env() {
		cmd = append(cmd, "-e", e)
	}
	cmd = append(append(cmd, rs.bin), args...)
	rs.must(append(cmd, ";", "set-option", "-t", rs.name, "remain-on-exit", "on")...)
}

// env is rein's environment ("NAME=value"): its HOME, the mock vendor,
// no colours.
func (rs *reinSession) env() []string {
	return []string{"HOME=" + rs.home, "ANTHROPIC_API_KEY=test-key", "ANTHROPIC_BASE_URL=" + rs.srv.URL,
		"TERM=xterm-256color", "NO_COLOR=1", "XDG_CONFIG_HOME=" + filepath.Join(rs.home, ".config"),
		"XDG_DATA_HOME=" + filepath.Join(rs.home, ".local", "share"), "XDG_CACHE_HOME=" + filepath.Join(rs.home, ".cache")}
}

// screen is the visible pane (no scrollback), its trailing blanks gone
// and the workspace's path replaced by <ws>, for golden comparisons.
func (rs *reinSession) screen() string {
	rs.t.Helper()
	out := rs.must("capture-pane", "-p", "-J", "-t", rs.name)
	out = strings.ReplaceAll(out, rs.ws, "<ws>")
	lines := strings.Split(out, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " ")
	}
	return strings.TrimRight(strings.Join(lines, "\n"), "\n") + "\n"
}

// sessionID matches the id of a session in a screen.
var sessionID = regexp.MustCompile(`\b[0-9a-f]{20}\b`)

// fromLast is screen from the start of the last line holding mark on:
// the box drawn in place of the input, without the scrollback above it.
func fromLast(screen, mark string) string {
	i := strings.LastIndex(screen, mark)
	if i < 0 {
		return screen
	}
	return screen[strings.LastIndex(screen[:i], "\n")+1:]
}

// blankRun matches a run of empty lines.
var blankRun = regexp.MustCompile(`\n{2,}`)

// golden compares a screen with testdata/screens/NAME.txt (-update
// rewrites it). Empty lines are left out: the live area keeps its tallest
// height until the next print, which depends on how fast the keys came.
func golden(t *testing.T, name, screen string) {
	t.Helper()
	screen = sessionID.ReplaceAllString(screen, "<session>")
	screen = blankRun.ReplaceAllString(screen, "\n")
	p := filepath.Join("testdata", "screens", name+".txt")
	if *update {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(screen), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(p)
	if err != nil {
		t.Fatalf("%v (run go test -run %s -update to write it)", err, t.Name())
	}
	if string(want) != screen {
		t.Errorf("screen %s differs from %s (go test -update rewrites it)\n--- got:\n%s\n--- want:\n%s", name, p, screen, want)
	}
}

// CLI-6, CLI-2: in rein itself, against the mock vendor: / opens the menu
// of commands with descriptions, typing filters it fuzzily, Enter runs the
// chosen command; a prompt is answered by the mock model.
func TestReinSlashMenu_CLI6(t *testing.T) {
	rs := startRein(t, nil, []mockserver.Turn{{Text: "Hello from the mock.", Usage: usage(3000, 20)}})
	rs.waitFor("the input box", "> Type a message")
	rs.text("/")
	rs.waitFor("the menu", "/help", "list the commands and keys", "↑↓ choose")
	rs.text("cst")
	rs.waitUntil("the menu filtered to /cost", func(p string) bool {
		// Every key typed shows in the input box, and the menu has followed
		// it: "/cs" already filters to /cost.
		return strings.Contains(p, "> /cst ") && strings.Contains(p, "› /cost") && !strings.Contains(p, "/compact")
	})
	golden(t, "slash-menu-cost", rs.screen())
	rs.keys("Enter")
	rs.waitFor("the /cost output", "> /cost", "This conversation:")
	rs.text("hi there")
	rs.keys("Enter")
	rs.waitFor("the mock's answer", "> hi there", "Hello from the mock.")
	rs.keys("C-d")
	rs.waitExit()
}

// usage is a mock turn's token counts.
func usage(in, out int64) llm.Usage { return llm.Usage{InputTokens: in, OutputTokens: out} }

// CLI-6, PERM-7: the status line always shows the mode; Shift+Tab cycles
// default → accept-edits → plan → default in rein itself; after a reply
// it shows the share of the context window used and the cost.
func TestReinModeCycleAndStatus_CLI6(t *testing.T) {
	rs := startRein(t, nil, []mockserver.Turn{{Text: "Done.", Usage: usage(20000, 100)}})
	rs.waitFor("the status line", "● default mode · anthropic/claude-sonnet-4-5")
	for _, want := range []string{"⏵⏵ accept-edits mode", "⏸ plan mode", "● default mode"} {
		rs.keys("BTab")
		rs.waitUntil("the status line to show "+want, func(p string) bool {
			lines := strings.Split(strings.TrimRight(p, "\n "), "\n")
			return strings.HasPrefix(strings.TrimSpace(lines[len(lines)-1]), want)
		})
	}
	rs.waitFor("the mode changes in the scrollback", "Permission mode: accept-edits.", "Permission mode: plan.", "Permission mode: default.")
	rs.text("go")
	rs.keys("Enter")
	rs.waitFor("the reply and its usage", "Done.", "● default mode · anthropic/claude-sonnet-4-5 · 10% context · 20.1k tokens · $0.0615")
	rs.waitUntil("the run to end", func(p string) bool { return !strings.Contains(p, "Working…") })
	golden(t, "status-after-reply", rs.screen())
	rs.keys("C-d")
	rs.waitExit()
}

// CLI-6: in rein itself, ! runs a command through the bash tool's path
// (the deny rule of --disallowed-tools refuses one), shows its output, and
// the model gets it with the next prompt.
func TestReinShellMode_CLI6(t *testing.T) {
	rs := startRein(t, map[string]string{"notes.txt": "from-a-file\n"},
		[]mockserver.Turn{{Text: "I see the file.", Usage: usage(1000, 10)}}, "--disallowed-tools", "bash(rm:*)")
	rs.waitFor("the input box", "> Type a message")
	rs.text("!cat notes.txt")
	rs.waitFor("the shell-mode hint", "! shell mode")
	rs.keys("Enter")
	rs.waitFor("the command's output", "! cat notes.txt", "⎿  from-a-file", "1 shell output(s) go to the model")
	rs.text("!rm notes.txt")
	rs.keys("Enter")
	rs.waitFor("the refusal", "! rm notes.txt", "✗ refused by the permission policy")
	if _, err := os.Stat(filepath.Join(rs.ws, "notes.txt")); err != nil {
		t.Fatalf("the denied rm ran: %v", err)
	}
	rs.text("what is in it?")
	rs.keys("Enter")
	rs.waitFor("the reply", "I see the file.")
	reqs := rs.srv.Requests()
	if len(reqs) == 0 || reqs[len(reqs)-1].Decoded == nil {
		t.Fatalf("no decoded request reached the mock: %d", len(reqs))
	}
	msgs := reqs[len(reqs)-1].Decoded.Messages
	last := msgs[len(msgs)-1].TextOf()
	for _, want := range []string{"<bash-input>cat notes.txt</bash-input>", "from-a-file", "what is in it?"} {
		if !strings.Contains(last, want) {
			t.Errorf("the prompt the model got lacks %q:\n%s", want, last)
		}
	}
	if strings.Contains(last, "rm notes.txt") {
		t.Errorf("the refused command reached the model:\n%s", last)
	}
	rs.keys("C-d")
	rs.waitExit()
}

// CLI-6: in rein itself, @ offers the workspace's files (not the ignored
// ones), fuzzily; the chosen path goes in the text; #2-3 after it puts
// those lines in the prompt the model gets; a sensitive file's lines are
// refused and nothing is sent.
func TestReinFilePicker_CLI6(t *testing.T) {
	rs := startRein(t, map[string]string{
		".gitignore":          "build/\n",
		"internal/model.go":   "package internal\n\nfunc Model() {}\n// end\n",
		"internal/menu.go":    "package internal\n",
		"build/model_gen.go":  "package build\n",
		".env":                "TOKEN=very-secret\n",
		"docs/model-notes.md": "# notes\n",
	}, []mockserver.Turn{{Text: "It declares Model.", Usage: usage(1000, 10)}})
	rs.waitFor("the input box", "> Type a message")
	rs.text("explain @intmod")
	pane := rs.waitFor("the picker", "> explain @intmod ", "› internal/model.go", "enter insert")
	if strings.Contains(pane, "build/model_gen.go") {
		t.Errorf("an ignored file is offered:\n%s", pane)
	}
	golden(t, "file-picker", rs.screen())
	rs.keys("Tab")
	rs.waitFor("the completed path", "│> explain @internal/model.go  ")
	rs.text("#L2-3 please")
	rs.keys("Enter")
	rs.waitFor("the reply", "> explain @internal/model.go#L2-3 please", "It declares Model.")
	reqs := rs.srv.Requests()
	msgs := reqs[len(reqs)-1].Decoded.Messages
	last := msgs[len(msgs)-1].TextOf()
	if !strings.Contains(last, "<file path=\"internal/model.go\" lines=\"2-3\">\n     2\t\n     3\tfunc Model() {}\n</file>") {
		t.Errorf("the prompt the model got lacks the lines:\n%s", last)
	}
	rs.text("what is in @.env#1")
	rs.keys("Enter")
	rs.waitFor("the refusal", "✗ @.env#1: the permission policy does not let the model read it freely")
	if n := len(rs.srv.Requests()); n != len(reqs) {
		t.Errorf("the refused mention reached the model (%d requests, want %d)", n, len(reqs))
	}
	rs.keys("C-c")
	rs.keys("C-d")
	rs.waitExit()
}

// CLI-6, SESS-3: rein --continue shows the earlier conversation (prompts,
// answers, tool calls) in the scrollback, not a blank screen; /resume opens
// a picker that searches the sessions, previews one (Tab) and resumes it
// (Enter), printing its conversation.
func TestReinResume_CLI6(t *testing.T) {
	rs := startRein(t, map[string]string{"notes.txt": "alpha\n"}, []mockserver.Turn{
		{ToolCalls: []mockserver.ToolCall{{ID: "c1", Name: "read_file", Input: `{"path":"notes.txt"}`}}, Usage: usage(1000, 10)},
		{Text: "The notes say **alpha**.", Usage: usage(1100, 10)},
		{Text: "Second answer.", Usage: usage(1000, 10)},
		{Text: "Back in the first.", Usage: usage(1200, 10)},
	})
	rs.waitFor("the input box", "> Type a message")
	rs.text("first question about notes")
	rs.keys("Enter")
	rs.waitFor("the first answer", "✓ read_file(notes.txt)", "The notes say alpha.")
	rs.keys("C-d")
	rs.waitExit()

	rs.launch("--continue")
	pane := rs.waitFor("the earlier conversation", "── the conversation so far: 4 messages ──", "> first question about notes",
		"✓ read_file(notes.txt)", "⎿  ", "alpha", "The notes say alpha.", "── end of the earlier conversation ──", "> Type a message")
	if strings.Count(pane, "The notes say alpha.") != 1 {
		t.Errorf("the conversation is printed more than once:\n%s", pane)
	}
	rs.keys("C-d")
	rs.waitExit()

	rs.launch()
	rs.waitFor("the input box", "> Type a message")
	rs.text("second question")
	rs.keys("Enter")
	rs.waitFor("the second answer", "Second answer.")
	rs.text("/resume")
	rs.keys("Enter")
	rs.waitFor("the picker", "Resume a session", "second question", "first question about notes", "current", "tab preview · enter resume")
	rs.text("frst")
	rs.waitUntil("the search to keep the first session on top", func(p string) bool {
		return strings.Contains(p, "search: frst▏") && strings.Contains(p, "› first question about notes") && !strings.Contains(p, "second question ")
	})
	rs.keys("Tab")
	rs.waitFor("the preview", "│ > first question about notes", "│   The notes say alpha.")
	golden(t, "resume-picker", rs.screen())
	rs.keys("Enter")
	rs.waitFor("the resumed conversation", "Resumed session", "── the conversation so far: 4 messages ──", "── end of the earlier conversation ──")
	rs.text("and now?")
	rs.keys("Enter")
	rs.waitFor("the answer in the resumed session", "Back in the first.")
	reqs := rs.srv.Requests()
	msgs := reqs[len(reqs)-1].Decoded.Messages
	if len(msgs) != 5 || !strings.Contains(msgs[0].TextOf(), "first question about notes") {
		t.Errorf("the resumed session's request has %d messages, first %q", len(msgs), msgs[0].TextOf())
	}
	rs.keys("C-d")
	rs.waitExit()
}

// CLI-6: the in-session commands in rein itself: /permissions (and adding
// a rule), /doctor, /agents, /mcp, /jobs, /sandbox, /help listing them.
func TestReinPanels_CLI6(t *testing.T) {
	rs := startRein(t, nil, nil)
	rs.waitFor("the input box", "> Type a message")
	for _, tc := range []struct {
		line string
		want []string
	}{
		{"/permissions allow bash(go test:*)", []string{"Added the rule allow bash(go test:*)."}},
		{"/permissions", []string{"Permission mode: default", "Allow rules", "bash(go test:*) (session)"}},
		// Taller than the 30-row window: it goes above the view in
		// pieces, none lost, and leaves no stale view in the scrollback.
		{"/doctor", []string{"rein doctor:", "configuration", "sandbox policy writable", "sandbox policy network", "sessions      kept"}},
		{"/agents", []string{"NAME", "ORIGIN"}},
		{"/mcp", []string{"No MCP servers"}},
		{"/jobs", []string{"> /jobs"}},
		{"/sandbox", []string{"> /sandbox"}},
		{"/help", []string{"/permissions [allow|ask|deny RULE]", "/doctor", "/init [chat]"}},
	} {
		rs.must("clear-history", "-t", rs.name)
		rs.text(tc.line)
		rs.keys("Enter") // a name typed in full is the menu's first entry

		pane := rs.waitFor(tc.line+"'s output", append(tc.want, "> Type a message")...)
		if n := strings.Count(pane, "> Type a message"); n != 1 {
			t.Errorf("after %s the pane shows the input box %d times (a stale view left by a print):\n%s", tc.line, n, pane)
		}
	}
	rs.keys("C-d")
	rs.waitExit()
}

// CLI-6: in rein itself, a prompt's file changes (edit_file, write_file)
// are checkpointed outside the workspace; the checkpoints survive a
// resume; /rewind restores the code and the conversation to before that
// prompt (a new file removed, an edited one put back, the conversation
// forked with the earlier exchange shown).
func TestReinRewind_CLI6(t *testing.T) {
	rs := startRein(t, map[string]string{"main.go": "package main\n\nfunc main() {}\n"}, []mockserver.Turn{
		{Text: "Hi.", Usage: usage(1000, 10)},
		{ToolCalls: []mockserver.ToolCall{{ID: "r1", Name: "read_file", Input: `{"path":"main.go"}`}}, Usage: usage(1000, 10)},
		{ToolCalls: []mockserver.ToolCall{
			{ID: "e1", Name: "edit_file", Input: `{"path":"main.go","old_string":"func main() {}","new_string":"func main() { println(1) }"}`},
			{ID: "w1", Name: "write_file", Input: `{"path":"new.txt","content":"created\n"}`},
		}, Usage: usage(1000, 10)},
		{Text: "Changed.", Usage: usage(1000, 10)},
		{Text: "Still here.", Usage: usage(1000, 10)},
	}, "--permission-mode", "accept-edits")
	rs.waitFor("the input box", "> Type a message")
	rs.text("hello")
	rs.keys("Enter")
	rs.waitFor("the first answer", "Hi.")
	rs.text("make the change")
	rs.keys("Enter")
	rs.waitFor("the change", "✓ edit_file(main.go)", "✓ write_file(new.txt)", "Changed.")
	if got, _ := os.ReadFile(filepath.Join(rs.ws, "main.go")); !strings.Contains(string(got), "println(1)") {
		t.Fatalf("the edit did not happen: %q", got)
	}
	if entries, _ := os.ReadDir(rs.ws); len(entries) != 2 {
		t.Errorf("the workspace holds more than main.go and new.txt (a checkpoint inside it?): %v", entries)
	}
	rs.keys("C-d")
	rs.waitExit()

	rs.launch("--continue", "--permission-mode", "accept-edits")
	rs.waitFor("the resumed conversation", "── end of the earlier conversation ──")
	rs.text("/rewind")
	rs.keys("Enter")
	rs.waitFor("the rewind picker", "Rewind to before a prompt", "1. hello", "› 2. make the change", "2 file(s) changed", "c code only")
	golden(t, "rewind-picker", fromLast(rs.screen(), "╭"))
	rs.keys("Enter")
	rs.waitFor("the rewind", "Code restored to before \"make the change\": 1 file(s) put back, 1 removed.",
		"Conversation rewound to before", "── the conversation so far: 2 messages ──")
	if got, _ := os.ReadFile(filepath.Join(rs.ws, "main.go")); string(got) != "package main\n\nfunc main() {}\n" {
		t.Errorf("main.go was not restored: %q", got)
	}
	if _, err := os.Stat(filepath.Join(rs.ws, "new.txt")); err == nil {
		t.Error("new.txt, created by the prompt, is still there")
	}
	rs.text("and now?")
	rs.keys("Enter")
	rs.waitFor("the answer in the rewound conversation", "Still here.")
	reqs := rs.srv.Requests()
	msgs := reqs[len(reqs)-1].Decoded.Messages
	if len(msgs) != 3 || msgs[0].TextOf() != "hello" {
		var texts []string
		for _, m := range msgs {
			texts = append(texts, string(m.Role)+": "+m.TextOf())
		}
		t.Errorf("the rewound conversation sent %d messages: %q", len(msgs), texts)
	}
	rs.keys("C-d")
	rs.waitExit()
}
