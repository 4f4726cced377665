package tui

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

// This file renders markdown for the terminal: goldmark's parser (CommonMark,
// plus the GFM tables and task lists of markdown_table.go) and a renderer of
// its own that writes lines with SGR codes. It stands in for a full renderer
// such as glamour, whose dependencies (syntax highlighting, an HTML
// sanitizer) cost tens of milliseconds of package initialisation at every
// start of rein. Nothing here runs before the first render: the parser is
// built then.
//
// The output has a margin of two columns and is wrapped to the width given.
// Without colours (markdown.plain) it is the same text, lines and columns as
// with them, minus the SGR codes: the structure is drawn with characters
// (heading marks, bullets, a bar along code blocks and quotes, table rules).

// mdMargin is the left margin of rendered markdown.
const mdMargin = "  "

// markdown renders markdown for the terminal. The zero value renders with
// colours; plain renders without any SGR code. The parser is built on first
// use, the styles when the background (dark) changes.
type markdown struct {
	plain bool

	p     parser.Parser
	theme *mdTheme
}

// render returns src rendered for a terminal width columns wide, on a dark
// or light background: no blank lines around it, no spaces at the end of its
// lines, none of them wider than width (unless width is tiny).
func (md *markdown) render(src string, width int, dark bool) string {
	if md.p == nil {
		md.p = newMarkdownParser()
	}
	if md.theme == nil || md.theme.dark != dark || md.theme.plain != md.plain {
		md.theme = newMDTheme(dark, md.plain)
	}
	src = sanitize(src)
	source := []byte(src)
	doc := md.p.Parse(text.NewReader(source))
	r := mdRenderer{src: source, th: md.theme}
	contentW := max(10, width-2-len(mdMargin))
	lines := r.blocks(doc, contentW)
	if r.overflow {
		for i, l := range lines {
			if ansi.StringWidth(l) > contentW {
				lines[i] = ansi.Truncate(l, contentW, "…")
			}
		}
	}
	for len(lines) > 0 && lines[0] == "" {
		lines = lines[1:]
	}
	for len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	n := 0
	for _, l := range lines {
		n += len(l) + len(mdMargin) + 1
	}
	var b strings.Builder
	b.Grow(n)
	for i, l := range lines {
		if i > 0 {
			b.WriteByte('\n')
		}
		if l != "" {
			b.WriteString(mdMargin)
			b.WriteString(l)
		}
	}
	return b.String()
}

// sanitize returns src with CR LF and CR as LF, and the control characters
// other than tabs and newlines (escape sequences a model may write), the
// bidirectional text controls (which reorder what the user reads) and
// invalid UTF-8 as U+FFFD.
func sanitize(src string) string {
	clean := true
	for _, c := range src {
		if isControl(c) || c == utf8.RuneError {
			clean = false
			break
		}
	}
	if clean {
		return src
	}
	src = strings.ReplaceAll(strings.ReplaceAll(src, "\r\n", "\n"), "\r", "\n")
	return strings.Map(func(c rune) rune {
		if isControl(c) {
			return utf8.RuneError
		}
		return c
	}, strings.ToValidUTF8(src, string(utf8.RuneError)))
}

// isControl reports whether c is a control character sanitize replaces:
// C0 but tab and newline, DEL, C1, and the bidirectional embeddings,
// overrides and isolates.
func isControl(c rune) bool {
	return c < ' ' && c != '\t' && c != '\n' || c >= 0x7f && c < 0xa0 ||
		c >= 0x202a && c <= 0x202e || c >= 0x2066 && c <= 0x2069
}

// newMarkdownParser returns a CommonMark parser with GFM tables and task
// list items.
func newMarkdownParser() parser.Parser {
	return parser.NewParser(
		parser.WithBlockParsers(parser.DefaultBlockParsers()...),
		parser.WithInlineParsers(append(parser.DefaultInlineParsers(), util.Prioritized(taskParser{}, 0))...),
		parser.WithParagraphTransformers(append(parser.DefaultParagraphTransformers(), util.Prioritized(tableTransformer{}, 200))...),
	)
}

// mdStyle is a set of text styles, one bit each; the SGR code of a set is
// made once (mdTheme.sgr). Where two styles set the same colour, the higher
// bit wins.
type mdStyle uint16

