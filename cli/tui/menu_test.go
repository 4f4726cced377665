package tui

import (
	"slices"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
)

var keyTab = press(tea.KeyTab, 0)

// skillBackend is a fakeBackend with skills.
type skillBackend struct {
	fakeBackend
	skills []MenuEntry
}

// Skills implements SkillLister.
func (s *skillBackend) Skills() []MenuEntry { return s.skills }

// CLI-6: typing / opens the menu of commands with their descriptions; the
// text filters it fuzzily; the arrows choose; Enter runs the chosen one.
func TestSlashMenuFilterChooseRun_CLI6(t *testing.T) {
	b := &fakeBackend{cmdOut: map[string]string{"permission-mode": "Permission mode: plan."}}
	h := newHarness(t, b)
	h.typeText("/")
	h.viewHas("/help", "list the commands and keys", "/compact", "summarize the conversation", "↑↓ choose · tab complete · enter run")
	h.typeText("pm")
	v := h.view()
	if !strings.Contains(v, "› /permission-mode") {
		t.Fatalf("/pm does not put /permission-mode first:\n%s", v)
	}
	if strings.Contains(v, "/compact") {
		t.Errorf("/pm still lists /compact:\n%s", v)
	}
	h.send(keyEnter)
	h.idle()
	if got := b.commands; !slices.Equal(got, []string{"permission-mode"}) {
		t.Errorf("backend commands = %q, want [permission-mode]", got)
	}
	h.printedHas("> /permission-mode", "Permission mode: plan.")
	if strings.Contains(h.view(), "↑↓ choose") {
		t.Errorf("the menu is still open after the command ran:\n%s", h.view())
	}
}

// CLI-6: Down moves the choice, Tab completes the name (with a space when
// the command takes arguments) and closes the menu; Esc closes it without
// touching the text, and it stays closed until the word changes.
func TestSlashMenuTabEscArrows_CLI6(t *testing.T) {
	b := &fakeBackend{}
	h := newHarness(t, b)
	h.typeText("/m")
	first := h.m.popup.items[0].label
	h.send(keyDown)
	second := h.m.popup.items[h.m.popup.sel].label
	if first == second || !strings.Contains(h.view(), "› "+second) {
		t.Fatalf("Down did not move the choice from %s:\n%s", first, h.view())
	}
	h.send(keyUp)
	h.send(keyTab)
	if got := h.m.input.Value(); got != first+" " && got != first {
		t.Errorf("Tab made %q, want %q", got, first+" ")
	}
	h.m.input.SetValue("")
	h.typeText("/co")
	h.send(keyEsc)
	if h.m.popup.open() || h.m.input.Value() != "/co" {
		t.Errorf("Esc: open %v, input %q", h.m.popup.open(), h.m.input.Value())
	}
	h.typeText("s")
	if !h.m.popup.open() || h.m.popup.items[0].label != "/cost" {
		t.Errorf("the menu did not reopen on /cos: %+v", h.m.popup.items)
	}
	// Nothing matches: Enter sends the line, which gets the unknown-command hint.
	h.m.input.SetValue("")
	h.typeText("/zzzq")
	if h.m.popup.open() {
		t.Errorf("the menu is open with no match:\n%s", h.view())
	}
	h.send(keyEnter)
	h.printedHas("Unknown command /zzzq.")
}

// skillCustomBackend has skills and custom commands.
type skillCustomBackend struct {
	skillBackend
	custom []CustomCommand
}

// CustomCommands implements CustomCommander.
func (s *skillCustomBackend) CustomCommands() []CustomCommand { return s.custom }

// CLI-6: the menu lists the backend's skills and its custom commands
// (CustomCommander), marked so; choosing a skill asks the model to use it;
// a custom command is sent as "/NAME ARGS" for the backend to expand; a
// custom command cannot shadow a built-in.
func TestSlashMenuSkillsAndCustom_CLI6(t *testing.T) {
	b := &skillCustomBackend{
		skillBackend: skillBackend{skills: []MenuEntry{{Name: "pdf-forms", Description: "fill PDF forms", Kind: KindSkill}}},
		custom: []CustomCommand{
			{Name: "review", ArgumentHint: "[file]", Description: "review a change"},
			{Name: "help", Description: "a custom help that must not win"},
			{Name: "bad name!", Description: "not a command name"},
		},
	}
	h := newHarness(t, b)
	h.typeText("/")
	var labels []string
	for _, it := range h.m.popup.items {
		labels = append(labels, it.label+" "+it.desc)
	}
	all := strings.Join(labels, "\n")
	if strings.Count(all, "/help ") != 1 || strings.Contains(all, "must not win") || strings.Contains(all, "bad name") {
		t.Errorf("a custom command shadowed a built-in or a bad name is listed:\n%s", all)
	}
	h.typeText("rev")
	h.viewHas("› /review [file]", "(custom) review a change")
	h.m.input.SetValue("")
	h.typeText("/pdf")
	h.viewHas("› /pdf-forms", "(skill) fill PDF forms")
	h.send(keyEnter)
	h.idle()
	h.submit("/review main.go")
	h.idle()
	got := b.gotPrompts()
	if len(got) != 2 || !strings.Contains(got[0], "pdf-forms skill") || got[1] != "/review main.go" {
		t.Errorf("prompts = %q", got)
	}
}
