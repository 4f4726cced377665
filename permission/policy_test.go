package permission

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/reinhq/rein/tool"
)

var (
	metaRead    = tool.Meta{ReadOnly: true, ConcurrencySafe: true, Category: tool.CategoryRead}
	metaEdit    = tool.Meta{Category: tool.CategoryEdit}
	metaExec    = tool.Meta{Category: tool.CategoryExecute}
	metaNetwork = tool.Meta{Category: tool.CategoryNetwork}
	metaOther   = tool.Meta{Category: tool.CategoryOther}
	metaSession = tool.Meta{ReadOnly: true, Category: tool.CategorySession}
)

// in marshals a tool input.
func in(kv ...string) json.RawMessage {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	b, _ := json.Marshal(m)
	return b
}

func bashReq(ws, cmd string) Request {
	return Request{Tool: "bash", Input: in("command", cmd), Meta: metaExec, WorkDir: ws}
}

func readReq(ws, p string) Request {
	return Request{Tool: "read_file", Input: in("path", p), Meta: metaRead, WorkDir: ws}
}

func editReq(ws, p string) Request {
	return Request{Tool: "edit_file", Input: in("file_path", p), Meta: metaEdit, WorkDir: ws}
}

// mustRules parses "allow bash(git diff:*)" lines.
func mustRules(t testing.TB, src Source, lines ...string) []Rule {
	t.Helper()
	var out []Rule
	for _, l := range lines {
		action, text, _ := strings.Cut(l, " ")
		r, err := ParseRule(Decision(action), text)
		if err != nil {
			t.Fatal(err)
		}
		r.Source = src
		out = append(out, r)
	}
	return out
}

func decide(t testing.TB, s Settings, r Request) Outcome {
	t.Helper()
	e, err := NewPolicy(s)
	if err != nil {
		t.Fatal(err)
	}
	o, err := e.Decide(context.Background(), r)
	if err != nil {
		t.Fatal(err)
	}
	if o.Reason == "" {
		t.Errorf("%s %s: empty reason", r.Tool, r.Input)
	}
	return o
}

// PERM-1: every mode against every category. Tools with no effect outside
// the session (todo_write, ask_user) run in every mode but strict.
func TestModeByCategory_PERM1(t *testing.T) {
	ws := t.TempDir()
	reqs := map[tool.Category]Request{
		tool.CategoryRead:    readReq(ws, "main.go"),
		tool.CategoryEdit:    editReq(ws, "main.go"),
		tool.CategoryExecute: bashReq(ws, "ls -la"),
		tool.CategoryNetwork: {Tool: "web_fetch", Input: in("url", "https://example.com/x"), Meta: metaNetwork, WorkDir: ws},
		tool.CategoryOther:   {Tool: "mcp__x__y", Input: in("q", "x"), Meta: metaOther, WorkDir: ws},
		tool.CategorySession: {Tool: "todo_write", Input: in("todo", "x"), Meta: metaSession, WorkDir: ws},
	}
	cats := []tool.Category{tool.CategoryRead, tool.CategoryEdit, tool.CategoryExecute, tool.CategoryNetwork, tool.CategoryOther, tool.CategorySession}
	want := map[Mode][]Decision{
		ModeStrict:      {DecisionAsk, DecisionAsk, DecisionAsk, DecisionAsk, DecisionAsk, DecisionAsk},
		ModeDefault:     {DecisionAllow, DecisionAsk, DecisionAsk, DecisionAsk, DecisionAsk, DecisionAllow},
		ModeAcceptEdits: {DecisionAllow, DecisionAllow, DecisionAsk, DecisionAsk, DecisionAsk, DecisionAllow},
		ModeReadOnly:    {DecisionAllow, DecisionDeny, DecisionDeny, DecisionDeny, DecisionDeny, DecisionAllow},
		ModeBypass:      {DecisionAllow, DecisionAllow, DecisionAllow, DecisionAllow, DecisionAllow, DecisionAllow},
	}
	for mode, decisions := range want {
		var got []Decision
		for _, c := range cats {
			o := decide(t, Settings{Mode: mode}, reqs[c])
			got = append(got, o.Decision)
			if mode == ModeReadOnly && o.Decision == DecisionDeny && !strings.Contains(o.Reason, "switch to") {
				t.Errorf("read-only deny reason %q does not say how to change mode", o.Reason)
			}
		}
		if diff := cmp.Diff(decisions, got); diff != "" {
			t.Errorf("mode %s (read, edit, execute, network, other, session) -want +got:\n%s", mode, diff)
		}
	}
}

