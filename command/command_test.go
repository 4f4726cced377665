package command

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/reinhq/rein/attachment"
	"github.com/reinhq/rein/permission"
	"github.com/reinhq/rein/tool"
	"github.com/reinhq/rein/workspace"
)

func TestSplit_COMPAT1(t *testing.T) {
	for _, tc := range []struct {
		line, name, args string
		ok               bool
	}{
		{"/review", "review", "", true},
		{"/review 42 high", "review", "42 high", true},
		{"/frontend:test  a b \n", "frontend:test", "a b", true},
		{"/fix-issue\n123", "fix-issue", "123", true},
		{"/etc/hosts is wrong", "", "", false},
		{" /review", "", "", false}, // a leading blank sends the text as it is
		{"review", "", "", false},
		{"/", "", "", false},
		{"/a::b", "", "", false},
		{"/:x", "", "", false},
		{"/é", "", "", false},
	} {
		name, args, ok := Split(tc.line)
		if name != tc.name || args != tc.args || ok != tc.ok {
			t.Errorf("Split(%q) = %q, %q, %v; want %q, %q, %v", tc.line, name, args, ok, tc.name, tc.args, tc.ok)
		}
	}
}

func TestArguments_COMPAT1(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
	}{
		{"", nil},
		{"  a  b ", []string{"a", "b"}},
		{`foo "hello world" baz`, []string{"foo", "hello world", "baz"}},
		{`foo 'hello world' baz`, []string{"foo", "hello world", "baz"}},
		{`a\ b c`, []string{"a b", "c"}},
		{`"say \"hi\"" x`, []string{`say "hi"`, "x"}},
		{`'it''s'`, []string{"its"}},
		{`$HOME x`, []string{"$HOME", "x"}},
		{`"" x`, []string{"", "x"}},
		{`unclosed "quote here`, []string{"unclosed", `"quote`, "here"}}, // as Claude Code: split at blanks
		{`trailing\`, []string{`trailing\`}},
	} {
		if got := Arguments(tc.in); !slices.Equal(got, tc.want) {
			t.Errorf("Arguments(%q) = %q; want %q", tc.in, got, tc.want)
		}
	}
}

func TestSubstitute_COMPAT1(t *testing.T) {
	a := args{raw: `456 "high prio" alice`, argv: []string{"456", "high prio", "alice"}}
	for _, tc := range []struct {
		in, want string
		shell    bool
		used     bool
	}{
		{"Review PR #$0 with priority $1 for $2.", "Review PR #456 with priority high prio for alice.", false, true},
		{"All: $ARGUMENTS", `All: 456 "high prio" alice`, false, true},
		{"Second: $ARGUMENTS[1]", "Second: high prio", false, true},
		{"Missing: $3 and $ARGUMENTS[9]", "Missing: $3 and $ARGUMENTS[9]", false, true},
		{`Literal \$1 and \$ARGUMENTS`, "Literal $1 and $ARGUMENTS", false, false},
		{"Money: $5x and $ and $$", "Money: $5x and $ and $$", false, false},
		{"$0$1", "456high prio", false, true},
		{"Not one: $10", "Not one: $10", false, true},
		{"no placeholders", "no placeholders", false, false},
		{"git log $1", "git log 'high prio'", true, true},
		{"echo $ARGUMENTS", "echo 456 'high prio' alice", true, true},
		{"echo $ARGUMENTS_X", `echo 456 'high prio' alice_X`, true, true},
	} {
		got, used := a.substitute(tc.in, tc.shell)
		if got != tc.want || used != tc.used {
			t.Errorf("substitute(%q, shell=%v) = %q, %v; want %q, %v", tc.in, tc.shell, got, used, tc.want, tc.used)
		}
	}
	// What an argument brings is never read again.
	b := args{raw: "$1 !`id`", argv: []string{"$1", "!`id`"}}
	if got, _ := b.substitute("x $0 $ARGUMENTS", false); got != "x $1 $1 !`id`" {
		t.Errorf("an argument's placeholder was substituted again: %q", got)
	}
	// In a prelude, an argument is one quoted word, whatever it holds.
	c := args{argv: []string{"x; rm -rf ~", "it's"}}
	if got, _ := c.substitute("echo $0 $1", true); got != `echo 'x; rm -rf ~' 'it'\''s'` {
		t.Errorf("prelude argument not quoted: %q", got)
	}
}

