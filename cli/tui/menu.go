package tui

import (
	"cmp"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/charmbracelet/x/ansi"

	"github.com/reinhq/rein/internal/suggest"
)

// MenuKind says what a / menu entry runs.
type MenuKind string

// The kinds of / menu entries.
const (
	// KindCommand is a built-in command of the session.
	KindCommand MenuKind = "command"
	// KindSkill is a skill (SPEC SKILL-1): choosing it asks the model to use it.
	KindSkill MenuKind = "skill"
	// KindCustom is a custom slash command of the user or the workspace
	// (Claude Code's .claude/commands), listed by a [CustomCommander]
	// backend, whose Submit expands the prompt "/NAME ARGS".
	KindCustom MenuKind = "custom"
)

// MenuEntry is one entry of the / menu (SPEC CLI-6).
type MenuEntry struct {
	// Name is the command's name without the slash.
	Name string
	// Args is a hint of its arguments ("[name]"), Description one line on
	// what it does.
	Args, Description string
	Kind              MenuKind
}

// SkillLister is a [Backend] that has skills: the / menu lists them.
type SkillLister interface {
	Skills() []MenuEntry
}

// commandName is what a command's name may be.
var commandName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_:-]*$`) })

// maxMenuRows is how many entries the popup shows at once.
const maxMenuRows = 8

// popup is the completion menu over the input box: the / menu of commands
// or the @ file picker. It completes the token at the end of the input.
type popup struct {
	kind  byte   // '/' or '@'; 0 when closed
	token string // the token being completed, as typed, with its sigil
	items []popupItem
	sel   int
	// dismissed is the token Esc closed the popup on; it stays closed
	// until the token changes.
	dismissed string
	// more is set when the list was cut (the @ picker's cap).
	more bool
	// note is shown in place of items (the file index is being built).
	note string
}

// popupItem is one line of the popup: label is shown, insert replaces the
// token when chosen.
type popupItem struct {
	label, hint, desc, insert string
	kind                      MenuKind
}

// open reports whether the popup shows something to choose.
func (p *popup) open() bool { return p.kind != 0 && (len(p.items) > 0 || p.note != "") }

// menuEntries are the entries of the / menu: the built-in commands, then
// the backend's skills, then the custom commands, a name listed once (the
// first wins).
func (m *model) menuEntries() []MenuEntry {
	out := builtinEntries()
	if s, ok := m.backend.(SkillLister); ok {
		out = append(out, s.Skills()...)
	}
	for _, c := range m.customCommands() {
		out = append(out, MenuEntry{Name: c.Name, Args: c.ArgumentHint, Description: c.Description, Kind: KindCustom})
	}
	seen := map[string]bool{}
	return slices.DeleteFunc(out, func(e MenuEntry) bool {
		e.Name = strings.ToLower(e.Name)
		if e.Name == "" || seen[e.Name] || !commandName().MatchString(e.Name) {
			return true
		}
		seen[e.Name] = true
		return false
	})
}

// builtinEntries are the built-in commands as menu entries.
func builtinEntries() []MenuEntry {
	out := make([]MenuEntry, 0, len(commands))
	for _, c := range commands {
		out = append(out, MenuEntry{Name: c.name, Args: c.args, Description: c.help, Kind: KindCommand})
	}
	return out
}

// menuEntry returns the / menu entry named name.
func (m *model) menuEntry(name string) (MenuEntry, bool) {
	for _, e := range m.menuEntries() {
		if strings.EqualFold(e.Name, name) {
			return e, true
		}
	}
	return MenuEntry{}, false
}

// slashItems are the / menu's entries matching query, best first; an
// empty query lists them all in their order.
func slashItems(entries []MenuEntry, query string) []popupItem {
	type scored struct {
		e     MenuEntry
		score int
		i     int
	}
	var hits []scored
	for i, e := range entries {
		s, ok := suggest.Fuzzy(query, e.Name)
		if !ok {
			continue
		}
		if strings.EqualFold(query, e.Name) {
			s += 1000 // the name typed in full comes first
		}
		hits = append(hits, scored{e, s, i})
	}
	if query != "" {
		slices.SortStableFunc(hits, func(a, b scored) int { return cmp.Compare(b.score, a.score) })
	}
	items := make([]popupItem, len(hits))
	for i, h := range hits {
		insert := "/" + h.e.Name
		if h.e.Args != "" {
			insert += " "
		}
		items[i] = popupItem{label: "/" + h.e.Name, hint: h.e.Args, desc: h.e.Description, insert: insert, kind: h.e.Kind}
	}
	return items
}

// refreshPopup opens, updates or closes the popup after the input changed:
// the / menu while the input is a lone /word, the @ picker while the last
// word starts with @.
func (m *model) refreshPopup() {
	v := m.input.Value()
	p := &m.popup
	kind, token := byte(0), ""
	switch {
	case strings.HasPrefix(v, "/") && !strings.ContainsAny(v, " \t\n"):
		kind, token = '/', v
	case m.opts.Files != nil:
		if w := lastWord(v); strings.HasPrefix(w, "@") {
			kind, token = '@', w
		}
	}
	if kind == 0 || token == p.dismissed {
		if kind == 0 {
			p.dismissed = ""
		}
		p.kind, p.items, p.note, p.more = 0, nil, "", false
		return
	}
	p.dismissed = ""
	if kind == p.kind && token == p.token && (len(p.items) > 0 || p.note != "") {
		return
	}
	prevLabel := ""
	if p.sel < len(p.items) {
		prevLabel = p.items[p.sel].label
	}
	p.kind, p.token, p.sel, p.note, p.more = kind, token, 0, "", false
	switch kind {
	case '/':
		p.items = slashItems(m.menuEntries(), token[1:])
	case '@':
		p.items, p.more, p.note = m.fileItems(token[1:])
	}
	for i, it := range p.items {
		if it.label == prevLabel {
			p.sel = i
		}
	}
}

// lastWord is the text after the last space or newline of s.
func lastWord(s string) string {
	return s[strings.LastIndexAny(s, " \t\n")+1:]
}

// popupKey handles a key while the popup is open; it reports whether the
// key was the popup's.
func (m *model) popupKey(k string) (handled bool, submit bool) {
	p := &m.popup
	if !p.open() {
		return false, false
	}
	switch k {
	case "up", "ctrl+p":
		if len(p.items) > 0 {
			p.sel = (p.sel + len(p.items) - 1) % len(p.items)
		}
		return true, false
	case "down", "ctrl+n":
		if len(p.items) > 0 {
			p.sel = (p.sel + 1) % len(p.items)
		}
		return true, false
	case "esc":
		p.dismissed = p.token
		p.kind, p.items, p.note = 0, nil, ""
		return true, false
	case "tab":
		m.completePopup()
		return true, false
	case "enter":
		if len(p.items) == 0 {
			return false, false
		}
		kind := p.kind
		m.completePopup()
		// A command runs at once; a file goes into the text.
		return true, kind == '/'
	}
	return false, false
}

// completePopup replaces the token with the chosen item.
func (m *model) completePopup() {
	p := &m.popup
	if len(p.items) == 0 {
		return
	}
	it := p.items[p.sel]
	v := m.input.Value()
	v = strings.TrimSuffix(v, p.token) + it.insert
	m.input.SetValue(v)
	m.input.CursorEnd()
	if p.kind == '@' && !strings.HasSuffix(it.insert, "/") {
		// A file is chosen: the picker stays closed on it, so #lines or
		// Enter (send) may follow.
		p.dismissed = lastWord(v)
	}
	m.refreshPopup()
}

// popupView draws the popup: one line an item, the chosen one marked.
func (m *model) popupView() string {
	p := &m.popup
	if !p.open() {
		return ""
	}
	if p.note != "" && len(p.items) == 0 {
		return m.st.dim.Render("  " + p.note)
	}
	start := 0
	if p.sel >= maxMenuRows {
		start = p.sel - maxMenuRows + 1
	}
	end := min(len(p.items), start+maxMenuRows)
	labelW := 0
	for _, it := range p.items[start:end] {
		labelW = max(labelW, ansi.StringWidth(it.label+" "+it.hint))
	}
	labelW = min(labelW, max(12, m.width/2))
	var lines []string
	for i := start; i < end; i++ {
		it := p.items[i]
		label := strings.TrimSpace(it.label + " " + it.hint)
		label = ansi.Truncate(label, labelW, "…")
		label += strings.Repeat(" ", labelW-ansi.StringWidth(label))
		desc := it.desc
		if it.kind == KindSkill || it.kind == KindCustom {
			desc = "(" + string(it.kind) + ") " + desc
		}
		line := "  " + label + "  " + desc
		line = ansi.Truncate(line, max(10, m.width-1), "…")
		if i == p.sel {
			lines = append(lines, m.st.accent.Render("›"+line[1:]))
		} else {
			lines = append(lines, m.st.dim.Render(line))
		}
	}
	verb := map[byte]string{'/': "run", '@': "insert"}[p.kind]
	hint := "↑↓ choose · tab complete · enter " + verb + " · esc close"
	if n := len(p.items) - end; n > 0 || p.more {
		hint = fmt.Sprintf("… %d more · %s", len(p.items)-end, hint)
		if p.more {
			hint = "… more: type to narrow · " + hint[strings.Index(hint, "↑"):]
		}
	}
	lines = append(lines, m.st.dim.Render(ansi.Truncate("  "+hint, max(10, m.width-1), "…")))
	return strings.Join(lines, "\n")
}
