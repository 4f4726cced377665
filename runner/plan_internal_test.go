package runner

import (
	"testing"

	"github.com/reinhq/rein/permission"
)

// SPEC PERM-7: an agent with tool rules decides through a scoped policy;
// approving its plan still switches the policy beneath.
func TestScopedPolicyApprovesPlan_PERM7(t *testing.T) {
	eng, err := permission.NewPolicy(permission.Settings{Mode: permission.ModePlan})
	if err != nil {
		t.Fatal(err)
	}
	p := &scopedPolicy{agent: "reviewer", base: eng}
	if m, err := p.ApprovePlan(permission.AnswerAlways); err != nil || m != permission.ModeAcceptEdits || eng.Mode() != permission.ModeAcceptEdits {
		t.Errorf("approve: %s, %v (engine %s)", m, err, eng.Mode())
	}
	bare := &scopedPolicy{agent: "x", base: permission.PolicyFunc(nil)}
	if _, err := bare.ApprovePlan(permission.AnswerOnce); err == nil {
		t.Error("a policy without a plan mode approved a plan")
	}
}
