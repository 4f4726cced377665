package tui

import (
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// tmuxSession is a tmux server of its own (socket in a temporary
// directory) running one session.
type tmuxSession struct {
	t    *testing.T
	bin  string
	sock string
	name string
	last string // the last capture, for failure messages
}

// run runs a tmux command against the test's server.
func (s *tmuxSession) run(args ...string) (string, error) {
	cmd := exec.Command(s.bin, append([]string{"-S", s.sock, "-f", "/dev/null"}, args...)...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// must runs a tmux command and fails the test when it fails.
func (s *tmuxSession) must(args ...string) string {
	s.t.Helper()
	out, err := s.run(args...)
	if err != nil {
		s.t.Fatalf("tmux %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

// capture returns the pane's text, with the scrollback.
func (s *tmuxSession) capture() string {
	s.t.Helper()
	s.last = s.must("capture-pane", "-p", "-t", s.name, "-S", "-200")
	return s.last
}

// waitFor polls the pane until it contains every one of want, failing after
// waitLimit.
func (s *tmuxSession) waitFor(what string, want ...string) string {
	s.t.Helper()
	return s.waitUntil(what, func(pane string) bool { return containsAll(pane, want) })
}

// waitUntil polls the pane until cond holds, failing after waitLimit.
func (s *tmuxSession) waitUntil(what string, cond func(pane string) bool) string {
	s.t.Helper()
	deadline := time.Now().Add(waitLimit)
	for {
		pane := s.capture()
		if cond(pane) {
			return pane
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("timed out waiting for %s; the pane shows:\n%s", what, pane)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// waitExit waits until the demo has exited with status 0 (tmux may mark the
// pane dead a little before it knows the status). When it does not exit in
// time, it asks the Go runtime for a goroutine dump (SIGQUIT) to show why.
func (s *tmuxSession) waitExit() {
	s.t.Helper()
	deadline := time.Now().Add(waitLimit)
	var deadSince time.Time
	for {
		out, _ := s.run("display-message", "-p", "-t", s.name, "#{pane_dead}|#{pane_dead_status}|#{pane_dead_signal}|#{pane_pid}")
		f := strings.Split(strings.TrimSpace(out), "|")
		dead := len(f) == 4 && f[0] == "1"
		switch {
		case dead && f[1] == "0":
			return
		case dead && (f[1] != "" || f[2] != ""):
			s.t.Fatalf("the demo exited with status %q, signal %q:\n%s", f[1], f[2], s.capture())
		case dead && deadSince.IsZero():
			deadSince = time.Now()
		case dead && time.Since(deadSince) > 2*time.Second:
			// tmux marks a pane dead when its output ends and reads the exit
			// status when it reaps the process; now and then it does not
			// reap it (a zombie). The demo reports errors on the pane.
			if pane := s.capture(); strings.Contains(pane, "tuidemo:") {
				s.t.Fatalf("the demo failed:\n%s", pane)
			}
			return
		}
		if !dead && time.Now().After(deadline) {
			if len(f) == 4 {
				if pid, err := strconv.Atoi(f[3]); err == nil {
					_ = syscall.Kill(pid, syscall.SIGQUIT)
					time.Sleep(time.Second)
				}
			}
			out, _ := s.run("capture-pane", "-p", "-t", s.name, "-S", "-5000")
			s.t.Fatalf("the demo did not exit; the pane shows:\n%s", out)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// keys sends tmux key names (Enter, C-c, y) to the pane.
func (s *tmuxSession) keys(keys ...string) {
	s.t.Helper()
	s.must(append([]string{"send-keys", "-t", s.name}, keys...)...)
}

// text types s literally.
func (s *tmuxSession) text(str string) {
	s.t.Helper()
	s.must("send-keys", "-t", s.name, "-l", str)
}

// tmuxTools returns the tmux and go commands the end-to-end tests need,
// skipping the test (saying why) when one is missing or with -short.
func tmuxTools(t *testing.T) (tmux, goBin string) {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: the tmux end-to-end test does not run with -short (run without -short; CI does)")
	}
	tmux, err := exec.LookPath("tmux")
	if err != nil {
		t.Skip("tmux is not installed (apt-get install -y tmux): skipping the terminal end-to-end test")
	}
	goBin, err = exec.LookPath("go")
	if err != nil {
		t.Skip("the go command is not on PATH: cannot build the program the tmux test runs")
	}
	return tmux, goBin
}

// startDemo builds internal/tuidemo and starts it in a 120×40 tmux session,
// with env ("NAME=value") added to its environment.
func startDemo(t *testing.T, env ...string) *tmuxSession {
	t.Helper()
	tmux, goBin := tmuxTools(t)
	dir := t.TempDir()
	demo := filepath.Join(dir, "tuidemo")
	if out, err := exec.Command(goBin, "build", "-o", demo, "./internal/tuidemo").CombinedOutput(); err != nil {
		t.Fatalf("building the demo: %v\n%s", err, out)
	}
	s := &tmuxSession{t: t, bin: tmux, sock: filepath.Join(dir, "tmux.sock"), name: "demo"}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("last capture:\n%s", s.last)
		}
		_, _ = s.run("kill-server")
	})
	args := []string{"new-session", "-d", "-x", "120", "-y", "40", "-s", s.name}
	for _, e := range env {
		args = append(args, "-e", e)
	}
	s.must(append(args, demo, ";", "set-option", "-t", s.name, "remain-on-exit", "on")...)
	return s
}

// TestTmuxEndToEnd runs the demo in a real terminal (tmux): a multi-line
// paste, a prompt with a streamed markdown answer, a permission question
// answered y, the final answer, and Ctrl-C twice to exit.
func TestTmuxEndToEnd(t *testing.T) {
	s := startDemo(t)
	s.waitFor("the session header and the input box", "✻ rein · demo-model · default mode", "> Type a message", "/ commands · @ files · ! shell · shift+tab mode")

	// A bracketed paste keeps its newlines and sends nothing.
	s.must("set-buffer", "-b", "p", "first pasted line\nsecond pasted line")
	s.must("paste-buffer", "-p", "-b", "p", "-t", s.name)
	pane := s.waitFor("the pasted lines in the input box", "│> first pasted line", "│  second pasted line")
	if strings.Contains(pane, "Working…") {
		t.Fatalf("the paste started a run:\n%s", pane)
	}
	s.keys("C-c")
	s.waitFor("the input box to be cleared", "> Type a message")

	s.text("run the tests")
	s.keys("Enter")
	pane = s.waitFor("the permission question",
		"> run the tests", "✻ Thought: The user wants the tests run.", "Plan", "I'll run the test suite first:",
		"● bash(go test ./...) waiting for permission", "Permission required bash", "go test ./...",
		"reason: bash asks in default mode", "always would allow: bash(go test:*)",
		"allow once (y) / always (a) / deny (n)", "denies in 4m")
	if strings.Contains(pane, "Type a message") {
		t.Errorf("the input box is shown with the question:\n%s", pane)
	}

	s.keys("y")
	pane = s.waitFor("the final answer",
		"✓ bash(go test ./...) · allowed once · 1.2s", "⎿  ok    github.com/demo/agent", "… +1 lines",
		"All tests pass: 3 packages ok.", "> Type a message", "● default mode · demo-model · 2.5k tokens · $0.0096")
	if strings.Contains(pane, "allow once (y)") {
		t.Errorf("the question is still shown:\n%s", pane)
	}
	if strings.Index(pane, "Plan") > strings.Index(pane, "All tests pass") {
		t.Errorf("the answers are out of order:\n%s", pane)
	}

	// Ctrl-C during a run cancels the run, not the program.
	s.text("once more")
	s.keys("Enter")
	s.waitUntil("the second permission question", func(p string) bool {
		return strings.Count(p, "> once more") == 1 && strings.Contains(p, "allow once (y)")
	})
	s.keys("C-c")
	pane = s.waitFor("the cancelled run", "✗ bash(go test ./...) · interrupted", "stopped: cancelled", "> Type a message")
	if strings.Contains(pane, "Pane is dead") {
		t.Fatalf("Ctrl-C during a run ended the program:\n%s", pane)
	}

	s.keys("C-c")
	s.waitFor("the exit hint", "Press Ctrl-C again to exit")
	s.keys("C-c")
	s.waitExit()
	pane = s.capture()
	if !containsAll(pane, []string{"> run the tests", "All tests pass: 3 packages ok.", "✻ bye"}) {
		t.Errorf("the scrollback lost the session:\n%s", pane)
	}
	for _, stale := range []string{"Type a message", "Press Ctrl-C again", "/ commands · @ files · ! shell · shift+tab mode"} {
		if strings.Contains(pane, stale) {
			t.Errorf("%q is left on screen after exit:\n%s", stale, pane)
		}
	}
	t.Logf("final pane:\n%s", pane)
}

// TestTmuxColors checks that the session uses colours on a terminal and none
// with NO_COLOR (SPEC CLI-4).
func TestTmuxColors(t *testing.T) {
	for _, tc := range []struct {
		name string
		env  []string
		want bool
	}{
		{"colour", []string{"TERM=xterm-256color"}, true},
		{"NO_COLOR", []string{"TERM=xterm-256color", "NO_COLOR=1"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := startDemo(t, tc.env...)
			s.waitFor("the session header", "✻ rein", "> Type a message")
			s.text("go")
			s.keys("Enter")
			s.waitFor("the permission question", "allow once (y)")
			pane := s.must("capture-pane", "-p", "-e", "-t", s.name, "-S", "-200")
			if got := colorSGR.MatchString(pane); got != tc.want {
				t.Errorf("colour codes present: %v, want %v; pane:\n%q", got, tc.want, pane)
			}
		})
	}
}

// colorSGR matches an SGR sequence that sets a foreground or background
// colour.
var colorSGR = regexp.MustCompile(`\x1b\[(?:[0-9;]*;)?(?:3[0-8]|4[0-8]|9[0-7]|10[0-7])[;m]`)
