package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/reinhq/rein/llm/anthropic"
	"github.com/reinhq/rein/llm/llmtest"
	"github.com/reinhq/rein/llm/llmtest/mockserver"
)

// dryEnv is a workspace with AGENTS.md, a skill, memory and user hooks
// that log when they run, and a profile "work" on a mock Anthropic server.
func dryEnv(t *testing.T) (*testEnv, *mockserver.Server, string) {
	t.Helper()
	te, srv := workEnv(t)
	te.write("AGENTS.md", "# Project\nRun go test ./... before you answer.\n")
	te.userFile("skills/notes/SKILL.md", "---\nname: notes\ndescription: Keeps notes.\n---\nbody\n")
	log := filepath.Join(te.home, "hooks.log")
	rec := "{command: \"cat >> " + log + "; echo >> " + log + "\"}"
	te.userFile("mcp.yaml", "servers:\n"+testServerYAML(t, "good")+"  broken:\n    command: /nonexistent/mcp-server\n")
	te.userFile("hooks.yaml", "hooks:\n  session_start:\n    - "+rec+"\n  user_prompt_submit:\n    - "+rec+"\n")
	return te, srv, log
}

// workEnv is a fresh test environment with a profile "work" on a mock
// Anthropic server.
func workEnv(t *testing.T) (*testEnv, *mockserver.Server) {
	t.Helper()
	srv := mockserver.New()
	t.Cleanup(srv.Close)
	srv.APIKey = "work-key"
	te := newTestEnv(t)
	te.env["WORK_KEY"] = "work-key"
	te.mustRun(ExitOK, "provider", "add", "work", "--provider", "anthropic", "--base-url", srv.URL, "--api-key-env", "WORK_KEY")
	return te, srv
}

// dryJSON runs rein run --dry-run -o json and decodes the report.
func dryJSON(t *testing.T, te *testEnv, want int, args ...string) (dryReport, string) {
	t.Helper()
	out, errs := te.mustRun(want, append([]string{"run", "--dry-run", "-o", "json"}, args...)...)
	var rep dryReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	return rep, errs
}

// sessionFiles lists the files under the user's sessions directory and
// the workspace's .rein (sessions, audit logs, locks). The record that
// bubblewrap works on this host (exec.Sandbox.ProbeCache) is not one: any
// command that looks at the sandbox may write it, the dry run included,
// and whether it does depends on the host.
func sessionFiles(t *testing.T, te *testEnv) []string {
	t.Helper()
	var out []string
	for _, root := range []string{filepath.Join(te.home, ".local"), filepath.Join(te.ws, ".rein")} {
		filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() && d.Name() != "bwrap-probe" {
				out = append(out, p)
			}
			return nil
		})
	}
	return out
}

