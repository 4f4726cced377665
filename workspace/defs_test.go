package workspace

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// defEnv is a user (HOME, the config directory) and a workspace.
type defEnv struct {
	t        *testing.T
	home, ws string
	paths    Paths
	env      map[string]string
}

func newDefEnv(t *testing.T) *defEnv {
	t.Helper()
	home := t.TempDir()
	ws := filepath.Join(home, "src", "repo")
	mkdir(t, filepath.Join(ws, ".git"))
	return &defEnv{t: t, home: home, ws: ws, env: map[string]string{},
		paths: Paths{Home: home, ConfigDir: filepath.Join(home, ".config", "rein")}}
}

// files writes files named "~/rel" (home), "@/rel" (config dir) or "rel"
// (workspace).
func (e *defEnv) files(files map[string]string) {
	for name, body := range files {
		write(e.t, e.abs(name), body)
	}
}

func (e *defEnv) abs(name string) string {
	switch {
	case strings.HasPrefix(name, "~/"):
		return filepath.Join(e.home, name[2:])
	case strings.HasPrefix(name, "@/"):
		return filepath.Join(e.paths.ConfigDir, name[2:])
	}
	return filepath.Join(e.ws, name)
}

// rel names a path the way files does.
func (e *defEnv) rel(p string) string {
	for _, x := range []struct{ dir, prefix string }{{e.ws, ""}, {e.paths.ConfigDir, "@/"}, {e.home, "~/"}} {
		if r, err := filepath.Rel(x.dir, p); err == nil && !strings.HasPrefix(r, "..") {
			return x.prefix + filepath.ToSlash(r)
		}
	}
	return p
}

func (e *defEnv) load(workspace bool) *Definitions {
	return LoadDefinitionsWith(e.paths, Workspace{Root: e.ws}, workspace, DefinitionOptions{Getenv: func(k string) string { return e.env[k] }})
}

// summary is what a test compares of Definitions.
type summary struct {
	Agents, Skills, Actions, MCP []string // "name origin path"
	Clashes                      []string // "kind name: path < path"
	Problems                     []string // "path:line"
}

func (e *defEnv) summarise(d *Definitions) summary {
	var s summary
	for _, a := range d.Agents {
		s.Agents = append(s.Agents, a.Name+" "+string(a.Origin)+" "+e.rel(a.Path))
	}
	for _, k := range d.Skills {
		s.Skills = append(s.Skills, k.Name+" "+string(k.Origin)+" "+e.rel(k.Path))
	}
	for _, a := range d.Actions {
		s.Actions = append(s.Actions, a.Name+" "+string(a.Origin)+" "+e.rel(a.Path))
	}
	for _, m := range d.MCP {
		s.MCP = append(s.MCP, m.Name+" "+string(m.Origin)+" "+e.rel(m.Path))
	}
	for _, c := range d.Clashes {
		var ps []string
		for _, p := range c.Paths {
			ps = append(ps, e.rel(p))
		}
		s.Clashes = append(s.Clashes, c.Kind+" "+c.Name+": "+strings.Join(ps, " < "))
	}
	for _, p := range d.Problems {
		s.Problems = append(s.Problems, fmt.Sprintf("%s:%d", e.rel(p.Path), p.Line))
	}
	return s
}

const (
	builtinAgents = "explore builtin builtin"
	generalAgent  = "general builtin builtin"
)

func agentMD(name, desc string) string {
	return "---\nname: " + name + "\ndescription: " + desc + "\n---\nYou are " + name + ".\n"
}

func skillMD(name string) string {
	return "---\nname: " + name + "\ndescription: Does " + name + ".\n---\n# " + name + "\n"
}

