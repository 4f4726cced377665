package permission

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseRule_PERM2(t *testing.T) {
	cases := []struct {
		in   string
		want Rule
	}{
		{"bash(git diff:*)", Rule{Action: DecisionAllow, Tool: "bash", Pattern: "git diff:*"}},
		{"  bash( git diff:* ) ", Rule{Action: DecisionAllow, Tool: "bash", Pattern: "git diff:*"}},
		{"read_file(src/**)", Rule{Action: DecisionAllow, Tool: "read_file", Pattern: "src/**"}},
		{"edit_file(/etc/**)", Rule{Action: DecisionAllow, Tool: "edit_file", Pattern: "/etc/**"}},
		{"web_fetch(domain:example.com)", Rule{Action: DecisionAllow, Tool: "web_fetch", Pattern: "domain:example.com"}},
		{"bash", Rule{Action: DecisionAllow, Tool: "bash"}},
		{"mcp__github__*", Rule{Action: DecisionAllow, Tool: "mcp__github__*"}},
		{"Bash(npm test:*)", Rule{Action: DecisionAllow, Tool: "bash", Pattern: "npm test:*"}},
		{"Read(./docs/**)", Rule{Action: DecisionAllow, Tool: "Read", Pattern: "./docs/**"}},
		{"Write(./docs/**)", Rule{Action: DecisionAllow, Tool: "write_file", Pattern: "./docs/**"}},
		{"MultiEdit(x)", Rule{Action: DecisionAllow, Tool: "multi_edit", Pattern: "x"}},
		{"Edit", Rule{Action: DecisionAllow, Tool: "Edit"}},
		{"LS", Rule{Action: DecisionAllow, Tool: "list_dir"}},
		{"WebFetch(domain:go.dev)", Rule{Action: DecisionAllow, Tool: "web_fetch", Pattern: "domain:go.dev"}},
		{`bash(echo "a b")`, Rule{Action: DecisionAllow, Tool: "bash", Pattern: `echo "a b"`}},
		{"bash(*)", Rule{Action: DecisionAllow, Tool: "bash", Pattern: "*"}},
	}
	for _, c := range cases {
		got, err := ParseRule(DecisionAllow, c.in)
		if err != nil {
			t.Errorf("ParseRule(%q): %v", c.in, err)
			continue
		}
		if diff := cmp.Diff(c.want, got); diff != "" {
			t.Errorf("ParseRule(%q) -want +got:\n%s", c.in, diff)
		}
		again, err := ParseRule(DecisionAllow, got.String())
		if err != nil || again != got {
			t.Errorf("ParseRule(%q).String() = %q does not read back: %v", c.in, got.String(), err)
		}
	}
}

func TestParseRuleErrors_PERM2(t *testing.T) {
	cases := []struct{ action, in, want string }{
		{"allow", "", "missing tool name"},
		{"allow", "bash(git diff", "missing closing parenthesis"},
		{"allow", "bash()", "empty pattern"},
		{"allow", "ba sh", "use letters, digits"},
		{"allow", "bash(git $(x):*)", "no $ or globs"},
		{"allow", "bash(git * diff)", "deny and ask rules only"},
		{"allow", "bash(git diff > x)", "command prefix"},
		{"allow", "bash(a; b)", "command prefix"},
		{"allow", "mcp__*(x)", "exact tool name"},
		{"allow", "web_fetch(domain:)", "domain:example.com"},
		{"allow", "web_fetch(domain:a/b)", "domain:example.com"},
		{"allow", "read_file(src/[)", "invalid path glob"},
		{"maybe", "bash", "valid: allow, ask, deny"},
	}
	for _, c := range cases {
		_, err := ParseRule(Decision(c.action), c.in)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("ParseRule(%s, %q) error = %v, want it to mention %q", c.action, c.in, err, c.want)
		}
	}
}

// FuzzParseRule: never panics; what parses prints back to itself and
// compiles.
func FuzzParseRule(f *testing.F) {
	for _, s := range []string{"bash(git diff:*)", "read_file(src/**)", "web_fetch(domain:example.com)", "bash",
		"mcp__github__*", `bash(echo "a b" 'c')`, "Edit(/etc/**)", "bash(x:*)", "a(b(c))", "bash($(", "read_file({a,b}/**)",
		"bash(git * main)", "bash(* install *)", "bash(ls*)", "bash(a:* b)"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := ParseRule(DecisionDeny, s)
		if err != nil {
			return
		}
		again, err := ParseRule(DecisionDeny, r.String())
		if err != nil {
			t.Fatalf("ParseRule(%q) = %q which does not parse again: %v", s, r.String(), err)
		}
		if again != r {
			t.Fatalf("round trip %q: %+v != %+v", s, again, r)
		}
	})
}

func TestRuleTools_PERM2(t *testing.T) {
	cases := map[string][]string{
		"Edit":         {"edit_file", "multi_edit", "write_file"},
		"Read(src/**)": {"read_file", "glob", "grep", "list_dir"},
		"Bash":         {"bash"},
		"mcp__x__*":    {"mcp__x__*"},
	}
	for in, want := range cases {
		r, err := ParseRule(DecisionDeny, in)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, r.Tools()); diff != "" {
			t.Errorf("%s: -want +got:\n%s", in, diff)
		}
	}
}
