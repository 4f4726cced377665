package kb

import (
	"unicode"
	"unicode/utf8"
)

// MaxTermLen caps a term's length in bytes: a longer token (a hash, a
// base64 blob, a minified identifier) is cut to its first MaxTermLen bytes,
// on a character boundary, in documents and queries alike.
const MaxTermLen = 64

// stopwords are dropped from documents and queries: English words too
// common to tell chunks apart. Kept small on purpose: in code, words like
// "if", "for" and "return" carry no meaning either, but "not", "new",
// "error" and the like do.
var stopwords = map[string]bool{
	"an": true, "and": true, "are": true, "as": true, "at": true, "be": true,
	"by": true, "can": true, "do": true, "does": true, "for": true, "from": true,
	"has": true, "have": true, "how": true, "in": true, "into": true, "is": true,
	"it": true, "its": true, "of": true, "on": true, "or": true, "that": true,
	"the": true, "then": true, "there": true, "these": true, "this": true,
	"to": true, "was": true, "were": true, "what": true, "when": true,
	"where": true, "which": true, "who": true, "why": true, "will": true,
	"with": true, "you": true, "your": true,
}

// maxStopword is the length of the longest stopword.
const maxStopword = 5

// Terms is rein's analyser: the terms a text is indexed under and a query
// is matched on, the same for every backend, so a keyword search means the
// same thing everywhere. It is code-aware:
//
//   - text is lowercased and split on everything but letters, digits and
//     combining marks;
//   - an identifier yields itself (underscores dropped) and, when it has
//     several parts, each part: camelCase, PascalCase, snake_case and
//     letter/digit boundaries split it ("ReadFile" → readfile read file,
//     "HTTPServer" → httpserver http server, "read_file" → readfile read
//     file, "utf8" → utf8 utf);
//   - a run of CJK characters (Han, Hiragana, Katakana, Hangul) yields its
//     overlapping bigrams, a lone CJK character itself;
//   - single letters and digits and a short list of English stopwords are
//     dropped; a term is at most MaxTermLen bytes.
//
// Terms come in text order, repeats included (a term's frequency counts).
func Terms(text string) []string {
	var a analyser
	a.run(text)
	return a.terms()
}

// terms lists the terms analysed.
func (a *analyser) terms() []string {
	if len(a.spans) == 0 {
		return nil
	}
	all := string(a.buf) // one allocation for every term's bytes
	out := make([]string, len(a.spans))
	for i, s := range a.spans {
		out[i] = all[s.lo:s.hi]
	}
	return out
}

// span is a term's place in analyser.buf.
type span struct{ lo, hi int32 }

// analyser accumulates terms' bytes in one buffer.
type analyser struct {
	buf   []byte
	spans []span
	// word is the identifier being read: its lowercased bytes and where
	// its parts end.
	word  []byte
	parts []int32
}

// run splits text into identifiers and CJK runs.
func (a *analyser) run(text string) {
	a.buf = make([]byte, 0, len(text)+len(text)/2)
	a.spans = make([]span, 0, len(text)/5)
	a.words(text)
}

// words appends the terms of text to a.buf and a.spans.
func (a *analyser) words(text string) {
	for i := 0; i < len(text); {
		c := text[i]
		if c < utf8.RuneSelf {
			if isASCIIWord(c) {
				i = a.identifier(text, i)
			} else {
				i++
			}
			continue
		}
		r, size := utf8.DecodeRuneInString(text[i:])
		switch {
		case isCJK(r):
			i = a.cjk(text, i)
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			i = a.identifier(text, i)
		default:
			i += size
		}
	}
}

func isASCIIWord(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_'
}

// isCJK reports a letter of a script written without spaces.
func isCJK(r rune) bool {
	return r >= 0x1100 && inCJKBlock(r) && unicode.IsLetter(r)
}

func inCJKBlock(r rune) bool {
	switch {
	case r <= 0x11FF, // Hangul Jamo
		0x2E80 <= r && r <= 0x2FDF,   // CJK radicals
		0x3040 <= r && r <= 0x30FF,   // Hiragana, Katakana
		0x3100 <= r && r <= 0x312F,   // Bopomofo
		0x3130 <= r && r <= 0x318F,   // Hangul compatibility Jamo
		0x31F0 <= r && r <= 0x31FF,   // Katakana extensions
		0x3400 <= r && r <= 0x4DBF,   // CJK extension A
		0x4E00 <= r && r <= 0x9FFF,   // CJK unified ideographs
		0xAC00 <= r && r <= 0xD7AF,   // Hangul syllables
		0xF900 <= r && r <= 0xFAFF,   // CJK compatibility ideographs
		0xFF66 <= r && r <= 0xFF9F,   // halfwidth Katakana
		0x20000 <= r && r <= 0x323AF: // CJK extensions B-H
		return true
	}
	return false
}

// charClass is what the identifier splitter needs to know of a character.
type charClass uint8

