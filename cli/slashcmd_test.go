package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reinhq/rein/cli/tui"
	"github.com/reinhq/rein/llm"
	"github.com/reinhq/rein/llm/llmtest"
	"github.com/reinhq/rein/llm/llmtest/mockserver"
)

// userText is the text of the last user message of a request.
func userText(t *testing.T, req *llm.Request) string {
	t.Helper()
	for i := len(req.Messages) - 1; i >= 0; i-- {
		m := req.Messages[i]
		if m.Role != llm.RoleUser {
			continue
		}
		var b strings.Builder
		for _, blk := range m.Content {
			if tx, ok := blk.(*llm.Text); ok {
				b.WriteString(tx.Text)
			}
		}
		return b.String()
	}
	t.Fatal("no user message in the request")
	return ""
}

// toolResults is the text of the tool results of a request's last message.
func toolResults(req *llm.Request) string {
	var b strings.Builder
	for _, blk := range req.Messages[len(req.Messages)-1].Content {
		if tr, ok := blk.(*llm.ToolResult); ok {
			for _, c := range tr.Content {
				if tx, ok := c.(*llm.Text); ok {
					b.WriteString(tx.Text)
				}
			}
		}
	}
	return b.String()
}

// userWrite creates a file under the test's HOME.
func (te *testEnv) userWrite(rel, content string) {
	te.t.Helper()
	te.writeIn(te.home, rel, content)
}

// TestRunSlashCommand_COMPAT1_CLI1: rein run "/name args" expands a
// Claude Code command — arguments, a prelude run through the bash tool,
// a pasted file — sends the expansion as the prompt, and grants its
// allowed-tools for that run only.
func TestRunSlashCommand_COMPAT1_CLI1(t *testing.T) {
	te := newTestEnv(t)
	te.write("docs/style.md", "Use tabs.\n")
	te.write(".claude/commands/review.md", `---
description: Review a change
argument-hint: [branch] [focus]
allowed-tools: Bash(echo:*)
---
Marker: !`+"`echo prelude-$0`"+`
Review branch $0 for $1 ($ARGUMENTS) following @docs/style.md.
`)
	te.mustRun(ExitOK, "trust")
	m := te.script("m",
		llmtest.Reply{ToolCalls: []llm.ToolUse{llmtest.Call("c1", "bash", `{"command":"echo granted-ran"}`)}},
		llmtest.Reply{Text: "Reviewed."})
	out, errs := te.mustRun(ExitOK, "run", "--model", "scripted/m", `/review main "error handling"`)
	if !strings.Contains(out, "Reviewed.") {
		t.Fatalf("stdout %q; stderr:\n%s", out, errs)
	}
	reqs := m.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests, want 2", len(reqs))
	}
	want := "Marker: prelude-main\nReview branch main for error handling (main \"error handling\") following @docs/style.md." +
		"\n\n<file path=\"docs/style.md\">\nUse tabs.\n</file>"
	if got := userText(t, reqs[0]); got != want {
		t.Errorf("prompt sent:\n%s\nwant:\n%s", got, want)
	}
	if got := toolResults(reqs[1]); !strings.Contains(got, "granted-ran") {
		t.Errorf("the command's allowed-tools did not allow echo in its run: %q", got)
	}

	// The grant is the command's run's only: the same call in a plain run
	// is denied (headless: nobody to ask).
	m2 := te.script("m2",
		llmtest.Reply{ToolCalls: []llm.ToolUse{llmtest.Call("c1", "bash", `{"command":"echo granted-ran"}`)}},
		llmtest.Reply{Text: "ok"})
	te.mustRun(ExitOK, "run", "--model", "scripted/m2", "go")
	if got := toolResults(m2.Requests()[1]); strings.Contains(got, "granted-ran") {
		t.Errorf("a plain run ran what only the command granted: %q", got)
	}
}