func TestParseMode_PERM1(t *testing.T) {
	for in, want := range map[string]Mode{"": ModeDefault, "strict": ModeStrict, "accept-edits": ModeAcceptEdits,
		"acceptEdits": ModeAcceptEdits, "read-only": ModeReadOnly, "plan": ModePlan, "bypass": ModeBypass, " Default ": ModeDefault} {
		got, err := ParseMode(in)
		if err != nil || got != want {
			t.Errorf("ParseMode(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	_, err := ParseMode("yolo")
	if err == nil || !strings.Contains(err.Error(), "strict, read-only, plan, default, accept-edits, bypass") {
		t.Errorf("ParseMode(yolo) error %v does not list the modes", err)
	}
}

// PERM-2: paths inside and outside the workspace, per mode.
func TestPaths_PERM2(t *testing.T) {
	ws := t.TempDir()
	outside := t.TempDir()
	if err := os.Symlink(outside, filepath.Join(ws, "link")); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name  string
		mode  Mode
		rules []string
		req   Request
		want  Decision
	}{
		{"read inside", ModeDefault, nil, readReq(ws, "src/a.go"), DecisionAllow},
		{"read absolute inside", ModeDefault, nil, readReq(ws, filepath.Join(ws, "a.go")), DecisionAllow},
		{"read outside asks", ModeDefault, nil, readReq(ws, "/etc/hosts"), DecisionAsk},
		{"read dotdot asks", ModeDefault, nil, readReq(ws, "../x/y"), DecisionAsk},
		{"read through symlink out asks", ModeDefault, nil, readReq(ws, "link/f"), DecisionAsk},
		{"read outside in read-only denies", ModeReadOnly, nil, readReq(ws, "/etc/hosts"), DecisionDeny},
		{"edit inside accept-edits", ModeAcceptEdits, nil, editReq(ws, "a.go"), DecisionAllow},
		{"edit outside accept-edits asks", ModeAcceptEdits, nil, editReq(ws, "/etc/passwd"), DecisionAsk},
		{"edit via symlink out asks", ModeAcceptEdits, nil, editReq(ws, "link/x"), DecisionAsk},
		{"edit outside bypass runs", ModeBypass, nil, editReq(ws, "/tmp/x"), DecisionAllow},
		{"allow rule inside", ModeDefault, []string{"allow edit_file(src/**)"}, editReq(ws, "src/a/b.go"), DecisionAllow},
		{"allow rule other dir", ModeDefault, []string{"allow edit_file(src/**)"}, editReq(ws, "docs/a.md"), DecisionAsk},
		{"relative allow does not reach outside", ModeDefault, []string{"allow edit_file(**/*.go)"}, editReq(ws, "/etc/x.go"), DecisionAsk},
		{"absolute allow reaches outside", ModeDefault, []string{"allow read_file(/usr/share/**)"}, readReq(ws, "/usr/share/dict/words"), DecisionAllow},
		{"absolute deny", ModeBypass, []string{"deny edit_file(/etc/**)"}, editReq(ws, "/etc/passwd"), DecisionDeny},
		{"relative deny also outside", ModeBypass, []string{"deny edit_file(secrets/**)"}, editReq(ws, filepath.Join(outside, "secrets/k")), DecisionDeny},
		{"ask rule inside accept-edits", ModeAcceptEdits, []string{"ask edit_file(go.mod)"}, editReq(ws, "go.mod"), DecisionAsk},
		{"glob default path is workspace", ModeDefault, nil, Request{Tool: "glob", Input: in("pattern", "**/*.go"), Meta: metaRead, WorkDir: ws}, DecisionAllow},
		{"grep outside asks", ModeDefault, nil, Request{Tool: "grep", Input: in("pattern", "x", "path", "/var/log"), Meta: metaRead, WorkDir: ws}, DecisionAsk},
		{"home glob", ModeDefault, []string{"deny read_file(~/private/**)"}, readReq(ws, "~/private/a"), DecisionDeny},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			o := decide(t, Settings{Mode: c.mode, Rules: mustRules(t, SourceWorkspace, c.rules...)}, c.req)
			if o.Decision != c.want {
				t.Errorf("got %s (%s), want %s", o.Decision, o.Reason, c.want)
			}
		})
	}
}

