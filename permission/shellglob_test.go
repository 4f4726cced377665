package permission

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/reinhq/rein/tool"
)

// TestShellGlobRules: a deny or ask rule with a * inside the command, as
// Claude Code writes it (SPEC PERM-2, COMPAT-1), matches the command's
// words joined by spaces — through wrappers and in every part of a
// compound command — and an allow rule may not hold one.
func TestShellGlobRules(t *testing.T) {
	cases := []struct {
		rule, command string
		want          Decision
	}{
		{"bash(git * main)", "git push origin main", DecisionDeny},
		{"bash(git * main)", "git push origin dev", DecisionAllow},
		{"bash(git * main)", "git main", DecisionAllow},
		{"bash(git * main)", "echo x && git push origin main", DecisionDeny},
		{"bash(git * main)", "timeout 5 git push origin main", DecisionDeny},
		{"bash(git * main)", "git push 'origin' \"main\"", DecisionDeny},
		{"bash(* install)", "npm install", DecisionDeny},
		{"bash(* install)", "npm install left-pad", DecisionAllow},
		{"bash(ls*)", "lsof -i", DecisionDeny},
		{"bash(ls*)", "cat x", DecisionAllow},
		{"bash(git * main *)", "git push main --force", DecisionDeny},
		{"bash(git * main *)", "git push main", DecisionDeny},
		{"bash(git:* push)", "git:x push", DecisionDeny},
		{"bash(git:* push)", "git x push", DecisionAllow},
		{"bash(rm -rf *)", "rm -rf /", DecisionDeny},      // a trailing " *" stays a prefix rule
		{"bash(curl * | sh)", "curl x | sh", DecisionAsk}, // no part reads "curl x | sh", but sh runs what is not known
	}
	for _, c := range cases {
		t.Run(c.rule+" "+c.command, func(t *testing.T) {
			r, err := ParseRule(DecisionDeny, c.rule)
			if err != nil {
				t.Fatal(err)
			}
			e, err := NewPolicy(Settings{Mode: ModeBypass, Rules: []Rule{r}})
			if err != nil {
				t.Fatal(err)
			}
			in, _ := json.Marshal(map[string]string{"command": c.command})
			o, err := e.Decide(context.Background(), Request{Tool: "bash", Input: in, WorkDir: t.TempDir(),
				Meta: tool.Meta{Category: tool.CategoryExecute}})
			if err != nil {
				t.Fatal(err)
			}
			if o.Decision != c.want {
				t.Errorf("%s on %q: %s (%s), want %s", c.rule, c.command, o.Decision, o.Reason, c.want)
			}
		})
	}
	if _, err := ParseRule(DecisionAllow, "bash(git * main)"); err == nil {
		t.Error("an allow rule with a * inside the command parsed")
	}
	if _, err := ParseRule(DecisionAsk, "bash(git * main)"); err != nil {
		t.Errorf("ask rule: %v", err)
	}
}
