package permission

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	osexec "os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/reinhq/rein/tool"
)

// attack is one hostile (or benign control) tool call.
type attack struct {
	class string
	mode  Mode
	rules []string
	tool  string            // "" is bash
	in    map[string]string // the call's input; {OUT} and {HOME} are replaced
	want  Decision          // "" means anything but allow
	// run says an allowed bash call is run for real, after which nothing
	// protected may have changed and no secret may have been printed.
	run bool
}

const attackSecret = "sk-attack-SECRET-4f2a"

// attackWorld is a workspace as a hostile repository and a hostile model
// find it: git metadata (with a nested repository and a submodule),
// rein's and Claude Code's settings, a secret, a fake home with keys, and
// a directory outside the workspace.
type attackWorld struct {
	ws, out, home string
}

func newAttackWorld(t *testing.T) attackWorld {
	t.Helper()
	w := attackWorld{ws: t.TempDir(), out: t.TempDir(), home: t.TempDir()}
	files := map[string]string{
		".git/config":                   "[core]\n",
		".git/HEAD":                     "ref: refs/heads/main\n",
		".git/hooks/README":             "hooks\n",
		".git/modules/sub/config":       "[core]\n",
		".git/info/attributes":          "",
		"sub/.git/config":               "[core]\n",
		"sub/.git/hooks/README":         "hooks\n",
		".rein/settings.yaml":           "permissions: {}\n",
		".rein/data/history.db":         attackSecret,
		".claude/settings.json":         "{}\n",
		".env":                          "API_KEY=" + attackSecret + "\n",
		"src/main.go":                   "package main\n",
		"README.md":                     "hello a\n",
		"notes/todo.txt":                "x\n",
		"{HOME}/.ssh/id_rsa":            attackSecret,
		"{HOME}/.aws/credentials":       attackSecret,
		"{HOME}/.bashrc":                "# rc\n",
		"{OUT}/readable.txt":            "outside\n",
		"{OUT}/.keep":                   "",
		"{HOME}/projects/other/main.go": "package other\n",
	}
	for p, content := range files {
		full := w.expand(p)
		if !filepath.IsAbs(full) {
			full = filepath.Join(w.ws, full)
		}
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	links := map[string]string{"h": ".git/hooks", "cfg": ".git/config", "away": w.out, "dangling": filepath.Join(w.out, "new.txt")}
	for name, target := range links {
		if err := os.Symlink(target, filepath.Join(w.ws, name)); err != nil {
			t.Fatal(err)
		}
	}
	return w
}

func (w attackWorld) expand(s string) string {
	return strings.NewReplacer("{OUT}", w.out, "{HOME}", w.home, "{WS}", w.ws).Replace(s)
}

// snapshot lists every file of the workspace, the outside directory and
// the home with its content, so a run can be checked for what it changed.
func (w attackWorld) snapshot(t *testing.T) map[string]string {
	t.Helper()
	snap := map[string]string{}
	for _, root := range []string{w.ws, w.out, w.home} {
		_ = filepath.WalkDir(root, func(p string, e os.DirEntry, err error) error {
			if err != nil || e.IsDir() {
				return nil
			}
			if e.Type()&os.ModeSymlink != 0 {
				t, _ := os.Readlink(p)
				snap[p] = "-> " + t
				return nil
			}
			b, _ := os.ReadFile(p)
			snap[p] = "file: " + string(b)
			return nil
		})
	}
	return snap
}

// protectedChange names a file a run may not have touched: anything in
// git's metadata, rein's or Claude Code's settings, the home or outside
// the workspace.
func (w attackWorld) protectedChange(before, after map[string]string) string {
	keys := map[string]bool{}
	for k := range before {
		keys[k] = true
	}
	for k := range after {
		keys[k] = true
	}
	var changed []string
	for k := range keys {
		if before[k] == after[k] {
			continue
		}
		rel, _ := filepath.Rel(w.ws, k)
		inWS := !strings.HasPrefix(rel, "..")
		if !inWS || mentionsProtected(filepath.ToSlash(rel)) || strings.Contains(k, "pwned") {
			changed = append(changed, k)
		}
	}
	sort.Strings(changed)
	return strings.Join(changed, ", ")
}

// runAttack runs an allowed bash call the way the bash tool does: bash -c
// in the call's directory, with a clean environment.
func (w attackWorld) runAttack(t *testing.T, cmd, dir string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c := osexec.CommandContext(ctx, "bash", "-c", cmd)
	c.Dir = w.ws
	if dir != "" {
		c.Dir = filepath.Join(w.ws, dir)
	}
	c.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + w.home, "LANG=C"}
	var out bytes.Buffer
	c.Stdout, c.Stderr = &out, &out
	_ = c.Run()
	return out.String()
}

func (a attack) request(w attackWorld) Request {
	name := a.tool
	meta := metaExec
	switch name {
	case "":
		name = "bash"
	case "read_file", "glob", "grep", "list_dir":
		meta = metaRead
	case "write_file", "edit_file", "multi_edit":
		meta = metaEdit
	case "web_fetch":
		meta = tool.Meta{ReadOnly: true, ConcurrencySafe: true, Category: tool.CategoryNetwork}
	}
	m := map[string]string{}
	for k, v := range a.in {
		m[k] = w.expand(v)
	}
	b, _ := json.Marshal(m)
	return Request{Tool: name, Input: b, Meta: meta, WorkDir: w.ws}
}

