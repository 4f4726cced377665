package runner

import (
	"testing"

	"github.com/reinhq/rein/permission"
	"github.com/reinhq/rein/tool/builtin"
)

// SPEC PERM-7: the tool and the policy agree on the tool's name, the plan
// file's name and the plan's bound (builtin may not import permission).
func TestPlanConstantsAgree_PERM7(t *testing.T) {
	if builtin.ExitPlanModeName != permission.ExitPlanModeTool || builtin.PlanFileName != permission.PlanFileName ||
		builtin.MaxPlanBytes != permission.MaxPlanBytes {
		t.Errorf("builtin %s %s %d, permission %s %s %d", builtin.ExitPlanModeName, builtin.PlanFileName, builtin.MaxPlanBytes,
			permission.ExitPlanModeTool, permission.PlanFileName, permission.MaxPlanBytes)
	}
}