// WS-1: built-in < user < workspace, .rein over .claude (and .mcp.json)
// within a level; every name defined twice is a clash whose last path
// wins; without the workspace, only the built-in and the user's apply.
func TestLoadDefinitionsMerge_WS1(t *testing.T) {
	tests := []struct {
		name      string
		files     map[string]string
		workspace bool
		want      summary
	}{
		{name: "built-in agents only", workspace: true,
			want: summary{Agents: []string{builtinAgents, generalAgent}}},
		{name: "agents: workspace over user over built-in; .rein over .claude",
			workspace: true,
			files: map[string]string{
				"~/.claude/agents/explore.md": agentMD("explore", "mine"),
				"@/agents/explore.md":         agentMD("explore", "rein's"),
				".claude/agents/rev.md":       agentMD("reviewer", "claude"),
				".rein/agents/reviewer.md":    agentMD("reviewer", "rein"),
				"@/agents/reviewer.md":        agentMD("reviewer", "user"),
				"@/agents/solo.md":            agentMD("solo", "user only"),
			},
			want: summary{
				Agents: []string{"explore user @/agents/explore.md", generalAgent,
					"reviewer workspace .rein/agents/reviewer.md", "solo user @/agents/solo.md"},
				Clashes: []string{
					"agent explore: builtin < ~/.claude/agents/explore.md < @/agents/explore.md",
					"agent reviewer: @/agents/reviewer.md < .claude/agents/rev.md < .rein/agents/reviewer.md",
				}}},
		{name: "the workspace left out",
			files: map[string]string{
				".rein/agents/reviewer.md": agentMD("reviewer", "rein"),
				".rein/skills/x/SKILL.md":  skillMD("x"),
				".mcp.json":                `{"mcpServers": {"gh": {"command": "gh-mcp"}}}`,
				"@/skills/y/SKILL.md":      skillMD("y"),
			},
			want: summary{Agents: []string{builtinAgents, generalAgent}, Skills: []string{"y user @/skills/y/SKILL.md"}}},
		{name: "skills, actions and MCP servers",
			workspace: true,
			files: map[string]string{
				"~/.claude/skills/pdf/SKILL.md": skillMD("pdf"),
				".claude/skills/pdf/SKILL.md":   skillMD("pdf"),
				".rein/skills/deploy/SKILL.md":  "---\ndescription: Deploys.\n---\n",
				"@/actions/fmt/ACTION.yaml":     "description: Format.\ncommand: [gofmt, -w, .]\n",
				".rein/actions/fmt/ACTION.yaml": "description: Format here.\ncommand: make fmt\n",
				"@/mcp.yaml":                    "servers:\n  gh: {command: gh-mcp}\n  docs: {url: 'https://docs.example/mcp'}\n",
				".mcp.json":                     `{"mcpServers": {"gh": {"command": "npx", "args": ["gh"]}, "db": {"command": "db-mcp"}}}`,
				".rein/mcp.yaml":                "servers:\n  db: {command: ./db-mcp}\n",
			},
			want: summary{
				Agents:  []string{builtinAgents, generalAgent},
				Skills:  []string{"deploy workspace .rein/skills/deploy/SKILL.md", "pdf workspace .claude/skills/pdf/SKILL.md"},
				Actions: []string{"fmt workspace .rein/actions/fmt/ACTION.yaml"},
				MCP:     []string{"db workspace .rein/mcp.yaml", "docs user @/mcp.yaml", "gh workspace .mcp.json"},
				Clashes: []string{
					"skill pdf: ~/.claude/skills/pdf/SKILL.md < .claude/skills/pdf/SKILL.md",
					"action fmt: @/actions/fmt/ACTION.yaml < .rein/actions/fmt/ACTION.yaml",
					"mcp db: .mcp.json < .rein/mcp.yaml",
					"mcp gh: @/mcp.yaml < .mcp.json",
				}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newDefEnv(t)
			e.files(tt.files)
			got := e.summarise(e.load(tt.workspace))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("-want +got:\n%s", diff)
			}
		})
	}
}

// WS-1: a workspace at the home directory does not read the user's
// Claude Code directories twice.
func TestLoadDefinitionsWorkspaceAtHome_WS1(t *testing.T) {
	e := newDefEnv(t)
	e.files(map[string]string{"~/.claude/agents/a.md": agentMD("a", "mine")})
	d := LoadDefinitionsWith(e.paths, Workspace{Root: e.home}, true, DefinitionOptions{})
	if a, ok := d.Agent("a"); !ok || a.Origin != OriginUser || len(d.Clashes) > 0 {
		t.Errorf("agent a = %+v, %v; clashes %v", a, ok, d.Clashes)
	}
}

