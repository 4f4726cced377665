package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/reinhq/rein/agent"
	"github.com/reinhq/rein/llm"
	"github.com/reinhq/rein/llm/llmtest"
	"github.com/reinhq/rein/llm/llmtest/mockserver"
)

// CLI-1: the three output formats, against a scripted model that calls a
// real tool. stream-json is exactly the agent's events, one per line. The
// output is the same whether the machine has bubblewrap or not (the
// sandbox is off: what it says is TestSandboxNoteOnlyWhenWeaker_TOOL7's).
func TestRunOutputGolden(t *testing.T) {
	for _, machine := range []string{"as it is", "without bwrap"} {
		t.Run(machine, func(t *testing.T) {
			if machine == "without bwrap" {
				withoutBwrap(t)
			}
			runOutputGolden(t)
		})
	}
}

func runOutputGolden(t *testing.T) {
	for _, format := range []string{"text", "json", "stream-json"} {
		t.Run(format, func(t *testing.T) {
			te := newTestEnv(t)
			te.env["REIN_SANDBOX"] = "off"
			te.write("a.txt", "a\n")
			te.write("b.txt", "b\n")
			te.script("m", listThenAnswer()...)
			out, errs := te.mustRun(ExitOK, "run", "--model", "scripted/m", "--output", format, "--verbose", "what is here?")
			if format == "text" {
				out = "stdout:\n" + out + "stderr:\n" + errs
			} else if errs != "" {
				t.Errorf("stderr: %s", errs)
			}
			golden(t, "run_"+format+".golden", te.normalise(out))
			if format == "stream-json" {
				checkStream(t, out)
			}
		})
	}
}

// checkStream checks that every line decodes into an agent.Event and
// encodes back to the same bytes, and that the run ends with one done.
func checkStream(t *testing.T, out string) {
	t.Helper()
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	dones := 0
	for _, l := range lines {
		var ev agent.Event
		if err := json.Unmarshal([]byte(l), &ev); err != nil {
			t.Fatalf("line %q: %v", l, err)
		}
		back, _ := json.Marshal(ev)
		if string(back) != l {
			t.Errorf("line does not round-trip:\n%s\n%s", l, back)
		}
		if ev.Type == agent.EventDone {
			dones++
		}
	}
	if dones != 1 || !strings.Contains(lines[len(lines)-1], `"type":"done"`) {
		t.Errorf("want exactly one done, last: %d dones", dones)
	}
}

// CLI-1: exit codes follow the termination reason.
func TestRunExitCodes(t *testing.T) {
	loop := llmtest.Reply{ToolCalls: []llm.ToolUse{llmtest.Call("", "list_dir", `{}`)}}
	tests := []struct {
		name    string
		replies []llmtest.Reply
		args    []string
		code    int
		stderr  string
	}{
		{"completed", []llmtest.Reply{{Text: "done"}}, nil, ExitOK, ""},
		{"max turns", []llmtest.Reply{loop, loop}, []string{"--max-turns", "1"}, ExitMaxTurns, "stopped after 1 turns"},
		{"max tokens", []llmtest.Reply{{Text: "cut", Stop: llm.StopMaxTokens}}, nil, ExitMaxTokens, "output token limit"},
		{"refusal", []llmtest.Reply{{Text: "no", Stop: llm.StopRefusal}}, nil, ExitRefusal, "refused"},
		{"error", []llmtest.Reply{{Err: &llm.Error{Kind: llm.KindAuth, Status: 401, Err: os.ErrPermission}}}, nil, ExitError, "the run failed"},
		{"denied command, headless", []llmtest.Reply{{ToolCalls: []llm.ToolUse{llmtest.Call("c", "bash", `{"command":"echo hi"}`)}}, {Text: "ok"}},
			nil, ExitOK, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			te := newTestEnv(t)
			te.script("m", tt.replies...)
			args := append([]string{"run", "--model", "scripted/m"}, tt.args...)
			code, _, errs := te.run(append(args, "go")...)
			if code != tt.code {
				t.Fatalf("exit %d, want %d; stderr:\n%s", code, tt.code, errs)
			}
			if !strings.Contains(errs, tt.stderr) {
				t.Errorf("stderr %q lacks %q", errs, tt.stderr)
			}
		})
	}
}

