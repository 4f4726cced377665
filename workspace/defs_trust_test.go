package workspace

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/reinhq/rein/hook"
	"github.com/reinhq/rein/permission"
)

// names lists the names and origins of a workspace's definitions.
func names(d *Definitions) []string {
	var out []string
	for _, a := range d.Agents {
		out = append(out, "agent "+a.Name+" "+string(a.Origin))
	}
	for _, s := range d.Skills {
		out = append(out, "skill "+s.Name+" "+string(s.Origin))
	}
	for _, a := range d.Actions {
		out = append(out, "action "+a.Name+" "+string(a.Origin))
	}
	for _, m := range d.MCP {
		out = append(out, "mcp "+m.Name+" "+string(m.Origin))
	}
	return out
}

// PERM-5, WS-1: an untrusted workspace's agents, skills, actions and MCP
// servers do not apply — Definitions() leaves them out and a warning names
// each — but AllDefinitions() lists them; once trusted they apply.
func TestDefinitionsTrustGated_PERM5(t *testing.T) {
	e := newTrustEnv(t)
	write(t, filepath.Join(e.home, ".config", "rein", "agents", "mine.md"), agentMD("mine", "the user's"))
	e.write(".rein/agents/reviewer.md", agentMD("reviewer", "Reviews."))
	e.write(".claude/skills/pdf/SKILL.md", skillMD("pdf"))
	e.write(".rein/actions/deploy/ACTION.yaml", "description: Deploy.\ncommand: [./deploy.sh, staging]\n")
	e.write(".mcp.json", `{"mcpServers": {"gh": {"command": "npx", "args": ["-y", "gh-mcp", "${HOME}"]}, "off": {"command": "x", "disabled": true}}}`)
	e.write(".rein/mcp.yaml", "servers:\n  docs: {url: \"https://docs.example/mcp\"}\n")
	e.write(".rein/agents/broken.md", "no frontmatter\n")

	l := e.load()
	user := []string{"agent explore builtin", "agent general builtin", "agent mine user"}
	all := []string{"agent explore builtin", "agent general builtin", "agent mine user", "agent reviewer workspace",
		"skill pdf workspace", "action deploy workspace", "mcp docs workspace", "mcp gh workspace", "mcp off workspace"}
	if diff := cmp.Diff(user, names(l.Definitions())); diff != "" {
		t.Errorf("untrusted Definitions(): -want +got:\n%s", diff)
	}
	if diff := cmp.Diff(all, names(l.AllDefinitions())); diff != "" {
		t.Errorf("untrusted AllDefinitions(): -want +got:\n%s", diff)
	}
	if gh, _ := l.AllDefinitions().Server("gh"); gh.Args[2] != e.home {
		t.Errorf("gh args %v: ${HOME} not expanded", gh.Args)
	}
	if len(l.Definitions().Problems) != 0 || len(l.AllDefinitions().Problems) != 1 {
		t.Errorf("problems: %v / %v", l.Definitions().Problems, l.AllDefinitions().Problems)
	}
	wantExtras := []Extra{
		{Kind: ExtraMCP, What: "docs: https://docs.example/mcp", File: ".rein/mcp.yaml"},
		{Kind: ExtraMCP, What: "gh: npx -y gh-mcp ${HOME}", File: ".mcp.json"}, // as written: no secret in a warning
		{Kind: ExtraAgents, What: "reviewer", File: ".rein/agents/reviewer.md"},
		{Kind: ExtraSkills, What: "pdf", File: ".claude/skills/pdf/SKILL.md"},
		{Kind: ExtraActions, What: "deploy: ./deploy.sh staging", File: ".rein/actions/deploy/ACTION.yaml"},
	}
	if diff := cmp.Diff(wantExtras, l.Trust.Extras); diff != "" {
		t.Errorf("extras: -want +got:\n%s", diff)
	}
	warnings := strings.Join(l.Warnings, "\n")
	for _, w := range []string{
		"workspace not trusted: ignored agent reviewer (.rein/agents/reviewer.md)",
		"workspace not trusted: ignored skill pdf (.claude/skills/pdf/SKILL.md)",
		"workspace not trusted: ignored action deploy: ./deploy.sh staging (.rein/actions/deploy/ACTION.yaml)",
		"workspace not trusted: ignored MCP server gh: npx -y gh-mcp ${HOME} (.mcp.json)",
		"rein trust " + e.ws,
	} {
		if !strings.Contains(warnings, w) {
			t.Errorf("warnings lack %q:\n%s", w, warnings)
		}
	}

	e.trust()
	l = e.load()
	if !l.Trust.Trusted || len(l.Trust.Warnings) > 0 {
		t.Fatalf("trusted=%v warnings %v", l.Trust.Trusted, l.Trust.Warnings)
	}
	if diff := cmp.Diff(all, names(l.Definitions())); diff != "" {
		t.Errorf("trusted Definitions(): -want +got:\n%s", diff)
	}
	if l.Definitions() != l.AllDefinitions() {
		t.Error("a trusted workspace's definitions are computed twice")
	}
}

