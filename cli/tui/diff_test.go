package tui

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/reinhq/rein/agent"
	"github.com/reinhq/rein/permission"
)

// CLI-6: an edit's change as diff lines: the common lines kept, the
// others removed and added; write_file all added; other tools none.
func TestEditDiff_CLI6(t *testing.T) {
	for _, tc := range []struct {
		name, input string
		want        []string
	}{
		{"edit_file", `{"path":"a","old_string":"a\nb\nc","new_string":"a\nB\nc\nd"}`, []string{" a", "-b", "+B", " c", "+d"}},
		{"multi_edit", `{"path":"a","edits":[{"old_string":"x","new_string":"y"},{"old_string":"p","new_string":""}]}`, []string{"-x", "+y", "…", "-p"}},
		{"write_file", `{"path":"a","content":"one\ntwo\n"}`, []string{"+one", "+two"}},
		{"write_file", `{"path":"a"}`, nil},
		{"bash", `{"command":"ls"}`, nil},
		{"edit_file", `not json`, nil},
	} {
		if got := editDiff(tc.name, json.RawMessage(tc.input)); !slices.Equal(got, tc.want) {
			t.Errorf("%s %s = %q, want %q", tc.name, tc.input, got, tc.want)
		}
	}
	if got := lineDiff(strings.Repeat("x\n", maxDiffInput+50), "y"); len(got) != maxDiffInput+1 {
		t.Errorf("a long edit: %d lines", len(got))
	}
}

// CLI-6: a finished edit shows its diff in the scrollback, and the
// approval dialog of an edit shows the diff and the rule "always" adds.
func TestEditDiffShown_CLI6(t *testing.T) {
	feed := make(chan agent.Event, 8)
	input := json.RawMessage(`{"path":"main.go","old_string":"func main() {}","new_string":"func main() { run() }"}`)
	b := &fakeBackend{script: func(ctx context.Context, p string, ap permission.Approver, emit func(agent.Event) bool) {
		req := permission.Request{Tool: "edit_file", Input: input}
		emit(agent.Event{Type: agent.EventToolStart, Tool: &agent.ToolEvent{ID: "e1", Name: "edit_file", Input: input}})
		if _, err := ap.Approve(ctx, permission.Prompt{Request: req, Reason: "edits ask in default mode", Suggested: permission.Suggest(req)}); err != nil {
			return
		}
		feedScript(feed)(ctx, p, ap, emit)
	}}
	h := newHarness(t, b)
	h.submit("edit it")
	h.viewHas("Permission required edit_file", "main.go", "-func main() {}", "+func main() { run() }", "always would allow: edit_file")
	h.send(press('y', 0))
	feed <- agent.Event{Type: agent.EventToolEnd, Tool: &agent.ToolEvent{ID: "e1", Name: "edit_file", Output: "Edited main.go", Outcome: "ok"}}
	feed <- doneEvent(agent.ReasonCompleted)
	h.idle()
	h.printedHas("✓ edit_file(main.go)", "-func main() {}", "+func main() { run() }")
}