// The text styles of markdown.
const (
	stBold mdStyle = 1 << iota
	stItalic
	stH1
	stH2
	stH3 // and the headings below
	stLink
	stMark  // list bullets and numbers, task boxes
	stDone  // a checked task box
	stFrame // code block and quote bars, table and horizontal rules
	stURL   // a link's address, a code block's language
	stCodeBlock
	stCode
	mdStyleCount = iota
)

// mdTheme holds the styles of markdown on one background and the SGR codes
// of the style sets used so far.
type mdTheme struct {
	dark, plain bool
	styles      [mdStyleCount]lipgloss.Style
	sgrs        map[mdStyle]string
}

// newMDTheme returns the markdown styles for a dark or light background;
// plain ones have no SGR codes at all.
func newMDTheme(dark, plain bool) *mdTheme {
	ld := lipgloss.LightDark(dark)
	c := func(light, dark string) lipgloss.Style {
		return lipgloss.NewStyle().Foreground(ld(lipgloss.Color(light), lipgloss.Color(dark)))
	}
	t := &mdTheme{dark: dark, plain: plain, sgrs: map[mdStyle]string{}}
	t.styles = [mdStyleCount]lipgloss.Style{
		lipgloss.NewStyle().Bold(true),
		lipgloss.NewStyle().Italic(true),
		c("25", "75").Bold(true),
		c("26", "39").Bold(true),
		c("31", "110").Bold(true),
		c("30", "35").Underline(true),
		c("244", "244"),
		c("28", "42"),
		c("250", "240"),
		c("244", "245"),
		c("237", "252"),
		c("160", "203").Background(ld(lipgloss.Color("254"), lipgloss.Color("236"))),
	}
	return t
}

// sgr returns the SGR code that turns the styles of st on; empty when plain.
func (t *mdTheme) sgr(st mdStyle) string {
	if t.plain || st == 0 {
		return ""
	}
	if s, ok := t.sgrs[st]; ok {
		return s
	}
	merged := lipgloss.NewStyle()
	for i := range t.styles {
		if st&(1<<i) != 0 {
			merged = t.styles[i].Inherit(merged)
		}
	}
	var a ansi.Style
	if merged.GetBold() {
		a = a.Bold()
	}
	if merged.GetFaint() {
		a = a.Faint()
	}
	if merged.GetItalic() {
		a = a.Italic(true)
	}
	if merged.GetUnderline() {
		a = a.Underline(true)
	}
	if merged.GetStrikethrough() {
		a = a.Strikethrough(true)
	}
	if fg := merged.GetForeground(); !isNoColor(fg) {
		a = a.ForegroundColor(fg)
	}
	if bg := merged.GetBackground(); !isNoColor(bg) {
		a = a.BackgroundColor(bg)
	}
	s := a.String()
	t.sgrs[st] = s
	return s
}

// isNoColor reports whether c is lipgloss's "no colour set".
func isNoColor(c any) bool {
	_, none := c.(lipgloss.NoColor)
	return c == nil || none
}

// paint returns s in the styles of st, reset after it.
func (t *mdTheme) paint(st mdStyle, s string) string {
	if t.plain || st == 0 || s == "" {
		return s
	}
	return t.sgr(st) + s + ansi.ResetStyle
}

// mdRenderer renders one parsed document.
type mdRenderer struct {
	src      []byte
	th       *mdTheme
	depth    int  // of nested lists
	inTable  bool // rendering a table's cells
	overflow bool // nesting left no room: lines may be too wide
}

// fit returns w, a width left for nested blocks, or 1 when there is no
// room left (the lines are cut to the width in the end).
func (r *mdRenderer) fit(w int) int {
	if w < 1 {
		r.overflow = true
		return 1
	}
	return w
}

// blocks renders the block children of parent, a blank line between two;
// a tight list item's text and what follows it are not apart.
func (r *mdRenderer) blocks(parent ast.Node, width int) []string {
	var out []string
	var prev ast.Node
	for c := parent.FirstChild(); c != nil; c = c.NextSibling() {
		lines := r.block(c, width)
		if len(lines) == 0 {
			continue
		}
		if prev != nil && prev.Kind() != ast.KindTextBlock {
			out = append(out, "")
		}
		out = append(out, lines...)
		prev = c
	}
	return out
}