// CLI-1: usage errors exit 2 and say what to do.
func TestUsageErrors(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"run", "--bogus"}, "unknown flag"},
		{[]string{"run", "--output", "xml", "hi"}, "want text, json or stream-json"},
		{[]string{"run", "-p=a", "b"}, "give the prompt once"},
		{[]string{"run", "--resume", "x", "--continue", "hi"}, "exclude each other"},
		{[]string{"run", "--max-turns", "0", "hi"}, "--max-turns"},
		{[]string{"run", "--timeout", "abc", "hi"}, "--timeout"},
		{[]string{"run", "--permission-mode", "bogus", "hi"}, "--permission-mode"},
		{[]string{"--max-turns", "0"}, "--max-turns"},
		{[]string{"config", "show", "--timeout", "abc"}, "--timeout"},
		{[]string{"run", "--allowed-tools", "bash(", "hi"}, "rule"},
		{[]string{"nosuchcommand"}, "unknown command"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			te := newTestEnv(t)
			te.env["ANTHROPIC_API_KEY"] = "k"
			code, _, errs := te.run(tt.args...)
			if code != ExitUsage {
				t.Fatalf("exit %d, want %d; stderr: %s", code, ExitUsage, errs)
			}
			if !strings.Contains(errs, tt.want) {
				t.Errorf("stderr %q lacks %q", errs, tt.want)
			}
		})
	}
}

// PROV-2: with no provider configured the error says how to configure one.
func TestNoProvider(t *testing.T) {
	te := newTestEnv(t)
	_, errs := te.mustRun(ExitError, "run", "hello")
	for _, want := range []string{"no model is configured", "ANTHROPIC_API_KEY", "OPENAI_API_KEY", "GEMINI_API_KEY",
		"rein provider add", "replay:"} {
		if !strings.Contains(errs, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errs)
		}
	}
	te.env["ANTHROPIC_BASE_URL"] = "http://127.0.0.1:1"
	_, errs = te.mustRun(ExitError, "run", "--model", "claude-sonnet-4-5", "hello")
	if !strings.Contains(errs, "ANTHROPIC_API_KEY") {
		t.Errorf("missing key: stderr lacks the variable:\n%s", errs)
	}
}

// CLI-1: the prompt from stdin, from -p, and a pending conversation with
// none.
func TestPromptSources(t *testing.T) {
	te := newTestEnv(t)
	s := te.script("m", llmtest.Reply{Text: "one"}, llmtest.Reply{Text: "two"}, llmtest.Reply{Text: "three"})
	te.stdin = "  from stdin \n"
	te.mustRun(ExitOK, "run", "--model", "scripted/m", "-")
	te.stdin = ""
	te.mustRun(ExitOK, "run", "--model", "scripted/m", "-p", "from flag")
	te.stdin = "piped to rein alone"
	te.mustRun(ExitOK, "--model", "scripted/m")
	reqs := s.Requests()
	var got []string
	for _, r := range reqs {
		got = append(got, r.Messages[len(r.Messages)-1].TextOf())
	}
	want := []string{"from stdin", "from flag", "piped to rein alone"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("prompts %q, want %q", got, want)
	}
	te.stdin = ""
	_, errs := te.mustRun(ExitUsage, "run", "--model", "scripted/m")
	if !strings.Contains(errs, "no prompt") {
		t.Errorf("stderr: %s", errs)
	}
}

// SESS-3: --resume and --continue carry the conversation on; the session
// is journaled with its runs.
func TestResumeAndContinue(t *testing.T) {
	te := newTestEnv(t)
	u := llm.Usage{InputTokens: 100, OutputTokens: 10}
	s := te.script("m", llmtest.Reply{Text: "first", Usage: u}, llmtest.Reply{Text: "second", Usage: u}, llmtest.Reply{Text: "third", Usage: u})
	out, _ := te.mustRun(ExitOK, "run", "--model", "scripted/m", "-o", "json", "one")
	var res result
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatal(err)
	}
	if res.SessionID == "" || res.Text != "first" || res.Reason != agent.ReasonCompleted || res.CostUSD == 0 {
		t.Fatalf("result %+v", res)
	}
	te.mustRun(ExitOK, "run", "--model", "scripted/m", "--resume", res.SessionID[:14], "two")
	te.mustRun(ExitOK, "run", "--continue", "three") // the session's model is reused
	reqs := s.Requests()
	if n := len(reqs[2].Messages); n != 5 {
		t.Errorf("third request holds %d messages, want 5", n)
	}
	out, _ = te.mustRun(ExitOK, "sessions", "show", res.SessionID, "--json")
	var rep sessionReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Session.Runs != 3 || rep.Messages != 6 || rep.Session.Model != "scripted/m" {
		t.Errorf("session %+v, %d messages", rep.Session, rep.Messages)
	}
	if _, err := os.Stat(filepath.Join(rep.Dir, "audit.jsonl")); err != nil {
		t.Errorf("audit log: %v", err)
	}
}