// PERM-2: sensitive files are denied in every mode, reads included, and
// exceptions are possible.
func TestSensitiveFiles_PERM2(t *testing.T) {
	ws := t.TempDir()
	files := []string{".env", "config/.env.production", "certs/server.pem", "tls.key", "id_rsa", "id_rsa.pub",
		"id_ed25519", "/root/.ssh/config", ".ssh", "~/.aws/credentials", ".netrc", "store.p12"}
	for _, mode := range Modes {
		for _, f := range files {
			for _, r := range []Request{readReq(ws, f), editReq(ws, f)} {
				o := decide(t, Settings{Mode: mode, Rules: mustRules(t, SourceUser, "allow read_file", "allow edit_file")}, r)
				if o.Decision != DecisionDeny || !strings.Contains(o.Reason, "sensitive") {
					t.Errorf("%s %s in %s mode: %s (%s), want deny", r.Tool, f, mode, o.Decision, o.Reason)
				}
			}
		}
	}
	for _, f := range []string{".envrc.md", "env", "keys.go", "notes/ssh.md", "pem.txt"} {
		if o := decide(t, Settings{}, readReq(ws, f)); o.Decision != DecisionAllow {
			t.Errorf("read %s: %s (%s), want allow", f, o.Decision, o.Reason)
		}
	}
	s := Settings{SensitiveFiles: []string{"!.env.example", "secrets.yaml"}}
	if o := decide(t, s, readReq(ws, ".env.example")); o.Decision != DecisionAllow {
		t.Errorf("exception .env.example: %s (%s)", o.Decision, o.Reason)
	}
	if o := decide(t, s, readReq(ws, "deploy/secrets.yaml")); o.Decision != DecisionDeny {
		t.Errorf("extra sensitive file: %s (%s)", o.Decision, o.Reason)
	}
}

// PERM-2: deny wins across layers, whatever the order.
func TestDenyWinsAcrossLayers_PERM2(t *testing.T) {
	ws := t.TempDir()
	user := Settings{Rules: mustRules(t, SourceUser, "deny bash(git push:*)")}
	work := Settings{Rules: mustRules(t, SourceWorkspace, "allow bash(git push:*)", "allow bash", "ask bash(git commit:*)")}
	run := Settings{Mode: ModeBypass, Rules: mustRules(t, SourceRun, "allow bash(git:*)")}
	s := Merge(user, work, run)
	o := decide(t, s, bashReq(ws, "git push origin main"))
	want := Outcome{Decision: DecisionDeny, Reason: "bash denied by the user rule bash(git push:*)",
		Rule: &Rule{Action: DecisionDeny, Tool: "bash", Pattern: "git push:*", Source: SourceUser}}
	if diff := cmp.Diff(want, o); diff != "" {
		t.Errorf("-want +got:\n%s", diff)
	}
	if o := decide(t, s, bashReq(ws, "git commit -m x")); o.Decision != DecisionAsk || o.Rule.Source != SourceWorkspace {
		t.Errorf("ask rule beats allow: %+v", o)
	}
	if o := decide(t, s, bashReq(ws, "git status")); o.Decision != DecisionAllow {
		t.Errorf("git status: %+v", o)
	}
	if s.Mode != ModeBypass {
		t.Errorf("merged mode %q, want the run layer's bypass", s.Mode)
	}
}

