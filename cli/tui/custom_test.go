package tui

import (
	"slices"
	"strings"
	"testing"
)

// customBackend is a fakeBackend with custom slash commands.
type customBackend struct {
	*fakeBackend
	custom []CustomCommand
}

func (c customBackend) CustomCommands() []CustomCommand { return c.custom }

// TestCustomCommands_COMPAT1: a custom command typed in the terminal UI
// is sent to the backend as the prompt "/NAME ARGS", which expands it; a
// built-in of the same name wins; a name in another case is the
// command's own; an unknown name still gets the hint.
func TestCustomCommands_COMPAT1(t *testing.T) {
	fb := &fakeBackend{cmdOut: map[string]string{"cost": "$0"}}
	b := customBackend{fakeBackend: fb, custom: []CustomCommand{
		{Name: "review-pr", ArgumentHint: "[n]", Description: "Review a PR", Source: "project"},
		{Name: "web:deploy", Description: "Deploy", Source: "user:web"},
		{Name: "Fix", Description: "Fix it", Source: "user"},
		{Name: "cost", Description: "shadowed", Source: "user"},
	}}
	h := newHarness(t, b)
	for _, line := range []string{"/review-pr 42", "/deploy now", "/web:deploy", "/Fix it"} {
		h.submit(line)
		h.idle()
	}
	h.submit("/cost")
	h.idle()
	h.submit("/fix now") // the / menu finds a custom command in any case and sends its own name
	h.idle()
	h.submit("/nosuch now")
	h.printedHas("Unknown command /nosuch.")
	if got, want := fb.gotPrompts(), []string{"/review-pr 42", "/deploy now", "/web:deploy", "/Fix it", "/Fix now"}; !slices.Equal(got, want) {
		t.Errorf("prompts %q; want %q", got, want)
	}
	if got := strings.Join(fb.commands, "|"); got != "cost" {
		t.Errorf("built-in commands run: %q; want cost", got)
	}
	names := BuiltinCommands()
	for _, n := range []string{"help", "model", "exit", "quit", "q"} {
		if !slices.Contains(names, n) {
			t.Errorf("BuiltinCommands lacks %s: %q", n, names)
		}
	}
}
