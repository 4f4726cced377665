package memory

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// unwrapLines joins the lines of text that a line break cuts mid-sentence
// — a letter, digit or comma before it, a lower-case letter after it — by
// a space, as Markdown renders them and as the model reads them: rules
// that stop at a line end ("[^.;\n]") see the sentence whole (issue 22's
// second probes). Other line breaks stay. It returns text itself when
// nothing is joined.
func unwrapLines(text string) string {
	if !strings.Contains(text, "\n") {
		return text
	}
	var b strings.Builder
	start := 0
	for i := 0; i < len(text); i++ {
		if text[i] != '\n' || !softBreak(text, i) {
			continue
		}
		if b.Len() == 0 {
			b.Grow(len(text))
		}
		b.WriteString(text[start:i])
		b.WriteByte(' ')
		start = i + 1
	}
	if start == 0 {
		return text
	}
	b.WriteString(text[start:])
	return b.String()
}

// softBreak reports whether the line break at text[i] cuts a sentence.
func softBreak(text string, i int) bool {
	before, _ := utf8.DecodeLastRuneInString(strings.TrimRight(text[:i], " \t\r"))
	rest := strings.TrimLeft(text[i+1:], " \t")
	after, _ := utf8.DecodeRuneInString(rest)
	if before == utf8.RuneError || after == utf8.RuneError {
		return false
	}
	return (unicode.IsLetter(before) || unicode.IsDigit(before) || before == ',') && unicode.IsLower(after)
}
