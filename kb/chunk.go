package kb

import (
	"path"
	"strings"
	"unicode/utf8"
)

// ChunkOptions tunes Split; the zero value is the defaults.
type ChunkOptions struct {
	// Lines is the target length of a chunk in lines; 0 means 60. A chunk
	// ends near it, where the text breaks best, and never beyond 1.5×.
	Lines int
	// Chars is the target length of a chunk in bytes; 0 means 3,000.
	Chars int
	// Overlap is how many lines a chunk repeats of the one before when the
	// cut falls inside a passage; 0 means 10, negative none. A cut at a
	// clean boundary (a heading, the end of a declaration) repeats none.
	Overlap int
	// MaxLine caps a line's length in bytes (longer ones are cut, so one
	// minified line cannot make a huge chunk); 0 means 2,000.
	MaxLine int
}

func (o ChunkOptions) withDefaults() ChunkOptions {
	if o.Lines <= 0 {
		o.Lines = 60
	}
	if o.Chars <= 0 {
		o.Chars = 3000
	}
	if o.Overlap == 0 {
		o.Overlap = 10
	}
	if o.Overlap < 0 || o.Overlap >= o.Lines {
		o.Overlap = max(0, min(o.Overlap, o.Lines/2))
	}
	if o.MaxLine <= 0 {
		o.MaxLine = 2000
	}
	return o
}

// minSection is the fewest lines a Markdown chunk cut at a heading has.
const minSection = 3

// maxHeading caps a chunk's Heading in bytes.
const maxHeading = 200

// Split cuts a document's text into chunks of whole lines: every line is
// in a chunk, in order (chunks overlap a little where a cut falls inside a
// passage). Markdown (by path's extension) is cut at headings, and fenced
// code blocks are kept whole when they fit in twice the target; other text
// and code is cut preferably at blank lines and around top-level
// declarations ("func ", "type ", "def ", a "}" in column 0, …). A chunk's
// Heading is the nearest Markdown heading above its start, or the code
// declaration its start is in (else the first one starting in it). A chunk's Text is its lines joined by "\n",
// each without a trailing "\r" and cut to MaxLine bytes.
func Split(docPath, text string, opts ChunkOptions) []Chunk {
	opts = opts.withDefaults()
	d := newLayout(text, isMarkdown(docPath), opts.MaxLine)
	n := len(d.lines)
	var out []Chunk
	for s := 0; s < n; {
		e, clean := d.cut(s, opts)
		out = append(out, Chunk{
			Doc:     docPath,
			Start:   s + 1,
			End:     e + 1,
			Heading: d.heading(s, e),
			Text:    d.text(s, e),
		})
		if e == n-1 {
			break
		}
		next := e + 1
		if !clean {
			next = max(s+1, e+1-opts.Overlap)
		}
		s = next
	}
	return out
}

func isMarkdown(p string) bool {
	switch strings.ToLower(path.Ext(p)) {
	case ".md", ".markdown", ".mdx", ".mdown", ".mkd":
		return true
	}
	return false
}

// line kinds
const (
	kindBlank   uint8 = 1 << iota
	kindHeading       // a Markdown heading outside a fence
	kindDecl          // a top-level declaration of code, in column 0
	kindClose         // a closing bracket in column 0 ending a declaration
	kindCol0          // a non-blank line starting in column 0
)

// layout is a document cut into lines, with what Split needs to know of
// each.
type layout struct {
	src   string
	lines []string
	// offs[i] is where line i starts in src; altered[i] counts the lines
	// before i whose text differs from src's (a "\r" dropped, cut).
	offs    []int
	altered []int32
	// cum[i] is the length of lines[:i] counting a newline each.
	cum   []int
	kinds []uint8
	level []uint8 // a heading's level
	// fence[i] is the last line of the fenced block line i is in (-1 when
	// none); fenceStart its first.
	fence, fenceStart []int32
	// head[i] is the line whose text is line i's heading, -1 when none.
	head     []int32
	markdown bool
}

