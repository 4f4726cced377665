package permission

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	osexec "os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reinhq/rein/tool"
)

// planCase is one call a model makes in plan mode.
type planCase struct {
	tool string            // "" is bash
	in   map[string]string // {PLAN} is the session's plan file
	want Decision
	why  string // a word the reason must hold, for denials
}

// SPEC PERM-7: plan mode is enforced by the policy, not by the prompt: a
// plan-mode model trying to write outside the plan file — write_file,
// edit_file, a shell redirect, sed -i, tee, a writer hidden behind a
// wrapper, an interpreter or a variable — is denied with a reason; reads
// and read-only commands run (for real, below: they change nothing); the
// plan file is the one file written.
func TestPlanModeAttacks_PERM7(t *testing.T) {
	if _, err := osexec.LookPath("bash"); err != nil {
		t.Skip("bash not installed")
	}
	w := newAttackWorld(t)
	t.Setenv("HOME", w.home)
	sessDir := filepath.Join(w.out, "sessions", "s1")
	plan := PlanFile(sessDir)
	deny := func(tool string, in map[string]string, why string) planCase {
		return planCase{tool: tool, in: in, want: DecisionDeny, why: why}
	}
	allow := func(tool string, in map[string]string) planCase {
		return planCase{tool: tool, in: in, want: DecisionAllow}
	}
	cases := []planCase{
		// File tools: only the plan file.
		deny("write_file", map[string]string{"path": "src/main.go", "content": "x"}, "plan mode"),
		deny("write_file", map[string]string{"path": "{OUT}/x.md", "content": "x"}, "plan mode"),
		deny("write_file", map[string]string{"path": filepath.Join(sessDir, "other.md"), "content": "x"}, "plan mode"),
		deny("write_file", map[string]string{"path": plan + "/../plan.md.bak", "content": "x"}, "plan mode"),
		deny("edit_file", map[string]string{"path": "README.md", "old_string": "a", "new_string": "b"}, "plan mode"),
		deny("multi_edit", map[string]string{"path": "README.md"}, "plan mode"),
		allow("write_file", map[string]string{"path": "{PLAN}", "content": "# Plan"}),
		allow("edit_file", map[string]string{"path": "{PLAN}", "old_string": "a", "new_string": "b"}),
		allow("read_file", map[string]string{"path": "src/main.go"}),
		allow("read_file", map[string]string{"path": "{PLAN}"}),
		allow("grep", map[string]string{"pattern": "main"}),
		deny("read_file", map[string]string{"path": "{OUT}/readable.txt"}, "outside the workspace"),
		deny("read_file", map[string]string{"path": ".env"}, "sensitive"),
		// The shell: redirects, sed -i, tee, and writers however hidden.
		deny("", bashIn("echo x > notes.txt"), "writes to"),
		deny("", bashIn("echo x >> README.md"), "writes to"),
		deny("", bashIn("cat README.md >| copy.md"), "writes to"),
		deny("", bashIn("echo x &> log.txt"), "writes to"),
		deny("", bashIn("echo x > {PLAN}"), "writes to"),
		deny("", bashIn("sed -i s/a/b/ README.md"), "sed -i"),
		deny("", bashIn("sed --in-place=.bak s/a/b/ README.md"), "sed"),
		deny("", bashIn("sed -n 'w out.txt' README.md"), "sed"),
		deny("", bashIn("tee notes.txt < README.md"), "tee"),
		deny("", bashIn("cat README.md | tee -a notes.txt"), "tee"),
		deny("", bashIn("cp README.md b.md"), "cp"),
		deny("", bashIn("rm README.md"), "rm"),
		deny("", bashIn("touch pwned"), "touch"),
		deny("", bashIn("mkdir d"), "mkdir"),
		deny("", bashIn("ls; rm -rf src"), "rm"),
		deny("", bashIn("find . -delete"), "find"),
		deny("", bashIn("find . -name '*.go' -exec rm {} +"), "find"),
		deny("", bashIn("sort -o out.txt README.md"), "sort"),
		deny("", bashIn("uniq README.md out.txt"), "uniq"),
		deny("", bashIn("awk '{print > \"out.txt\"}' README.md"), "awk"),
		deny("", bashIn("awk 'BEGIN{system(\"touch pwned\")}'"), "awk"),
		deny("", bashIn("xxd -r README.md"), "xxd"),
		deny("", bashIn("xargs rm < README.md"), "rm"),
		deny("", bashIn("timeout 5 touch pwned"), "touch"),
		deny("", bashIn("bash -c 'touch pwned'"), "bash"),
		deny("", bashIn("sh -c 'echo x > f'"), "plan mode"),
		deny("", bashIn("python3 -c 'open(\"f\",\"w\")'"), "python3"),
		deny("", bashIn("perl -e 1"), "perl"),
		deny("", bashIn("$(echo rm) README.md"), "plan mode"),
		deny("", bashIn("X=rm; $X README.md"), "plan mode"),
		deny("", bashIn("PAGER='touch pwned' git log"), "PAGER"),
		deny("", bashIn("git -c core.pager='touch pwned' log"), "git"),
		deny("", bashIn("git diff --output=out.txt"), "git"),
		deny("", bashIn("git commit -am x"), "git commit"),
		deny("", bashIn("git checkout -- README.md"), "git checkout"),
		deny("", bashIn("git push origin main"), "git push"),
		deny("", bashIn("git fetch"), "git fetch"),
		deny("", bashIn("curl -s https://example.com"), "curl"),
		deny("", bashIn("wget https://example.com"), "wget"),
		deny("", bashIn("nc example.com 80"), "nc"),
		deny("", bashIn("env"), "env"),
		deny("", bashIn("printenv"), "printenv"),
		deny("", bashIn("go test ./..."), "go"),
		deny("", bashIn("make"), "make"),
		deny("", bashIn("npm install"), "npm"),
		deny("", bashIn("echo x | dd of=out.txt"), "dd"),
		deny("", bashIn("cat README.md > /dev/tcp/127.0.0.1/80"), "writes to"),
		deny("", bashIn("echo 'a\x00'; touch pwned"), "plan mode"),
		// Read-only commands run.
		allow("", bashIn("ls -la")),
		allow("", bashIn("cat README.md | grep -n hello | head -5")),
		allow("", bashIn("wc -l src/main.go 2>/dev/null")),
		allow("", bashIn("find . -name '*.go' -not -path './.git/*'")),
		allow("", bashIn("grep -rn package src")),
		allow("", bashIn("git status --short; git log --oneline -3; git diff --stat")),
		allow("", bashIn("sed -n 1,5p README.md")),
		allow("", bashIn("sort README.md | uniq -c")),
		allow("", bashIn("cd src && ls")),
		allow("", bashIn("echo done > /dev/null")),
		// Rules never widen plan mode.
		{tool: "", in: bashIn("touch pwned"), want: DecisionDeny, why: "touch"},
	}
	for i, c := range cases {
		name := c.tool
		if name == "" {
			name = "bash"
		}
		meta := metaExec
		switch name {
		case "read_file", "grep", "glob", "list_dir":
			meta = metaRead
		case "write_file", "edit_file", "multi_edit":
			meta = metaEdit
		}
		in := map[string]string{}
		for k, v := range c.in {
			in[k] = strings.NewReplacer("{PLAN}", plan).Replace(w.expand(v))
		}
		b, _ := json.Marshal(in)
		req := Request{Tool: name, Input: b, Meta: meta, WorkDir: w.ws, SessionDir: sessDir}
		rules := mustRules(t, SourceUser, "allow bash(touch:*)", "allow write_file", "allow bash(rm:*)", "allow bash(curl:*)")
		o := decide(t, Settings{Mode: ModePlan, Rules: rules}, req)
		label := fmt.Sprintf("#%d %s %s", i, name, b)
		if o.Decision != c.want {
			t.Errorf("%s: %s (%s), want %s", label, o.Decision, o.Reason, c.want)
			continue
		}
		if c.want == DecisionDeny && !strings.Contains(o.Reason, c.why) {
			t.Errorf("%s: denied with %q, which does not say %q", label, o.Reason, c.why)
		}
		if o.Decision != DecisionAllow || name != "bash" {
			continue
		}
		before := w.snapshot(t)
		out := w.runAttack(t, in["command"], "")
		if strings.Contains(out, attackSecret) {
			t.Errorf("%s: ran and printed the secret:\n%s", label, out)
		}
		if after := w.snapshot(t); !maps.Equal(before, after) {
			t.Errorf("%s: a read-only command changed files", label)
		}
	}
}