// AGENT-1, SKILL-1, ACTION-1, MCP-1: malformed files are problems at the
// file's line saying what is wrong; the rest loads.
func TestLoadDefinitionsProblems_WS1(t *testing.T) {
	tests := []struct {
		name  string
		files map[string]string
		want  summary
		msgs  []string // each in some problem
	}{
		{name: "YAML error in frontmatter, at the file's line",
			files: map[string]string{".rein/agents/bad.md": "---\nname: bad\ndescription: [oops\n---\nbody\n",
				".rein/agents/good.md": agentMD("good", "fine")},
			want: summary{Agents: []string{builtinAgents, generalAgent, "good workspace .rein/agents/good.md"},
				Problems: []string{".rein/agents/bad.md:3"}},
			msgs: []string{"not valid YAML"}},
		{name: "agent without frontmatter or description; unclosed frontmatter",
			files: map[string]string{".rein/agents/plain.md": "# Just markdown\n",
				".rein/agents/nodesc.md": "---\nname: nodesc\nmodel: opus\n---\nx\n",
				".rein/agents/open.md":   "---\nname: open\n"},
			want: summary{Agents: []string{builtinAgents, generalAgent},
				Problems: []string{".rein/agents/nodesc.md:2", ".rein/agents/open.md:1", ".rein/agents/plain.md:1"}},
			msgs: []string{"no frontmatter", "has no description", "never closed"}},
		{name: "agent: bad name, bad mode, bad max turns",
			files: map[string]string{".rein/agents/a.md": "---\nname: has space\ndescription: d\n---\n",
				".rein/agents/b.md": "---\nname: b\ndescription: d\npermissionMode: yolo\n---\n",
				".rein/agents/c.md": "---\nname: c\ndescription: d\n\nmaxTurns: many\n---\n"},
			want: summary{Agents: []string{"c workspace .rein/agents/c.md", builtinAgents, generalAgent},
				Problems: []string{".rein/agents/a.md:2", ".rein/agents/b.md:4", ".rein/agents/c.md:5"}},
			msgs: []string{`agent name "has space" is not valid`, "not a permission mode", "want a whole number"}},
		{name: "skills: bad name, long description, no SKILL.md",
			files: map[string]string{".rein/skills/Bad/SKILL.md": "---\ndescription: d\n---\n",
				".rein/skills/long/SKILL.md":   "---\nname: long\ndescription: " + strings.Repeat("x", 1100) + "\n---\n",
				".rein/skills/empty/notes.txt": "x"},
			want: summary{Agents: []string{builtinAgents, generalAgent}, Skills: []string{"long workspace .rein/skills/long/SKILL.md"},
				Problems: []string{".rein/skills/Bad/SKILL.md:2", ".rein/skills/empty:0", ".rein/skills/long/SKILL.md:3"}},
			msgs: []string{`skill name "Bad" is not valid`, "no SKILL.md", "longer than 1024"}},
		{name: "actions: schema not an object, bad schema, no command, unknown key",
			files: map[string]string{
				".rein/actions/a/ACTION.yaml": "description: d\ninput_schema:\n  type: string\ncommand: [x]\n",
				".rein/actions/b/ACTION.yaml": "description: d\ninput_schema:\n  type: object\n  properties:\n    n: {type: 12}\ncommand: [x]\n",
				".rein/actions/c/ACTION.yaml": "description: d\n",
				".rein/actions/d/ACTION.yaml": "description: d\ncommand: ./d.sh\ncolour: red\n"},
			want: summary{Agents: []string{builtinAgents, generalAgent}, Actions: []string{"d workspace .rein/actions/d/ACTION.yaml"},
				Problems: []string{".rein/actions/a/ACTION.yaml:3", ".rein/actions/b/ACTION.yaml:3", ".rein/actions/c/ACTION.yaml:1", ".rein/actions/d/ACTION.yaml:3"}},
			msgs: []string{"the type must be object", "not a valid JSON Schema", "has no command", `unknown key "colour"`}},
		{name: "MCP: both command and url, neither, bad names, sse, JSON syntax",
			files: map[string]string{
				".rein/mcp.yaml": "servers:\n  both:\n    command: x\n    url: http://h\n  none: {timeout: 5s}\n  a__b: {command: x}\n  off: {disabled: true}\n",
				".mcp.json":      "{\"mcpServers\": {\n  \"old\": {\"type\": \"sse\", \"url\": \"http://h/sse\"},\n  \"odd\": {\"type\": \"ws\", \"url\": \"ws://h\"}\n}}\n",
				"@/mcp.yaml":     "servers: {\n",
			},
			want: summary{Agents: []string{builtinAgents, generalAgent},
				MCP: []string{"off workspace .rein/mcp.yaml", "old workspace .mcp.json"},
				Problems: []string{".mcp.json:3",
					".rein/mcp.yaml:2", ".rein/mcp.yaml:5", ".rein/mcp.yaml:6", "@/mcp.yaml:2"}},
			msgs: []string{"both a command and a url", "neither a command nor a url", `name "a__b" is not valid`,
				`type "ws" is not supported`, "not valid YAML"}},
		{name: "JSON syntax error at its line",
			files: map[string]string{".mcp.json": "{\"mcpServers\": {\n  \"a\": {\"command\": \"x\",}\n}}\n"},
			want:  summary{Agents: []string{builtinAgents, generalAgent}, Problems: []string{".mcp.json:2"}},
			msgs:  []string{"not valid JSON"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newDefEnv(t)
			e.files(tt.files)
			d := e.load(true)
			got := e.summarise(d)
			slices.Sort(got.Problems)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("-want +got:\n%s", diff)
			}
			all := problemText(d)
			for _, m := range tt.msgs {
				if !strings.Contains(all, m) {
					t.Errorf("no problem says %q:\n%s", m, all)
				}
			}
		})
	}
}

