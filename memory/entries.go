package memory

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// File is a memory file parsed: the text before its first entry, and its
// entries.
type File struct {
	// Header is what comes before the first entry (a "# Notes" heading),
	// kept as it is and never shown to the model.
	Header string
	// Entries are the list items, each without its "- " marker and with
	// its continuation lines unindented.
	Entries []string
}

// Parse reads a memory file leniently, since people edit these files by
// hand. Entries are top-level list items ("- ", "* " or "+ " at the start
// of a line); every line up to the next one belongs to the item, fenced
// code blocks included (a list marker inside a fence is text). Anything
// before the first item is the header. A file with no list items is read
// as one entry per paragraph, after its leading headings (so is one whose
// items are all empty). No text is lost:
// apart from list markers and white space, every character of text is in
// the header or an entry, and Parse(f.Render()) gives f back.
func Parse(text string) File {
	lines := strings.Split(text, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, "\r")
	}
	starts := itemStarts(lines)
	if len(starts) == 0 {
		return parseParagraphs(lines)
	}
	f := File{Header: trimBlank(strings.Join(lines[:starts[0]], "\n"))}
	for i, s := range starts {
		end := len(lines)
		if i+1 < len(starts) {
			end = starts[i+1]
		}
		item := make([]string, 0, end-s)
		item = append(item, markerless(lines[s]))
		for _, l := range lines[s+1 : end] {
			item = append(item, unindent(l))
		}
		if e := strings.TrimSpace(strings.Join(item, "\n")); e != "" {
			f.Entries = append(f.Entries, e)
		}
	}
	if len(f.Entries) == 0 {
		// Only empty items: read the text as paragraphs, so that what
		// precedes them is not a header that vanishes on the next read.
		return parseParagraphs(lines)
	}
	return f
}

// itemStarts returns the indexes of the lines that start a top-level list
// item outside a fenced code block.
func itemStarts(lines []string) []int {
	var starts []int
	var fence string
	for i, l := range lines {
		content := strings.TrimLeft(l, " \t")
		if fence == "" && isItem(l) {
			starts = append(starts, i)
			content = strings.TrimLeft(markerless(l), " \t")
		}
		fence = nextFence(fence, content)
	}
	return starts
}

// isItem reports a line that starts a top-level list item.
func isItem(l string) bool {
	if l == "" || (l[0] != '-' && l[0] != '*' && l[0] != '+') {
		return false
	}
	return len(l) == 1 || l[1] == ' ' || l[1] == '\t'
}

// markerless is an item's first line without its marker and the one space
// or tab after it.
func markerless(l string) string {
	if len(l) < 2 {
		return ""
	}
	return l[2:]
}

// unindent removes the indentation a continuation line has under its item:
// up to two spaces, or one tab.
func unindent(l string) string {
	switch {
	case strings.HasPrefix(l, "  "):
		return l[2:]
	case strings.HasPrefix(l, " "), strings.HasPrefix(l, "\t"):
		return l[1:]
	}
	return l
}

// nextFence returns the fence open after a line whose text (indentation
// removed) is content, given the fence open before it ("" for none): a run
// of three or more backticks or tildes opens one, and the same character,
// at least as many times and nothing else after it, closes it.
func nextFence(open, content string) string {
	run := fenceRun(content)
	if open == "" {
		if run == "" || (run[0] == '`' && strings.Contains(content[len(run):], "`")) {
			return ""
		}
		return run
	}
	if run != "" && run[0] == open[0] && len(run) >= len(open) && strings.TrimSpace(content[len(run):]) == "" {
		return ""
	}
	return open
}

// fenceRun returns the run of backticks or tildes content starts with, when
// it is three or more long; "" otherwise.
func fenceRun(content string) string {
	if len(content) < 3 || (content[0] != '`' && content[0] != '~') {
		return ""
	}
	n := 1
	for n < len(content) && content[n] == content[0] {
		n++
	}
	if n < 3 {
		return ""
	}
	return content[:n]
}