// SPEC PERM-7: exit_plan_mode always asks in plan mode — an allow rule, a
// bypass-style rule or an earlier "always" cannot approve a plan, so the
// model cannot approve itself — and is denied in every other mode, and
// for a plan that is empty or too long.
func TestExitPlanModeDecisions_PERM7(t *testing.T) {
	req := func(plan string) Request {
		b, _ := json.Marshal(map[string]string{"plan": plan})
		return Request{Tool: ExitPlanModeTool, Origin: tool.OriginBuiltin, Input: b,
			Meta: tool.Meta{ReadOnly: true, Category: tool.CategorySession}, WorkDir: t.TempDir()}
	}
	selfApprove := mustRules(t, SourceSession, "allow exit_plan_mode", "allow *")
	for _, tt := range []struct {
		mode  Mode
		rules []Rule
		plan  string
		want  Decision
		why   string
	}{
		{ModePlan, nil, "1. do it", DecisionAsk, "approval"},
		{ModePlan, selfApprove, "1. do it", DecisionAsk, "approval"},
		{ModePlan, nil, "", DecisionDeny, "needs the plan"},
		{ModePlan, nil, "  \n ", DecisionDeny, "needs the plan"},
		{ModePlan, nil, strings.Repeat("step\n", MaxPlanBytes/5+1), DecisionDeny, "shorten"},
		{ModeDefault, selfApprove, "1. do it", DecisionDeny, "only for plan mode"},
		{ModeAcceptEdits, nil, "1. do it", DecisionDeny, "only for plan mode"},
		{ModeBypass, nil, "1. do it", DecisionDeny, "only for plan mode"},
		{ModeStrict, nil, "1. do it", DecisionDeny, "only for plan mode"},
		{ModeReadOnly, nil, "1. do it", DecisionDeny, "only for plan mode"},
		{ModePlan, mustRules(t, SourceUser, "deny exit_plan_mode"), "1. do it", DecisionDeny, "rule exit_plan_mode"},
	} {
		o := decide(t, Settings{Mode: tt.mode, Rules: tt.rules}, req(tt.plan))
		if o.Decision != tt.want || !strings.Contains(o.Reason, tt.why) {
			t.Errorf("%s %d-byte plan: %s (%s), want %s saying %q", tt.mode, len(tt.plan), o.Decision, o.Reason, tt.want, tt.why)
		}
	}
	if s := Suggest(req("x")); len(s) != 0 {
		t.Errorf("an always answer to a plan would keep %v; it must keep no rule", s)
	}
	mcp := req("x")
	mcp.Origin = tool.OriginMCP
	if IsPlanApproval(mcp) {
		t.Error("an MCP tool named exit_plan_mode is taken for the plan approval")
	}
}

