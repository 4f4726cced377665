package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	osexec "os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/reinhq/rein/agent"
)

// wantAnswer is the recorded final answer (re-recording changes it).
const wantAnswer = `I proofread docs/beacon.md with the proofread skill and changed nothing.

- **Length** (word_count): docs/beacon.md: 70 words, 10 lines, 1 headings; the limit of 150 words is rule 4.
- **Glossary** (rule 5): every bold term is defined:
  - fresnel lens: a lens of concentric glass rings and prisms that bends the lamp's light into one beam; a first-order lens, the largest, stands taller than a keeper.
  - lamp room: the glazed room at the top of the tower that holds the lamp and the lens.
- **Style** (the reviewer agent):
  - docs/beacon.md:7: "lightkeeper": write "keeper" or "lighthouse keeper" (rule 1)
  - docs/beacon.md:7: "2": spell out the numbers below ten (rule 2)
  - docs/beacon.md:10: the page does not end with a "See also:" line (rule 3)`

// TestReplayWorkspace replays examples/workspace.cassette through the real
// CLI, as examples/workspace/README.md does: in a HOME holding the user's
// own configuration, the workspace
// trusted first, the glossary MCP server started with go run. The skill,
// the action, the MCP tool and the reviewer agent must all run, and run
// well; the sub-agent's own model calls replay from the same cassette.
func TestReplayWorkspace(t *testing.T) {
	if _, err := osexec.LookPath("go"); err != nil {
		t.Skip("go is not on PATH: the workspace's glossary MCP server is started with go run")
	}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	env, err := goEnv()
	if err != nil {
		t.Fatal(err)
	}
	// Build the server once, so the run's 30-second connect budget is not
	// spent compiling it.
	build := osexec.Command("go", "build", "-o", filepath.Join(t.TempDir(), "glossary"), "./examples/workspace/mcp")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build ./examples/workspace/mcp: %v\n%s", err, out)
	}
	data, err := portable(filepath.Join(root, cassette), filepath.Join(root, workspace), runtime.GOOS+"/"+runtime.GOARCH)
	if err != nil {
		t.Fatal(err)
	}
	tape := filepath.Join(t.TempDir(), "workspace.cassette")
	if err := os.WriteFile(tape, data, 0o600); err != nil {
		t.Fatal(err)
	}

	// A HOME that already holds the user's own rein and Claude Code
	// configuration (agents, skills, MCP servers, settings): the recording
	// was made without any, and its replay must not offer theirs (SPEC
	// CLI-1).
	home := t.TempDir()
	if err := os.CopyFS(home, os.DirFS(filepath.Join(root, "cli", "testdata", "userhome"))); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	var out, errs bytes.Buffer
	if code := newApp(root, home, env, &out, &errs, nil).Run(ctx, []string{"trust", workspace}); code != 0 {
		t.Fatalf("rein trust %s exited with %d:\n%s%s", workspace, code, out.String(), errs.String())
	}
	out.Reset()
	errs.Reset()
	code := newApp(root, home, env, &out, &errs, nil).Run(ctx, []string{"run", "--cwd", workspace,
		"--model", "replay:" + tape, "--output", "stream-json", Prompt})
	events := decode(t, out.Bytes())
	if code != 0 {
		t.Fatalf("the replay exited with %d; stderr:\n%s\ntool results:\n%s", code, errs.String(), toolLog(events))
	}

	var done *agent.DoneEvent
	var top, sub []string
	var started, ended int
	for _, ev := range events {
		switch {
		case ev.Type == agent.EventDone:
			if done != nil {
				t.Error("more than one done event")
			}
			done = ev.Done
		case ev.Type == agent.EventToolEnd && ev.Subagent == nil:
			top = append(top, fmt.Sprintf("%s (%s): %s", ev.Tool.Name, ev.Tool.Origin, ev.Tool.Outcome))
		case ev.Type == agent.EventToolEnd:
			sub = append(sub, fmt.Sprintf("%s/%s: %s", ev.Subagent.Agent, ev.Tool.Name, ev.Tool.Outcome))
		case ev.Type == agent.EventSubagentStart:
			started++
		case ev.Type == agent.EventSubagentEnd:
			ended++
			if ev.Done == nil || ev.Done.Reason != agent.ReasonCompleted {
				t.Errorf("the reviewer did not complete: %+v", ev.Done)
			}
		}
	}
	if done == nil {
		t.Fatal("no done event")
	}
	if done.Reason != agent.ReasonCompleted {
		t.Errorf("done: reason %q (%s), want completed", done.Reason, done.Error)
	}
	// Calls of one reply that may run in parallel end in any order: the
	// calls are compared as a set.
	wantTop := []string{
		"mcp__glossary__define (mcp): ok",
		"mcp__glossary__define (mcp): ok",
		"read_file (builtin): ok",
		"skill (skill): ok",
		"skill (skill): ok",
		"task (agent): ok",
		"word_count (action): ok",
	}
	slices.Sort(top)
	if diff := cmp.Diff(wantTop, top); diff != "" {
		t.Errorf("the main agent's tool calls (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"reviewer/read_file: ok"}, sub); diff != "" {
		t.Errorf("the reviewer's tool calls (-want +got):\n%s", diff)
	}
	if started != 1 || ended != 1 || done.Stats.Subagents != 1 {
		t.Errorf("sub-agents: %d started, %d ended, stats %d; want 1 each", started, ended, done.Stats.Subagents)
	}
	if diff := cmp.Diff(wantAnswer, done.Text); diff != "" {
		t.Errorf("the answer (-want +got):\n%s", diff)
	}
}

// decode reads stream-json output: one event a line.
func decode(t *testing.T, data []byte) []agent.Event {
	t.Helper()
	var events []agent.Event
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	for sc.Scan() {
		var ev agent.Event
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatalf("stream-json line %q: %v", sc.Text(), err)
		}
		events = append(events, ev)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return events
}

// toolLog lists the tool results of events, to show why a replay failed.
func toolLog(events []agent.Event) string {
	var b strings.Builder
	for _, ev := range events {
		if ev.Type == agent.EventToolEnd {
			fmt.Fprintf(&b, "- %s: %s\n  %s\n", ev.Tool.Name, ev.Tool.Outcome, strings.ReplaceAll(ev.Tool.Output, "\n", "\n  "))
		}
	}
	return b.String()
}

// portable returns the cassette at path with the workspace directory and
// the platform it was recorded on replaced by root and platform, so the
// test passes in any clone. The replay pins the main agent's system prompt
// to the recorded one, but two things in the recorded requests still name
// the recording machine: the skill tool's results (they give the skill's
// absolute directory) and the reviewer's system prompt (its environment
// section).
func portable(path, root, platform string) ([]byte, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	m := regexp.MustCompile(`Working directory: ([^"\\]+)\\nPlatform: ([^"\\]+)\\n`).FindSubmatch(data)
	if m == nil {
		return nil, fmt.Errorf("%s: the first request's system prompt names no working directory and platform", path)
	}
	quoted, err := json.Marshal(root)
	if err != nil {
		return nil, err
	}
	data = bytes.ReplaceAll(data, m[1], bytes.Trim(quoted, `"`))
	return bytes.ReplaceAll(data, []byte("Platform: "+string(m[2])), []byte("Platform: "+platform)), nil
}
