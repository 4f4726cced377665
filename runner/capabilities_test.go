package runner_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/reinhq/rein/agent"
	"github.com/reinhq/rein/llm"
	"github.com/reinhq/rein/llm/llmtest"
	"github.com/reinhq/rein/runner"
	"github.com/reinhq/rein/tool"
	"github.com/reinhq/rein/workspace"
)

// declared is a workspace holding a skill with a file beside it and an
// action whose script sits beside its ACTION.yaml.
var declared = map[string]string{
	".rein/settings.yaml":                "tools:\n  timeouts:\n    slow: 100ms\npermissions:\n  allow: [\"Action(*)\"]\n",
	".rein/skills/pdf/SKILL.md":          "---\nname: pdf\ndescription: Fill PDF forms.\n---\nRead forms.md, then fill the form in ${runtime:skill_name} style.\n",
	".rein/skills/pdf/forms.md":          "field list\n",
	".rein/actions/greet/ACTION.yaml":    "description: Greets someone.\ninput_schema:\n  type: object\n  properties:\n    name: {type: string}\n  required: [name]\ncommand: [\"./greet.sh\"]\n",
	".rein/actions/greet/greet.sh":       "#!/bin/sh\necho \"hello $REIN_INPUT_NAME from $(basename \"$PWD\")\"\n",
	".rein/actions/slow/ACTION.yaml":     "description: Takes its time.\ncommand: sleep 30\n",
	".rein/agents/unused.md":             "---\nname: unused\ndescription: Never started.\n---\nUNUSED\n",
	".claude/skills/other/SKILL.md":      "---\nname: other\ndescription: Another skill, in Claude Code's place.\n---\nbody\n",
	".rein/actions/greet/not-a-tool.txt": "x",
}

// engineIn builds an engine in a workspace holding files, trusted or not,
// with p as every model.
func engineIn(t *testing.T, p llm.Provider, files map[string]string, trusted bool) *runner.Conversation {
	return testEngine(t, p, engineSetup{workspace: files, trusted: trusted})
}

// SKILL-1, SKILL-2, ACTION-1, TOOL-2, PERM-5: a trusted workspace's skills
// reach the system prompt as an index and load through the skill tool; its
// actions are tools run with their input in the environment; each call's
// events name its origin; a call over its per-call timeout gets an error
// result and the run goes on. An untrusted workspace brings none of it.
func TestDeclaredTools_SKILL1_ACTION1(t *testing.T) {
	t.Run("untrusted", func(t *testing.T) {
		p := llmtest.NewScripted(llmtest.Reply{Text: "ok"})
		e := engineIn(t, p, declared, false)
		var warnings []string
		for ev, err := range e.Submit(ctx, "", "go", nil) {
			if err != nil {
				t.Fatal(err)
			}
			if ev.Type == agent.EventRunStart {
				warnings = ev.RunStart.Warnings
			}
		}
		req := p.Requests()[0]
		for _, s := range req.Tools {
			if s.Name == "skill" || s.Name == "greet" || s.Name == "slow" {
				t.Errorf("an untrusted workspace's %s reached the model", s.Name)
			}
		}
		if strings.Contains(req.System, "Fill PDF forms") {
			t.Error("an untrusted workspace's skill index reached the system prompt")
		}
		joined := strings.Join(warnings, "\n")
		for _, want := range []string{"ignored skill pdf", "ignored action greet", "ignored agent unused", "rein trust"} {
			if !strings.Contains(joined, want) {
				t.Errorf("run_start warnings lack %q:\n%s", want, joined)
			}
		}
	})

	t.Run("trusted", func(t *testing.T) {
		p := llmtest.NewScripted(
			llmtest.Reply{ToolCalls: []llm.ToolUse{call("s1", "skill", map[string]string{"name": "pdf"}),
				call("s2", "skill", map[string]string{"name": "pdf", "file": "forms.md"})}},
			llmtest.Reply{ToolCalls: []llm.ToolUse{call("a1", "greet", map[string]string{"name": "ada"})}},
			llmtest.Reply{ToolCalls: []llm.ToolUse{call("a2", "slow", map[string]string{})}},
			llmtest.Reply{Text: "done"},
		)
		e := engineIn(t, p, declared, true)
		ends := map[string]*agent.ToolEvent{}
		var done *agent.DoneEvent
		for ev, err := range e.Submit(ctx, "", "go", nil) {
			if err != nil {
				t.Fatal(err)
			}
			switch ev.Type {
			case agent.EventToolEnd:
				ends[ev.Tool.ID] = ev.Tool
			case agent.EventDone:
				done = ev.Done
			}
		}
		if done == nil || done.Reason != agent.ReasonCompleted {
			t.Fatalf("run ended %+v", done)
		}
		req := p.Requests()[0]
		var names []string
		for _, s := range req.Tools {
			names = append(names, s.Name)
		}
		for _, want := range []string{"skill", "greet", "slow", "task"} {
			if !slices.Contains(names, want) {
				t.Errorf("tools %v lack %s", names, want)
			}
		}
		for _, want := range []string{"- other: Another skill", "- pdf: Fill PDF forms."} {
			if !strings.Contains(req.System, want) {
				t.Errorf("the skill index lacks %q:\n%s", want, req.System)
			}
		}
		if strings.Contains(req.System, "Read forms.md") {
			t.Error("a skill's body reached the system prompt; only the index may")
		}
		checks := []struct {
			id, output string
			origin     tool.Origin
			isError    bool
		}{
			{"s1", "Read forms.md, then fill the form in pdf style.", tool.OriginSkill, false},
			{"s2", "field list", tool.OriginSkill, false},
			{"a1", "hello ada from " + filepath.Base(e.Setup().Workspace().Root), tool.OriginAction, false},
			{"a2", "timed out after 100ms", tool.OriginAction, true},
		}
		for _, c := range checks {
			got := ends[c.id]
			if got == nil {
				t.Errorf("no tool_end for %s", c.id)
				continue
			}
			if !strings.Contains(got.Output, c.output) || got.Origin != c.origin || got.IsError != c.isError {
				t.Errorf("%s: origin %q, error %v, output %q; want %q, %v, containing %q", c.id, got.Origin, got.IsError, got.Output, c.origin, c.isError, c.output)
			}
		}
	})
}