func problemText(d *Definitions) string {
	var b strings.Builder
	for _, p := range d.Problems {
		b.WriteString(p.String() + "\n")
	}
	return b.String()
}

// AGENT-1: Claude Code's format and rein's read alike.
func TestParseAgent_AGENT1(t *testing.T) {
	tests := []struct {
		name string
		data string
		want Agent
	}{
		{name: "Claude Code",
			data: "---\nname: code-reviewer\ndescription: Reviews code.\ntools: Read, Grep, Glob, Bash(git diff:*)\nmodel: inherit\npermissionMode: acceptEdits\nmaxTurns: 12\ndisallowedTools: Write\ncolor: blue\n---\n\nYou review code.\n\n",
			want: Agent{Name: "code-reviewer", Description: "Reviews code.", Tools: []string{"Read", "Grep", "Glob", "Bash(git diff:*)"},
				DisallowedTools: []string{"Write"}, PermissionMode: "accept-edits", MaxTurns: 12, Prompt: "You review code."}},
		{name: "rein, CRLF and a byte order mark",
			data: "\ufeff---\r\nname: fixer\r\ndescription: Fixes.\r\ntools: [read_file, edit_file]\r\nmodel: sonnet\r\npermission_mode: plan\r\nmax_turns: 3\r\ndisallowed_tools: [bash]\r\n---\r\nFix it.\r\nThen test.\r\n",
			want: Agent{Name: "fixer", Description: "Fixes.", Model: "sonnet", Tools: []string{"read_file", "edit_file"},
				DisallowedTools: []string{"bash"}, PermissionMode: "plan", MaxTurns: 3, Prompt: "Fix it.\nThen test."}},
		{name: "name from the file; no tools at all",
			data: "---\ndescription: Thinks.\ntools: []\n---\n",
			want: Agent{Name: "fallback", Description: "Thinks.", Tools: []string{}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, probs, ok := parseAgent("a.md", []byte(tt.data), "fallback")
			if !ok || len(probs) > 0 {
				t.Fatalf("ok=%v problems %v", ok, probs)
			}
			tt.want.Path = "a.md"
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("-want +got:\n%s", diff)
			}
		})
	}
}

