package compact

import (
	"strings"
	"testing"

	"github.com/reinhq/rein/agent"
)

// SPEC PERM-7, CTX-5: a summary carries the task's plan word for word,
// once, whatever the summary said of it.
func TestSummaryKeepsPlan_PERM7(t *testing.T) {
	plan := "# Plan\n\n1. Cache the config.\n2. Run go test ./..."
	got := withPlan("We planned a cache.", &agent.Focus{Plan: plan})
	if !strings.HasSuffix(got, PlanHeader+"\n\n"+plan) {
		t.Errorf("summary %q does not end with the plan", got)
	}
	if again := withPlan(got, &agent.Focus{Plan: plan}); again != got {
		t.Errorf("the plan was added twice: %q", again)
	}
	for _, f := range []*agent.Focus{nil, {}, {Plan: "  \n"}} {
		if s := withPlan("S", f); s != "S" {
			t.Errorf("focus %+v: %q", f, s)
		}
	}
}