// MCP-1, TOOL-2: a trusted workspace's MCP servers (.mcp.json, Claude
// Code's format) become tools named mcp__<server>__<tool>, called under
// the mcp origin, against the reference server from npm; a server that
// does not start is reported in run_start and the run goes on.
func TestDeclaredMCP_MCP1(t *testing.T) {
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	server := filepath.Join(root, ".cache", "npm", "node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js")
	if _, err := os.Stat(server); err != nil {
		t.Skipf("@modelcontextprotocol/server-everything is not installed (scripts/test installs it): %v", err)
	}
	files := map[string]string{
		".mcp.json": `{"mcpServers": {"ev": {"command": "node", "args": ["` + server + `", "stdio"]},
			"broken": {"command": "/nonexistent/mcp-server"}}}`,
		".rein/settings.yaml": "permissions:\n  allow: [\"mcp__ev__*\"]\n",
	}
	p := llmtest.NewScripted(
		llmtest.Reply{ToolCalls: []llm.ToolUse{call("m1", "mcp__ev__echo", map[string]string{"message": "hi from rein"})}},
		llmtest.Reply{Text: "done"},
	)
	e := engineIn(t, p, files, true)
	var warnings []string
	var end *agent.ToolEvent
	for ev, err := range e.Submit(ctx, "", "go", nil) {
		if err != nil {
			t.Fatal(err)
		}
		switch ev.Type {
		case agent.EventRunStart:
			warnings = ev.RunStart.Warnings
		case agent.EventToolEnd:
			end = ev.Tool
		}
	}
	if end == nil || end.IsError || end.Origin != tool.OriginMCP || !strings.Contains(end.Output, "hi from rein") {
		t.Fatalf("mcp__ev__echo ended %+v", end)
	}
	if !strings.Contains(strings.Join(warnings, "\n"), "MCP server broken did not start") {
		t.Errorf("run_start warnings do not report the broken server: %q", warnings)
	}
}

// MCP-1, PERM-5: a stdio MCP server gets a clean environment — the base
// variables, what its entry sets and the depth of a rein it starts — never
// rein's provider keys.
func TestMCPServerEnv_MCP1(t *testing.T) {
	env := map[string]string{"PATH": "/usr/bin", "HOME": "/home/u", "ANTHROPIC_API_KEY": "sk-secret", "GITHUB_TOKEN": "gh-secret"}
	s := runner.MCPServer(workspace.MCPServer{Name: "gh", Command: "gh-mcp", Env: map[string]string{"GITHUB_TOKEN": "scoped"}},
		func(k string) string { return env[k] }, 1)
	joined := strings.Join(s.Env, "\n")
	for _, want := range []string{"PATH=/usr/bin", "HOME=/home/u", "GITHUB_TOKEN=scoped", runner.DepthEnv + "=2"} {
		if !slices.Contains(s.Env, want) {
			t.Errorf("the server's environment lacks %s:\n%s", want, joined)
		}
	}
	if strings.Contains(joined, "sk-secret") || strings.Contains(joined, "gh-secret") {
		t.Errorf("the server's environment holds rein's secrets:\n%s", joined)
	}
}