func TestSplitRules(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"bash(git diff:*),read_file", []string{"bash(git diff:*)", "read_file"}},
		{" bash(go test:*)  glob ", []string{"bash(go test:*)", "glob"}},
		{"bash(a, b)", []string{"bash(a, b)"}},
		{"", nil},
	}
	for _, tt := range tests {
		if got := splitRules(tt.in); strings.Join(got, "|") != strings.Join(tt.want, "|") {
			t.Errorf("splitRules(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// PERM: --allowed-tools lets a headless run execute a command; a bare
// --disallowed-tools hides the tool from the model.
func TestToolFlags(t *testing.T) {
	te := newTestEnv(t)
	s := te.script("m",
		llmtest.Reply{ToolCalls: []llm.ToolUse{llmtest.Call("c1", "bash", `{"command":"echo allowed-ran"}`)}},
		llmtest.Reply{Text: "ok"})
	out, _ := te.mustRun(ExitOK, "run", "--model", "scripted/m", "-o", "stream-json",
		"--allowed-tools", "bash(echo:*)", "--disallowed-tools", "web_fetch,web_search Edit", "go")
	if !strings.Contains(out, "allowed-ran") {
		t.Errorf("the command did not run:\n%s", out)
	}
	for _, spec := range s.Requests()[0].Tools {
		switch spec.Name {
		case "web_fetch", "web_search", "edit_file", "multi_edit", "write_file": // Claude's Edit covers three
			t.Errorf("%s offered despite --disallowed-tools", spec.Name)
		}
	}
}

// WS-1: AGENTS.md goes into the system prompt verbatim; CLAUDE.md is the
// fallback; --append-system-prompt comes last.
func TestSystemPrompt(t *testing.T) {
	te := newTestEnv(t)
	te.write("CLAUDE.md", "Claude rules.\n")
	s := te.script("m", llmtest.Reply{Text: "a"}, llmtest.Reply{Text: "b"})
	te.mustRun(ExitOK, "run", "--model", "scripted/m", "--append-system-prompt", "Be brief.", "x")
	te.write("AGENTS.md", "Use tabs.\n\n## Tests\nRun make check.\n")
	te.mustRun(ExitOK, "run", "--model", "scripted/m", "x")
	reqs := s.Requests()
	if sys := reqs[0].System; !strings.Contains(sys, "Claude rules.") || !strings.HasSuffix(sys, "Be brief.") {
		t.Errorf("first system prompt:\n%s", sys)
	}
	if sys := reqs[1].System; !strings.Contains(sys, "Use tabs.\n\n## Tests\nRun make check.") || strings.Contains(sys, "Claude rules") {
		t.Errorf("second system prompt:\n%s", sys)
	}
	if n := len(reqs[1].Tools); n < 12 {
		t.Errorf("%d tools offered, want at least 12", n)
	}
}

// LOOP-4, CLI-1: cancelling (Ctrl-C) ends the run with exit code 130 and
// says how to go on.
func TestCancel(t *testing.T) {
	te := newTestEnv(t)
	te.script("m", llmtest.Reply{Text: "partial answer", Hang: true})
	var out, errb bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	code := te.app(&out, &errb).Run(ctx, []string{"run", "--model", "scripted/m", "wait"})
	if code != ExitCancelled || !strings.Contains(errb.String(), "cancelled") || !strings.Contains(errb.String(), "--resume") {
		t.Errorf("exit %d, stderr %q", code, errb.String())
	}
}

// SESS-3, PROV-3: a session run on a named profile records the model as
// profile/model, so --continue goes back to that profile (its key and base
// URL), not the built-in one of its vendor.
func TestSessionModelKeepsProfile(t *testing.T) {
	srv := mockserver.New()
	defer srv.Close()
	srv.APIKey = "work-key"
	srv.Enqueue(mockserver.Turn{Text: "first"}, mockserver.Turn{Text: "second"})
	te := newTestEnv(t)
	te.env["REIN_SANDBOX"] = "off" // stderr is checked: nothing of the machine's sandbox in it
	te.env["WORK_KEY"] = "work-key"
	te.mustRun(ExitOK, "provider", "add", "work", "--provider", "anthropic", "--base-url", srv.URL, "--api-key-env", "WORK_KEY")
	out, _ := te.mustRun(ExitOK, "run", "--model", "work/m", "-o", "json", "one")
	var res result
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatal(err)
	}
	out, _ = te.mustRun(ExitOK, "sessions", "show", res.SessionID, "--json")
	var rep sessionReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Session.Model != "work/m" {
		t.Errorf("session model %q, want work/m", rep.Session.Model)
	}
	out, errs := te.mustRun(ExitOK, "run", "--continue", "-o", "json", "two")
	if strings.Contains(errs, "not available") || !strings.Contains(out, `"text":"second"`) {
		t.Errorf("continue:\n%s\n%s", out, errs)
	}
	if n := len(srv.Requests()); n != 2 {
		t.Errorf("%d requests reached the work profile's server, want 2", n)
	}
}