// CLI-5: the dry run's system prompt, tools, prompt and output limit are
// what a real run of the same prompt sends first — the real run against a
// mock vendor is the reference — and the dry run calls no model, stores
// no session and runs no hook.
func TestDryRunMatchesFirstRequest_CLI5(t *testing.T) {
	te, srv, hookLog := dryEnv(t)
	const prompt = "what does main.go do?"
	rep, errs := dryJSON(t, te, ExitOK, "--model", "work/m", prompt)
	if n := len(srv.Requests()); n != 0 {
		t.Fatalf("the dry run sent %d request(s) to the vendor, want 0", n)
	}
	if files := sessionFiles(t, te); len(files) != 0 {
		t.Fatalf("the dry run wrote %v", files)
	}
	if _, err := os.Stat(hookLog); err == nil {
		t.Fatalf("a hook ran in the dry run")
	}
	if !rep.Ready || rep.ExitCode != ExitOK || rep.Hooks.Count != 2 || rep.Hooks.Run {
		t.Fatalf("ready %v exit %d hooks %+v\nstderr: %s", rep.Ready, rep.ExitCode, rep.Hooks, errs)
	}

	srv.Enqueue(mockserver.Turn{Text: "it prints hello"})
	te.mustRun(ExitOK, "run", "--model", "work/m", "-o", "json", prompt)
	reqs := srv.Requests()
	if len(reqs) != 1 || reqs[0].Decoded == nil {
		t.Fatalf("the real run sent %d request(s)", len(reqs))
	}
	if _, err := os.Stat(hookLog); err != nil {
		t.Fatalf("the real run ran no hook: the no-hook check above proves nothing: %v", err)
	}
	if len(sessionFiles(t, te)) == 0 {
		t.Fatal("the real run stored nothing where the check looks: the no-session check above proves nothing")
	}
	real := reqs[0].Decoded
	if real.System != rep.SystemPrompt {
		t.Errorf("system prompt differs\n--- real\n%s\n--- dry run\n%s", real.System, rep.SystemPrompt)
	}
	if !strings.Contains(rep.SystemPrompt, "Run go test ./...") || !strings.Contains(rep.SystemPrompt, "notes") {
		t.Errorf("the system prompt lacks AGENTS.md or the skill index:\n%s", rep.SystemPrompt)
	}
	if len(real.Tools) != len(rep.Tools) {
		t.Fatalf("%d tools sent, the dry run shows %d", len(real.Tools), len(rep.Tools))
	}
	for i, rt := range real.Tools {
		dt := rep.Tools[i]
		if rt.Name != dt.Name || rt.Description != dt.Description || compactJSON(t, rt.InputSchema) != compactJSON(t, dt.InputSchema) {
			t.Errorf("tool %d: sent %s, dry run shows %s", i, rt.Name, dt.Name)
		}
	}
	if limit := rep.Request.MaxTokens; real.Model != rep.Request.Model || (real.MaxTokens != limit && !(limit == 0 && real.MaxTokens == anthropic.DefaultMaxTokens)) {
		t.Errorf("model/max_tokens: sent %s/%d, dry run %s/%d", real.Model, real.MaxTokens, rep.Request.Model, rep.Request.MaxTokens)
	}
	if len(real.Messages) != rep.Request.Messages || real.Messages[0].TextOf() != prompt || rep.Request.Prompt != prompt {
		t.Errorf("messages: sent %d %q, dry run %d %q", len(real.Messages), real.Messages[0].TextOf(), rep.Request.Messages, rep.Request.Prompt)
	}
	if !slices.ContainsFunc(rep.Tools, func(t dryToolView) bool { return t.Origin == "mcp" && strings.HasPrefix(t.Name, "mcp__good__") }) {
		t.Errorf("no tool of the MCP server good: %v", rep.Tools)
	}
	if i := slices.IndexFunc(rep.MCP, func(m dryMCPServer) bool { return m.Server == "broken" }); i < 0 || rep.MCP[i].State == "ready" {
		t.Errorf("the broken MCP server: %+v", rep.MCP)
	}
	if !slices.Equal(rep.Skills, []string{"notes"}) {
		t.Errorf("skills %v", rep.Skills)
	}
}

func compactJSON(t *testing.T, b []byte) string {
	t.Helper()
	var buf bytes.Buffer
	if err := json.Compact(&buf, b); err != nil {
		t.Fatalf("%v: %s", err, b)
	}
	return buf.String()
}

// CLI-5: tokens are the estimate of the request's parts, and the cost
// their price at the model's registry entry.
func TestDryRunTokensAndCost_CLI5(t *testing.T) {
	te := newTestEnv(t)
	te.script("m", llmtest.Reply{Text: "never"})
	rep, _ := dryJSON(t, te, ExitOK, "--model", "scripted/m", "hello")
	tk := rep.Tokens
	if tk == nil || tk.System <= 0 || tk.Tools <= 0 || tk.Messages <= 0 || tk.Total != tk.System+tk.Tools+tk.Messages || tk.Method != "estimate" {
		t.Fatalf("tokens %+v", tk)
	}
	if tk.ContextWindow != 100_000 {
		t.Errorf("context window %d", tk.ContextWindow)
	}
	c := rep.Cost
	if want := float64(tk.Total) * 3 / 1e6; !c.Known || c.InputUSD != want {
		t.Errorf("input cost %v, want %v (%+v)", c.InputUSD, want, c)
	}
	if want := 4096 * 15 / 1e6; c.MaxOutputUSD != want {
		t.Errorf("max output cost %v, want %v", c.MaxOutputUSD, want)
	}
	if len(te.models["scripted/m"].Requests()) != 0 {
		t.Error("the dry run called the model")
	}
}