func newLayout(src string, markdown bool, maxLine int) *layout {
	d := &layout{src: src, markdown: markdown}
	if src == "" {
		return d
	}
	n := strings.Count(src, "\n") + 1
	if strings.HasSuffix(src, "\n") {
		n--
	}
	d.lines = make([]string, 0, n)
	d.offs = make([]int, 0, n)
	d.altered = make([]int32, 1, n+1)
	d.cum = make([]int, 1, n+1)
	for off := 0; off < len(src); {
		end := strings.IndexByte(src[off:], '\n')
		if end < 0 {
			end = len(src)
		} else {
			end += off
		}
		line, changed := src[off:end], false
		if strings.HasSuffix(line, "\r") {
			line, changed = line[:len(line)-1], true
		}
		if len(line) > maxLine {
			cut := maxLine
			for cut > 0 && !utf8.RuneStart(line[cut]) {
				cut--
			}
			line, changed = line[:cut], true
		}
		d.lines = append(d.lines, line)
		d.offs = append(d.offs, off)
		a := d.altered[len(d.altered)-1]
		if changed {
			a++
		}
		d.altered = append(d.altered, a)
		d.cum = append(d.cum, d.cum[len(d.cum)-1]+len(line)+1)
		off = end + 1
	}
	d.classify()
	return d
}

// text returns lines s..e joined by newlines: a slice of the source when
// none of them was altered.
func (d *layout) text(s, e int) string {
	if d.altered[e+1] == d.altered[s] {
		return d.src[d.offs[s] : d.offs[e]+len(d.lines[e])]
	}
	return strings.Join(d.lines[s:e+1], "\n")
}

// chars is the length of lines s..e in bytes.
func (d *layout) chars(s, e int) int { return d.cum[e+1] - d.cum[s] }

// heading returns the heading of a chunk of lines s..e: the Markdown
// heading above s, or the declaration of code s is in, else the first
// declaration starting in the chunk.
func (d *layout) heading(s, e int) string {
	h := int(d.head[s])
	for i := s; h < 0 && !d.markdown && i <= e; i++ {
		if d.kinds[i]&kindDecl != 0 {
			h = i
		}
	}
	if h < 0 {
		return ""
	}
	line := strings.TrimSpace(d.lines[h])
	if d.markdown {
		line = strings.TrimSpace(strings.TrimLeft(line, "#"))
	} else {
		line = strings.TrimSpace(strings.TrimSuffix(line, "{"))
	}
	if len(line) > maxHeading {
		cut := maxHeading
		for cut > 0 && !utf8.RuneStart(line[cut]) {
			cut--
		}
		line = line[:cut]
	}
	return line
}

// classify fills kinds, level, fence and head.
func (d *layout) classify() {
	n := len(d.lines)
	d.kinds = make([]uint8, n)
	d.level = make([]uint8, n)
	d.fence = make([]int32, n)
	d.fenceStart = make([]int32, n)
	d.head = make([]int32, n)
	for i := range d.fence {
		d.fence[i], d.fenceStart[i] = -1, -1
	}
	if d.markdown {
		d.classifyMarkdown()
		return
	}
	d.classifyCode()
}

func (d *layout) classifyMarkdown() {
	head := int32(-1)
	for i := 0; i < len(d.lines); i++ {
		line := d.lines[i]
		if strings.TrimSpace(line) == "" {
			d.kinds[i] |= kindBlank
		}
		if ch, width, ok := fenceOpen(line); ok {
			end := len(d.lines) - 1
			for j := i + 1; j < len(d.lines); j++ {
				if fenceCloses(d.lines[j], ch, width) {
					end = j
					break
				}
			}
			for j := i; j <= end; j++ {
				d.fence[j], d.fenceStart[j] = int32(end), int32(i)
				d.head[j] = head
			}
			i = end
			continue
		}
		if lv := headingLevel(line); lv > 0 {
			d.kinds[i] |= kindHeading
			d.level[i] = uint8(lv)
			head = int32(i)
		}
		d.head[i] = head
	}
}

// fenceOpen reports a Markdown code fence: up to 3 spaces, then 3 or more
// backticks or tildes.
func fenceOpen(line string) (byte, int, bool) {
	t := strings.TrimLeft(line, " ")
	if len(line)-len(t) > 3 || len(t) < 3 || (t[0] != '`' && t[0] != '~') {
		return 0, 0, false
	}
	n := 0
	for n < len(t) && t[n] == t[0] {
		n++
	}
	if n < 3 || (t[0] == '`' && strings.ContainsRune(t[n:], '`')) {
		return 0, 0, false
	}
	return t[0], n, true
}

// fenceCloses reports a line closing a fence of width ch characters.
func fenceCloses(line string, ch byte, width int) bool {
	t := strings.TrimLeft(line, " ")
	if len(line)-len(t) > 3 {
		return false
	}
	n := 0
	for n < len(t) && t[n] == ch {
		n++
	}
	return n >= width && strings.TrimSpace(t[n:]) == ""
}