// HOOK-1, PERM-5: a trusted workspace's hook named like one of the
// user's replaces it, in its place, as a clash; unnamed hooks add up.
// Untrusted, the user's hooks stand, and only AllDefinitions() shows the
// clash.
func TestHooksMergeByName_HOOK1(t *testing.T) {
	e := newTrustEnv(t)
	userHooks := filepath.Join(e.home, ".config", "rein", "hooks.yaml")
	write(t, userHooks, "hooks:\n  post_tool_use:\n    - {name: lint, command: ./user-lint.sh}\n  stop:\n    - {command: ./user-stop.sh}\n")
	e.write(".rein/hooks.yaml", "hooks:\n  post_tool_use:\n    - {name: lint, command: ./ws-lint.sh}\n  stop:\n    - {command: ./ws-stop.sh}\n")
	hooks := func(l *Loaded) []string {
		t.Helper()
		specs, err := l.Hooks()
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, s := range specs {
			out = append(out, string(s.Event)+" "+s.Command)
		}
		return out
	}
	clash := []Clash{{Kind: DefHook, Name: "lint", Paths: []string{userHooks, filepath.Join(e.ws, ".rein", "hooks.yaml")}}}

	l := e.load()
	if diff := cmp.Diff([]string{"post_tool_use ./user-lint.sh", "stop ./user-stop.sh"}, hooks(l)); diff != "" {
		t.Errorf("untrusted: -want +got:\n%s", diff)
	}
	if len(l.Definitions().Clashes) != 0 || !cmp.Equal(clash, l.AllDefinitions().Clashes) {
		t.Errorf("untrusted clashes: %v / %v", l.Definitions().Clashes, l.AllDefinitions().Clashes)
	}
	e.trust()
	l = e.load()
	if diff := cmp.Diff([]string{"post_tool_use ./ws-lint.sh", "stop ./user-stop.sh", "stop ./ws-stop.sh"}, hooks(l)); diff != "" {
		t.Errorf("trusted: -want +got:\n%s", diff)
	}
	if diff := cmp.Diff(clash, l.Definitions().Clashes); diff != "" {
		t.Errorf("trusted clashes: -want +got:\n%s", diff)
	}
}

