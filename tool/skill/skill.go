// Package skill gives the model the workspace's skills (SPEC SKILL-1,
// SKILL-2): an index of names and descriptions for the system prompt, and
// the `skill` tool that loads one skill's body, or one of its files, into the
// conversation only when the model asks for it.
//
// A [Skill] is what the runner makes of a SKILL.md (Agent Skills format, as
// Claude Code reads it): its body is read lazily and its ${env:X},
// ${config:X} and ${runtime:X} references are replaced in one pass by
// [Expand]. A body refers to the skill's other files by paths relative to
// its directory (scripts/fill.py, reference.md); the tool names that
// directory and lists the files, and reads them itself, never outside the
// directory, symlinks included.
package skill

import (
	"cmp"
	"slices"
	"strings"
	"unicode/utf8"
)

// ToolName is the name of the tool [NewTool] returns.
const ToolName = "skill"

// Skill is what the tools need of a skill (the runner converts workspace
// definitions into these).
type Skill struct {
	// Name identifies the skill; the model passes it to the skill tool.
	Name string
	// Description says what the skill does and when to use it; it is all
	// the model sees of a skill until it loads one.
	Description string
	// AllowedTools are the tools the skill says it uses (allowed-tools in
	// its frontmatter); the tool reports them, it grants nothing.
	AllowedTools []string
	// Dir is the skill's directory, where its SKILL.md and other files are.
	Dir string
	// Body returns the skill's instructions (SKILL.md without its
	// frontmatter); it is called each time the skill is loaded. Nil is an
	// empty body.
	Body func() (string, error)
}

// maxIndexDescription bounds a description in the index, in runes: the
// Agent Skills format allows 1,024 characters.
const maxIndexDescription = 1024

// Index returns the text added to the system prompt: a short heading that
// tells the model to load a skill with the skill tool, then one line per
// skill with only its name and description (white space collapsed, at most
// 1,024 characters), sorted by name. The same skills give the same bytes
// whatever their order; no skills give "".
func Index(skills []Skill) string {
	if len(skills) == 0 {
		return ""
	}
	type line struct{ name, desc string }
	lines := make([]line, len(skills))
	size := 0
	for i, s := range skills {
		lines[i] = line{oneLine(s.Name, 200), oneLine(s.Description, maxIndexDescription)}
		size += len(lines[i].name) + len(lines[i].desc) + 5
	}
	slices.SortFunc(lines, func(a, b line) int {
		return cmp.Or(strings.Compare(a.name, b.name), strings.Compare(a.desc, b.desc))
	})
	const head = "# Skills\n" +
		"Before a task that matches a skill's description, call the " + ToolName + " tool with its name " +
		"and follow the instructions it returns.\n"
	var b strings.Builder
	b.Grow(len(head) + size)
	b.WriteString(head)
	for _, l := range lines {
		b.WriteString("- ")
		b.WriteString(l.name)
		if l.desc != "" {
			b.WriteString(": ")
			b.WriteString(l.desc)
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// oneLine collapses runs of white space (line breaks included) into single
// spaces, replaces invalid UTF-8 and cuts the text to max runes, marking a cut with "…".
func oneLine(s string, max int) string {
	s = strings.Join(strings.Fields(strings.ToValidUTF8(s, "\uFFFD")), " ")
	if utf8.RuneCountInString(s) <= max {
		return s
	}
	n := 0
	for i := range s {
		if n == max-1 {
			return strings.TrimRight(s[:i], " ") + "…"
		}
		n++
	}
	return s
}