// SKILL-1: a skill's frontmatter and body; allowed-tools as a string or
// a list.
func TestSkill_SKILL1(t *testing.T) {
	e := newDefEnv(t)
	e.files(map[string]string{
		".claude/skills/pdf/SKILL.md": "---\nname: pdf\ndescription: Fill PDF forms.\nallowed-tools: Read, Bash(python:*)\nlicense: MIT\n---\n\n# PDF\n\nRun ${env:PDF_HOME}/fill.\n",
		".rein/skills/notes/SKILL.md": "---\ndescription: Take notes.\nallowed_tools: [read_file]\n---\nWrite notes.",
	})
	d := e.load(true)
	pdf, ok := d.Skill("pdf")
	if !ok {
		t.Fatalf("no skill pdf: %v", d.Problems)
	}
	want := Skill{Name: "pdf", Description: "Fill PDF forms.", AllowedTools: []string{"Read", "Bash(python:*)"},
		Dir: filepath.Join(e.ws, ".claude/skills/pdf"), Path: filepath.Join(e.ws, ".claude/skills/pdf/SKILL.md"),
		Root: realPath(e.ws), Origin: OriginWorkspace}
	if diff := cmp.Diff(want, pdf); diff != "" {
		t.Errorf("-want +got:\n%s", diff)
	}
	body, err := pdf.Body()
	if err != nil || body != "# PDF\n\nRun ${env:PDF_HOME}/fill." {
		t.Errorf("Body() = %q, %v", body, err)
	}
	notes, _ := d.Skill("notes")
	if diff := cmp.Diff([]string{"read_file"}, notes.AllowedTools); diff != "" || notes.Name != "notes" {
		t.Errorf("notes = %+v", notes)
	}
	if _, ok := d.Skill("nope"); ok {
		t.Error("found a skill that is not there")
	}
}

// ACTION-1: an action's schema becomes JSON, its command an argv or a
// script; the default schema is an empty object.
func TestAction_ACTION1(t *testing.T) {
	e := newDefEnv(t)
	e.files(map[string]string{
		".rein/actions/deploy/ACTION.yaml": "name: deploy\ndescription: Deploy.\ninput_schema:\n  type: object\n  properties:\n    service: {type: string, description: which}\n  required: [service]\ncommand: [./deploy.sh, --fast]\ntimeout: 90\nenv: [OPENAI_API_KEY, bad-name]\n",
		".rein/actions/lint/ACTION.yaml":   "description: Lint.\ncommand: |\n  go vet ./... && staticcheck ./...\n",
	})
	d := e.load(true)
	dep, ok := d.Action("deploy")
	if !ok {
		t.Fatalf("no action deploy: %v", d.Problems)
	}
	var schema any
	if err := json.Unmarshal(dep.InputSchema, &schema); err != nil {
		t.Fatal(err)
	}
	wantSchema := map[string]any{"type": "object", "required": []any{"service"},
		"properties": map[string]any{"service": map[string]any{"type": "string", "description": "which"}}}
	if diff := cmp.Diff(wantSchema, schema); diff != "" {
		t.Errorf("schema -want +got:\n%s", diff)
	}
	if diff := cmp.Diff([]string{"./deploy.sh", "--fast"}, dep.Command); diff != "" || dep.Timeout != 90*time.Second ||
		dep.Dir != filepath.Join(e.ws, ".rein/actions/deploy") || len(dep.Env) != 0 {
		t.Errorf("deploy = %+v", dep)
	}
	// PERM-5: a workspace's action is refused a token (the user's own may name it).
	for _, want := range []string{`env: "bad-name" is not a variable name`, "action deploy names OPENAI_API_KEY in env; it runs without"} {
		if !strings.Contains(problemText(d), want) {
			t.Errorf("problems lack %q: %s", want, problemText(d))
		}
	}
	lint, _ := d.Action("lint")
	if lint.Script != "go vet ./... && staticcheck ./..." || lint.Command != nil || string(lint.InputSchema) != `{"type":"object","properties":{}}` {
		t.Errorf("lint = %+v", lint)
	}
}

