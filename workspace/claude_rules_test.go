package workspace

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/reinhq/rein/permission"
	"github.com/reinhq/rein/tool"
)

// ruleStrings renders rules as "action rule".
func ruleStrings(rules []permission.Rule) []string {
	var out []string
	for _, r := range rules {
		out = append(out, string(r.Action)+" "+r.String())
	}
	return out
}

// TestTranslateClaudeRule maps every form of Claude Code's rule grammar
// (SPEC COMPAT-1, PERM-2): the legacy `:*` and the space-star prefix,
// exact commands, path forms ./ // ~/ / and **, Edit/Write, WebFetch
// domains, MCP tools, Agent/Task; and refuses, with a reason, what rein
// cannot enforce.
func TestTranslateClaudeRule(t *testing.T) {
	base := ClaudeRuleBase{Root: "/ws", Source: "/ws", Home: "/home/u"}
	deny, ask, allow := permission.DecisionDeny, permission.DecisionAsk, permission.DecisionAllow
	cases := []struct {
		action permission.Decision
		in     string
		want   []string
		note   string // a substring of the note, "" for none
		err    string // a substring of the error
	}{
		{allow, "Bash(npm run test:*)", []string{"allow bash(npm run test:*)"}, "", ""},
		{allow, "Bash(npm run test *)", []string{"allow bash(npm run test:*)"}, "", ""},
		{deny, "Bash(git diff:*)", []string{"deny bash(git diff:*)"}, "", ""},
		{allow, "Bash(npm run build)", []string{"allow bash(npm run build)"}, "", ""},
		{deny, "Bash", []string{"deny bash"}, "", ""},
		{deny, "Bash(*)", []string{"deny bash"}, "", ""},
		{ask, "Bash(git push *)", []string{"ask bash(git push:*)"}, "", ""},
		{deny, "Bash(git * main)", []string{"deny bash(git * main)"}, "", ""},
		{ask, "Bash(* install)", []string{"ask bash(* install)"}, "", ""},
		{deny, "Bash(ls*)", []string{"deny bash(ls*)"}, "", ""},
		{deny, "Bash(git:* push)", []string{"deny bash(git:* push)"}, "", ""},
		{allow, "Bash(git * main)", nil, "", "not with * elsewhere"},
		{allow, "Bash(ls*)", nil, "", "not with * elsewhere"},
		{deny, "Bash(run_in_background:true)", nil, "", "input parameter"},
		{deny, "Bash(echo $(id))", nil, "", "no $ or globs"},
		{deny, "PowerShell(Get-Item *)", nil, "", "no PowerShell tool"},
		{deny, "Read(./README.md)", []string{"deny Read(/ws/README.md)", "deny Edit(/ws/README.md)"}, "", ""},
		{deny, "Read(./secrets/**)", []string{"deny Read(/ws/secrets/**)", "deny Edit(/ws/secrets/**)"}, "", ""},
		{deny, "Read(secrets/**)", []string{"deny Read(secrets/**)", "deny Edit(secrets/**)"}, "", ""},
		{deny, "Read(.env)", []string{"deny Read(**/.env)", "deny Edit(**/.env)"}, "", ""},
		{deny, "Read(secrets/)", []string{"deny Read(secrets/**)", "deny Edit(secrets/**)"}, "", ""},
		{deny, "Read(//etc/passwd)", []string{"deny Read(/etc/passwd)", "deny Edit(/etc/passwd)"}, "", ""},
		{deny, "Read(~/.ssh/**)", []string{"deny Read(/home/u/.ssh/**)", "deny Edit(/home/u/.ssh/**)"}, "", ""},
		{deny, "Read(~)", []string{"deny Read(/home/u/)", "deny Edit(/home/u/)"}, "", ""},
		{deny, "Read(/config/*.json)", []string{"deny Read(/ws/config/*.json)", "deny Edit(/ws/config/*.json)"}, "", ""},
		{deny, "Read(~root/x)", nil, "", "~user paths"},
		{deny, "Read", []string{"deny Read", "deny Edit"}, "", ""},
		{deny, "Read(**)", []string{"deny Read", "deny Edit"}, "", ""},
		{ask, "Edit(./package.json)", []string{"ask Edit(/ws/package.json)"}, "", ""},
		{allow, "Edit(src/**)", []string{"allow Edit(src/**)", "allow Read(src/**)"}, "", ""},
		{allow, "Read(docs/**)", []string{"allow Read(docs/**)"}, "", ""},
		{allow, "Write(docs/**)", []string{"allow Edit(docs/**)", "allow Read(docs/**)"}, "as Edit(docs/**)", ""},
		{deny, "MultiEdit(./a.go)", []string{"deny Edit(/ws/a.go)"}, "as Edit", ""},
		{deny, "Glob(./private/**)", []string{"deny Read(/ws/private/**)", "deny Edit(/ws/private/**)"}, "as Read", ""},
		{allow, "Write", []string{"allow write_file"}, "", ""},
		{deny, "Grep", []string{"deny grep"}, "", ""},
		{deny, "NotebookEdit", nil, "", "no notebook tool"},
		{allow, "WebFetch(domain:example.com)", []string{"allow web_fetch(domain:example.com)"}, "", ""},
		{allow, "WebFetch(domain:*.Example.COM.)", []string{"allow web_fetch(domain:*.example.com)"}, "also matches example.com", ""},
		{deny, "WebFetch(domain:*)", []string{"deny web_fetch"}, "", ""},
		{deny, "WebFetch", []string{"deny web_fetch"}, "", ""},
		{deny, "WebFetch(domain:a.*.com)", nil, "", "leading *."},
		{deny, "WebFetch(https://example.com/x)", nil, "", "domain:example.com"},
		{allow, "WebSearch", []string{"allow web_search"}, "", ""},
		{allow, "mcp__github", []string{"allow mcp__github__*"}, "", ""},
		{allow, "mcp__github__*", []string{"allow mcp__github__*"}, "", ""},
		{allow, "mcp__github__create_issue", []string{"allow mcp__github__create_issue"}, "", ""},
		{allow, "mcp__*", nil, "", "only after mcp__<server>__"},
		{allow, "*", nil, "", "only after mcp__<server>__"},
		{deny, "mcp__*", []string{"deny mcp__*"}, "", ""},
		{deny, "*", []string{"deny *"}, "", ""},
		{deny, "mcp__github__create_issue(repo:x)", nil, "", "MCP tool's input"},
		{deny, "Agent", []string{"deny task"}, "", ""},
		{deny, "Task", []string{"deny task"}, "", ""},
		{deny, "Agent(Explore)", nil, "", "cannot name a sub-agent"},
		{deny, "Agent(model:opus)", nil, "", "input parameter"},
		{deny, "Skill(deploy *)", nil, "", "no such rule"},
		{deny, "Cd(~/code/*)", nil, "", "no such rule"},
		{deny, "ExitPlanMode", nil, "", "rein has no tool ExitPlanMode"},
		{deny, "WebSearch(x)", nil, "", "takes no specifier"},
		{deny, "Bash(", nil, "", "closing parenthesis"},
		{deny, "Bash()", nil, "", "empty specifier"},
		{deny, "(x)", nil, "", "missing tool name"},
		{allow, "read_file(src/**)", []string{"allow read_file(src/**)"}, "", ""},
	}
	for _, c := range cases {
		t.Run(string(c.action)+" "+c.in, func(t *testing.T) {
			rules, note, err := TranslateClaudeRule(c.action, c.in, base)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("err = %v, want one saying %q (rules %v)", err, c.err, ruleStrings(rules))
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(c.want, ruleStrings(rules)); d != "" {
				t.Errorf("rules (-want +got):\n%s", d)
			}
			if (c.note == "") != (note == "") || !strings.Contains(note, c.note) {
				t.Errorf("note = %q, want one saying %q", note, c.note)
			}
		})
	}
}