// block renders one block node.
func (r *mdRenderer) block(n ast.Node, width int) []string {
	switch n := n.(type) {
	case *ast.Paragraph, *ast.TextBlock:
		return r.wrap(r.inlines(n, 0, nil), width)
	case *ast.Heading:
		return r.heading(n, width)
	case *ast.List:
		return r.list(n, width)
	case *ast.Blockquote:
		return prefixLines(r.blocks(n, r.fit(width-2)), r.th.paint(stFrame, "│")+" ", r.th.paint(stFrame, "│")+" ")
	case *ast.FencedCodeBlock:
		return r.codeBlock(n, string(n.Language(r.src)), width)
	case *ast.CodeBlock:
		return r.codeBlock(n, "", width)
	case *ast.ThematicBreak:
		return []string{r.th.paint(stFrame, strings.Repeat("─", width))}
	case *ast.HTMLBlock:
		var lines []string
		for i := 0; i < n.Lines().Len(); i++ {
			lines = append(lines, hardWrap(expandTabs(segmentLine(r.src, n.Lines().At(i))), width)...)
		}
		if n.HasClosure() {
			lines = append(lines, hardWrap(expandTabs(segmentLine(r.src, n.ClosureLine)), width)...)
		}
		return lines
	case *mdTable:
		return r.table(n, width)
	}
	return r.blocks(n, width)
}

// heading renders a heading: its level marks (##) and its text, in the
// colour of its level.
func (r *mdRenderer) heading(n *ast.Heading, width int) []string {
	st := stH3
	switch n.Level {
	case 1:
		st = stH1
	case 2:
		st = stH2
	}
	marks := strings.Repeat("#", n.Level)
	lines := r.wrap(r.inlines(n, st, nil), r.fit(width-len(marks)-1))
	if len(lines) == 0 {
		return []string{r.th.paint(st, marks)}
	}
	return prefixLines(lines, r.th.paint(st, marks)+" ", strings.Repeat(" ", len(marks)+1))
}

// bullets are the marks of unordered list items, by depth.
var bullets = [...]string{"•", "◦", "▪"}

// list renders a list: bullets (by depth) or numbers, task boxes, the items'
// blocks indented under their text, a blank line between the items of a
// loose list.
func (r *mdRenderer) list(l *ast.List, width int) []string {
	r.depth++
	defer func() { r.depth-- }()
	numW := 0
	if l.IsOrdered() {
		numW = len(strconv.Itoa(l.Start + l.ChildCount() - 1))
	}
	var out []string
	i := 0
	for item := l.FirstChild(); item != nil; item = item.NextSibling() {
		var mark string
		switch {
		case l.IsOrdered():
			num := strconv.Itoa(l.Start + i)
			mark = strings.Repeat(" ", numW-len(num)) + num + string(l.Marker)
		default:
			mark = bullets[(r.depth-1)%len(bullets)]
		}
		st := stMark
		if box := taskOf(item); box != nil && !l.IsOrdered() {
			box.asMark = true
			mark = "[ ]"
			if box.checked {
				mark, st = "[✓]", stDone
			}
		}
		w := ansi.StringWidth(mark) + 1
		lines := r.blocks(item, r.fit(width-w))
		if len(lines) == 0 {
			lines = []string{""}
		}
		if !l.IsTight && i > 0 {
			out = append(out, "")
		}
		out = append(out, prefixLines(lines, r.th.paint(st, mark)+" ", strings.Repeat(" ", w))...)
		i++
	}
	return out
}

// codeBlock renders a code block: a bar down its left side, its language on
// top, its lines (tabs expanded) broken where wider than width.
func (r *mdRenderer) codeBlock(n ast.Node, lang string, width int) []string {
	top := "╭─"
	if lang != "" {
		top = r.th.paint(stFrame, top) + " " + r.th.paint(stURL, ansi.Truncate(lang, r.fit(width-3), "…"))
	} else {
		top = r.th.paint(stFrame, top)
	}
	out := []string{top}
	bar := r.th.paint(stFrame, "│")
	lines := n.Lines()
	for i := 0; i < lines.Len(); i++ {
		for _, l := range hardWrap(expandTabs(segmentLine(r.src, lines.At(i))), r.fit(width-2)) {
			if l == "" {
				out = append(out, bar)
				continue
			}
			out = append(out, bar+" "+r.th.paint(stCodeBlock, l))
		}
	}
	return append(out, r.th.paint(stFrame, "╰─"))
}