// parseParagraphs reads a file without list items: its leading headings
// and blank lines are the header, then each paragraph (a fenced block
// with the lines around it) is an entry.
func parseParagraphs(lines []string) File {
	i := 0
	for i < len(lines) && (strings.TrimSpace(lines[i]) == "" || strings.HasPrefix(strings.TrimLeft(lines[i], " \t"), "#")) {
		i++
	}
	f := File{Header: trimBlank(strings.Join(lines[:i], "\n"))}
	var para []string
	flush := func() {
		if e := strings.TrimSpace(strings.Join(para, "\n")); e != "" {
			f.Entries = append(f.Entries, e)
		}
		para = para[:0]
	}
	var fence string
	for _, l := range lines[i:] {
		if fence == "" && strings.TrimSpace(l) == "" {
			flush()
			continue
		}
		para = append(para, l)
		fence = nextFence(fence, strings.TrimLeft(l, " \t"))
	}
	flush()
	return f
}

// trimBlank removes the blank lines at the start of s and the white space
// at its end, keeping the indentation of its first line (an indented
// "- x" is not an item; unindented, it would be).
func trimBlank(s string) string {
	s = strings.TrimRightFunc(s, unicode.IsSpace)
	for {
		line, rest, ok := strings.Cut(s, "\n")
		if !ok || strings.TrimSpace(line) != "" {
			if strings.TrimSpace(line) == "" {
				return ""
			}
			return s
		}
		s = rest
	}
}

// Render writes the file back: the header, a blank line, then one "- "
// item per entry with its further lines indented by two spaces. An entry
// that leaves a code fence open gets it closed, unless it is the last,
// so that it cannot swallow the entries after it.
func (f File) Render() string {
	var b strings.Builder
	if f.Header != "" {
		b.WriteString(f.Header)
		b.WriteString("\n")
		if len(f.Entries) > 0 {
			b.WriteString("\n")
		}
	}
	for i, e := range f.Entries {
		writeEntry(&b, e, i < len(f.Entries)-1)
	}
	return b.String()
}

// writeEntry writes one entry as a list item; closeFence closes a fence
// the entry leaves open.
func writeEntry(b *strings.Builder, e string, closeFence bool) {
	var fence string
	for j, l := range strings.Split(e, "\n") {
		switch {
		case j == 0:
			b.WriteString("- ")
		case l != "":
			b.WriteString("  ")
		}
		b.WriteString(l)
		b.WriteString("\n")
		fence = nextFence(fence, strings.TrimLeft(l, " \t"))
	}
	if fence != "" && closeFence {
		b.WriteString("  " + fence + "\n")
	}
}

// entryChars is how many characters (runes) entries hold: what the caps
// count.
func entryChars(entries []string) int {
	n := 0
	for _, e := range entries {
		n += utf8.RuneCountInString(e)
	}
	return n
}

// closeFences appends the closing fence an entry leaves open.
func closeFences(e string) string {
	var fence string
	for _, l := range strings.Split(e, "\n") {
		fence = nextFence(fence, strings.TrimLeft(l, " \t"))
	}
	if fence != "" {
		return e + "\n" + fence
	}
	return e
}

// normalise prepares an entry to be written: line ends made "\n", white
// space trimmed at the end of each line and around the whole, runs of
// blank lines outside code reduced to one, and an open fence closed.
func normalise(text string) string {
	text = strings.ReplaceAll(text, "\r\n", "\n")
	lines := strings.Split(text, "\n")
	out := lines[:0]
	var fence string
	for _, l := range lines {
		l = strings.TrimRight(l, " \t\r")
		if fence == "" && l == "" && len(out) > 0 && out[len(out)-1] == "" {
			continue
		}
		out = append(out, l)
		fence = nextFence(fence, strings.TrimLeft(l, " \t"))
	}
	return closeFences(strings.TrimSpace(strings.Join(out, "\n")))
}

// dedupKey is the form under which two entries are the same: case and
// white space ignored.
func dedupKey(s string) string {
	return strings.ToLower(strings.Join(strings.Fields(s), " "))
}
