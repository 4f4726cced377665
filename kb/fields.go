package kb

import (
	"bytes"
	"path"
	"slices"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// Field weights of the keyword pass. A chunk is indexed under the terms of
// several fields: its document's path, the headings and declarations it
// holds (and the one it sits in), and its text. A field's terms are repeated by its weight
// (the text's once), which is how BM25F weighs fields: a term's frequency
// counts weight times in a field of weight weight. Every backend indexes
// ChunkTerms, so every backend weighs fields alike.
const (
	// pathWeight: "net/http/client.go" names what the file is about.
	pathWeight = 3
	// declWeight: the identifiers a chunk declares and the headings it
	// holds (extra to their occurrence in the text).
	declWeight = 2
	// headingWeight: the heading or declaration the chunk sits in.
	headingWeight = 1
)

// IndexVersion names how chunks are analysed into terms (Terms and
// ChunkTerms); it is part of a Document's Hash, so a change of analysis
// re-indexes every document on the next add or reindex.
const IndexVersion = "t3"

// ChunkTerms are the terms the keyword pass matches a chunk on: those of
// its fields, each repeated by its weight (see pathWeight and the rest):
// the path of its document (c.Doc, without its extension), its heading,
// the names it declares and headings it holds, and its text.
func ChunkTerms(c Chunk) []string {
	return chunkAnalysis(c).terms()
}

// JoinedChunkTerms is ChunkTerms joined by spaces, made without listing
// them: what a full-text index that splits on spaces is given.
func JoinedChunkTerms(c Chunk) string {
	a := chunkAnalysis(c)
	n := 0
	for _, s := range a.spans {
		n += int(s.hi-s.lo) + 1
	}
	b := make([]byte, 0, n)
	for i, s := range a.spans {
		if i > 0 {
			b = append(b, ' ')
		}
		b = append(b, a.buf[s.lo:s.hi]...)
	}
	return string(b)
}

// chunkAnalysis analyses each field of c once and repeats its terms by
// the field's weight, in ChunkTerms's order.
func chunkAnalysis(c Chunk) *analyser {
	var a analyser
	a.buf = make([]byte, 0, len(c.Text)+len(c.Text)/2)
	a.spans = make([]span, 0, len(c.Text)/5)
	field := func(text string, weight int) {
		from := len(a.spans)
		a.words(text)
		to := len(a.spans)
		for range weight - 1 {
			a.spans = append(a.spans, a.spans[from:to]...)
		}
	}
	field(strings.TrimSuffix(c.Doc, path.Ext(c.Doc)), pathWeight)
	field(declared(c.Doc, c.Text), declWeight)
	field(c.Heading, headingWeight)
	field(c.Text, 1)
	return &a
}

// PathTerms are the terms of a document's path without its extension:
// "net/http/client.go" → net http client.
func PathTerms(p string) []string {
	return Terms(strings.TrimSuffix(p, path.Ext(p)))
}

// declared returns the names a chunk declares (top-level declarations of
// code: "func (t *T) Name(" gives T and Name) and the headings it holds
// (Markdown "#" lines, HTML <h1>…<h6>), one a line.
func declared(doc, text string) string {
	md := isMarkdown(doc)
	var decls strings.Builder
	for line := range strings.Lines(text) {
		if line == "" || line[0] == ' ' || line[0] == '\t' {
			continue
		}
		switch {
		case md:
			if headingLevel(line) > 0 {
				decls.WriteString(line)
			}
		case strings.HasPrefix(line, "<h") && len(line) > 2 && '1' <= line[2] && line[2] <= '6':
			decls.WriteString(line)
		case isDecl(line):
			decls.WriteString(declName(line))
			decls.WriteByte('\n')
		}
	}
	return decls.String()
}

// declName returns the names a declaration line declares: the first
// identifier after its keywords and, for a Go method, the receiver's type
// ("func (t *T) Name(" → "T Name").
func declName(line string) string {
	rest := line
	for {
		kw, after, ok := strings.Cut(rest, " ")
		if !ok || !declKeyword[kw] {
			break
		}
		rest = strings.TrimLeft(after, " ")
	}
	recv := ""
	if strings.HasPrefix(rest, "(") { // a Go method's receiver
		r, after, ok := strings.Cut(rest[1:], ")")
		if !ok {
			return ""
		}
		recv, rest = lastIdent(r), strings.TrimLeft(after, " ")
	}
	return recv + " " + firstIdent(rest)
}

// declKeyword are the words before a declared name.
var declKeyword = map[string]bool{
	"func": true, "type": true, "var": true, "const": true, "def": true, "class": true,
	"async": true, "function": true, "export": true, "interface": true, "fn": true,
	"pub": true, "impl": true, "struct": true, "enum": true, "trait": true, "mod": true,
	"public": true, "private": true, "protected": true, "static": true, "default": true,
	"abstract": true, "final": true, "let": true,
}

func firstIdent(s string) string {
	n := 0
	for n < len(s) && isASCIIWord(s[n]) {
		n++
	}
	return s[:n]
}

func lastIdent(s string) string {
	n := len(s)
	for n > 0 && isASCIIWord(s[n-1]) {
		n--
	}
	return s[n:]
}

// TermFrequencies counts the terms of want (term → index into the
// result, from 0) among those ChunkTerms gives c, without listing them:
// how a backend re-scores a chunk by BM25 cheaply. Only the words of each
// field that could hold one are analysed: those whose text contains it,
// ignoring case and underscores (see termCounter).
func TermFrequencies(c Chunk, want map[string]int) []int32 {
	n := 0
	for _, i := range want {
		n = max(n, i+1)
	}
	tc := counters.Get().(*termCounter)
	defer counters.Put(tc)
	tc.want, tc.tf, tc.needles = want, make([]int32, n), tc.needles[:0]
	for t := range want {
		tc.needles = append(tc.needles, []byte(t))
	}
	tc.count(c.Text, 1)
	tc.count(strings.TrimSuffix(c.Doc, path.Ext(c.Doc)), pathWeight)
	tc.count(c.Heading, headingWeight)
	tc.count(declared(c.Doc, c.Text), declWeight)
	tf := tc.tf
	tc.want, tc.tf = nil, nil
	return tf
}

// counters keeps termCounters' buffers from one chunk to the next.
var counters = sync.Pool{New: func() any { return new(termCounter) }}

// termCounter counts wanted terms in texts by finding them first: the
// analyser's state starts afresh after every ASCII character other than a
// letter, a digit or an underscore, so a text's terms are those of its
// words (maximal runs of ASCII letters, digits, underscores and non-ASCII
// characters) analysed one by one, and a word can yield a term only if its
// lowercased text without underscores contains it. A word found so is
// analysed once, however many terms it holds.
type termCounter struct {
	want    map[string]int
	needles [][]byte
	tf      []int32
	a       analyser
	folded  []byte
	at      []int32 // at[i]: where folded[i] comes from in the text
	done    map[int]bool
}

// count adds weight for each wanted term among text's terms.
func (tc *termCounter) count(text string, weight int) {
	if text == "" {
		return
	}
	clear(tc.done)
	if isASCII(text) {
		// No folding: each term is looked for as it is, ignoring the case
		// of letters and underscores.
		for _, t := range tc.needles {
			next := [2]int{-2, -2}
			for off := 0; off < len(text); {
				i := indexFold(text, t, off, &next)
				if i < 0 {
					break
				}
				lo, hi := wordAround(text, i)
				tc.word(text, lo, hi, weight)
				off = hi + 1
			}
		}
		return
	}
	tc.folded, tc.at = foldAt(tc.folded[:0], tc.at[:0], text)
	for _, t := range tc.needles {
		for off := 0; off < len(tc.folded); {
			j := bytes.Index(tc.folded[off:], t)
			if j < 0 {
				break
			}
			lo, hi := wordAround(text, int(tc.at[off+j]))
			tc.word(text, lo, hi, weight)
			// The next occurrence to look at is past this word.
			for off += j + 1; off < len(tc.folded) && int(tc.at[off]) < hi; off++ {
			}
		}
	}
}

// word adds weight for each wanted term of the word text[lo:hi], unless
// this count has analysed it already.
func (tc *termCounter) word(text string, lo, hi, weight int) {
	if tc.done[lo] {
		return
	}
	if tc.done == nil {
		tc.done = map[int]bool{}
	}
	tc.done[lo] = true
	tc.a.buf, tc.a.spans = tc.a.buf[:0], tc.a.spans[:0]
	tc.a.words(text[lo:hi])
	for _, s := range tc.a.spans {
		if i, ok := tc.want[string(tc.a.buf[s.lo:s.hi])]; ok {
			tc.tf[i] += int32(weight)
		}
	}
}

// isASCII reports whether s is all ASCII.
func isASCII(s string) bool {
	i := 0
	for ; i+8 <= len(s); i += 8 {
		if (s[i]|s[i+1]|s[i+2]|s[i+3]|s[i+4]|s[i+5]|s[i+6]|s[i+7])&0x80 != 0 {
			return false
		}
	}
	for ; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// indexFold returns where in the ASCII text s, from off on, the lowercase
// term t first occurs ignoring the case of letters and underscores after
// its first character (where it occurs in s folded, as foldAt folds), or
// -1. next keeps, from one call to the next on the same s and t, where
// t's first letter occurs next in lower and upper case (-2: not looked
// for yet; -1: nowhere), so that each is looked for again only once
// passed.
func indexFold(s string, t []byte, off int, next *[2]int) int {
	if len(t) == 0 {
		return -1
	}
	first, other := t[0], t[0]
	if 'a' <= first && first <= 'z' {
		other = first - 'a' + 'A'
	}
	for off < len(s) {
		for k, c := range [2]byte{first, other} {
			if next[k] != -1 && next[k] < off {
				next[k] = strings.IndexByte(s[off:], c)
				if next[k] >= 0 {
					next[k] += off
				}
			}
		}
		i := next[0]
		if next[1] >= 0 && (i < 0 || next[1] < i) {
			i = next[1]
		}
		if i < 0 {
			return -1
		}
		if foldedPrefix(s[i+1:], t[1:]) {
			return i
		}
		off = i + 1
	}
	return -1
}

// foldedPrefix reports whether the ASCII text s, lowercased and without
// underscores, starts with t.
func foldedPrefix(s string, t []byte) bool {
	k := 0
	for i := 0; k < len(t); i++ {
		if i == len(s) {
			return false
		}
		c := s[i]
		if c == '_' {
			continue
		}
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != t[k] {
			return false
		}
		k++
	}
	return true
}

// wordAround returns the bounds of the word (see termCounter) holding
// text[i].
func wordAround(text string, i int) (lo, hi int) {
	lo, hi = i, i
	for lo > 0 && inWord(text[lo-1]) {
		lo--
	}
	for hi < len(text) && inWord(text[hi]) {
		hi++
	}
	return lo, hi
}

// inWord reports a byte the analyser does not always split on: an ASCII
// letter, digit or underscore, or part of a non-ASCII character.
func inWord(c byte) bool { return c >= utf8.RuneSelf || isASCIIWord(c) }

// foldAt appends s lowercased, without underscores, to b (what a word's
// terms are substrings of) and, to at, where each byte appended comes from
// in s.
func foldAt(b []byte, at []int32, s string) ([]byte, []int32) {
	b, at = slices.Grow(b, len(s)), slices.Grow(at, len(s))
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c >= utf8.RuneSelf:
			r, size := utf8.DecodeRuneInString(s[i:])
			n := len(b)
			b = utf8.AppendRune(b, unicode.ToLower(r))
			for range len(b) - n {
				at = append(at, int32(i))
			}
			i += size
			continue
		case c == '_':
		case 'A' <= c && c <= 'Z':
			b = append(b, c+'a'-'A')
			at = append(at, int32(i))
		default:
			b = append(b, c)
			at = append(at, int32(i))
		}
		i++
	}
	return b, at
}