// CLI-5: the text output has its sections and says nothing was called.
func TestDryRunText_CLI5(t *testing.T) {
	te := newTestEnv(t)
	te.script("m")
	out, _ := te.mustRun(ExitOK, "run", "--dry-run", "--model", "scripted/m", "hello")
	for _, want := range []string{"ready (no model was called, nothing was stored)", "## Readiness", "## System prompt", "## Tools",
		"## Skills", "## First request", "hooks do not run in a dry run", "read_file", "~$"} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in:\n%s", want, out)
		}
	}
}

// CLI-5: not ready — a missing key (naming its variable), a model that does
// not resolve, an untrusted workspace's extras — exits 11 (ExitNotReady) with the check
// that blocks; bad flags are usage errors.
func TestDryRunNotReady_CLI5(t *testing.T) {
	tests := []struct {
		name  string
		setup func(te *testEnv)
		args  []string
		check string
		text  string
	}{
		{"missing key", nil, []string{"--model", "anthropic/claude-sonnet-4-5"}, "auth", "ANTHROPIC_API_KEY"},
		{"unknown model", nil, []string{"--model", "nosuchvendor/frob"}, "model", "nosuchvendor"},
		{"untrusted extras", func(te *testEnv) {
			te.script("m")
			te.write(".rein/hooks.yaml", "hooks:\n  stop:\n    - {command: ./notify.sh}\n")
		}, []string{"--model", "scripted/m"}, "trust", "rein trust"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			te := newTestEnv(t)
			if tt.setup != nil {
				tt.setup(te)
			}
			rep, _ := dryJSON(t, te, ExitNotReady, append(tt.args, "hello")...)
			if rep.Ready || rep.ExitCode != ExitNotReady {
				t.Fatalf("ready %v exit %d", rep.Ready, rep.ExitCode)
			}
			i := slices.IndexFunc(rep.Checks, func(c check) bool { return c.Status == statusBlocked })
			if i < 0 || rep.Checks[i].Name != tt.check || !strings.Contains(rep.Checks[i].Message+rep.Checks[i].Next, tt.text) {
				t.Fatalf("blocked check: %+v", rep.Checks)
			}
			if strings.Contains(fmt.Sprint(rep), "work-key") {
				t.Error("a secret is in the report")
			}
		})
	}
	for _, args := range [][]string{
		{"--output", "stream-json"}, {"--resume", "x"}, {"--continue"}, {"--record", "c.jsonl"}, {"--server", "http://127.0.0.1:1"},
	} {
		te := newTestEnv(t)
		te.script("m")
		_, errs := te.mustRun(ExitUsage, append([]string{"run", "--dry-run", "--model", "scripted/m"}, append(args, "hello")...)...)
		if !strings.Contains(errs, "--dry-run") {
			t.Errorf("%v: %s", args, errs)
		}
	}
}

// CLI-5: the key is never printed, only where it comes from.
func TestDryRunAuthSource_CLI5(t *testing.T) {
	te, _, _ := dryEnv(t)
	out, _ := te.mustRun(ExitOK, "run", "--dry-run", "--model", "work/m", "hello")
	if strings.Contains(out, "work-key") {
		t.Fatalf("the key is printed:\n%s", out)
	}
	if !strings.Contains(out, "key from $WORK_KEY") {
		t.Errorf("the key's variable is not named:\n%s", out)
	}
}

// CLI-5: the JSON's shape — every field's path and type — is stable
// (docs/cli.md documents it); a change to it must update the golden file.
func TestDryRunJSONSchema_CLI5(t *testing.T) {
	te, _, _ := dryEnv(t)
	te.env["REIN_SANDBOX"] = "off" // no note that depends on the machine's sandbox
	out, _ := te.mustRun(ExitOK, "run", "--dry-run", "-o", "json", "--model", "work/claude-sonnet-4-5", "hello")
	var v any
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatal(err)
	}
	paths := map[string]bool{}
	shape("", v, paths)
	lines := make([]string, 0, len(paths))
	for p := range paths {
		lines = append(lines, p)
	}
	sort.Strings(lines)
	golden(t, "dryrun_schema.golden", strings.Join(lines, "\n")+"\n")
}

// shape records the path and JSON type of every value in v; array
// elements share the path "[]". An input_schema is a tool's own: its
// inside is not the report's shape.
func shape(path string, v any, out map[string]bool) {
	switch v := v.(type) {
	case map[string]any:
		out[path+" object"] = true
		if strings.HasSuffix(path, ".input_schema") {
			return
		}
		for k, e := range v {
			shape(path+"."+k, e, out)
		}
	case []any:
		out[path+" array"] = true
		for _, e := range v {
			shape(path+"[]", e, out)
		}
	case string:
		out[path+" string"] = true
	case float64:
		out[path+" number"] = true
	case bool:
		out[path+" bool"] = true
	case nil:
		out[path+" null"] = true
	}
}

