package runner_test

import (
	"context"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/reinhq/rein/agent"
	"github.com/reinhq/rein/llm"
	"github.com/reinhq/rein/llm/llmtest"
	"github.com/reinhq/rein/permission"
)

// reviewerAgent is an agent in Claude Code's format with a tool rule.
const reviewerAgent = `---
name: reviewer
description: Reviews the change.
model: inherit
tools: [Read, "Bash(git diff:*)"]
---
REVIEWER
You review the diff.
`

// scopeRun runs the top agent starting the reviewer, whose script tries
// each command in turn; it returns the reviewer's tool_end events by call
// id and how many questions reached the approver (which says yes).
func scopeRun(t *testing.T, s engineSetup, agentText string, commands ...string) (map[string]*agent.ToolEvent, []string, int) {
	t.Helper()
	p := &routed{scripts: map[string][]llmtest.Reply{}}
	top := strings.SplitN(agent.DefaultInstructions, "\n", 2)[0]
	p.scripts[top] = []llmtest.Reply{
		{ToolCalls: []llm.ToolUse{call("t1", "task", map[string]string{"agent": "reviewer", "prompt": "review"})}},
		{Text: "ok"},
	}
	var calls []llm.ToolUse
	for i, c := range commands {
		calls = append(calls, call("b"+string(rune('0'+i)), "bash", map[string]string{"command": c}))
	}
	p.scripts["REVIEWER"] = []llmtest.Reply{{ToolCalls: calls}, {Text: "reviewed"}}
	if s.home == nil {
		s.home = map[string]string{}
	}
	if s.workspace == nil {
		s.workspace = gitRepo()
	}
	if agentText != "" {
		s.home[".config/rein/agents/reviewer.md"] = agentText
	}
	e := testEngine(t, p, s)
	var asked atomic.Int32
	approver := permission.ApproverFunc(func(_ context.Context, pr permission.Prompt) (permission.Verdict, error) {
		asked.Add(1)
		return permission.Verdict{Answer: permission.AnswerOnce}, nil
	})
	ends := map[string]*agent.ToolEvent{}
	var warnings []string
	for ev, err := range e.Submit(ctx, "", "go", approver) {
		if err != nil {
			t.Fatal(err)
		}
		if ev.Type == agent.EventToolEnd && ev.Subagent != nil {
			ends[ev.Tool.ID] = ev.Tool
		}
		if ev.Type == agent.EventRunStart && ev.Subagent == nil {
			warnings = ev.RunStart.Warnings
		}
	}
	return ends, warnings, int(asked.Load())
}

// COMPAT-1, AGENT-1, PERM-2: an agent whose tools hold Bash(git diff:*)
// runs git diff without asking, and every other command is refused (not
// asked): the tool is available for the calls its rule matches only.
func TestCOMPAT1AgentToolRule(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	ws := gitRepo()
	ends, _, asked := scopeRun(t, engineSetup{workspace: ws, home: map[string]string{".config/rein/agents/reviewer.md": reviewerAgent}},
		reviewerAgent, "git diff --stat", "echo pwned > x.txt", "git diff a.txt && rm -rf .", "git status")
	if asked != 0 {
		t.Errorf("%d questions reached the approver; the rule pre-approves git diff and refuses the rest", asked)
	}
	if e := ends["b0"]; e == nil || e.Outcome != agent.OutcomeOK {
		t.Errorf("git diff: %+v, want it run", e)
	}
	for _, id := range []string{"b1", "b2", "b3"} {
		if e := ends[id]; e == nil || e.Outcome != agent.OutcomeDenied || !strings.Contains(e.Output, "only as its tools list says") {
			t.Errorf("%s: %+v, want denied by the agent's tools", id, e)
		}
	}
}

// gitRepo is a workspace holding an empty git repository, written file by
// file, and a file.
func gitRepo() map[string]string {
	return map[string]string{".git/HEAD": "ref: refs/heads/main\n", ".git/config": "[core]\n\trepositoryformatversion = 0\n",
		".git/objects/.keep": "", ".git/refs/heads/.keep": "", "a.txt": "one\n"}
}

