package permission

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/reinhq/rein/tool"
)

func actionReq(ws, name, input string) Request {
	return Request{Tool: name, Origin: tool.OriginAction, Input: []byte(input), Meta: metaExec, WorkDir: ws}
}

func TestParseActionRule_ACTION1(t *testing.T) {
	cases := []struct {
		in   string
		want Rule
	}{
		{"Action(deploy)", Rule{Action: DecisionAllow, Tool: ActionRuleTool, Pattern: "deploy"}},
		{" Action( deploy ) ", Rule{Action: DecisionAllow, Tool: ActionRuleTool, Pattern: "deploy"}},
		{"action(deploy)", Rule{Action: DecisionAllow, Tool: ActionRuleTool, Pattern: "deploy"}},
		{"ACTION(deploy_*)", Rule{Action: DecisionAllow, Tool: ActionRuleTool, Pattern: "deploy_*"}},
		{"Action(*)", Rule{Action: DecisionAllow, Tool: ActionRuleTool, Pattern: "*"}},
		{"Action", Rule{Action: DecisionAllow, Tool: ActionRuleTool}},
		{"Action(run-tests.v2)", Rule{Action: DecisionAllow, Tool: ActionRuleTool, Pattern: "run-tests.v2"}},
		// Lower-case without a name is a tool called "action", not every action.
		{"action", Rule{Action: DecisionAllow, Tool: "action"}},
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
			t.Errorf("ParseRule(%q).String() = %q does not read back: %v, %+v", c.in, got.String(), err, again)
		}
	}
	for _, bad := range []string{"Action(deploy prod)", "Action(a/b)", "Action($(x))", "Action(x[)"} {
		if r, err := ParseRule(DecisionAllow, bad); err == nil {
			t.Errorf("ParseRule(%q) = %+v, want an error", bad, r)
		}
	}
}

func TestActionRules_ACTION1(t *testing.T) {
	ws := t.TempDir()
	deploy := actionReq(ws, "deploy", `{"env":"prod"}`)
	deployWeb := actionReq(ws, "deploy_web", `{}`)
	builtin := Request{Tool: "deploy", Origin: tool.OriginBuiltin, Input: []byte(`{}`), Meta: metaExec, WorkDir: ws}
	mcp := Request{Tool: "deploy", Origin: tool.OriginMCP, Input: []byte(`{}`), Meta: metaExec, WorkDir: ws}
	noOrigin := Request{Tool: "deploy", Input: []byte(`{}`), Meta: metaExec, WorkDir: ws}
	cases := []struct {
		name  string
		mode  Mode
		rules []string
		req   Request
		want  Decision
	}{
		{"no rule asks in default mode", ModeDefault, nil, deploy, DecisionAsk},
		{"allow", ModeDefault, []string{"allow Action(deploy)"}, deploy, DecisionAllow},
		{"allow other action", ModeDefault, []string{"allow Action(deploy)"}, deployWeb, DecisionAsk},
		{"allow wildcard", ModeDefault, []string{"allow Action(deploy_*)"}, deployWeb, DecisionAllow},
		{"wildcard needs the prefix", ModeDefault, []string{"allow Action(deploy_*)"}, deploy, DecisionAsk},
		{"allow every action", ModeDefault, []string{"allow Action(*)"}, deployWeb, DecisionAllow},
		{"bare Action is every action", ModeDefault, []string{"allow Action"}, deploy, DecisionAllow},
		{"deny", ModeBypass, []string{"deny Action(deploy)"}, deploy, DecisionDeny},
		{"deny wins over allow", ModeDefault, []string{"allow Action(*)", "deny Action(deploy)"}, deploy, DecisionDeny},
		{"deny wildcard", ModeBypass, []string{"deny Action(*)"}, deployWeb, DecisionDeny},
		{"ask", ModeBypass, []string{"ask Action(deploy)"}, deploy, DecisionAsk},
		{"ask beats allow", ModeDefault, []string{"allow Action(deploy)", "ask Action(deploy)"}, deploy, DecisionAsk},
		{"strict ignores allow", ModeStrict, []string{"allow Action(deploy)"}, deploy, DecisionAsk},
		{"builtin of that name: allow does not match", ModeDefault, []string{"allow Action(deploy)"}, builtin, DecisionAsk},
		{"builtin of that name: deny does not match", ModeBypass, []string{"deny Action(deploy)"}, builtin, DecisionAllow},
		{"mcp tool of that name: deny does not match", ModeBypass, []string{"deny Action(*)"}, mcp, DecisionAllow},
		{"no origin: not an action", ModeBypass, []string{"deny Action(deploy)"}, noOrigin, DecisionAllow},
		{"a plain name rule still covers the action", ModeDefault, []string{"allow deploy"}, deploy, DecisionAllow},
		{"a plain name deny still covers the action", ModeBypass, []string{"deny deploy"}, deploy, DecisionDeny},
		{"read-only mode denies an action", ModeReadOnly, []string{"allow Action(deploy)"}, deploy, DecisionDeny},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e, err := NewPolicy(Settings{Mode: c.mode, Rules: mustRules(t, SourceWorkspace, c.rules...)})
			if err != nil {
				t.Fatal(err)
			}
			o, err := e.Decide(context.Background(), c.req)
			if err != nil {
				t.Fatal(err)
			}
			if o.Decision != c.want {
				t.Errorf("%s %s: got %s (%s), want %s", c.req.Origin, c.req.Tool, o.Decision, o.Reason, c.want)
			}
		})
	}
}

// The outcome names the Action rule that decided, as ParseRule reads it.
func TestActionRuleNamedInOutcome_ACTION1(t *testing.T) {
	e, err := NewPolicy(Settings{Rules: mustRules(t, SourceUser, "deny Action(deploy_*)")})
	if err != nil {
		t.Fatal(err)
	}
	o, err := e.Decide(context.Background(), actionReq(t.TempDir(), "deploy_db", `{}`))
	if err != nil {
		t.Fatal(err)
	}
	if o.Decision != DecisionDeny || o.Rule == nil || o.Rule.String() != "Action(deploy_*)" ||
		!strings.Contains(o.Reason, "Action(deploy_*)") {
		t.Errorf("outcome = %+v, want a deny by Action(deploy_*)", o)
	}
}

func TestSuggestAction_ACTION1(t *testing.T) {
	got := Suggest(actionReq("/ws", "deploy", `{"path":"x.txt"}`))
	want := []Rule{{Action: DecisionAllow, Tool: ActionRuleTool, Pattern: "deploy", Source: SourceSession}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Suggest -want +got:\n%s", diff)
	}
	// The rule an "always" answer keeps allows the action from then on.
	e, err := NewPolicy(Settings{})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Add(context.Background(), got[0]); err != nil {
		t.Fatal(err)
	}
	o, err := e.Decide(context.Background(), actionReq(t.TempDir(), "deploy", `{}`))
	if err != nil || o.Decision != DecisionAllow {
		t.Errorf("after always: %+v, %v; want allow", o, err)
	}
	// A built-in keeps its usual suggestion.
	b := Suggest(Request{Tool: "deploy", Origin: tool.OriginBuiltin, Input: []byte(`{}`)})
	if len(b) != 1 || b[0].Tool != "deploy" {
		t.Errorf("Suggest(builtin) = %+v", b)
	}
}
