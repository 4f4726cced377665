package llm_test

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/reinhq/rein/llm"
)

var (
	shot1 = []byte("\x89PNG-one")
	shot2 = []byte("\xff\xd8-two")
	shot3 = []byte("\x89PNG-three")
)

// withToolImages is a turn whose tool results hold images: one result with
// text and an image, one with text only, one with two images and no text.
// It is built fresh on each call.
func withToolImages() []llm.Message {
	return []llm.Message{
		llm.UserText("take screenshots"),
		{Role: llm.RoleAssistant, Provider: "openai", Model: "gpt-5", Content: []llm.Block{
			&llm.ToolUse{ID: "c1", Name: "screenshot", Input: json.RawMessage(`{}`)},
			&llm.ToolUse{ID: "c2", Name: "ls", Input: json.RawMessage(`{}`)},
			&llm.ToolUse{ID: "c3", Name: "screenshot", Input: json.RawMessage(`{"all":true}`)},
		}},
		{Role: llm.RoleUser, Content: []llm.Block{
			&llm.ToolResult{ToolUseID: "c1", Content: []llm.Block{
				&llm.Text{Text: "captured"}, &llm.Image{MediaType: "image/png", Data: shot1}}},
			&llm.ToolResult{ToolUseID: "c2", Content: []llm.Block{&llm.Text{Text: "a.go b.go"}}},
			&llm.ToolResult{ToolUseID: "c3", IsError: true, Content: []llm.Block{
				&llm.Image{MediaType: "image/jpeg", Data: shot2}, &llm.Image{MediaType: "image/png", Data: shot3}}},
		}},
		{Role: llm.RoleAssistant, Provider: "openai", Model: "gpt-5", Content: []llm.Block{&llm.Text{Text: "I see."}}},
	}
}

