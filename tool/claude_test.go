package tool

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// ClaudeNameOf is the inverse of ClaudeToolNames: each rein tool's Claude
// Code name stands for it.
func TestClaudeNameOfInverts(t *testing.T) {
	for rein, claude := range ClaudeNameOf {
		if !slices.Contains(ClaudeToolNames[claude], rein) {
			t.Errorf("ClaudeNameOf[%s] = %s, but ClaudeToolNames[%s] = %v", rein, claude, claude, ClaudeToolNames[claude])
		}
	}
	for claude, names := range ClaudeToolNames {
		for _, n := range names {
			if _, ok := ClaudeNameOf[n]; !ok {
				t.Errorf("ClaudeToolNames[%s] holds %s, which has no ClaudeNameOf entry", claude, n)
			}
		}
	}
}

func TestClaudeRuleTools(t *testing.T) {
	cases := map[string][]string{
		"Edit":      {"edit_file", "multi_edit", "write_file"},
		"MultiEdit": {"multi_edit"},
		"Write":     {"write_file"},
		"Read":      {"read_file", "glob", "grep", "list_dir"},
		"Bash":      {"bash"},
		"LS":        {"list_dir"},
		"bash":      nil,
		"Unknown":   nil,
	}
	for name, want := range cases {
		if diff := cmp.Diff(want, ClaudeRuleTools(name)); diff != "" {
			t.Errorf("ClaudeRuleTools(%s) -want +got:\n%s", name, diff)
		}
	}
}

func TestSensitiveSet(t *testing.T) {
	s := NewSensitiveSet(append(slices.Clone(DefaultSensitiveFiles), "!.env.example", "/etc/shadow", "deploy/secrets.yaml"))
	cases := map[string]bool{
		"/w/.env": true, "/w/a/.env.local": true, "/w/.env.example": false, "/w/tls.key": true,
		"/home/u/.ssh": true, "/home/u/.ssh/config": true, "/home/u/.aws/credentials": true,
		"/etc/shadow": true, "/x/deploy/secrets.yaml": true, "/w/secrets.yaml": false,
		"/w/main.go": false, "/w/.envrc.md": false, "/w/keys.go": false,
	}
	for p, want := range cases {
		if _, got := s.Match(p); got != want {
			t.Errorf("Match(%s) = %v, want %v", p, got, want)
		}
	}
	if _, ok := (SensitiveSet{}).Match("/w/.env"); ok || !(SensitiveSet{}).Empty() {
		t.Error("the zero SensitiveSet matches")
	}
}

// COMPAT-1: Claude Code's tool names, old and new, name rein's tools; the
// ones rein has no tool for are listed apart and nowhere else.
func TestCOMPAT1ClaudeToolNames(t *testing.T) {
	want := map[string]string{
		"Read": "read_file", "Write": "write_file", "Edit": "edit_file", "MultiEdit": "multi_edit", "Glob": "glob",
		"Grep": "grep", "LS": "list_dir", "Bash": "bash", "WebFetch": "web_fetch", "WebSearch": "web_search",
		"TodoWrite": "todo_write", "Task": "task", "Agent": "task", "BashOutput": "job_output", "TaskOutput": "job_output",
		"KillShell": "job_kill", "KillBash": "job_kill", "TaskStop": "job_kill", "ExitPlanMode": "exit_plan_mode",
		"Skill": "skill", "SlashCommand": "skill", "AskUserQuestion": "ask_user",
	}
	for claude, rein := range want {
		if got := ClaudeToolNames[claude]; len(got) == 0 || got[0] != rein {
			t.Errorf("ClaudeToolNames[%s] = %v, want %s first", claude, got, rein)
		}
	}
	for _, n := range ClaudeNoEquivalent {
		if _, ok := ClaudeToolNames[n]; ok {
			t.Errorf("%s is both mapped and without equivalent", n)
		}
	}
	if !slices.Contains(ClaudeNoEquivalent, "NotebookEdit") {
		t.Error("NotebookEdit is not reported as without equivalent")
	}
}