// TestRunSlashCommandModel_COMPAT1: a command's model: runs its run on
// that model.
func TestRunSlashCommandModel_COMPAT1(t *testing.T) {
	te := newTestEnv(t)
	te.userWrite(".claude/commands/quick.md", "---\nmodel: scripted/fast\n---\nAnswer briefly: $ARGUMENTS\n")
	slow := te.script("slow", llmtest.Reply{Text: "slow"})
	fast := te.script("fast", llmtest.Reply{Text: "fast"})
	out, errs := te.mustRun(ExitOK, "run", "--model", "scripted/slow", "/quick why")
	if !strings.Contains(out, "fast") || len(slow.Requests()) != 0 || len(fast.Requests()) != 1 {
		t.Fatalf("stdout %q, slow %d, fast %d requests; stderr:\n%s", out, len(slow.Requests()), len(fast.Requests()), errs)
	}
	if got := userText(t, fast.Requests()[0]); got != "Answer briefly: why" {
		t.Errorf("prompt %q", got)
	}
}

// TestRunSlashCommandErrors_COMPAT1 are the refusals of rein run "/…",
// attack rows among them: nothing is sent to the model.
func TestRunSlashCommandErrors_COMPAT1(t *testing.T) {
	tests := []struct {
		name  string
		setup func(te *testEnv)
		line  string
		code  int
		want  string
	}{
		{"unknown, with the near ones", func(te *testEnv) {
			te.userWrite(".claude/commands/review-pr.md", "Review $0")
		}, "/reveiw-pr 3", ExitUsage, "unknown slash command /reveiw-pr; did you mean /review-pr?"},
		{"no commands at all", nil, "/anything", ExitUsage, "there are no custom commands: add one as .claude/commands/NAME.md"},
		{"with --server", nil, "/review 42 --server http://127.0.0.1:9", ExitUsage, "custom slash commands run locally, not with --server"},
		{"a built-in of the terminal UI", func(te *testEnv) {
			te.userWrite(".claude/commands/model.md", "shadowed")
		}, "/model opus", ExitUsage, "/model is a command of the terminal UI"},
		{"ambiguous bare name", func(te *testEnv) {
			te.userWrite(".claude/commands/a/test.md", "a")
			te.userWrite(".claude/commands/b/test.md", "b")
		}, "/test", ExitUsage, "/test is ambiguous: it is /a:test or /b:test"},
		{"an untrusted workspace's command", func(te *testEnv) {
			te.write(".claude/commands/deploy.md", "deploy !`echo x`")
		}, "/deploy", ExitUsage, "/deploy is the workspace's command (.claude/commands/deploy.md), which is not trusted"},
		{"prelude in an untrusted workspace", func(te *testEnv) {
			te.userWrite(".claude/commands/status.md", "Status: !`echo hi`")
			te.write(".rein/settings.yaml", "permissions:\n  allow: [\"bash(echo:*)\"]\n")
		}, "/status", ExitError, "the prelude !`echo hi` was not run: the workspace " /* … is not trusted */},
		{"prelude the policy would ask about", func(te *testEnv) {
			te.write(".claude/commands/status.md", "---\nallowed-tools: Bash(git status:*)\n---\nStatus: !`echo not-granted`")
			te.mustRun(ExitOK, "trust")
		}, "/status", ExitError, "refused by the permission policy"},
		{"prelude denied by a rule", func(te *testEnv) {
			te.write(".claude/commands/status.md", "---\nallowed-tools: Bash(echo:*)\n---\nStatus: !`echo denied`")
			te.write(".rein/settings.yaml", "permissions:\n  deny: [\"bash(echo:*)\"]\n")
			te.mustRun(ExitOK, "trust")
		}, "/status", ExitError, "a deny rule or rein's own checks refuse it"},
		{"a failing prelude stops the command", func(te *testEnv) {
			te.write(".claude/commands/fail.md", "---\nallowed-tools: Bash(ls:*)\n---\nx !`ls no-such-file`")
			te.mustRun(ExitOK, "trust")
		}, "/fail", ExitError, "the command failed"},
		{"path traversal in @file", func(te *testEnv) {
			te.userWrite(".claude/commands/peek.md", "Look at @"+strings.Repeat("../", 30)+"etc/passwd")
		}, "/peek", ExitError, "outside the workspace"},
		{"sensitive file in @file", func(te *testEnv) {
			te.write(".env", "KEY=secret")
			te.userWrite(".claude/commands/peek.md", "Look at @.env")
		}, "/peek", ExitError, "sensitive file"},
		{"@file a deny rule keeps from reading", func(te *testEnv) {
			te.write("private/notes.txt", "secret")
			te.write(".rein/settings.yaml", "permissions:\n  deny: [\"read_file(private/**)\"]\n")
			te.userWrite(".claude/commands/peek.md", "Look at @private/notes.txt")
		}, "/peek", ExitError, "not pasted"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			te := newTestEnv(t)
			if tt.setup != nil {
				tt.setup(te)
			}
			m := te.script("m", llmtest.Reply{Text: "should not be reached"})
			args := []string{"run", "--model", "scripted/m", tt.line}
			if line, server, ok := strings.Cut(tt.line, " --server "); ok {
				args = []string{"run", "--server", server, line}
			}
			code, out, errs := te.run(args...)
			if code != tt.code || !strings.Contains(errs, tt.want) {
				t.Fatalf("exit %d (want %d); stderr %q lacks %q; stdout %q", code, tt.code, errs, tt.want, out)
			}
			if n := len(m.Requests()); n != 0 {
				t.Errorf("%d requests sent", n)
			}
		})
	}
}

