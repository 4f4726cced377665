package builtin

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/reinhq/rein/tool"
)

// ExitPlanModeName is the exit_plan_mode tool's name; the permission
// policy knows it as permission.ExitPlanModeTool.
const ExitPlanModeName = "exit_plan_mode"

// PlanFileName is the plan file's name in the session's directory
// (permission.PlanFileName).
const PlanFileName = "plan.md"

// MaxPlanBytes bounds a plan (permission.MaxPlanBytes).
const MaxPlanBytes = 32 << 10

var exitPlanSchema = tool.NewStaticSchema[exitPlanIn](func(s *jsonschema.Schema) {
	n := MaxPlanBytes
	prop(s, "plan").MaxLength = &n
})

type exitPlanIn struct {
	Plan string `json:"plan" jsonschema:"markdown: the steps, the files each changes, how the result will be checked"`
}

const exitPlanDesc = "Plan mode only: presents your full plan for the user's approval once you know what to " +
	"change (you may draft it in the session's plan file, the one file plan mode lets you write). Approved, " +
	"you leave plan mode and carry it out; otherwise you get their feedback and stay in plan mode."

// PlanOptions configures exit_plan_mode.
type PlanOptions struct {
	// Mode returns the permission mode now in force: the one the user's
	// approval switched to, reported to the model. nil reports none.
	Mode func() string
}

// NewExitPlanMode returns the exit_plan_mode tool (SPEC PERM-7). The
// permission policy puts each call to the user first; the tool runs only
// once the plan was approved (the approval already switched the mode), and
// then keeps the plan in the session's plan file and tells the model to
// carry it out.
func NewExitPlanMode(o PlanOptions) tool.Tool {
	return tool.DefineStatic(ExitPlanModeName, exitPlanDesc, tool.Meta{ReadOnly: true, Category: tool.CategorySession}, exitPlanSchema,
		func(ctx context.Context, call tool.Call, in exitPlanIn) (tool.Result, error) {
			plan := strings.TrimSpace(in.Plan)
			switch {
			case plan == "":
				return tool.Errorf("the plan is empty: pass its full text in plan"), nil
			case len(plan) > MaxPlanBytes:
				return tool.Errorf("the plan is %d bytes, more than %d: shorten it", len(plan), MaxPlanBytes), nil
			}
			md := map[string]any{}
			msg := "The user approved the plan."
			if o.Mode != nil {
				mode := o.Mode()
				md["mode"] = mode
				msg += fmt.Sprintf(" Plan mode is over; the permission mode is now %s.", mode)
			}
			if call.SessionDir != "" {
				file := filepath.Join(call.SessionDir, PlanFileName)
				if err := writePlan(file, plan); err != nil {
					return tool.Result{}, fmt.Errorf("keep the plan in %s: %w", file, err)
				}
				md["plan_file"] = file
				msg += " It is kept in " + file + "."
			}
			msg += " Carry it out now, step by step."
			res := tool.Text(msg)
			res.Metadata = md
			return res, nil
		})
}

// writePlan replaces the plan file through a temporary file and a rename,
// so a reader never sees half a plan.
func writePlan(file, plan string) error {
	if err := os.MkdirAll(filepath.Dir(file), 0o700); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(file), ".plan-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.WriteString(plan + "\n"); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), file)
}
