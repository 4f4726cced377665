package jsonevents

import (
	"testing"

	"github.com/reinhq/rein/llm"
)

// TestKeepOpaque: one opaque block that could not be kept takes the reply's
// other opaque blocks with it (a server tool's call and result travel
// together), and each is counted; other blocks stay in order.
func TestKeepOpaque(t *testing.T) {
	ok := &llm.Opaque{Provider: "p", Type: "server_tool_use", Raw: []byte(`{"type":"server_tool_use"}`)}
	text := &llm.Text{Text: "x"}
	if got := KeepOpaque("keep-test", []llm.Block{ok, text}); len(got) != 2 {
		t.Errorf("kept %d blocks of 2 good ones", len(got))
	}
	before := llm.DropsOf("keep-test", llm.DropOversize, "server_tool_use")
	got := KeepOpaque("keep-test", []llm.Block{ok, text, &llm.Opaque{Provider: "p", Type: "web_search_tool_result"}})
	if len(got) != 1 || got[0] != llm.Block(text) {
		t.Errorf("kept %v, want the text alone", got)
	}
	if llm.DropsOf("keep-test", llm.DropOversize, "server_tool_use") != before+1 || llm.DropsOf("keep-test", llm.DropOversize, "web_search_tool_result") == 0 {
		t.Error("the dropped blocks were not counted")
	}
}