// prefixLines puts first before the first line and rest before the others;
// empty lines get the prefix without its trailing spaces.
func prefixLines(lines []string, first, rest string) []string {
	for i, l := range lines {
		p := rest
		if i == 0 {
			p = first
		}
		if l == "" {
			lines[i] = strings.TrimRight(p, " ")
			continue
		}
		lines[i] = p + l
	}
	return lines
}

// segmentLine is the text of one line of a block, without its newline and
// trailing spaces.
func segmentLine(src []byte, seg text.Segment) string {
	return strings.TrimRight(string(seg.Value(src)), " \t\r\n")
}

// expandTabs replaces the tabs of s by spaces, to tab stops 4 apart.
func expandTabs(s string) string {
	if !strings.Contains(s, "\t") {
		return s
	}
	var b strings.Builder
	col := 0
	for _, c := range s {
		if c == '\t' {
			n := 4 - col%4
			b.WriteString(strings.Repeat(" ", n))
			col += n
			continue
		}
		b.WriteRune(c)
		col += runeWidth(c)
	}
	return b.String()
}

// hardWrap breaks s, plain text, into lines at most width columns wide
// (without the spaces at the end of the broken ones).
func hardWrap(s string, width int) []string {
	width = max(1, width)
	if textWidth(s) <= width {
		return []string{s}
	}
	var lines []string
	start, w := 0, 0
	for i, c := range s {
		cw := runeWidth(c)
		if w+cw > width && w > 0 {
			lines = append(lines, strings.TrimRight(s[start:i], " "))
			start, w = i, 0
		}
		w += cw
	}
	return append(lines, s[start:])
}

// textWidth is the width of plain text on the terminal.
func textWidth(s string) int {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf || s[i] < ' ' {
			return ansi.StringWidth(s)
		}
	}
	return len(s)
}

// runeWidth is the width of one rune on the terminal.
func runeWidth(c rune) int {
	if c >= ' ' && c < utf8.RuneSelf {
		return 1
	}
	return ansi.StringWidth(string(c))
}

// piece is a run of inline text in one style, or a hard line break.
type piece struct {
	text string
	st   mdStyle
	brk  bool
}

// inlines appends the inline children of n to ps, in style st and theirs.
func (r *mdRenderer) inlines(n ast.Node, st mdStyle, ps []piece) []piece {
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		switch c := c.(type) {
		case *ast.Text:
			ps = append(ps, piece{text: r.text(c.Segment.Value(r.src), c.IsRaw()), st: st})
			switch {
			case c.HardLineBreak():
				ps = append(ps, piece{brk: true})
			case c.SoftLineBreak():
				ps = append(ps, piece{text: " ", st: st})
			}
		case *ast.String:
			ps = append(ps, piece{text: r.text(c.Value, c.IsRaw()), st: st})
		case *ast.CodeSpan:
			ps = append(ps, piece{text: r.codeSpan(c), st: st | stCode})
		case *ast.Emphasis:
			em := stItalic
			if c.Level >= 2 {
				em = stBold
			}
			ps = r.inlines(c, st|em, ps)
		case *ast.Link:
			ps = r.link(c, string(c.Destination), st, ps)
		case *ast.Image:
			ps = append(ps, piece{text: "image:", st: st | stURL}, piece{text: " ", st: st})
			ps = r.link(c, string(c.Destination), st, ps)
		case *ast.AutoLink:
			ps = append(ps, piece{text: string(c.Label(r.src)), st: st | stLink})
		case *ast.RawHTML:
			for i := 0; i < c.Segments.Len(); i++ {
				seg := c.Segments.At(i)
				ps = append(ps, piece{text: string(seg.Value(r.src)), st: st})
			}
		case *taskBox:
			if !c.asMark {
				box := "[ ]"
				if c.checked {
					box = "[✓]"
				}
				ps = append(ps, piece{text: box, st: st | stMark}, piece{text: " ", st: st})
			}
		default:
			ps = r.inlines(c, st, ps)
		}
	}
	return ps
}

// link appends a link's text and, unless the text says it, its address.
func (r *mdRenderer) link(n ast.Node, dest string, st mdStyle, ps []piece) []piece {
	start := len(ps)
	ps = r.inlines(n, st|stLink, ps)
	if dest == "" {
		return ps
	}
	var label strings.Builder
	for _, p := range ps[start:] {
		label.WriteString(p.text)
	}
	if l := label.String(); l == dest || "mailto:"+l == dest {
		return ps
	}
	if start == len(ps) {
		return append(ps, piece{text: dest, st: st | stLink})
	}
	return append(ps, piece{text: " ", st: st}, piece{text: "(" + dest + ")", st: st | stURL})
}

