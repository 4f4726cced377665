package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reinhq/rein/llm"
	"github.com/reinhq/rein/llm/llmtest"
)

// quickstartPrompt is the prompt the README's first command gives; it must
// be the one examples/record-quickstart recorded.
const quickstartPrompt = "What is in examples/quickstart, and what does its greeting say?"

// The README contract (PROV-8): the quickstart cassette replays from the
// repository's root with a fresh HOME — the real loop, real tools (their
// output must match the recording byte for byte) and a real session.
func TestQuickstartCassette(t *testing.T) {
	te := newTestEnv(t)
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	te.customize = func(a *App) { a.Dir = root; a.Models = nil }
	res, _ := replayQuickstart(t, te)
	greeting, err := os.ReadFile(filepath.Join(root, "examples", "quickstart", "greeting.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(res.Text, strings.TrimSpace(string(greeting))) || !strings.Contains(res.Text, "CHANGES.md, README.md, greeting.txt") {
		t.Errorf("answer %q", res.Text)
	}
	if _, err := os.Stat(filepath.Join(te.home, ".local", "share", "rein", "sessions", res.SessionID+".jsonl")); err != nil {
		t.Errorf("no session was written: %v", err)
	}

	// Without a prompt the cassette replays its own; another prompt is refused.
	te.mustRun(ExitOK, "run", "--model", "replay:examples/quickstart.cassette")
	_, errs := te.mustRun(ExitError, "run", "--model", "replay:examples/quickstart.cassette", "something else")
	if !strings.Contains(errs, quickstartPrompt) {
		t.Errorf("stderr does not give the recorded prompt: %s", errs)
	}
}

// replayQuickstart runs the README's first command with --output json
// and checks its figures: three model calls, three tool calls, none
// failed. It returns the result and stderr.
func replayQuickstart(t *testing.T, te *testEnv) (result, string) {
	t.Helper()
	out, errs := te.mustRun(ExitOK, "run", "--model", "replay:examples/quickstart.cassette", "-o", "json", quickstartPrompt)
	var res result
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if res.Stats.ModelCalls != 3 || res.Stats.ToolCalls != 3 || res.Stats.ToolErrors != 0 {
		t.Errorf("stats %+v (stderr %s)", res.Stats, errs)
	}
	return res, errs
}

// PROV-8: --record writes a cassette that --model replay: plays back, in
// another workspace too; a run that departs from it fails and says so.
func TestRecordAndReplay(t *testing.T) {
	te := newTestEnv(t)
	te.write("notes.txt", "remember the milk\n")
	te.script("m",
		llmtest.Reply{ToolCalls: []llm.ToolUse{llmtest.Call("c1", "read_file", `{"path":"notes.txt"}`)}, Usage: llm.Usage{InputTokens: 10, OutputTokens: 5}},
		llmtest.Reply{Text: "It says to remember the milk.", Usage: llm.Usage{InputTokens: 20, OutputTokens: 7}})
	cassette := filepath.Join(te.home, "run.cassette")
	out, _ := te.mustRun(ExitOK, "run", "--model", "scripted/m", "--record", cassette, "what do my notes say?")
	replayed, _ := te.mustRun(ExitOK, "run", "--model", "replay:"+cassette, "what do my notes say?")
	if out != replayed || !strings.Contains(out, "milk") {
		t.Errorf("recorded %q, replayed %q", out, replayed)
	}
	te.write("notes.txt", "buy bread\n")
	_, errs := te.mustRun(ExitError, "run", "--model", "replay:"+cassette, "what do my notes say?")
	if !strings.Contains(errs, "differs from the cassette") {
		t.Errorf("changed tool output: stderr %s", errs)
	}
	_, errs = te.mustRun(ExitError, "run", "--model", "replay:"+filepath.Join(te.home, "missing.cassette"), "x")
	if !strings.Contains(errs, "--record") {
		t.Errorf("missing cassette: stderr %s", errs)
	}
}
