package tui

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reinhq/rein/fileindex"
)

// excerptBackend is a fakeBackend that quotes lines from a table.
type excerptBackend struct {
	fakeBackend
	files map[string]string
}

// Excerpt implements ExcerptReader.
func (x *excerptBackend) Excerpt(_ context.Context, p string, r fileindex.Range) (string, error) {
	text, ok := x.files[p]
	if !ok {
		return "", errors.New("no such file in the workspace")
	}
	lines, _ := fileindex.Lines(text, r)
	return lines, nil
}

// pickerTree is a workspace for the picker tests.
func pickerTree(t *testing.T) *fileindex.Index {
	t.Helper()
	root := t.TempDir()
	for _, f := range []string{"cli/tui/model.go", "cli/tui/menu.go", "docs/models.md", "my notes.txt", "build/model.bin"} {
		p := filepath.Join(root, f)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("x\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return fileindex.New(fileindex.Options{Root: root, Ignore: func(rel string, isDir bool) bool { return rel == "build" }})
}

// CLI-6: @ opens the file picker (the index is built on first use), the
// word after it filters fuzzily, Tab or Enter inserts the path (quoted when
// it has spaces) and Enter does not send; ignored files are not offered; a
// directory drills down.
func TestFilePicker_CLI6(t *testing.T) {
	b := &fakeBackend{}
	h := newHarness(t, b, func(o *Options) { o.Files = pickerTree(t) })
	h.typeText("look at @")
	h.until("the index to be built", func() bool { return strings.Contains(h.view(), "cli/") })
	h.typeText("tuimod")
	h.viewHas("› cli/tui/model.go", "↑↓ choose · tab complete · enter insert")
	if strings.Contains(h.view(), "build/") {
		t.Errorf("an ignored file is offered:\n%s", h.view())
	}
	h.send(keyEnter)
	if got := h.m.input.Value(); got != "look at @cli/tui/model.go" {
		t.Fatalf("Enter made %q", got)
	}
	if len(b.gotPrompts()) != 0 || h.m.popup.open() {
		t.Fatalf("Enter in the picker sent the prompt, or the picker stayed open")
	}
	h.typeText(" and @notes")
	h.send(keyTab)
	if got := h.m.input.Value(); got != `look at @cli/tui/model.go and @"my notes.txt"` {
		t.Errorf("Tab made %q", got)
	}
	h.m.input.SetValue("")
	h.typeText("@doc")
	h.viewHas("› docs/")
	h.send(keyTab)
	if got := h.m.input.Value(); got != "@docs/" || !h.m.popup.open() {
		t.Errorf("a directory: %q, open %v", got, h.m.popup.open())
	}
	h.viewHas("› docs/models.md")
	h.send(keyEsc)
	h.typeText("zzz")
	h.m.input.SetValue("")
	h.typeText("@qqqq")
	h.viewHas("no file matches @qqqq")
}

// CLI-6: @file#20-45 puts those lines, numbered, in the prompt the model
// gets (the text as typed stays); a bad range or a file the backend
// refuses sends nothing and leaves the line to fix.
func TestFileRanges_CLI6(t *testing.T) {
	b := &excerptBackend{files: map[string]string{"a.go": "l1\nl2\nl3\nl4\n"}}
	h := newHarness(t, b)
	h.submit("explain @a.go#2-3 please")
	h.idle()
	got := b.gotPrompts()
	if len(got) != 1 || !strings.HasPrefix(got[0], "explain @a.go#2-3 please\n\n<file path=\"a.go\" lines=\"2-3\">\n     2\tl2\n     3\tl3\n</file>") {
		t.Fatalf("prompt = %q", got)
	}
	for _, bad := range []struct{ line, msg string }{
		{"see @a.go#9-2", "ends (2) before it starts (9)"},
		{"see @gone.go#1", "@gone.go#1: no such file in the workspace"},
	} {
		h.submit(bad.line)
		h.printedHas(bad.msg)
		if h.m.input.Value() != bad.line {
			t.Errorf("the line %q is not back in the input box: %q", bad.line, h.m.input.Value())
		}
		h.m.input.SetValue("")
	}
	if n := len(b.gotPrompts()); n != 1 {
		t.Errorf("a bad mention was sent: %d prompts", n)
	}
	// A backend without excerpts says so.
	h2 := newHarness(t, &fakeBackend{})
	h2.submit("@a.go#1")
	h2.printedHas("cannot read lines of files")
}