// CLI-5 attack table: what a dry run prints comes from the workspace, MCP
// servers and their stderr — hostile input. The text output carries no
// control character (no escape sequence reaches the terminal), the JSON
// keeps the text exact, and a withheld server's tools are not offered.
func TestDryRunAttacks_CLI5(t *testing.T) {
	const esc = "\x1b]52;c;ZXZpbA==\x07\x1b[2J\u009b31m\r"
	tests := []struct {
		name  string
		setup func(t *testing.T, te *testEnv)
		check func(t *testing.T, rep dryReport)
	}{
		{"escape sequences in AGENTS.md", func(t *testing.T, te *testEnv) {
			te.write("AGENTS.md", "Be brief."+esc+"\n")
		}, func(t *testing.T, rep dryReport) {
			if !strings.Contains(rep.SystemPrompt, "Be brief.\x1b]52;c;ZXZpbA==\x07\x1b[2J\u009b31m") {
				t.Errorf("the JSON system prompt is not the one sent: %q", rep.SystemPrompt)
			}
		}},
		{"escape sequences in an MCP server's stderr", func(t *testing.T, te *testEnv) {
			script := te.userFile("loud.sh", "printf '"+strings.NewReplacer("\x1b", `\033`, "\x07", `\007`, "\u009b", `\302\233`, "\r", `\r`).Replace(esc)+"boom' >&2; exit 1\n")
			te.userFile("mcp.yaml", "servers:\n  loud:\n    command: sh\n    args: ["+strconv.Quote(script)+"]\n")
		}, func(t *testing.T, rep dryReport) {
			i := slices.IndexFunc(rep.MCP, func(m dryMCPServer) bool { return m.Server == "loud" })
			if i < 0 || rep.MCP[i].State == "ready" {
				t.Errorf("the failing server: %+v %+v", rep.MCP, rep.Checks)
			}
		}},
		{"a prompt injection in an MCP tool's description", func(t *testing.T, te *testEnv) {
			te.userFile("mcp.yaml", "servers:\n"+hostileServerYAML(t, "evil", "hostile"))
		}, func(t *testing.T, rep dryReport) {
			for _, tl := range rep.Tools {
				if strings.HasPrefix(tl.Name, "mcp__evil__") {
					t.Errorf("the withheld server's tool %s is offered", tl.Name)
				}
			}
			if !slices.ContainsFunc(rep.Checks, func(c check) bool { return c.Name == "mcp" && strings.Contains(c.Message, "withheld") }) {
				t.Errorf("no withheld warning: %+v", rep.Checks)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			te := newTestEnv(t)
			te.script("m")
			tt.setup(t, te)
			rep, _ := dryJSON(t, te, ExitOK, "--model", "scripted/m", "hello")
			tt.check(t, rep)
			out, errs := te.mustRun(ExitOK, "run", "--dry-run", "--model", "scripted/m", "hello")
			if i := strings.IndexFunc(out+errs, func(c rune) bool {
				return c < ' ' && c != '\t' && c != '\n' || c >= 0x7f && c < 0xa0
			}); i >= 0 {
				t.Errorf("a control character reaches the terminal at %d: %q", i, (out + errs)[max(0, i-40):min(len(out+errs), i+40)])
			}
		})
	}
}

func FuzzTermSafe(f *testing.F) {
	for _, s := range []string{"", "plain", "\x1b[2J", "a\r\nb", "\xff\xfe", "\u009b31m", "tab\there"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := termSafe(s)
		if !utf8.ValidString(out) {
			t.Fatalf("invalid UTF-8 out of %q", s)
		}
		for _, c := range out {
			if c < ' ' && c != '\t' && c != '\n' || c >= 0x7f && c < 0xa0 {
				t.Fatalf("control %U left in %q", c, out)
			}
		}
		if strings.ContainsFunc(s, func(c rune) bool { return c < ' ' || c >= 0x7f }) == false && out != s {
			t.Fatalf("clean text changed: %q → %q", s, out)
		}
	})
}