func TestStrictIgnoresAllowRules_PERM1(t *testing.T) {
	ws := t.TempDir()
	s := Settings{Mode: ModeStrict, Rules: mustRules(t, SourceUser, "allow bash", "allow read_file")}
	for _, r := range []Request{bashReq(ws, "ls"), readReq(ws, "a.go")} {
		if o := decide(t, s, r); o.Decision != DecisionAsk {
			t.Errorf("strict %s: %s", r.Tool, o.Decision)
		}
	}
}

func TestToolGlobAndDomainRules_PERM2(t *testing.T) {
	ws := t.TempDir()
	s := Settings{Rules: mustRules(t, SourceWorkspace,
		"allow mcp__github__*", "deny mcp__github__delete_repo",
		"allow web_fetch(domain:example.com)", "allow web_fetch(domain:*.go.dev)")}
	mcp := func(name string) Request { return Request{Tool: name, Input: in(), Meta: metaOther, WorkDir: ws} }
	web := func(u string) Request {
		return Request{Tool: "web_fetch", Input: in("url", u), Meta: metaNetwork, WorkDir: ws}
	}
	cases := []struct {
		req  Request
		want Decision
	}{
		{mcp("mcp__github__create_issue"), DecisionAllow},
		{mcp("mcp__github__delete_repo"), DecisionDeny},
		{mcp("mcp__gitlab__create_issue"), DecisionAsk},
		{web("https://example.com/a"), DecisionAllow},
		{web("https://EXAMPLE.com./a"), DecisionAllow},
		{web("https://evil.example.com/a"), DecisionAsk},
		{web("https://example.com.evil.io/a"), DecisionAsk},
		{web("https://pkg.go.dev/x"), DecisionAllow},
		{web("https://go.dev/x"), DecisionAllow},
		{web("https://notgo.dev/x"), DecisionAsk},
	}
	for _, c := range cases {
		if o := decide(t, s, c.req); o.Decision != c.want {
			t.Errorf("%s %s: %s (%s), want %s", c.req.Tool, c.req.Input, o.Decision, o.Reason, c.want)
		}
	}
}

func TestEngineSetModeAndCancel_PERM1(t *testing.T) {
	e, err := NewPolicy(Settings{})
	if err != nil {
		t.Fatal(err)
	}
	if e.Mode() != ModeDefault || e.AskTimeout() != DefaultAskTimeout {
		t.Errorf("defaults: %s %s", e.Mode(), e.AskTimeout())
	}
	if err := e.SetMode("nope"); err == nil {
		t.Error("SetMode accepted a bad mode")
	}
	if err := e.SetMode(ModeReadOnly); err != nil || e.Mode() != ModeReadOnly {
		t.Errorf("SetMode: %v %s", err, e.Mode())
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := e.Decide(ctx, readReq(t.TempDir(), "a")); err == nil {
		t.Error("Decide on a cancelled context returned no error")
	}
	if _, err := NewPolicy(Settings{Mode: "nope"}); err == nil {
		t.Error("NewPolicy accepted a bad mode")
	}
}

// PERM-1: the built-in session tools declare their effect, so a headless
// run in default mode (no approver) runs todo_write and ask_user.
func TestSessionToolsRunHeadless_PERM1(t *testing.T) {
	ws := t.TempDir()
	for _, name := range []string{"todo_write", "ask_user"} {
		for _, mode := range []Mode{ModeDefault, ModeReadOnly, ModeAcceptEdits} {
			o := decide(t, Settings{Mode: mode}, Request{Tool: name, Input: in("x", "y"), Meta: metaSession, WorkDir: ws})
			if o.Decision != DecisionAllow || !strings.Contains(o.Reason, "no effect outside the session") {
				t.Errorf("%s in %s mode: %+v", name, mode, o)
			}
		}
		if o := decide(t, Settings{Mode: ModeStrict}, Request{Tool: name, Meta: metaSession, WorkDir: ws}); o.Decision != DecisionAsk {
			t.Errorf("%s in strict mode: %+v", name, o)
		}
		deny := mustRules(t, SourceUser, "deny "+name)
		if o := decide(t, Settings{Rules: deny}, Request{Tool: name, Meta: metaSession, WorkDir: ws}); o.Decision != DecisionDeny {
			t.Errorf("deny rule on %s: %+v", name, o)
		}
	}
}