func TestParts_COMPAT1(t *testing.T) {
	body := "Status: !`git status`\n!`git diff HEAD`\nnot one: a!`x` and !`` and !`a\nb`\n```!\nls\npwd\n```\nend"
	var got []string
	for _, p := range parts(body) {
		if p.prelude {
			got = append(got, p.text)
		}
	}
	want := []string{"git status", "git diff HEAD", "ls\npwd"}
	if !slices.Equal(got, want) {
		t.Fatalf("preludes = %q; want %q", got, want)
	}
	if p := parts("```!\nnever closed\n"); len(p) != 1 || p[0].prelude {
		t.Errorf("an unclosed fence is a prelude: %+v", p)
	}
	if !OneBased("Fix issue $1 now") || OneBased("Fix $0 and $1") || OneBased(`only \$1`) {
		t.Error("OneBased misjudges")
	}
}

// fixture is a workspace with files and the resolver of its mentions.
func fixture(t *testing.T, files map[string]string) attachment.Resolver {
	t.Helper()
	root := t.TempDir()
	for name, content := range files {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return attachment.Resolver{Root: root, Sensitive: tool.NewSensitiveSet(permission.DefaultSensitiveFiles)}
}

// shell records the preludes and answers each with its script upper-cased.
type shell struct {
	ran   []string
	grant []permission.Rule
	err   error
}

func (s *shell) run(_ context.Context, script string, grant []permission.Rule) (string, error) {
	s.ran, s.grant = append(s.ran, script), grant
	if s.err != nil {
		return "", s.err
	}
	return strings.ToUpper(script) + "\n", nil
}

func TestExpand_COMPAT1(t *testing.T) {
	files := fixture(t, map[string]string{"src/a.go": "package a\n", "notes.md": "# notes"})
	cmd := workspace.Command{Name: "review", Path: "review.md", Model: "haiku",
		AllowedTools: []string{"Bash(git diff:*)", "Read", "NotebookEdit"},
		Body:         "Diff: !`git diff $0`\nReview $ARGUMENTS against @src/a.go and @src/a.go; ask @team.\nNumbers: $1"}
	sh := &shell{}
	x, err := Expand(context.Background(), cmd, `main "two words"`, Env{Files: files, Shell: sh.run})
	if err != nil {
		t.Fatal(err)
	}
	want := "Diff: GIT DIFF MAIN\nReview main \"two words\" against @src/a.go and @src/a.go; ask @team.\nNumbers: two words" +
		"\n\n<file path=\"src/a.go\">\npackage a\n</file>"
	if x.Prompt != want {
		t.Errorf("prompt:\n%s\nwant:\n%s", x.Prompt, want)
	}
	if !slices.Equal(sh.ran, []string{"git diff main"}) || x.Preludes != 1 {
		t.Errorf("preludes run: %q", sh.ran)
	}
	if x.Model != "haiku" || !slices.Equal(x.Files, []string{"src/a.go"}) {
		t.Errorf("model %q, files %q", x.Model, x.Files)
	}
	wantGrant := []permission.Rule{{Action: permission.DecisionAllow, Tool: "bash", Pattern: "git diff:*", Source: permission.SourceRun},
		{Action: permission.DecisionAllow, Tool: "Read", Source: permission.SourceRun}}
	if !slices.Equal(x.Grant, wantGrant) || !slices.Equal(sh.grant, wantGrant) {
		t.Errorf("grant %+v (to the shell %+v); want %+v", x.Grant, sh.grant, wantGrant)
	}
	if len(x.Notes) != 1 || !strings.Contains(x.Notes[0], "NotebookEdit") {
		t.Errorf("notes %q", x.Notes)
	}

	// Arguments a body does not use are appended, as in Claude Code.
	plain := workspace.Command{Name: "p", Body: "Summarise."}
	if x, err := Expand(context.Background(), plain, "the README", Env{}); err != nil || x.Prompt != "Summarise.\n\nARGUMENTS: the README" {
		t.Errorf("appended arguments: %q, %v", x.Prompt, err)
	}
	if x, err := Expand(context.Background(), plain, "", Env{}); err != nil || x.Prompt != "Summarise." {
		t.Errorf("no arguments: %q, %v", x.Prompt, err)
	}
}

// TestExpandAttacks_COMPAT1 are the attack rows: what a command file, an
// argument or a prelude's output may try.
func TestExpandAttacks_COMPAT1(t *testing.T) {
	outside := t.TempDir()
	secret := filepath.Join(outside, "secret.txt")
	if err := os.WriteFile(secret, []byte("TOP SECRET"), 0o644); err != nil {
		t.Fatal(err)
	}
	files := fixture(t, map[string]string{".env": "KEY=1", "big.txt": strings.Repeat("x", attachment.MaxTextBytes+1),
		"bin.dat": "a\x00b", "ok.txt": "fine", "dir/x.txt": "x"})
	if err := os.Symlink(secret, filepath.Join(files.Root, "link.txt")); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, tc := range []struct {
		name, body, args string
		env              Env
		want             string // in the error; "" for none
		prompt           string // in the prompt when no error
	}{
		{name: "path traversal", body: "see @../" + filepath.Base(outside) + "/secret.txt", want: "outside the workspace"},
		{name: "absolute path outside", body: "see @" + secret, want: "outside the workspace"},
		{name: "symlink out", body: "see @link.txt", want: "outside the workspace"},
		{name: "sensitive file", body: "see @.env", want: "sensitive file"},
		{name: "huge file", body: "see @big.txt", want: "over the limit"},
		{name: "binary file", body: "see @bin.dat", want: "not a text file"},
		{name: "directory", body: "see @dir", want: "a directory"},
		{name: "traversal in an argument", body: "see $ARGUMENTS", args: "@" + strings.Repeat("../", 30) + "etc/passwd", want: "outside the workspace"},
		{name: "denied by a read rule", body: "see @ok.txt",
			env:  Env{Readable: func(context.Context, string) error { return errors.New("denied by rule Read(ok.txt)") }},
			want: "denied by rule"},
		{name: "prelude refused without a shell", body: "x !`id`", env: Env{NoShell: "the workspace is not trusted"},
			want: "the workspace is not trusted"},
		{name: "prelude failing stops all", body: "x !`false`", env: Env{Shell: (&shell{err: errors.New("exit 1")}).run},
			want: "exit 1; nothing was sent"},
		{name: "an argument is no prelude", body: "say $ARGUMENTS", args: "!`id`", env: Env{NoShell: "no"}, prompt: "say !`id`"},
		{name: "prelude output is no prelude nor file", body: "!`cat notes`",
			env: Env{Shell: func(context.Context, string, []permission.Rule) (string, error) { return "!`id` @ok.txt", nil }}, prompt: "!`id` @ok.txt"},
		{name: "bad allowed-tools", body: "x", want: "allowed-tools"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := tc.env
			env.Files = files
			c := workspace.Command{Name: "t", Body: tc.body, Path: "t.md"}
			if tc.name == "bad allowed-tools" {
				c.AllowedTools = []string{"Bash(git diff"}
			}
			x, err := Expand(ctx, c, tc.args, env)
			switch {
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("error %v; want one saying %q", err, tc.want)
			case tc.want == "" && err != nil:
				t.Fatal(err)
			case tc.want == "" && x.Prompt != tc.prompt:
				t.Fatalf("prompt %q; want %q", x.Prompt, tc.prompt)
			}
			if x != nil && strings.Contains(x.Prompt, "TOP SECRET") {
				t.Fatal("a file outside the workspace reached the prompt")
			}
		})
	}
}