// codeSpan is the text of a code span on one line.
func (r *mdRenderer) codeSpan(n *ast.CodeSpan) string {
	var b strings.Builder
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		if t, ok := c.(*ast.Text); ok {
			b.Write(t.Segment.Value(r.src))
		}
	}
	s := strings.ReplaceAll(b.String(), "\n", " ")
	if r.inTable {
		s = strings.ReplaceAll(s, `\|`, "|")
	}
	return s
}

// text is inline text as shown: backslash escapes and entities resolved
// unless raw.
func (r *mdRenderer) text(v []byte, raw bool) string {
	if !raw {
		for _, c := range v {
			if c == '\\' || c == '&' {
				v = util.ResolveEntityNames(util.ResolveNumericReferences(util.UnescapePunctuations(v)))
				break
			}
		}
	}
	return string(v)
}

// wrap lays pieces out in lines at most width columns wide, breaking at
// spaces (words wider than a line are broken anywhere).
func (r *mdRenderer) wrap(ps []piece, width int) []string {
	w := wrapper{th: r.th, width: max(1, width)}
	for _, p := range ps {
		if p.brk {
			w.flushWord()
			w.newline()
			continue
		}
		s := p.text
		for s != "" {
			i := strings.IndexAny(s, " \t\n")
			if i < 0 {
				w.addWord(s, p.st)
				break
			}
			if i > 0 {
				w.addWord(s[:i], p.st)
			}
			w.flushWord()
			w.space(p.st)
			s = s[i+1:]
		}
	}
	w.flushWord()
	if w.b.Len() > 0 {
		w.newline()
	}
	return w.lines
}

// wrapper is the state of wrap: the line being filled and the word being
// read.
type wrapper struct {
	th    *mdTheme
	width int
	lines []string

	b     strings.Builder // the line
	lineW int
	cur   mdStyle // the style in effect at the end of b

	spaced  bool // spaces go before the next word
	spaces  int
	spaceSt mdStyle

	word  []piece
	wordW int
}

// addWord adds s, text without spaces, to the word being read.
func (w *wrapper) addWord(s string, st mdStyle) {
	w.word = append(w.word, piece{text: s, st: st})
	w.wordW += textWidth(s)
}

// space records a space before the next word; the spaces of a code span
// are kept, others collapse into one.
func (w *wrapper) space(st mdStyle) {
	switch {
	case !w.spaced:
		w.spaced, w.spaceSt, w.spaces = true, st, 1
	case st&stCode != 0 && w.spaceSt&stCode != 0:
		w.spaces++
	}
}

// flushWord puts the word read on the line, or on a new one when it does
// not fit.
func (w *wrapper) flushWord() {
	if len(w.word) == 0 {
		return
	}
	sp := 0
	if w.spaced && w.lineW > 0 {
		sp = w.spaces
	}
	if w.lineW > 0 && w.lineW+sp+w.wordW > w.width {
		w.newline()
		sp = 0
	}
	if sp > 0 {
		w.emit(strings.Repeat(" ", sp), w.spaceSt)
		w.lineW += sp
	}
	if w.lineW+w.wordW <= w.width {
		for _, p := range w.word {
			w.emit(p.text, p.st)
		}
		w.lineW += w.wordW
	} else {
		for _, p := range w.word {
			for _, c := range p.text {
				cw := runeWidth(c)
				if w.lineW+cw > w.width && w.lineW > 0 {
					w.newline()
				}
				w.emit(string(c), p.st)
				w.lineW += cw
			}
		}
	}
	w.word, w.wordW, w.spaced = w.word[:0], 0, false
}

// emit writes s in style st on the line.
func (w *wrapper) emit(s string, st mdStyle) {
	if st != w.cur && !w.th.plain {
		if w.cur != 0 {
			w.b.WriteString(ansi.ResetStyle)
		}
		w.b.WriteString(w.th.sgr(st))
		w.cur = st
	}
	w.b.WriteString(s)
}

// newline ends the line.
func (w *wrapper) newline() {
	if w.cur != 0 {
		w.b.WriteString(ansi.ResetStyle)
	}
	w.lines = append(w.lines, w.b.String())
	w.b.Reset()
	w.lineW, w.cur, w.spaced = 0, 0, false
}