// MCP-1, COMPAT-1: both file formats, with ${VAR} and ${VAR:-default}
// expanded in command, args, env, url and headers; a server with an unset
// variable without a default is not loaded, and the problem names the
// server and the variable.
func TestMCPServers_MCP1(t *testing.T) {
	e := newDefEnv(t)
	e.env = map[string]string{"TOKEN": "t0k", "BIN": "/opt/bin"}
	e.files(map[string]string{
		".mcp.json": `{"mcpServers": {
  "gh": {"command": "${BIN}/gh-mcp", "args": ["--token", "${TOKEN}", "${MODE:-ro}"], "env": {"GH": "${TOKEN}"}},
  "docs": {"type": "http", "url": "${DOCS_URL:-https://docs.example}/mcp", "headers": {"Authorization": "Bearer ${MISSING}"}}
}, "other": 1}`,
		".rein/mcp.yaml": "servers:\n  db:\n    command: db-mcp\n    timeout: 30s\n    env: {DSN: \"${DSN:-sqlite://x}\"}\n  gh: {disabled: true}\n",
	})
	d := e.load(true)
	want := []MCPServer{
		{Name: "db", Command: "db-mcp", Env: map[string]string{"DSN": "sqlite://x"}, Timeout: 30 * time.Second, Declared: "db-mcp",
			Path: filepath.Join(e.ws, ".rein/mcp.yaml"), Origin: OriginWorkspace},
		{Name: "gh", Disabled: true, Path: filepath.Join(e.ws, ".rein/mcp.yaml"), Origin: OriginWorkspace},
	}
	if diff := cmp.Diff(want, d.MCP); diff != "" {
		t.Errorf("-want +got:\n%s", diff)
	}
	// Without the override, gh is the .mcp.json one, expanded.
	os.Remove(filepath.Join(e.ws, ".rein/mcp.yaml"))
	gh, _ := e.load(true).Server("gh")
	if gh.Command != "/opt/bin/gh-mcp" || !cmp.Equal(gh.Args, []string{"--token", "t0k", "ro"}) || gh.Env["GH"] != "t0k" ||
		gh.CommandLine() != "/opt/bin/gh-mcp --token t0k ro" || gh.Declared != "${BIN}/gh-mcp --token ${TOKEN} ${MODE:-ro}" {
		t.Errorf("gh = %+v", gh)
	}
	if want := ".mcp.json:3: MCP server docs: ${MISSING} (in headers.Authorization) not set"; !strings.Contains(strings.ReplaceAll(problemText(d), e.ws+"/", ""), want) {
		t.Errorf("problems lack %q:\n%s", want, problemText(d))
	}
}

func TestExpandVars(t *testing.T) {
	env := map[string]string{"A": "1", "E": ""}
	tests := []struct {
		in, want string
		missing  []string
	}{
		{"plain", "plain", nil},
		{"${A}-${A:-x}", "1-1", nil},
		{"${B:-dflt:-more}", "dflt:-more", nil},
		{"${E:-was empty}", "was empty", nil},
		{"$A ${} ${B}", "$A ${} ${B}", []string{"B"}},
		{"${ ${A}", "${ ${A}", []string{" ${A"}}, // as Claude Code reads it
		{"${A", "${A", nil},
	}
	for _, tt := range tests {
		got, missing := expandVars(tt.in, func(k string) string { return env[k] })
		if got != tt.want || !cmp.Equal(missing, tt.missing) {
			t.Errorf("expandVars(%q) = %q, %v; want %q, %v", tt.in, got, missing, tt.want, tt.missing)
		}
	}
}

// WS-1: the built-in agents.
func TestBuiltinAgents_AGENT1(t *testing.T) {
	d := LoadDefinitions(Paths{}, Workspace{}, false)
	explore, ok := d.Agent("explore")
	if !ok || explore.PermissionMode != "read-only" || !cmp.Equal(explore.Tools, ExploreTools) ||
		explore.Origin != OriginBuiltin || explore.Path != "builtin" || !strings.Contains(explore.Prompt, "line numbers") {
		t.Errorf("explore = %+v", explore)
	}
	general, ok := d.Agent("general")
	if !ok || general.Tools != nil || general.PermissionMode != "" || general.Prompt == "" {
		t.Errorf("general = %+v", general)
	}
	if len(d.Problems)+len(d.Clashes)+len(d.Skills)+len(d.Actions)+len(d.MCP) > 0 {
		t.Errorf("definitions of nothing: %+v", d)
	}
}

