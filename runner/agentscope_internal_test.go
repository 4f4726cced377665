package runner

import (
	"testing"

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
