package cli

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/reinhq/rein/cli/tui"
	"github.com/reinhq/rein/llm/llmtest"
)

// userFile writes a file under the user's config directory.
func (te *testEnv) userFile(rel, content string) string {
	te.t.Helper()
	p := filepath.Join(te.home, ".config", "rein", filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		te.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		te.t.Fatal(err)
	}
	return p
}

// agentFile is an agent definition.
func agentFile(name, desc, extra, prompt string) string {
	return "---\nname: " + name + "\ndescription: " + desc + "\n" + extra + "---\n" + prompt + "\n"
}

// AGENT-1, SKILL-1, PERM-5: rein agents list and rein skills list show
// the built-in, the user's and the workspace's definitions; an untrusted
// workspace's are listed, marked, and the user's of the same name still
// applies; once trusted, the workspace's replace it.
func TestAgentsSkillsList_PERM5(t *testing.T) {
	te := newTestEnv(t)
	te.userFile("agents/reviewer.md", agentFile("reviewer", "The user's reviewer.", "", "mine"))
	te.userFile("skills/notes/SKILL.md", "---\nname: notes\ndescription: Keeps notes.\n---\nbody\n")
	te.write(".rein/agents/reviewer.md", agentFile("reviewer", "The workspace's reviewer.", "tools: [read_file, grep]\nmodel: m1\n", "ws"))
	te.write(".rein/agents/chat.md", agentFile("chat", "Chats.", "tools: []\n", "hi"))
	te.write(".rein/skills/release/SKILL.md", "---\nname: release\ndescription: Writes release notes.\n---\nbody\n")

	type row struct {
		Name, Origin string
		Ignored      bool
	}
	rowsOf := func(out string) []row {
		t.Helper()
		var got []struct {
			Name    string `json:"name"`
			Origin  string `json:"origin"`
			Ignored bool   `json:"ignored"`
		}
		if err := json.Unmarshal([]byte(out), &got); err != nil {
			t.Fatalf("%v: %s", err, out)
		}
		var rows []row
		for _, g := range got {
			rows = append(rows, row{g.Name, g.Origin, g.Ignored})
		}
		return rows
	}
	tests := []struct {
		name    string
		trust   bool
		args    []string
		want    []row
		text    []string
		notText []string
	}{
		{name: "agents untrusted", args: []string{"agents", "list"},
			want: []row{{"chat", "workspace", true}, {"explore", "builtin", false}, {"general", "builtin", false},
				{"reviewer", "user", false}, {"reviewer", "workspace", true}},
			text: []string{"reviewer  user ~/.config/rein/agents/reviewer.md", "The user's reviewer.",
				"The workspace's reviewer. " + untrustedMark, "none", "m1", "all"}},
		{name: "skills untrusted", args: []string{"skills", "list"},
			want: []row{{"notes", "user", false}, {"release", "workspace", true}},
			text: []string{"Writes release notes. " + untrustedMark, ".rein/skills/release/SKILL.md", "~/.config/rein/skills/notes/SKILL.md"}},
		{name: "agents trusted", trust: true, args: []string{"agents", "list"},
			want: []row{{"chat", "workspace", false}, {"explore", "builtin", false}, {"general", "builtin", false},
				{"reviewer", "workspace", false}},
			text: []string{"read_file, grep", "The workspace's reviewer."}, notText: []string{"not trusted", "The user's reviewer."}},
		{name: "skills trusted", trust: true, args: []string{"skills", "list"},
			want: []row{{"notes", "user", false}, {"release", "workspace", false}}, notText: []string{"not trusted"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.trust {
				te.mustRun(ExitOK, "trust")
			}
			out, _ := te.mustRun(ExitOK, append(tt.args, "--json")...)
			if diff := cmp.Diff(tt.want, rowsOf(out)); diff != "" {
				t.Errorf("--json (-want +got):\n%s", diff)
			}
			out, _ = te.mustRun(ExitOK, tt.args...)
			for _, want := range tt.text {
				if !strings.Contains(out, want) {
					t.Errorf("output lacks %q:\n%s", want, out)
				}
			}
			for _, not := range tt.notText {
				if strings.Contains(out, not) {
					t.Errorf("output holds %q:\n%s", not, out)
				}
			}
		})
	}
}

// AGENT-1: rein run --agent runs the session as the agent: its prompt in
// the system prompt, its tools only; an unknown agent is a usage error
// naming the agents, an untrusted workspace's says so, and --server
// refuses it.
func TestRunAgent(t *testing.T) {
	te := newTestEnv(t)
	te.userFile("agents/poet.md", agentFile("poet", "Writes poems.", "tools: [read_file]\n", "You write short poems."))
	te.write(".rein/agents/secret.md", agentFile("secret", "The workspace's.", "", "hidden"))

	s := te.script("m", llmtest.Reply{Text: "roses"})
	te.mustRun(ExitOK, "run", "--model", "scripted/m", "--agent", "poet", "a poem")
	req := s.Requests()[0]
	if !strings.Contains(req.System, "You write short poems.") {
		t.Errorf("system prompt lacks the agent's:\n%s", req.System)
	}
	var tools []string
	for _, tl := range req.Tools {
		tools = append(tools, tl.Name)
	}
	if diff := cmp.Diff([]string{"read_file"}, tools); diff != "" {
		t.Errorf("tools (-want +got):\n%s", diff)
	}

	// rein alone on a terminal: the trust question comes first, and a yes
	// makes the workspace's agent available.
	te.stdin = "y\n"
	s = te.script("m", llmtest.Reply{Text: "ok"})
	errs := drive(t, te, func(ctx context.Context, b tui.Backend, _ tui.Options) {
		submit(t, ctx, b, "go", nil)
	}, "--model", "scripted/m", "--agent", "secret")
	if !strings.Contains(errs, "agent secret (.rein/agents/secret.md)") || !strings.Contains(s.Requests()[0].System, "hidden") {
		t.Errorf("interactive --agent of the workspace: %s\n%s", errs, s.Requests()[0].System)
	}
	te.tty, te.stdin, te.customize = false, "", nil
	te.mustRun(ExitOK, "trust", "--revoke")

	tests := []struct {
		name string
		args []string
		want []string
	}{
		{"unknown", []string{"run", "--model", "scripted/m", "--agent", "peot", "x"}, []string{"no agent is called \"peot\"", "did you mean poet"}},
		{"untrusted", []string{"run", "--model", "scripted/m", "--agent", "secret", "x"}, []string{"not trusted", "rein trust " + te.ws}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, errs := te.mustRun(ExitUsage, tt.args...)
			for _, want := range tt.want {
				if !strings.Contains(errs, want) {
					t.Errorf("stderr lacks %q:\n%s", want, errs)
				}
			}
		})
	}
}

