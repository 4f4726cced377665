package workspace

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/reinhq/rein/permission"
)

// TestCOMPAT1ClaudeAgentFixtures reads agents written in Claude Code's
// documented format (testdata/ccagents, written for rein from the format's
// documentation) from a workspace's .claude/agents: every field is read or
// reported (SPEC COMPAT-1, AGENT-1).
func TestCOMPAT1ClaudeAgentFixtures(t *testing.T) {
	root := filepath.Join(t.TempDir(), "repo")
	dir := filepath.Join(root, ".claude", "agents")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob("testdata/ccagents/*.md")
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, filepath.Base(f)), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	d := LoadDefinitions(Paths{}, Workspace{Root: root}, true)
	type view struct {
		Model, Mode       string
		Tools, Disallowed []string
		MaxTurns          int
		Skills            []string
	}
	want := map[string]view{
		"code-reviewer": {Model: "sonnet", Tools: []string{"Read", "Glob", "Grep"}},
		"git-reviewer": {Model: "opus[1m]", Mode: string(permission.ModeAcceptEdits),
			Tools: []string{"Read", "Grep", "Bash(git diff:*)", "Bash(git log *)"}, Disallowed: []string{"Write", "Edit", "Bash(git push:*)"},
			MaxTurns: 12, Skills: []string{"style-guide"}},
		"legacy-tools": {Mode: string(permission.ModeReadOnly), Tools: []string{"Task", "BashOutput", "KillShell", "LS", "MultiEdit",
			"TodoWrite", "SlashCommand", "NotebookEdit", "ExitPlanMode"}},
		"ci-runner":   {Mode: AgentModeDontAsk, Tools: []string{"Read", "Bash", "mcp__github__*", "Agent(worker)"}, MaxTurns: 40},
		"unsupported": {},
		"broken-rule": {Tools: []string{"Read"}},
		// A workspace's agent never gets the bypass mode.
		"yolo": {Tools: []string{"Bash(*)"}},
	}
	got := map[string]view{}
	for _, a := range d.Agents {
		if a.Origin != OriginWorkspace {
			continue
		}
		got[a.Name] = view{a.Model, a.PermissionMode, a.Tools, a.DisallowedTools, a.MaxTurns, a.Skills}
	}
	// plan is read-only on a build without plan mode, and plan where it has it.
	if v := got["legacy-tools"]; v.Mode == "plan" {
		v.Mode = string(permission.ModeReadOnly)
		got["legacy-tools"] = v
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("agents -want +got:\n%s", diff)
	}
	var msgs []string
	for _, p := range d.Problems {
		msgs = append(msgs, filepath.Base(p.Path)+": "+p.Msg)
	}
	all := strings.Join(msgs, "\n")
	for _, w := range []string{
		"legacy-tools.md: tools: NotebookEdit is a Claude Code tool rein has no equivalent of",
		"unsupported.md: permissionMode: Claude Code's auto mode has no rein equivalent",
		"unsupported.md: memory: an agent's own memory directory is not supported",
		"unsupported.md: hooks: an agent's own hooks are not supported",
		"unsupported.md: mcpServers:", "unsupported.md: effort:", "unsupported.md: isolation:", "unsupported.md: background:",
		"unsupported.md: initialPrompt:",
		`broken-rule.md: tools: "Bash(git diff:*" is not a tool name nor a rule Tool(pattern): rule "Bash(git diff:*": missing closing parenthesis`,
		`broken-rule.md: tools: "Bash()" is not a tool name nor a rule Tool(pattern)`,
		"yolo.md: agent yolo asks for the bypass permission mode, which a workspace's agent may not have",
	} {
		if !strings.Contains(all, w) {
			t.Errorf("no problem says %q; problems:\n%s", w, all)
		}
	}
	for _, quiet := range []string{"code-reviewer.md", "git-reviewer.md", "ci-runner.md"} {
		if strings.Contains(all, quiet) {
			t.Errorf("%s has problems:\n%s", quiet, all)
		}
	}
}

// TestCOMPAT1SplitToolEntry: an entry of tools is a name or a tool and a
// rule on its calls.
func TestCOMPAT1SplitToolEntry(t *testing.T) {
	for _, tc := range []struct {
		entry, name, rule, err string
	}{
		{entry: "Read", name: "Read"},
		{entry: " mcp__github__* ", name: "mcp__github__*"},
		{entry: "Bash(git diff:*)", name: "Bash", rule: "bash(git diff:*)"},
		{entry: "Bash(git log *)", name: "Bash", rule: "bash(git log *)"},
		{entry: "Read(src/**)", name: "Read", rule: "Read(src/**)"},
		{entry: "WebFetch(domain:example.com)", name: "WebFetch", rule: "web_fetch(domain:example.com)"},
		{entry: "Bash(git diff:*", err: "missing closing parenthesis"},
		{entry: "Bash()", err: "empty pattern"},
		{entry: "Read Grep", err: "not a tool name"},
		{entry: "", err: "not a tool name"},
	} {
		name, r, err := SplitToolEntry(tc.entry)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("SplitToolEntry(%q) = %v, want an error saying %q", tc.entry, err, tc.err)
			}
			continue
		}
		rule := ""
		if r != nil {
			rule = r.String()
		}
		if err != nil || name != tc.name || rule != tc.rule {
			t.Errorf("SplitToolEntry(%q) = %q, %q, %v; want %q, %q", tc.entry, name, rule, err, tc.name, tc.rule)
		}
	}
}

// FuzzAgentTools: Claude Code agent files never panic the parser; what
// loads keeps only entries of tools that split, and a mode rein has.
func FuzzAgentTools(f *testing.F) {
	for _, s := range []string{
		"---\nname: a\ndescription: d\ntools: [Read, \"Bash(git diff:*)\"]\ndisallowedTools: Bash(rm:*)\npermissionMode: dontAsk\nskills: [x]\n---\n",
		"---\nname: a\ndescription: d\ntools: Bash(git diff:*, Read\npermissionMode: auto\n---\n",
		"---\nname: a\ndescription: d\ntools: \"Bash(()\"\npermissionMode: manual\nhooks: {}\n---\n",
		"---\nname: a\ndescription: d\ndisallowedTools: [\"Read(\", \")\"]\nskills: a, b\n---\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		a, probs, ok := parseAgent("a.md", data, "fallback")
		checkProblems(t, data, probs)
		if !ok {
			return
		}
		for _, e := range slices.Concat(a.Tools, a.DisallowedTools) {
			if _, _, err := SplitToolEntry(e); err != nil {
				t.Fatalf("kept %q: %v", e, err)
			}
		}
		if m := a.PermissionMode; m != "" && m != AgentModeDontAsk {
			if _, err := permission.ParseMode(m); err != nil || m == agentModeAuto {
				t.Fatalf("mode %q", m)
			}
		}
	})
}
