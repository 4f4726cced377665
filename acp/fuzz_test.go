package acp

import (
	"encoding/json"
	"strings"
	"testing"

	sdk "github.com/coder/acp-go-sdk"
)

// FuzzPromptBlocks: any prompt a client sends is refused with an error or
// becomes a user message within the bounds; nothing panics (SPEC FRONT-1).
func FuzzPromptBlocks(f *testing.F) {
	for _, s := range []string{
		`[{"type":"text","text":"hi"}]`,
		`[{"type":"image","data":"iVBORw0KGgo=","mimeType":"image/png"}]`,
		`[{"type":"resource","resource":{"uri":"file:///a","text":"x"}}]`,
		`[{"type":"resource","resource":{"uri":"file:///a","blob":"AAAA","mimeType":"image/gif"}}]`,
		`[{"type":"resource_link","name":"a","uri":"file:///etc/passwd"}]`,
		`[{"type":"audio","data":"AAAA","mimeType":"audio/wav"}]`,
		`[]`, `[{}]`, `[{"type":"text"}]`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		var blocks []sdk.ContentBlock
		if json.Unmarshal([]byte(in), &blocks) != nil {
			return
		}
		m, err := message(blocks)
		if err != nil {
			if err.Error() == "" {
				t.Fatal("an error without words")
			}
			return
		}
		if m == nil || len(m.Content) == 0 {
			t.Fatalf("no message and no error for %s", in)
		}
		if len(m.TextOf()) > maxPromptText+64<<10 {
			t.Fatalf("text of %d bytes passed the bound", len(m.TextOf()))
		}
	})
}

// FuzzToolInput: whatever input a model gives a tool, its title, its
// locations and its diffs are made without panicking, and the paths are
// absolute.
func FuzzToolInput(f *testing.F) {
	for _, s := range []string{`{"path":"a.go","old_string":"x","new_string":"y"}`, `{"path":"/abs","edits":[{"old_string":"a"}]}`,
		`{"command":"ls"}`, `{"todos":[{"content":"a","status":"in_progress"}]}`, `null`, `[]`, `{"path":7}`} {
		for _, name := range []string{"edit_file", "multi_edit", "write_file", "bash", "todo_write", "read_file"} {
			f.Add(name, s)
		}
	}
	f.Fuzz(func(t *testing.T, name, in string) {
		tr := newTranslator("/work")
		u := tr.toolStart("c1", name, json.RawMessage(in))
		if u.ToolCall == nil || !strings.HasPrefix(u.ToolCall.Title, name) {
			t.Fatalf("tool call = %+v", u.ToolCall)
		}
		for _, l := range u.ToolCall.Locations {
			if !strings.HasPrefix(l.Path, "/") {
				t.Fatalf("relative location %q", l.Path)
			}
		}
		end := tr.toolEnd("c1", "out", true)
		if len(end) == 0 || end[0].ToolCallUpdate == nil {
			t.Fatalf("end = %+v", end)
		}
		if _, err := json.Marshal(end); err != nil {
			t.Fatalf("updates do not marshal: %v", err)
		}
	})
}
