package runner

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/reinhq/rein/permission"
	"github.com/reinhq/rein/tool"
	"github.com/reinhq/rein/workspace"
)

// PERM-5: the second lock — an agent's tool rules pre-approve nothing
// when its origin may not (an untrusted workspace's), and still restrict.
func TestScopeOfWithoutPreapproval(t *testing.T) {
	def := &workspace.Agent{Name: "r", Origin: workspace.OriginWorkspace,
		Tools: []string{"Read", "Bash(*)", "Bash(git diff:*)", "Read(src/**)", "not a rule("}, DisallowedTools: []string{"Bash(rm:*)", "WebFetch"}}
	sc := scopeOf(def, false)
	if len(sc.allow) != 0 {
		t.Errorf("pre-approvals without trust: %v", sc.allow)
	}
	if len(sc.only["bash"]) != 2 || len(sc.deny) != 1 || sc.deny[0].String() != "bash(rm:*)" {
		t.Errorf("scope = %+v", sc)
	}
	if _, ok := sc.only["read_file"]; ok {
		t.Error("Read(src/**) restricts read_file although Read is listed bare")
	}
	if sc = scopeOf(def, true); len(sc.allow) != 3 {
		t.Errorf("pre-approvals with trust: %v", sc.allow)
	}
	s := &Setup{cfg: Config{Loaded: &workspace.Loaded{}}}
	if s.mayPreapprove(def) {
		t.Error("an untrusted workspace's agent may pre-approve")
	}
	if !s.mayPreapprove(&workspace.Agent{Origin: workspace.OriginUser}) {
		t.Error("the user's agent may not pre-approve")
	}
}

// COMPAT-1: Agent(worker, researcher) in an agent's tools lets its task
// tool start those agents only; Task(…) is the legacy spelling.
func TestScopeTaskAllowlist(t *testing.T) {
	for _, entry := range []string{"Agent(worker, researcher)", "Task(worker,researcher)"} {
		sc := scopeOf(&workspace.Agent{Name: "lead", Tools: []string{"Read", entry}}, true)
		if !slices.Equal(sc.agents, []string{"worker", "researcher"}) || len(sc.only) != 0 || len(sc.allow) != 0 {
			t.Fatalf("%s: scope %+v", entry, sc)
		}
		base, err := permission.NewPolicy(permission.Settings{Mode: permission.ModeDefault})
		if err != nil {
			t.Fatal(err)
		}
		p := &scopedPolicy{agent: "lead", base: base, agents: sc.agents}
		for agent, refused := range map[string]bool{"worker": false, "other": true} {
			in, _ := json.Marshal(map[string]string{"agent": agent, "prompt": "x"})
			o, err := p.Decide(context.Background(), permission.Request{Tool: "task", Input: in, Meta: tool.Meta{ReadOnly: true}})
			if err != nil || (o.Decision == permission.DecisionDeny && strings.Contains(o.Reason, "may start only")) != refused {
				t.Errorf("%s: task %s = %+v, %v; want refused %v", entry, agent, o, err, refused)
			}
		}
	}
	if sc := scopeOf(&workspace.Agent{Name: "lead", Tools: []string{"Agent", "Agent(worker)"}}, true); sc.agents != nil {
		t.Errorf("a bare Agent beside Agent(worker) still restricts: %v", sc.agents)
	}
}

// COMPAT-1: an agent's tools that this build has none of are reported —
// a Claude Code tool of another branch as not available in this build.
func TestAgentToolWarnings(t *testing.T) {
	agents := []workspace.Agent{
		{Name: "a", Origin: workspace.OriginUser, Tools: []string{"Read", "BashOutput", "ExitPlanMode", "Bash(git diff:*)", "mcp__x__*", "NotebookEdit", "Agent"}},
		{Name: "explore", Origin: workspace.OriginBuiltin, Tools: []string{"web_fetch"}},
	}
	got := agentToolWarnings(agents, []string{"read_file", "bash"})
	want := []string{
		"agent a: tools: BashOutput (rein's job_output) is not available in this build; the agent runs without it",
		"agent a: tools: ExitPlanMode (rein's exit_plan_mode) is not available in this build; the agent runs without it",
		"agent a: tools: mcp__x__* names no tool of this session; the agent runs without it",
	}
	if !slices.Equal(got, want) {
		t.Errorf("warnings:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
