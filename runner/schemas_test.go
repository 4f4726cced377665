package runner_test

import (
	"testing"

	"github.com/reinhq/rein/llm/llmtest"
	"github.com/reinhq/rein/tool"
)

// CLI-1 (issue 30): the built-in tools' schemas are compiled at their
// first call, not at start-up (package tool), so this checks what the set
// no longer checks when it is built: every schema offered to the model
// compiles and accepts what its required fields say.
func TestBuiltinSchemasCompile_CLI1(t *testing.T) {
	model := llmtest.NewScripted(llmtest.Reply{Text: "hi"})
	setup, _, _ := jobsSetup(t, model, nil)
	conv := setup.NewConversation()
	defer conv.Close()
	submit(t, conv, "hello")
	specs := model.Requests()[0].Tools
	if len(specs) < 10 {
		t.Fatalf("only %d tools offered", len(specs))
	}
	for _, spec := range specs {
		if _, err := tool.CompileSchema(spec.InputSchema); err != nil {
			t.Errorf("%s: %v", spec.Name, err)
		}
		e, ok := conv.Tools().Get(spec.Name)
		if !ok {
			continue // added for the run (task), compiled when added
		}
		if err := e.Schema.Validate([]byte(`[]`)); err == nil {
			t.Errorf("%s: a non-object input passed", spec.Name)
		}
	}
}