// PERM-5: a workspace file or directory a symbolic link takes outside the
// workspace is a problem and is not read; the user's links are theirs.
func TestSymlinkEscape_PERM5(t *testing.T) {
	e := newDefEnv(t)
	secret := filepath.Join(e.home, "secret")
	write(t, filepath.Join(secret, "id_rsa.md"), agentMD("leak", "-----BEGIN OPENSSH PRIVATE KEY-----"))
	write(t, filepath.Join(secret, "skill", "SKILL.md"), skillMD("leak"))
	write(t, filepath.Join(secret, "mcp.json"), `{"mcpServers": {"leak": {"command": "x"}}}`)
	e.files(map[string]string{".rein/skills/ok/SKILL.md": skillMD("ok"), "inside.md": agentMD("inside", "fine")})
	link := func(target, rel string) {
		t.Helper()
		mkdir(t, filepath.Dir(filepath.Join(e.ws, rel)))
		if err := os.Symlink(target, filepath.Join(e.ws, rel)); err != nil {
			t.Fatal(err)
		}
	}
	link(filepath.Join(secret, "id_rsa.md"), ".rein/agents/leak.md")
	link(filepath.Join(e.ws, "inside.md"), ".rein/agents/inside.md")
	link(filepath.Join(secret, "skill"), ".rein/skills/leak")
	link(filepath.Join(secret, "skill", "SKILL.md"), ".rein/skills/half/SKILL.md")
	link(secret, ".claude/agents")
	link(filepath.Join(secret, "mcp.json"), ".mcp.json")
	// The user's own links are followed.
	mkdir(t, filepath.Join(e.paths.ConfigDir, "skills"))
	if err := os.Symlink(filepath.Join(secret, "skill"), filepath.Join(e.paths.ConfigDir, "skills", "mine")); err != nil {
		t.Fatal(err)
	}
	d := e.load(true)
	got := e.summarise(d)
	slices.Sort(got.Problems)
	want := summary{
		Agents: []string{builtinAgents, generalAgent, "inside workspace .rein/agents/inside.md"},
		Skills: []string{"leak user @/skills/mine/SKILL.md", "ok workspace .rein/skills/ok/SKILL.md"},
		Problems: []string{".claude/agents:0", ".mcp.json:0", ".rein/agents/leak.md:0",
			".rein/skills/half/SKILL.md:0", ".rein/skills/leak:0"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("-want +got:\n%s", diff)
	}
	if !strings.Contains(problemText(d), "outside the workspace") {
		t.Errorf("problems:\n%s", problemText(d))
	}
	// A skill whose SKILL.md is swapped for a link after loading is not
	// read either.
	ok, _ := d.Skill("ok")
	os.Remove(ok.Path)
	if err := os.Symlink(filepath.Join(secret, "skill", "SKILL.md"), ok.Path); err != nil {
		t.Fatal(err)
	}
	if body, err := ok.Body(); err == nil {
		t.Errorf("Body() through a link outside = %q", body)
	}
}

// WS-1: the reading is bounded: big files and crowded directories are
// problems, not hangs.
func TestLoadDefinitionsBounds_WS1(t *testing.T) {
	e := newDefEnv(t)
	e.files(map[string]string{".rein/agents/huge.md": agentMD("huge", "big") + strings.Repeat("x", maxDefBytes)})
	for i := range maxDirEntries + 1 {
		write(t, filepath.Join(e.paths.ConfigDir, "agents", fmt.Sprintf("a%04d.md", i)), agentMD(fmt.Sprintf("a%04d", i), "d"))
	}
	d := e.load(true)
	text := problemText(d)
	if !strings.Contains(text, "larger than 1 MiB") || !strings.Contains(text, "more than 1000 entries") {
		t.Errorf("problems:\n%s", text)
	}
	if _, ok := d.Agent("huge"); ok {
		t.Error("a file over the bound was loaded")
	}
	if n := len(d.Agents); n != maxDirEntries+2 {
		t.Errorf("%d agents, want %d", n, maxDirEntries+2)
	}
}

func TestProblemString(t *testing.T) {
	if got := (Problem{Path: "a.md", Line: 3, Msg: "bad"}).String(); got != "a.md:3: bad" {
		t.Error(got)
	}
	if got := (Problem{Path: "a.md", Msg: "bad"}).String(); got != "a.md: bad" {
		t.Error(got)
	}
}