// SPEC PERM-7: the answer to a plan switches the mode: once into default,
// always into accept-edits; nothing else, and not outside plan mode.
func TestApprovePlan_PERM7(t *testing.T) {
	for _, tt := range []struct {
		from Mode
		a    Answer
		want Mode
		err  bool
	}{
		{ModePlan, AnswerOnce, ModeDefault, false},
		{ModePlan, AnswerAlways, ModeAcceptEdits, false},
		{ModePlan, AnswerDeny, ModePlan, true},
		{ModePlan, "bogus", ModePlan, true},
		{ModeDefault, AnswerAlways, ModeDefault, true},
		{ModeReadOnly, AnswerOnce, ModeReadOnly, true},
	} {
		e, err := NewPolicy(Settings{Mode: tt.from})
		if err != nil {
			t.Fatal(err)
		}
		got, err := e.ApprovePlan(tt.a)
		if (err != nil) != tt.err || got != tt.want || e.Mode() != tt.want {
			t.Errorf("%s + %s: %s (engine %s), %v; want %s, error %v", tt.from, tt.a, got, e.Mode(), err, tt.want, tt.err)
		}
	}
	if m, err := ParseMode("plan"); err != nil || m != ModePlan {
		t.Errorf("ParseMode(plan) = %s, %v", m, err)
	}
}

// FuzzPlanShell_PERM7: whatever the command, the decision in plan mode is
// made without a panic, and a command allowed there holds no redirection
// that writes a file and no program outside the read-only list.
func FuzzPlanShell_PERM7(f *testing.F) {
	for _, s := range []string{"ls", "echo x > f", "sed -i s/a/b/ f", "cat a | tee b", "git log", "find . -exec rm {} +",
		"awk '{print > \"x\"}'", "env X=1 cat f", "timeout 3 cat f", "xargs cat < f", "cat <(rm x)", "echo $(touch x)"} {
		f.Add(s)
	}
	ws := f.TempDir()
	e, err := NewPolicy(Settings{Mode: ModePlan})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, cmd string) {
		b, _ := json.Marshal(map[string]string{"command": cmd})
		o, err := e.Decide(context.Background(), Request{Tool: "bash", Input: b, Meta: metaExec, WorkDir: ws, SessionDir: ws})
		if err != nil || o.Decision != DecisionAllow {
			return
		}
		if strings.ContainsAny(cmd, ">") && !strings.Contains(cmd, "/dev/null") && !strings.Contains(cmd, ">&") &&
			!strings.ContainsAny(cmd, "'\"\\") {
			t.Errorf("%q allowed in plan mode: %s", cmd, o.Reason)
		}
		for _, w := range []string{"rm ", "touch ", "tee ", "mv ", "cp "} {
			if strings.HasPrefix(cmd, w) {
				t.Errorf("%q allowed in plan mode: %s", cmd, o.Reason)
			}
		}
	})
}

// BenchmarkPlanShell_PERM7 measures a plan-mode decision on a typical
// exploratory pipeline (parse, classify every command, resolve the paths).
func BenchmarkPlanShell_PERM7(b *testing.B) {
	ws := b.TempDir()
	e, err := NewPolicy(Settings{Mode: ModePlan})
	if err != nil {
		b.Fatal(err)
	}
	in, _ := json.Marshal(map[string]string{"command": "git log --oneline -20 | grep -i fix | head -5; find . -name '*.go' -not -path './vendor/*' | xargs wc -l | sort -n | tail -3"})
	req := Request{Tool: "bash", Input: in, Meta: metaExec, WorkDir: ws, SessionDir: ws}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if o, err := e.Decide(ctx, req); err != nil || o.Decision != DecisionAllow {
			b.Fatalf("%+v %v", o, err)
		}
	}
}