// WS-1, WS-2: rein init --kind chat writes a persona and settings of
// kind chat; a run there gives the model no tools, and the persona.
func TestInitChat(t *testing.T) {
	te := newTestEnv(t)
	out, _ := te.mustRun(ExitOK, "init", "--kind", "chat")
	for _, want := range []string{"AGENTS.md", ".rein/settings.yaml", "talk to it with: rein"} {
		if !strings.Contains(out, want) {
			t.Errorf("init output lacks %q:\n%s", want, out)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(te.ws, "AGENTS.md")); !strings.Contains(string(b), "Persona") {
		t.Errorf("AGENTS.md is not the chat template:\n%s", b)
	}
	out, _ = te.mustRun(ExitOK, "config", "show")
	if !strings.Contains(out, "chat") {
		t.Errorf("the chat settings do not set kind chat:\n%s", out)
	}
	s := te.script("m", llmtest.Reply{Text: "hello"})
	te.mustRun(ExitOK, "run", "--model", "scripted/m", "hi")
	if req := s.Requests()[0]; len(req.Tools) != 0 || !strings.Contains(req.System, "Persona") {
		t.Errorf("a chat workspace's run has tools %v, or not its persona:\n%s", req.Tools, req.System)
	}
	_, errs := te.mustRun(ExitUsage, "init", "--kind", "nope", "--cwd", t.TempDir())
	if !strings.Contains(errs, "want project or chat") {
		t.Errorf("bad kind: %s", errs)
	}
}

// WS-1, PERM-5: rein init in a workspace that already brings something
// of its own does not trust it.
func TestInitKeepsForeignUntrusted(t *testing.T) {
	te := newTestEnv(t)
	te.write(".rein/hooks.yaml", "hooks:\n  stop:\n    - {command: ./notify.sh}\n")
	out, _ := te.mustRun(ExitOK, "init")
	if strings.Contains(out, "Trusted") || !strings.Contains(out, "rein trust "+te.ws) {
		t.Errorf("init trusted a workspace with a foreign hook:\n%s", out)
	}
	out, _ = te.mustRun(ExitOK, "agents", "list")
	if !strings.Contains(out, "reviewer") || !strings.Contains(out, untrustedMark) {
		t.Errorf("the example agent is not listed as untrusted:\n%s", out)
	}
}

// CLI-3, WS-1: rein doctor lists what does not load, with its line, and
// the names several files define, saying which wins.
func TestDoctorDefinitions(t *testing.T) {
	te := newTestEnv(t)
	te.userFile("agents/reviewer.md", agentFile("reviewer", "The user's.", "", "u"))
	te.write(".rein/agents/reviewer.md", agentFile("reviewer", "The workspace's.", "", "w"))
	te.write(".rein/agents/bad.md", "---\nname: bad\ndescription: Bad mode.\npermission_mode: yolo\n---\nx\n")
	_, out, _ := te.run("doctor")
	for _, want := range []string{
		".rein/agents/bad.md:4: permission_mode:",
		"agent reviewer defined in ~/.config/rein/agents/reviewer.md and .rein/agents/reviewer.md; .rein/agents/reviewer.md wins once the workspace is trusted",
		"definitions   3 agent(s), 0 skill(s), 0 action(s), 0 MCP server(s) apply",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("doctor lacks %q:\n%s", want, out)
		}
	}
	_, out, _ = te.run("doctor", "--json")
	var r report
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	if !hasCheck(r, "definitions", statusWarning) {
		t.Errorf("no definitions warning: %+v", r.Checks)
	}
}

// TOOL-7: rein doctor shows the sandbox policy a run gets, resolved from
// every layer, with the settings that widen it.
func TestDoctorSandboxPolicy_TOOL7(t *testing.T) {
	te := newTestEnv(t)
	te.env["REIN_SANDBOX_ALLOW_HOSTS"] = "registries,localhost:3000"
	_, out, _ := te.run("doctor")
	for _, want := range []string{"sandbox policy profile workspace", "network: only registries, localhost:3000, through rein's egress proxy",
		"protected in every profile: git's config and hooks, .rein, .claude"} {
		if !strings.Contains(out, want) {
			t.Errorf("doctor lacks %q:\n%s", want, out)
		}
	}
	delete(te.env, "REIN_SANDBOX_ALLOW_HOSTS")
	te.env["REIN_SANDBOX"] = "read-only"
	_, out, _ = te.run("doctor")
	for _, want := range []string{"profile read-only (bubblewrap required", "writable: only $TMPDIR", "network: none", "to widen: sandbox.allow_hosts"} {
		if !strings.Contains(out, want) {
			t.Errorf("read-only: doctor lacks %q:\n%s", want, out)
		}
	}
}