// TestClaudeRuleSource: `/x` is relative to the settings' source — the
// user's ~/.claude for the user's file — and a root whose name holds glob
// characters matches literally.
func TestClaudeRuleSource(t *testing.T) {
	rules, _, err := TranslateClaudeRule(permission.DecisionDeny, "Read(/secret.txt)",
		ClaudeRuleBase{Root: "/ws", Source: "/home/u/.claude", Home: "/home/u"})
	if err != nil || rules[0].String() != "Read(/home/u/.claude/secret.txt)" {
		t.Fatalf("rules %v, err %v", ruleStrings(rules), err)
	}
	root := filepath.Join(t.TempDir(), "w[s]{a}")
	rules, _, err = TranslateClaudeRule(permission.DecisionDeny, "Read(./a.txt)", ClaudeRuleBase{Root: root, Source: root})
	if err != nil {
		t.Fatal(err)
	}
	decide := func(p string) permission.Decision {
		t.Helper()
		e, err := permission.NewPolicy(permission.Settings{Mode: permission.ModeBypass, Rules: rules})
		if err != nil {
			t.Fatal(err)
		}
		in, _ := json.Marshal(map[string]string{"file_path": p})
		o, err := e.Decide(context.Background(), permission.Request{Tool: "read_file", Input: in, WorkDir: root,
			Meta: tool.Meta{Category: tool.CategoryRead, ReadOnly: true}})
		if err != nil {
			t.Fatal(err)
		}
		return o.Decision
	}
	if d := decide(filepath.Join(root, "a.txt")); d != permission.DecisionDeny {
		t.Errorf("read of ./a.txt under a root named with glob characters: %s, want deny", d)
	}
	if d := decide(filepath.Join(root, "b.txt")); d != permission.DecisionAllow {
		t.Errorf("read of b.txt: %s, want allow (bypass mode)", d)
	}
}

// FuzzTranslateClaudeRule: any rule text either maps to rules rein's
// policy compiles, or is refused with a message; never a panic.
func FuzzTranslateClaudeRule(f *testing.F) {
	for _, s := range []string{"Bash(npm run test:*)", "Bash(git * main)", "Read(./secrets/**)", "Read(//etc/**)",
		"Read(~/.ssh/**)", "Edit(src/**)", "WebFetch(domain:*.x.com)", "mcp__s", "mcp__s__*", "Agent(Explore)", "*",
		"Bash(a\x00b)", "Read(\\[)", "Read([)", "Bash(\"unterminated)", "Write(/)", "Read(//)"} {
		f.Add(0, s)
		f.Add(2, s)
	}
	actions := []permission.Decision{permission.DecisionDeny, permission.DecisionAsk, permission.DecisionAllow}
	f.Fuzz(func(t *testing.T, a int, s string) {
		action := actions[(a%3+3)%3]
		rules, _, err := TranslateClaudeRule(action, s, ClaudeRuleBase{Root: "/ws", Source: "/ws", Home: "/home/u"})
		if err != nil {
			if err.Error() == "" {
				t.Fatal("an empty error")
			}
			return
		}
		if len(rules) == 0 {
			t.Fatalf("%q: no rules and no error", s)
		}
		for _, r := range rules {
			if r.Action != action {
				t.Fatalf("%q: rule %v has action %s, want %s", s, r, r.Action, action)
			}
		}
		if _, err := permission.NewPolicy(permission.Settings{Rules: rules}); err != nil {
			t.Fatalf("%q: translated rules do not compile: %v", s, err)
		}
	})
}