const (
	classNone  charClass = iota
	classLower           // lowercase letters and other letters without case
	classUpper
	classDigit
	classMark // combining marks: they stay with the letter before
)

func classify(r rune) charClass {
	if r < utf8.RuneSelf {
		switch {
		case 'a' <= r && r <= 'z':
			return classLower
		case 'A' <= r && r <= 'Z':
			return classUpper
		case '0' <= r && r <= '9':
			return classDigit
		}
		return classNone
	}
	switch {
	case isCJK(r):
		return classNone
	case unicode.IsUpper(r) || unicode.IsTitle(r):
		return classUpper
	case unicode.IsLetter(r):
		return classLower
	case unicode.IsDigit(r):
		return classDigit
	case unicode.IsMark(r):
		return classMark
	}
	return classNone
}

// identifier reads the identifier starting at text[i] (letters, digits,
// marks and underscores), emits its terms and returns where it ends.
func (a *analyser) identifier(text string, i int) int {
	a.word = a.word[:0]
	a.parts = a.parts[:0]
	prev, prev2 := classNone, classNone // classes of the last two characters of the current part
	var lastStart int32                 // where the last character starts in word
	for i < len(text) {
		r, size := rune(text[i]), 1
		if r >= utf8.RuneSelf {
			r, size = utf8.DecodeRuneInString(text[i:])
		}
		if r == '_' {
			a.cut()
			prev, prev2 = classNone, classNone
			i++
			continue
		}
		cl := classify(r)
		if cl == classNone {
			break
		}
		if cl == classMark {
			if prev == classNone { // a mark after an underscore: not a word
				i += size
				continue
			}
			a.appendLower(r)
			i += size
			continue
		}
		switch {
		case prev == classNone:
		case cl == classUpper && prev == classLower,
			cl == classDigit && prev != classDigit,
			cl != classDigit && prev == classDigit:
			a.cut()
		case cl == classLower && prev == classUpper && prev2 == classUpper:
			// "HTTPServer": the part ends before the "S".
			a.cutAt(lastStart)
		}
		lastStart = int32(len(a.word))
		a.appendLower(r)
		prev2, prev = prev, cl
		i += size
	}
	a.cut()
	a.emitWord()
	return i
}

// appendLower adds r, lowercased, to the word.
func (a *analyser) appendLower(r rune) {
	if r < utf8.RuneSelf {
		if 'A' <= r && r <= 'Z' {
			r += 'a' - 'A'
		}
		a.word = append(a.word, byte(r))
		return
	}
	a.word = utf8.AppendRune(a.word, unicode.ToLower(r))
}

// cut ends the current part at the end of the word.
func (a *analyser) cut() { a.cutAt(int32(len(a.word))) }

// cutAt ends a part at offset n of the word, when that makes one.
func (a *analyser) cutAt(n int32) {
	last := int32(0)
	if len(a.parts) > 0 {
		last = a.parts[len(a.parts)-1]
	}
	if n > last {
		a.parts = append(a.parts, n)
	}
}

// emitWord emits the whole word and, when it has several parts, each part.
func (a *analyser) emitWord() {
	if len(a.word) == 0 {
		return
	}
	a.emit(a.word)
	if len(a.parts) < 2 {
		return
	}
	lo := int32(0)
	for _, hi := range a.parts {
		a.emit(a.word[lo:hi])
		lo = hi
	}
}

// emit adds a term unless it is too short or a stopword; a long one is cut.
func (a *analyser) emit(term []byte) {
	if len(term) > MaxTermLen {
		n := MaxTermLen
		for n > 0 && !utf8.RuneStart(term[n]) {
			n--
		}
		term = term[:n]
	}
	if len(term) < 2 || utf8.RuneCount(term) < 2 || len(term) <= maxStopword && stopwords[string(term)] {
		return
	}
	lo := int32(len(a.buf))
	a.buf = append(a.buf, term...)
	a.spans = append(a.spans, span{lo, int32(len(a.buf))})
}

// cjk emits the bigrams of the CJK run starting at text[i] and returns
// where it ends.
func (a *analyser) cjk(text string, i int) int {
	first, size := utf8.DecodeRuneInString(text[i:])
	i += size
	prev, n := first, 1
	for i < len(text) {
		r, size := utf8.DecodeRuneInString(text[i:])
		if !isCJK(r) {
			break
		}
		a.emitRunes(prev, r)
		prev = r
		n++
		i += size
	}
	if n == 1 {
		a.emitRunes(first, -1)
	}
	return i
}

// emitRunes emits one CJK character, or two as a bigram (r2 ≥ 0).
func (a *analyser) emitRunes(r1, r2 rune) {
	lo := int32(len(a.buf))
	a.buf = utf8.AppendRune(a.buf, unicode.ToLower(r1))
	if r2 >= 0 {
		a.buf = utf8.AppendRune(a.buf, unicode.ToLower(r2))
	}
	a.spans = append(a.spans, span{lo, int32(len(a.buf))})
}