func FuzzExpand(f *testing.F) {
	for _, s := range []string{"Review $0 and $ARGUMENTS[1]", "!`git status` then $ARGUMENTS", "```!\nls\n```\n@a.txt $1",
		`\$1 $$ $ARGUMENTS[`, "!`` !`a` $999999999 $ARGUMENTS[99999999]"} {
		f.Add(s, `a "b c" 'd'`)
	}
	root := f.TempDir()
	if err := os.WriteFile(filepath.Join(root, "a.txt"), []byte("A"), 0o644); err != nil {
		f.Fatal(err)
	}
	files := attachment.Resolver{Root: root}
	f.Fuzz(func(t *testing.T, body, argStr string) {
		for _, a := range Arguments(argStr) {
			if strings.ContainsAny(a, "\x00") && !strings.Contains(argStr, "\x00") {
				t.Fatalf("an argument holds what the string did not: %q", a)
			}
		}
		var ran []string
		sh := func(_ context.Context, s string, _ []permission.Rule) (string, error) {
			ran = append(ran, s)
			return "OUT", nil
		}
		x, err := Expand(context.Background(), workspace.Command{Name: "f", Body: body}, argStr, Env{Files: files, Shell: sh})
		if err != nil {
			if !strings.Contains(err.Error(), "nothing was sent") {
				t.Fatalf("error without saying nothing was sent: %v", err)
			}
			return
		}
		if want := len(Preludes(body)); len(ran) != want || x.Preludes != want {
			t.Fatalf("%d preludes ran, %d counted; the body holds %d", len(ran), x.Preludes, want)
		}
		if strings.TrimSpace(argStr) != "" && !strings.Contains(x.Prompt, strings.TrimSpace(argStr)) && !strings.Contains(body, "$") {
			t.Fatalf("the arguments are lost: %q", x.Prompt)
		}
	})
}