// TestRunLeadingBlankSendsText_COMPAT1: a prompt that begins with a blank
// is text, whatever follows.
func TestRunLeadingBlankSendsText_COMPAT1(t *testing.T) {
	te := newTestEnv(t)
	m := te.script("m", llmtest.Reply{Text: "ok"})
	te.mustRun(ExitOK, "run", "--model", "scripted/m", " /not-a-command here")
	if got := userText(t, m.Requests()[0]); !strings.Contains(got, "/not-a-command here") {
		t.Errorf("prompt %q", got)
	}
}

// TestBackendCustomCommands_COMPAT1: the terminal UI's backend lists the
// custom commands (built-ins shadow theirs) and expands one submitted.
func TestBackendCustomCommands_COMPAT1(t *testing.T) {
	te := newTestEnv(t)
	te.userWrite(".claude/commands/explain.md", "---\ndescription: Explain code\nargument-hint: [file]\n---\nExplain $0 simply.")
	te.userWrite(".claude/commands/web/deploy.md", "Deploy the site.")
	te.userWrite(".claude/commands/clear.md", "shadowed by /clear")
	te.userWrite(".claude/commands/quick.md", "---\nmodel: scripted/fast\n---\nBriefly.")
	m := te.script("m", llmtest.Reply{Text: "done"}, llmtest.Reply{Text: "again"})
	fast := te.script("fast", llmtest.Reply{Text: "fast"})
	drive(t, te, func(ctx context.Context, b tui.Backend, _ tui.Options) {
		cc, ok := b.(tui.CustomCommander)
		if !ok {
			t.Fatal("the backend lists no custom commands")
		}
		got := cc.CustomCommands()
		want := []tui.CustomCommand{{Name: "explain", ArgumentHint: "[file]", Description: "Explain code", Source: "user"},
			{Name: "quick", Description: "Briefly.", Source: "user"},
			{Name: "web:deploy", Description: "Deploy the site.", Source: "user:web"}}
		if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] || got[2] != want[2] {
			t.Fatalf("CustomCommands() = %+v; want %+v", got, want)
		}
		submit(t, ctx, b, "/explain main.go", nil)
		submit(t, ctx, b, "/quick", nil)
		submit(t, ctx, b, "and now?", nil) // back on the session's model
	}, "--model", "scripted/m")
	if got := userText(t, m.Requests()[0]); got != "Explain main.go simply." {
		t.Errorf("prompt %q", got)
	}
	if len(fast.Requests()) != 1 || len(m.Requests()) != 2 {
		t.Errorf("requests: fast %d (want 1), the session's model %d (want 2)", len(fast.Requests()), len(m.Requests()))
	}
}

