package permission

import (
	"testing"

	"github.com/reinhq/rein/internal/shellparse"
)

// PERM-2: bash rules match on a real parse of the command.
func TestBashRules_PERM2(t *testing.T) {
	ws := t.TempDir()
	rules := mustRules(t, SourceWorkspace,
		"allow bash(git diff:*)", "allow bash(git status)", "allow bash(go test:*)", "allow bash(ls:*)",
		"allow bash(cat:*)", "allow bash(grep:*)", "allow bash(echo:*)", "allow bash(find:*)", "allow bash(cd:*)",
		"allow bash(npm run test *)", `allow bash(echo "hello world")`,
		"deny bash(rm -rf:*)", "deny bash(curl:*)", "ask bash(git push:*)")
	cases := []struct {
		cmd  string
		mode Mode
		want Decision
	}{
		// prefixes and exact commands
		{"git diff", "", DecisionAllow},
		{"git diff --stat HEAD~1", "", DecisionAllow},
		{"git status", "", DecisionAllow},
		{"git status -s", "", DecisionAsk}, // exact rule
		{"git diffx", "", DecisionAsk},
		{"git log", "", DecisionAsk},
		{"npm run test -- --watch", "", DecisionAllow},
		{"npm run test-e2e", "", DecisionAsk},
		// quoting
		{`git "diff" 'HEAD'`, "", DecisionAllow},
		{`echo "hello world"`, "", DecisionAllow},
		{`git\ diff`, "", DecisionAsk},
		{`grep -r "a; rm -rf /" .`, "", DecisionAllow}, // the ; is inside quotes
		// chains: allow needs every command
		{"git diff && go test ./...", "", DecisionAllow},
		{"git diff; rm -rf x", "", DecisionDeny},
		{"git diff; rm x", "", DecisionAsk},
		{"git diff || touch x", "", DecisionAsk},
		{"git diff | grep foo", "", DecisionAllow},
		{"git diff | sh", "", DecisionAsk},
		{"(git diff; ls)", "", DecisionAllow},
		{"{ git diff; touch x; }", "", DecisionAsk},
		{"if git diff; then ls; fi", "", DecisionAllow},
		{"for f in a b; do cat $f; done", "", DecisionAllow},
		{"git diff &", "", DecisionAllow},
		// substitutions run too
		{"git diff $(rm x)", "", DecisionAsk},
		{"git diff `rm x`", "", DecisionAsk},
		{"git diff $(rm -rf /)", "", DecisionDeny},
		{"cat <(curl evil.sh)", "", DecisionDeny},
		{`echo "$(touch x)"`, "", DecisionAsk},
		{"ls $(git diff --name-only)", "", DecisionAllow},
		// dynamic command names and env
		{"$CMD diff", "", DecisionAsk},
		{"FOO=1 git diff", "", DecisionAllow},
		{"GIT_PAGER=cat git diff", "", DecisionAllow},
		{"GIT_EXTERNAL_DIFF=./evil.sh git diff", "", DecisionAsk},
		{"PATH=.:$PATH git diff", "", DecisionAsk},
		{"export FOO=1", "", DecisionAsk},
		// wrappers: deny sees through them, allow does not
		{"sudo rm -rf /", "", DecisionDeny},
		{"timeout 5 rm -rf build", "", DecisionDeny},
		{"env A=1 rm -rf x", "", DecisionDeny},
		{"xargs rm -rf < list", "", DecisionDeny},
		{"sudo git diff", "", DecisionAsk},
		{`bash -c "rm -rf /"`, ModeBypass, DecisionDeny},
		{`sh -c 'git diff; curl x'`, ModeBypass, DecisionDeny},
		{`eval "curl x | sh"`, ModeBypass, DecisionDeny},
		{`bash -c "$X"`, "", DecisionAsk},
		{"find . -name '*.go'", "", DecisionAllow},
		{"find . -name x -exec rm {} ;", "", DecisionAsk},
		{"find . -delete", "", DecisionDeny}, // as rm -rf .
		// ask rules match any command
		{"git diff && git push", "", DecisionAsk},
		{"git push --force", ModeBypass, DecisionAsk},
		// unparsable asks; deny still sees a plain prefix
		{"git diff (", "", DecisionAsk},
		{"rm -rf / (", ModeBypass, DecisionDeny},
		{"", "", DecisionAsk},
		// redirections
		{"echo hi > out.txt", "", DecisionAllow},
		{"echo hi > /tmp/out.txt", "", DecisionAsk},
		{"echo hi >> ../out.txt", "", DecisionAsk},
		{"ls 2>/dev/null", "", DecisionAllow},
		{"ls 2>&1 | grep x", "", DecisionAllow},
		{"echo hi > $OUT", "", DecisionAsk},
		{"cat < /etc/passwd", "", DecisionAsk},
		{"cd /etc && echo x > passwd", "", DecisionAsk},
		{"cd sub && echo x > y", "", DecisionAllow},
		{"echo hi > /tmp/out.txt", ModeBypass, DecisionAllow},
		{"echo x > .env", ModeBypass, DecisionDeny},
		{"cat < ~/.ssh/id_rsa", ModeBypass, DecisionDeny},
		{"cat .env", "", DecisionDeny},
		{"cat .env", ModeBypass, DecisionDeny}, // as read_file .env, in every mode
		{"cat README.md", "", DecisionAllow},
		// modes
		{"git diff", ModeReadOnly, DecisionDeny},
		{"git diff", ModeStrict, DecisionAsk},
		{"touch x", ModeAcceptEdits, DecisionAsk},
		{"touch x", ModeBypass, DecisionAllow},
	}
	for _, c := range cases {
		o := decide(t, Settings{Mode: c.mode, Rules: rules}, bashReq(ws, c.cmd))
		if o.Decision != c.want {
			t.Errorf("%q (mode %q): %s (%s), want %s", c.cmd, c.mode, o.Decision, o.Reason, c.want)
		}
	}
}

// PERM-2: a whole-tool allow trusts every command the analysis can read,
// even those it would ask about; deny rules still apply, and a command it
// cannot read still asks (PERM-6).
func TestBashWholeToolAllow_PERM2(t *testing.T) {
	ws := t.TempDir()
	s := Settings{Rules: mustRules(t, SourceUser, "allow bash", "deny bash(rm:*)")}
	for cmd, want := range map[string]Decision{
		"echo x > /tmp/y": DecisionAllow,
		"git diff (":      DecisionAsk,
		"ls; rm x":        DecisionDeny,
		"echo > .env":     DecisionDeny,
	} {
		if o := decide(t, s, bashReq(ws, cmd)); o.Decision != want {
			t.Errorf("%q: %s (%s), want %s", cmd, o.Decision, o.Reason, want)
		}
	}
}

func TestParseShellNesting_PERM2(t *testing.T) {
	deep := `bash -c "bash -c \"bash -c 'bash -c ls'\""`
	if f, err := shellparse.Parse(deep); err != nil || f.Dynamic == "" {
		t.Errorf("Parse(%s) = %v, %v; want a dynamic script: four levels are too deep to follow", deep, f, err)
	}
	f, err := shellparse.Parse(`sh -o pipefail -c "git diff | cat"`)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Commands) != 3 {
		t.Errorf("got %d commands, want sh, git and cat", len(f.Commands))
	}
}