// headingLevel returns the level of an ATX heading ("## Title"), 0 when
// the line is none.
func headingLevel(line string) int {
	t := strings.TrimLeft(line, " ")
	if len(line)-len(t) > 3 {
		return 0
	}
	n := 0
	for n < len(t) && t[n] == '#' {
		n++
	}
	if n == 0 || n > 6 || (n < len(t) && t[n] != ' ' && t[n] != '\t') {
		return 0
	}
	return n
}

// declPrefixes start a top-level declaration in the languages a knowledge
// base mostly holds.
var declPrefixes = []string{
	"func ", "type ", "var ", "const ", "import ", "package ", // Go
	"def ", "class ", "async def ", "@", // Python
	"function ", "export ", "interface ", "async function ", // JavaScript, TypeScript
	"fn ", "pub ", "impl ", "struct ", "enum ", "trait ", "mod ", // Rust
	"public ", "private ", "protected ", "static ", // Java, C#, C
}

func isDecl(line string) bool {
	for _, p := range declPrefixes {
		if strings.HasPrefix(line, p) {
			return true
		}
	}
	return false
}

func (d *layout) classifyCode() {
	head := int32(-1)
	for i, line := range d.lines {
		switch {
		case strings.TrimSpace(line) == "":
			d.kinds[i] |= kindBlank
		case line[0] == ' ' || line[0] == '\t':
		case line[0] == '}' || (line[0] == ')' && !strings.HasSuffix(line, "{") && !strings.HasSuffix(line, "(")):
			d.kinds[i] |= kindClose | kindCol0
			d.head[i] = head
			head = -1
			continue
		case isDecl(line):
			d.kinds[i] |= kindDecl | kindCol0
			head = int32(i)
		default:
			d.kinds[i] |= kindCol0
			head = -1
		}
		d.head[i] = head
	}
}

// score rates a cut after line i (the last line of a chunk): higher is a
// cleaner break; forbidden (negative) inside a fenced block that fits in
// a chunk of twice the target.
func (d *layout) score(i int, opts ChunkOptions) int {
	next := i + 1
	if f := d.fence[i]; f >= 0 && int(f) > i {
		start := int(d.fenceStart[i])
		if int(f)-start+1 <= 2*opts.Lines && d.chars(start, int(f)) <= 2*opts.Chars {
			return -1
		}
	}
	k, kn := d.kinds[i], d.kinds[next]
	switch {
	case kn&kindHeading != 0:
		if d.level[next] <= 2 {
			return 6
		}
		return 5
	case k&kindClose != 0:
		return 4
	case d.fence[i] == int32(i):
		return 3
	case k&kindBlank != 0 && kn&(kindDecl|kindCol0) != 0:
		return 3
	case k&kindBlank != 0 || kn&kindBlank != 0:
		return 2
	}
	return 0
}

// cut returns the last line of the chunk starting at line s, and whether
// the cut is clean (the next chunk needs no overlap).
func (d *layout) cut(s int, opts ChunkOptions) (int, bool) {
	n := len(d.lines)
	hardLines, hardChars := opts.Lines*3/2, opts.Chars*3/2
	if n-s <= hardLines && d.chars(s, n-1) <= hardChars {
		return n - 1, true
	}
	tgt := d.reach(s, opts.Lines, opts.Chars)
	hard := d.reach(s, hardLines, hardChars)
	ext := hard
	if f := d.fence[hard]; f >= 0 && int(f) > hard {
		if int(f)-s+1 <= 2*opts.Lines && d.chars(s, int(f)) <= 2*opts.Chars {
			ext = int(f)
		}
	}
	ext = min(ext, n-2)
	if d.markdown { // the last heading before the target starts the next chunk
		for h := min(tgt, ext) + 1; h >= s+minSection; h-- {
			if d.kinds[h]&kindHeading != 0 {
				return h - 1, true
			}
		}
	}
	lo := min(s+opts.Lines/3-1, ext)
	weight := max(opts.Lines/6, 1)
	best, bestScore, bestValue := -1, 0, 0
	for e := max(lo, s); e <= ext; e++ {
		sc := d.score(e, opts)
		if sc < 0 {
			continue
		}
		dist := e - tgt
		if dist > 0 {
			dist *= 2
		}
		v := sc*weight - max(dist, -dist)
		if best < 0 || v > bestValue {
			best, bestScore, bestValue = e, sc, v
		}
	}
	if best < 0 {
		return hard, false
	}
	return best, bestScore >= 4
}

// reach returns the last line of a run from line s of at most lines lines
// and chars bytes (at least line s).
func (d *layout) reach(s, lines, chars int) int {
	e := min(s+lines-1, len(d.lines)-1)
	for e > s && d.chars(s, e) > chars {
		e--
	}
	return e
}
