package tui

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
)

// LOOP-2, CLI-2: an image file dropped or pasted into the input box
// becomes an attachment shown as [Image #N]; the run gets the file with
// the text, and a placeholder deleted from the text drops its image.
func TestPastedImageAttaches(t *testing.T) {
	dir := t.TempDir()
	shot := filepath.Join(dir, "my shot.png")
	other := filepath.Join(dir, "b.jpg")
	for _, p := range []string{shot, other} {
		if err := os.WriteFile(p, []byte("\x89PNG\r\n\x1a\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	b := &fakeBackend{info: Info{WorkDir: dir}}
	h := newHarness(t, b)
	h.typeText("compare ")
	h.send(tea.PasteMsg{Content: strings.ReplaceAll(shot, " ", `\ `)}) // as a terminal drops it
	h.typeText(" with ")
	h.send(tea.PasteMsg{Content: "'" + other + "'"})
	if v := h.m.input.Value(); v != "compare [Image #1] with [Image #2]" {
		t.Fatalf("input %q", v)
	}
	h.viewHas("[Image #1]")
	h.send(keyEnter)
	h.idle()
	if p := b.gotPrompts(); len(p) != 1 || p[0] != "compare [Image #1] with [Image #2]" {
		t.Fatalf("prompts %q", p)
	}
	if got := b.images[0]; len(got) != 2 || got[0] != shot || got[1] != other {
		t.Fatalf("images %q", got)
	}
	// A line that lost a placeholder loses its image; one that never had
	// a paste attaches nothing, whatever it says.
	h.submit("only [Image #2] and [Image #7]")
	h.idle()
	if got := b.images[1]; len(got) != 1 || got[0] != other {
		t.Errorf("images %q, want only %s", got, other)
	}
}

// Pastes that are no image file stay text.
func TestPastedImageOnlyFiles(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a.png"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "d.png"), 0o700); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ paste, want string }{
		{"a.png", filepath.Join(dir, "a.png")},
		{"file://" + filepath.Join(dir, "a.png"), filepath.Join(dir, "a.png")},
		{"  \"" + filepath.Join(dir, "a.png") + "\"\n", filepath.Join(dir, "a.png")}, // white space around is dropped
		{"missing.png", ""},
		{"d.png", ""},
		{"notes.txt", ""},
		{"a.png\nb.png", ""},
		{"file://evil.example/" + filepath.Join(dir, "a.png"), ""},
		{"look at a.png", ""},
	} {
		if got := pastedImage(tt.paste, dir); got != tt.want {
			t.Errorf("pastedImage(%q) = %q, want %q", tt.paste, got, tt.want)
		}
	}
}

// FuzzPastedImage: no paste panics, and what is taken is a regular file
// named as an image.
func FuzzPastedImage(f *testing.F) {
	dir := f.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a.png"), []byte("x"), 0o600); err != nil {
		f.Fatal(err)
	}
	for _, s := range []string{"a.png", "'a.png'", `a\ b.png`, "file:///a.png", "~/x.gif", "\"\""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, paste string) {
		p := pastedImage(paste, dir)
		if p == "" {
			return
		}
		if fi, err := os.Stat(p); err != nil || !fi.Mode().IsRegular() || !filepath.IsAbs(p) {
			t.Fatalf("took %q from %q", p, paste)
		}
	})
}
