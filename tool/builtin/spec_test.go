package builtin

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/reinhq/rein/exec"
)

// The built-in tools' descriptions and schemas ride in every request, so
// they have a byte budget (SPEC CTX-5, PROV-6: issue 30 item 4 measured
// 9,515 bytes for the whole first request), and within it each tool must
// still state the facts the model needs to use it safely: the limits that
// cause refusals, the background-job semantics, what is refused.
func TestSpecsBudgetAndFacts_CTX5(t *testing.T) {
	backend := &exec.Local{}
	jobs := NewJobs(JobsOptions{})
	all := append(FileTools(backend, NewFileTracker()),
		NewListDir(ListDirOptions{}), NewGlob(GlobOptions{}), NewGrep(GrepOptions{}),
		NewBash(backend, BashOptions{Jobs: jobs}), NewTodoWrite(&Todos{}),
		NewWebFetch(WebFetchOptions{}), NewWebSearch(nil), NewAskUser(nil))
	all = append(all, JobTools(jobs)...)
	facts := map[string][]string{
		"read_file":  {"cat -n", "images", `"offset"`, `"limit"`, "2000"},
		"write_file": {"read first", "edit_file"},
		"edit_file":  {"read first", "exactly", "unique", "replace_all"},
		"multi_edit": {"in order", "all or none", `"minItems":1`},
		"glob":       {"at most 100", ".gitignore", "**/*.go"},
		"grep":       {"At most 250", ".gitignore", "RE2", "files_with_matches"},
		"bash": {"fresh shell", "No stdin", "refused", "head and tail", "run_in_background",
			"no timeout", "moves to the background", "max 600"},
		"job_output": {"state", "exit code", "max 30000", "wait_ms"},
		"job_kill":   {"process group"},
		"todo_write": {"whole list", "in_progress", `"enum":["pending","in_progress","completed"]`},
		"web_fetch":  {"100 KB", "markdown"},
		"web_search": {"web_fetch", "max 20"},
	}
	total := 0
	for _, tl := range all {
		s := tl.Spec()
		var schema bytes.Buffer
		if err := json.Compact(&schema, s.InputSchema); err != nil {
			t.Fatalf("%s: schema: %v", s.Name, err)
		}
		one, _ := json.Marshal(struct {
			Name        string          `json:"name"`
			Description string          `json:"description"`
			InputSchema json.RawMessage `json:"input_schema"`
		}{s.Name, s.Description, schema.Bytes()})
		total += len(one)
		text := s.Description + schema.String()
		for _, f := range facts[s.Name] {
			if !strings.Contains(text, f) {
				t.Errorf("%s no longer says %q:\n%s", s.Name, f, text)
			}
		}
		delete(facts, s.Name)
	}
	for name := range facts {
		t.Errorf("%s is not among the built-in tools", name)
	}
	// 6,439 bytes measured for these 15 tools; the budget leaves ~4 % room.
	const budget = 6700
	t.Logf("%d tools, %d bytes", len(all), total)
	if total > budget {
		t.Errorf("the built-in tools' specs take %d bytes, over the %d budget: say each fact once", total, budget)
	}
}