// SKILL-2, PERM-5: skills.env comes from the user's settings only; a
// workspace's is ignored with a warning.
func TestSkillEnv_SKILL2(t *testing.T) {
	e := newTrustEnv(t)
	write(t, filepath.Join(e.home, ".config", "rein", "settings.yaml"), "skills:\n  env: [JIRA_URL, JIRA_URL, TEAM]\n")
	e.write(".rein/settings.yaml", "skills:\n  env: [AWS_SECRET_ACCESS_KEY]\n")
	l := e.load()
	if diff := cmp.Diff([]string{"JIRA_URL", "TEAM"}, l.SkillEnv()); diff != "" {
		t.Errorf("SkillEnv: -want +got:\n%s", diff)
	}
	if w := strings.Join(l.Warnings, "\n"); !strings.Contains(w, "workspace .rein/settings.yaml sets skills.env (AWS_SECRET_ACCESS_KEY); ignored") {
		t.Errorf("warnings:\n%s", w)
	}
	e.trust()
	if got := e.load().SkillEnv(); !cmp.Equal(got, []string{"JIRA_URL", "TEAM"}) {
		t.Errorf("trusted: SkillEnv = %v", got)
	}
}

func TestParseSettingsSkillEnv(t *testing.T) {
	tests := []struct {
		doc     string
		want    []string
		unknown []string
		err     string
	}{
		{doc: "skills:\n  env: A_B\n", want: []string{"A_B"}},
		{doc: "skills: ~\n"},
		{doc: "skills:\n  env: [ok, 1bad]\n", err: `line 2: skills.env: "1bad" is not a variable name`},
		{doc: "skills:\n  env: {a: 1}\n", err: "want a list of variable names"},
		{doc: "skills:\n  dirs: [x]\n", unknown: []string{"skills.dirs (line 2)"}},
	}
	for _, tt := range tests {
		s, err := ParseSettings([]byte(tt.doc), permission.SourceUser)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("%q: error %v, want %q", tt.doc, err, tt.err)
			}
			continue
		}
		if err != nil || !cmp.Equal(s.SkillEnv, tt.want) || !cmp.Equal(s.Unknown, tt.unknown) {
			t.Errorf("%q: SkillEnv %v, unknown %v, err %v", tt.doc, s.SkillEnv, s.Unknown, err)
		}
	}
}

// A Loaded not made by Load has the built-in agents.
func TestLoadedZeroDefinitions(t *testing.T) {
	var l Loaded
	if _, ok := l.Definitions().Agent("explore"); !ok {
		t.Error("no built-in explore agent")
	}
	if _, ok := l.AllDefinitions().Agent("general"); !ok {
		t.Error("no built-in general agent")
	}
}

// HOOK-1: merging hooks by name, file by file.
func TestMergeHooks_HOOK1(t *testing.T) {
	spec := func(name, cmd string) hook.Spec { return hook.Spec{Event: hook.Stop, Name: name, Command: cmd} }
	files := []hookFile{
		{path: "user", specs: []hook.Spec{spec("a", "u-a"), spec("", "u-1"), spec("b", "u-b")}},
		{path: "ws", workspace: true, specs: []hook.Spec{spec("a", "w-a"), spec("a", "w-a2"), spec("", "w-1")}},
		{path: "broken", workspace: true, err: errors.New("bad"), specs: []hook.Spec{spec("b", "x")}},
		{path: "claude", workspace: true, specs: []hook.Spec{spec("b", "c-b")}},
	}
	cmds := func(specs []hook.Spec) []string {
		var out []string
		for _, s := range specs {
			out = append(out, s.Command)
		}
		return out
	}
	specs, _, clashes := mergeHooks(files, true)
	if diff := cmp.Diff([]string{"w-a", "u-1", "c-b", "w-a2", "w-1"}, cmds(specs)); diff != "" {
		t.Errorf("hooks: -want +got:\n%s", diff)
	}
	want := []Clash{{Kind: DefHook, Name: "a", Paths: []string{"user", "ws"}}, {Kind: DefHook, Name: "b", Paths: []string{"user", "claude"}}}
	if diff := cmp.Diff(want, clashes); diff != "" {
		t.Errorf("clashes: -want +got:\n%s", diff)
	}
	specs, _, clashes = mergeHooks(files, false)
	if diff := cmp.Diff([]string{"u-a", "u-1", "u-b"}, cmds(specs)); diff != "" || clashes != nil {
		t.Errorf("user only: -want +got:\n%s; clashes %v", diff, clashes)
	}
}