// SPEC PERM-6, PERM-2, PERM-5 (issue 8): every class of the attack, as a
// hostile model or repository would try it, in the modes it matters in.
// Each case asserts the decision; the allowed ones are run for real with
// bash and must leave git's metadata, the settings, the home and the
// world outside the workspace untouched, and print no secret.
func TestAttacks_PERM6(t *testing.T) {
	if _, err := osexec.LookPath("bash"); err != nil {
		t.Skip("bash not installed")
	}
	cases := attackCases()
	if len(cases) < 150 {
		t.Fatalf("%d attack cases; the issue asks for at least 150", len(cases))
	}
	var w attackWorld
	fresh := false
	for i, a := range cases {
		if !fresh { // a run may have left files behind
			w, fresh = newAttackWorld(t), true
			t.Setenv("HOME", w.home)
		}
		req := a.request(w)
		rules := mustRules(t, SourceUser, a.rules...)
		o := decide(t, Settings{Mode: a.mode, Rules: rules}, req)
		name := a.class + " " + string(req.Input)
		if a.mode != "" {
			name += " [" + string(a.mode) + "]"
		}
		switch {
		case a.want == "" && o.Decision == DecisionAllow:
			t.Errorf("#%d %s: allowed (%s); want ask or deny", i, name, o.Reason)
		case a.want != "" && o.Decision != a.want:
			t.Errorf("#%d %s: %s (%s), want %s", i, name, o.Decision, o.Reason, a.want)
		}
		if o.Decision != DecisionAllow || !a.run || req.Tool != "bash" {
			continue
		}
		fresh = false
		before := w.snapshot(t)
		out := w.runAttack(t, w.expand(a.in["command"]), w.expand(a.in["dir"]))
		if strings.Contains(out, attackSecret) {
			t.Errorf("#%d %s: ran and printed the secret:\n%s", i, name, out)
		}
		if ch := w.protectedChange(before, w.snapshot(t)); ch != "" {
			t.Errorf("#%d %s: ran and changed %s", i, name, ch)
		}
	}
}

func bashIn(cmd string) map[string]string { return map[string]string{"command": cmd} }

func bashInDir(cmd, dir string) map[string]string {
	return map[string]string{"command": cmd, "dir": dir}
}

var allModes = []Mode{ModeDefault, ModeAcceptEdits, ModeBypass}

// forModes repeats a case in each mode.
func forModes(modes []Mode, a attack) []attack {
	out := make([]attack, len(modes))
	for i, m := range modes {
		out[i] = a
		out[i].mode = m
	}
	return out
}

// The attack test's checks can fail: a run that writes git's config, the
// home or outside the workspace, or prints the secret, is seen.
func TestAttackWorldSeesHarm_PERM6(t *testing.T) {
	if _, err := osexec.LookPath("bash"); err != nil {
		t.Skip("bash not installed")
	}
	w := newAttackWorld(t)
	for _, cmd := range []string{"echo x >> .git/config", "touch sub/.git/hooks/pre-commit", "echo > {HOME}/pwned", "touch {OUT}/x", "touch pwned"} {
		before := w.snapshot(t)
		w.runAttack(t, w.expand(cmd), "")
		if w.protectedChange(before, w.snapshot(t)) == "" {
			t.Errorf("%q: the change was not seen", cmd)
		}
	}
	if out := w.runAttack(t, "cat .env", ""); !strings.Contains(out, attackSecret) {
		t.Errorf("cat .env printed %q; the secret check would see nothing", out)
	}
	if n := len(attackCases()); n < 150 {
		t.Errorf("%d cases", n)
	}
}

// PERM-2: where the sandbox hides the workspace's sensitive files, a
// recursive read of the workspace reveals none and runs; one outside it,
// and naming a sensitive file, are judged as without the sandbox.
func TestSensitiveHiddenBySandbox_PERM2(t *testing.T) {
	w := newAttackWorld(t)
	t.Setenv("HOME", w.home)
	if err := os.WriteFile(filepath.Join(w.out, ".env"), []byte(attackSecret), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		cmd  string
		want Decision
	}{
		{"grep -rn hello .", DecisionAllow},
		{"find . -type f | xargs grep hello", DecisionAllow},
		{"grep -r x " + w.out, DecisionAsk},
		{"cat .env", DecisionDeny},
	} {
		s := Settings{Mode: ModeBypass, SensitiveHidden: true}
		if o := decide(t, s, Request{Tool: "bash", Input: in("command", c.cmd), Meta: metaExec, WorkDir: w.ws}); o.Decision != c.want {
			t.Errorf("%q: %s (%s), want %s", c.cmd, o.Decision, o.Reason, c.want)
		}
		s.SensitiveHidden = false
		if o := decide(t, s, Request{Tool: "bash", Input: in("command", c.cmd), Meta: metaExec, WorkDir: w.ws}); o.Decision == DecisionAllow {
			t.Errorf("%q without the sandbox: allowed (%s)", c.cmd, o.Reason)
		}
	}
}

// PERM-6: a repository's file named like an option reaches a command
// through a glob (`find *` with a file "-delete" deletes); a prefix rule
// does not cover a glob that matches one.
func TestGlobMatchesOptionName_PERM6(t *testing.T) {
	ws := t.TempDir()
	for _, n := range []string{"-delete", "a.go"} {
		if err := os.WriteFile(filepath.Join(ws, n), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	s := Settings{Rules: mustRules(t, SourceUser, "allow bash(find:*)", "allow bash(ls:*)")}
	for cmd, want := range map[string]Decision{"find * -name x": DecisionAsk, "ls *": DecisionAsk, "ls *.go": DecisionAllow} {
		if o := decide(t, s, bashReq(ws, cmd)); o.Decision != want {
			t.Errorf("%q: %s (%s), want %s", cmd, o.Decision, o.Reason, want)
		}
	}
}
