package cli

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/reinhq/rein/llm"
	"github.com/reinhq/rein/llm/llmtest"
)

// WS-1, AGENT-1: the reviewer agent rein init writes can do what its own
// prompt says: as a session's agent, in read-only mode, git diff runs (its
// tools list pre-approves it) while other commands are denied.
func TestInitReviewerRunsGitDiff_WS1(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("environment: git is not installed")
	}
	te := newTestEnv(t)
	te.env["REIN_SANDBOX"] = "off"
	te.write("a.txt", "one\n")
	for _, args := range [][]string{{"init", "-q"}, {"add", "a.txt"}, {"-c", "user.email=t@example.com", "-c", "user.name=t", "commit", "-qm", "first"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = te.ws
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	te.write("a.txt", "one\ntwo\n")
	te.mustRun(ExitOK, "init")
	te.mustRun(ExitOK, "trust")
	_, out, _ := te.run("doctor") // no model: not ready, which is not what is checked here
	if strings.Contains(out, "reviewer.md") {
		t.Errorf("rein doctor finds problems in the reviewer it wrote:\n%s", out)
	}
	s := te.script("m",
		llmtest.Reply{ToolCalls: []llm.ToolUse{llmtest.Call("c1", "bash", `{"command":"git diff"}`), llmtest.Call("c2", "bash", `{"command":"touch x"}`)}},
		llmtest.Reply{Text: "reviewed"})
	out, errs := te.mustRun(ExitOK, "run", "--model", "scripted/m", "--agent", "reviewer", "-o", "stream-json", "review my change")
	reqs := s.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d model calls:\n%s\n%s", len(reqs), out, errs)
	}
	results := map[string]string{}
	for _, m := range reqs[1].Messages {
		for _, r := range m.ToolResults() {
			results[r.ToolUseID] = llm.Message{Content: r.Content}.TextOf()
		}
	}
	if !strings.Contains(results["c1"], "+two") {
		t.Errorf("git diff as the reviewer: %q", results["c1"])
	}
	if strings.Contains(results["c2"], "+two") || !strings.Contains(strings.ToLower(results["c2"]), "den") {
		t.Errorf("touch as the reviewer was not denied: %q", results["c2"])
	}
}

// WS-1: rein doctor reports an agent's tools entry that cannot do what it
// says: a bash rule under permission_mode read-only, a Claude Code-style
// name no tool answers to. The reviewer rein init writes has neither.
func TestDoctorChecksAgentTools_WS1(t *testing.T) {
	te := newTestEnv(t)
	te.write(".rein/agents/locked.md", "---\nname: locked\ndescription: d\ntools: read_file, bash(git diff:*)\npermission_mode: read-only\n---\nx\n")
	te.write(".rein/agents/typo.md", "---\nname: typo\ndescription: d\ntools: Read, Bsh\n---\nx\n")
	te.write(".rein/agents/fine.md", "---\nname: fine\ndescription: d\ntools: Read, Bash(git log:*), mcp__github__*, read_file\npermission_mode: default\n---\nx\n")
	_, out, _ := te.run("doctor")
	for _, want := range []string{"agent locked", "bash(git diff:*) can never run", "agent typo", "Bsh names no tool"} {
		if !strings.Contains(out, want) {
			t.Errorf("rein doctor does not say %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "agent fine (.rein/agents/fine.md): tools") {
		t.Errorf("rein doctor reports the agent with nothing wrong:\n%s", out)
	}
}

// CLI-3: rein doctor says what to do about a model without its key once,
// as the next action, not twice in two wordings.
func TestDoctorModelHintOnce_CLI3(t *testing.T) {
	te := newTestEnv(t)
	te.customize = func(a *App) { a.Models = nil }
	te.env["REIN_MODEL"] = "anthropic/claude-sonnet-4-5"
	_, out, _ := te.run("doctor")
	if n := strings.Count(strings.ToLower(out), "set the key"); n != 1 {
		t.Errorf("the model hint is said %d times:\n%s", n, out)
	}
	if !strings.Contains(out, "ANTHROPIC_API_KEY") {
		t.Errorf("rein doctor does not name the variable:\n%s", out)
	}
}
