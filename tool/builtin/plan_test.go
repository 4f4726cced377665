package builtin

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reinhq/rein/tool"
)

// SPEC PERM-7: exit_plan_mode, run once the plan was approved, keeps the
// plan in the session's plan file and tells the model the mode it now
// works in; its schema bounds the plan; an empty plan is an error.
func TestExitPlanMode_PERM7(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "sessions", "s1")
	tl := NewExitPlanMode(PlanOptions{Mode: func() string { return "accept-edits" }})
	if m := tool.MetaOf(tl); !m.SessionOnly() || !m.ReadOnly {
		t.Errorf("meta %+v", m)
	}
	var schema struct {
		Properties map[string]struct {
			MaxLength int `json:"maxLength"`
		} `json:"properties"`
		Required []string `json:"required"`
	}
	if err := json.Unmarshal(tl.Spec().InputSchema, &schema); err != nil || schema.Properties["plan"].MaxLength != MaxPlanBytes ||
		len(schema.Required) != 1 || schema.Required[0] != "plan" {
		t.Errorf("schema %s: %v", tl.Spec().InputSchema, err)
	}
	run := func(plan string) tool.Result {
		in, _ := json.Marshal(map[string]string{"plan": plan})
		res, err := tl.Run(context.Background(), tool.Call{ID: "c1", Name: ExitPlanModeName, Input: in, SessionDir: dir})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	res := run("  # Plan\n\n1. Do it.\n")
	if res.IsError || !strings.Contains(res.TextOf(), "accept-edits") || res.Metadata["plan_file"] != filepath.Join(dir, PlanFileName) {
		t.Errorf("result %q %+v", res.TextOf(), res.Metadata)
	}
	if b, err := os.ReadFile(filepath.Join(dir, PlanFileName)); err != nil || string(b) != "# Plan\n\n1. Do it.\n" {
		t.Errorf("plan file %q, %v", b, err)
	}
	if res := run(" \n"); !res.IsError || !strings.Contains(res.TextOf(), "empty") {
		t.Errorf("empty plan: %q", res.TextOf())
	}
	if res := run(strings.Repeat("x", MaxPlanBytes+1)); !res.IsError {
		t.Error("a plan over the bound was kept")
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("the session directory holds %d entries (a temporary file left?)", len(entries))
	}
}