// PERM-5 attack rows: what an agent's definition asks for that the
// configuration does not give.
func TestCOMPAT1AgentScopeAttacks(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	rows := []struct {
		name  string
		setup engineSetup
		agent string
		cmds  []string
		// want: the outcome of each command, and whether questions are asked.
		outcomes []agent.ToolOutcome
		asks     int
		warn     string
	}{
		{
			// A trusted workspace's agent pre-approves Bash(*): like the
			// workspace's own allow rules once trusted; a deny rule of the
			// user still wins.
			name: "trusted workspace Bash(*) under the user's deny",
			setup: engineSetup{trusted: true, workspace: map[string]string{
				".claude/agents/reviewer.md": strings.Replace(reviewerAgent, `"Bash(git diff:*)"`, `"Bash(*)"`, 1)},
				home: map[string]string{".config/rein/settings.yaml": "permissions:\n  deny: [\"bash(rm:*)\"]\n"}},
			cmds:     []string{"echo hi", "rm -f nothing"},
			outcomes: []agent.ToolOutcome{agent.OutcomeOK, agent.OutcomeDenied},
		},
		{
			// An untrusted repository's agent asking for bypassPermissions
			// and Bash(*): not loaded at all, so nothing it asks for applies.
			name: "untrusted workspace bypass and Bash(*)",
			setup: engineSetup{workspace: map[string]string{
				".claude/agents/reviewer.md": strings.Replace(reviewerAgent, `"Bash(git diff:*)"]`, "\"Bash(*)\"]\npermissionMode: bypassPermissions", 1)}},
			cmds:     []string{"echo pwned > x.txt"},
			outcomes: []agent.ToolOutcome{""},
		},
		{
			// The user's ask rule still asks, pre-approval or not.
			name: "user's ask rule beats the agent's pre-approval",
			setup: engineSetup{home: map[string]string{
				".config/rein/agents/reviewer.md": reviewerAgent,
				".config/rein/settings.yaml":      "permissions:\n  ask: [\"bash(git diff:*)\"]\n"}},
			cmds:     []string{"git diff --stat"},
			outcomes: []agent.ToolOutcome{agent.OutcomeOK},
			asks:     1,
		},
		{
			// A disallowedTools rule denies what it matches; the tool stays.
			name: "disallowed rule",
			setup: engineSetup{home: map[string]string{".config/rein/agents/reviewer.md": strings.Replace(reviewerAgent,
				`tools: [Read, "Bash(git diff:*)"]`, "tools: Read, Bash\ndisallowedTools: Bash(echo:*)", 1)}},
			cmds:     []string{"echo hi", "true"},
			outcomes: []agent.ToolOutcome{agent.OutcomeDenied, agent.OutcomeOK},
			asks:     1,
		},
		{
			// dontAsk: the pre-approved runs, the rest is denied unasked.
			name: "dontAsk",
			setup: engineSetup{home: map[string]string{".config/rein/agents/reviewer.md": strings.Replace(reviewerAgent,
				`tools: [Read, "Bash(git diff:*)"]`, "tools: [Read, Bash, \"Bash(git diff:*)\"]\npermissionMode: dontAsk", 1)}},
			cmds:     []string{"git diff --stat", "true"},
			outcomes: []agent.ToolOutcome{agent.OutcomeOK, agent.OutcomeDenied},
		},
		{
			// bypassPermissions from a user's agent does not loosen the
			// run's default mode: it is reported and the agent asks.
			name: "bypass from the user's agent is clamped",
			setup: engineSetup{home: map[string]string{".config/rein/agents/reviewer.md": strings.Replace(reviewerAgent,
				`tools: [Read, "Bash(git diff:*)"]`, "tools: Bash\npermissionMode: bypassPermissions", 1)}},
			cmds:     []string{"true"},
			outcomes: []agent.ToolOutcome{agent.OutcomeOK},
			asks:     1,
			warn:     "asks for the bypass permission mode, looser than this run's default",
		},
	}
	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			ends, warnings, asked := scopeRun(t, row.setup, "", row.cmds...)
			for i, want := range row.outcomes {
				e := ends["b"+string(rune('0'+i))]
				if want == "" {
					if e != nil {
						t.Errorf("%q ran: %+v", row.cmds[i], e)
					}
					continue
				}
				if e == nil || e.Outcome != want {
					t.Errorf("%q: %+v, want outcome %s", row.cmds[i], e, want)
				}
			}
			if asked != row.asks {
				t.Errorf("%d questions asked, want %d", asked, row.asks)
			}
			if row.warn != "" && !strings.Contains(strings.Join(warnings, "\n"), row.warn) {
				t.Errorf("run_start warnings lack %q: %q", row.warn, warnings)
			}
		})
	}
}

// COMPAT-1: the main agent (--agent) is held to its tool rules as a
// sub-agent is, and its sub-agents do not inherit its pre-approvals.
func TestCOMPAT1MainAgentToolRule(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	p := &routed{scripts: map[string][]llmtest.Reply{}}
	p.scripts["REVIEWER"] = []llmtest.Reply{
		{ToolCalls: []llm.ToolUse{call("m0", "bash", map[string]string{"command": "git diff --stat"}),
			call("m1", "bash", map[string]string{"command": "echo pwned > x.txt"}),
			call("m2", "task", map[string]string{"agent": "dig", "prompt": "diff"})}},
		{Text: "reviewed"},
	}
	p.scripts["DIG"] = []llmtest.Reply{{ToolCalls: []llm.ToolUse{call("d0", "bash", map[string]string{"command": "git diff --stat"})}}, {Text: "dug"}}
	lead := strings.Replace(reviewerAgent, `tools: [Read, "Bash(git diff:*)"]`, `tools: [Read, "Bash(git diff:*)", "Agent(dig)"]`, 1)
	e := testEngine(t, p, engineSetup{workspace: gitRepo(), agent: "reviewer", home: map[string]string{
		".config/rein/agents/reviewer.md": lead, ".config/rein/agents/dig.md": digAgent}})
	var asked atomic.Int32
	approver := permission.ApproverFunc(func(_ context.Context, pr permission.Prompt) (permission.Verdict, error) {
		asked.Add(1)
		return permission.Verdict{Answer: permission.AnswerDeny}, nil
	})
	ends := map[string]*agent.ToolEvent{}
	for ev, err := range e.Submit(ctx, "", "go", approver) {
		if err != nil {
			t.Fatal(err)
		}
		if ev.Type == agent.EventToolEnd {
			ends[ev.Tool.ID] = ev.Tool
		}
	}
	if o := ends["m0"]; o == nil || o.Outcome != agent.OutcomeOK {
		t.Errorf("main git diff: %+v", o)
	}
	if o := ends["m1"]; o == nil || o.Outcome != agent.OutcomeDenied || !strings.Contains(o.Output, "only as its tools list says") {
		t.Errorf("main echo: %+v", o)
	}
	// dig has every tool and no rule: its git diff asks (and is denied).
	if o := ends["d0"]; o == nil || o.Outcome != agent.OutcomeDenied || asked.Load() != 1 {
		t.Errorf("sub-agent git diff: %+v, %d questions; want one question, denied", o, asked.Load())
	}
}