func TestMoveToolResultImages(t *testing.T) { // LOOP-8: images moved into a user message right after
	in := withToolImages()
	out := llm.MoveToolResultImages(in)
	want := []llm.Message{
		in[0],
		in[1],
		{Role: llm.RoleUser, Content: []llm.Block{
			&llm.ToolResult{ToolUseID: "c1", Content: []llm.Block{
				&llm.Text{Text: "captured"}, &llm.Text{Text: "[1 image attached in the next user message]"}}},
			&llm.ToolResult{ToolUseID: "c2", Content: []llm.Block{&llm.Text{Text: "a.go b.go"}}},
			&llm.ToolResult{ToolUseID: "c3", IsError: true, Content: []llm.Block{
				&llm.Text{Text: "[2 images attached in the next user message]"}}},
		}},
		{Role: llm.RoleUser, Content: []llm.Block{
			&llm.Text{Text: "Images returned by the tool calls above:"},
			&llm.Image{MediaType: "image/png", Data: shot1},
			&llm.Image{MediaType: "image/jpeg", Data: shot2},
			&llm.Image{MediaType: "image/png", Data: shot3},
		}},
		in[3],
	}
	if diff := cmp.Diff(want, out); diff != "" {
		t.Errorf("MoveToolResultImages (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(withToolImages(), in); diff != "" {
		t.Errorf("the input was modified (-before +after):\n%s", diff)
	}
	// The call/result pairing is untouched: same ids, same order.
	var uses, results []string
	for _, m := range out {
		for _, u := range m.ToolUses() {
			uses = append(uses, u.ID)
		}
		for _, r := range m.ToolResults() {
			results = append(results, r.ToolUseID)
		}
	}
	if diff := cmp.Diff(uses, results); diff != "" {
		t.Errorf("tool ids of calls vs results (-calls +results):\n%s", diff)
	}
	// No image is left inside any tool result.
	for _, r := range out[2].ToolResults() {
		for _, b := range r.Content {
			if _, ok := b.(*llm.Image); ok {
				t.Errorf("result %s still holds an image", r.ToolUseID)
			}
		}
	}
}

func TestMoveToolResultImagesPerMessage(t *testing.T) {
	// Two tool-result messages each get their own image message after them.
	img := func(b string) *llm.Image { return &llm.Image{MediaType: "image/png", Data: []byte(b)} }
	result := func(id string, blocks ...llm.Block) llm.Message {
		return llm.Message{Role: llm.RoleUser, Content: []llm.Block{&llm.ToolResult{ToolUseID: id, Content: blocks}}}
	}
	in := []llm.Message{result("a", img("A")), result("b", img("B"))}
	out := llm.MoveToolResultImages(in)
	var roles []string
	for _, m := range out {
		roles = append(roles, string(m.Role)+":"+m.TextOf())
	}
	want := []string{"user:", "user:Images returned by the tool calls above:", "user:", "user:Images returned by the tool calls above:"}
	if diff := cmp.Diff(want, roles); diff != "" {
		t.Errorf("messages (-want +got):\n%s", diff)
	}
	if got := out[1].Content[1].(*llm.Image).Data; string(got) != "A" {
		t.Errorf("first image message holds %q, want A", got)
	}
	if got := out[3].Content[1].(*llm.Image).Data; string(got) != "B" {
		t.Errorf("second image message holds %q, want B", got)
	}
}

func TestMoveToolResultImagesNothingToMove(t *testing.T) {
	in := []llm.Message{
		{Role: llm.RoleUser, Content: []llm.Block{&llm.Image{MediaType: "image/png", Data: shot1}, &llm.Text{Text: "what is this"}}},
		{Role: llm.RoleUser, Content: []llm.Block{&llm.ToolResult{ToolUseID: "x", Content: []llm.Block{&llm.Text{Text: "ok"}}}}},
	}
	if out := llm.MoveToolResultImages(in); len(out) != len(in) || &out[0] != &in[0] {
		t.Error("a history with no tool-result image was copied, want the same slice (user images stay)")
	}
}

func TestReplaceImages(t *testing.T) { // LOOP-8: no vision → images become a note
	const note = "[image omitted: the model cannot see images]"
	in := withToolImages()
	in[0].Content = append(in[0].Content, &llm.Image{MediaType: "image/webp", URL: "https://example.com/x.webp"})
	before := withToolImages()
	before[0].Content = append(before[0].Content, &llm.Image{MediaType: "image/webp", URL: "https://example.com/x.webp"})

	out := llm.ReplaceImages(in)
	want := []llm.Message{
		{Role: llm.RoleUser, Content: []llm.Block{&llm.Text{Text: "take screenshots"}, &llm.Text{Text: note}}},
		in[1],
		{Role: llm.RoleUser, Content: []llm.Block{
			&llm.ToolResult{ToolUseID: "c1", Content: []llm.Block{&llm.Text{Text: "captured"}, &llm.Text{Text: note}}},
			&llm.ToolResult{ToolUseID: "c2", Content: []llm.Block{&llm.Text{Text: "a.go b.go"}}},
			&llm.ToolResult{ToolUseID: "c3", IsError: true, Content: []llm.Block{&llm.Text{Text: note}, &llm.Text{Text: note}}},
		}},
		in[3],
	}
	if diff := cmp.Diff(want, out); diff != "" {
		t.Errorf("ReplaceImages (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(before, in); diff != "" {
		t.Errorf("the input was modified (-before +after):\n%s", diff)
	}

	plain := []llm.Message{llm.UserText("hi")}
	if out := llm.ReplaceImages(plain); &out[0] != &plain[0] {
		t.Error("a history with no image was copied, want the same slice")
	}
}

// LOOP-8: images are known by their magic bytes.
func TestSniffImage(t *testing.T) {
	tests := []struct{ data, want string }{
		{"\x89PNG\r\n\x1a\nxxxx", "image/png"},
		{"\xff\xd8\xff\xe0", "image/jpeg"},
		{"GIF87a..", "image/gif"},
		{"RIFF\x00\x00\x00\x00WEBPVP8 ", "image/webp"},
		{"RIFF\x00\x00\x00\x00WAVE", ""},
		{"hello", ""},
	}
	for _, tt := range tests {
		if got := llm.SniffImage([]byte(tt.data)); got != tt.want {
			t.Errorf("%q: %q, want %q", tt.data, got, tt.want)
		}
	}
}