// TestDoctorCommands_COMPAT1: rein doctor lists the custom commands that
// apply and what of them does not, each with its file.
func TestDoctorCommands_COMPAT1(t *testing.T) {
	te := newTestEnv(t)
	te.userWrite(".claude/commands/review-pr.md", "---\nargument-hint: [pr]\nallowed-tools: Read, NotebookEdit\n---\nReview #$1 and !`git diff`")
	te.userWrite(".claude/commands/clear.md", "shadowed")
	te.userWrite(".claude/commands/web/deploy.md", "---\nwhen_to_use: on release\n---\nDeploy.")
	te.write(".claude/commands/project.md", "a project command")
	_, out, _ := te.run("doctor")
	for _, want := range []string{
		"3 custom slash command(s) apply: /clear (user), /review-pr [pr] (user), /web:deploy (user:web)",
		"/clear (~/.claude/commands/clear.md) has the name of a built-in command, which wins",
		"/review-pr (~/.claude/commands/review-pr.md) runs !`git diff` before sending, and preludes run only in a trusted workspace",
		"/review-pr: allowed-tools: NotebookEdit is a Claude Code tool rein has no equivalent of",
		"/review-pr (~/.claude/commands/review-pr.md) uses $1 but not $0",
		"when_to_use: the model does not invoke commands in rein",
		"ignored: command /project (.claude/commands/project.md)",
	} {
		if !strings.Contains(te.normalise(out), want) {
			t.Errorf("doctor lacks %q:\n%s", want, te.normalise(out))
		}
	}
}

// TestSlashCommandMockVendor_COMPAT1_CLI5: against a mock Anthropic
// server, rein run --dry-run "/name args" shows the expansion without
// running its prelude, and the real run sends the expansion, prelude
// output included, as the request's prompt.
func TestSlashCommandMockVendor_COMPAT1_CLI5(t *testing.T) {
	te, srv := workEnv(t)
	te.write(".rein/commands/stamp.md", "---\ndescription: Stamp and report\nallowed-tools: Bash(touch:*), Bash(echo:*)\n---\n"+
		"Made: !`touch stamp.marker && echo made-$0`\nReport on $ARGUMENTS.\n")
	te.mustRun(ExitOK, "trust")
	marker := filepath.Join(te.ws, "stamp.marker")

	rep, errs := dryJSON(t, te, ExitOK, "--model", "work/m", "/stamp alpha beta")
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("the dry run ran the prelude")
	}
	wantDry := "Made: [a dry run does not run the prelude: touch stamp.marker && echo made-alpha]\nReport on alpha beta."
	if rep.Request.Prompt != wantDry || len(srv.Requests()) != 0 {
		t.Fatalf("dry-run prompt %q (want %q), %d requests; stderr:\n%s", rep.Request.Prompt, wantDry, len(srv.Requests()), errs)
	}
	if !hasDryCheck(rep, "command", "/stamp expanded: 1 prelude(s) not run in a dry run, 0 file(s) pasted; allowed without asking in its run: bash(touch:*), bash(echo:*)") {
		t.Errorf("the dry run does not say what the command brings: %+v", rep.Checks)
	}

	srv.Enqueue(mockserver.Turn{Text: "reported"})
	out, _ := te.mustRun(ExitOK, "run", "--model", "work/m", "/stamp alpha beta")
	if _, err := os.Stat(marker); err != nil || !strings.Contains(out, "reported") {
		t.Fatalf("the prelude did not run (%v) or the answer is missing: %q", err, out)
	}
	reqs := srv.Requests()
	if len(reqs) != 1 || reqs[0].Decoded == nil {
		t.Fatalf("%d requests", len(reqs))
	}
	if got := userText(t, reqs[0].Decoded); got != "Made: made-alpha\nReport on alpha beta." {
		t.Errorf("the vendor got the prompt %q", got)
	}
}

// hasDryCheck reports whether the dry run's report holds a check of name
// whose message is msg.
func hasDryCheck(rep dryReport, name, msg string) bool {
	for _, c := range rep.Checks {
		if c.Name == name && c.Message == msg {
			return true
		}
	}
	return false
}
