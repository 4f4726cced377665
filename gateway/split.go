package gateway

import (
	"strings"
	"unicode/utf8"
)

// Split cuts text into parts of at most limit runes each, at the last
// paragraph break that fits, else the last line break, else the last
// space, else mid-word; whitespace at the cuts is dropped. Empty text is
// no parts. A limit below 1 is taken as 1.
func Split(text string, limit int) []string {
	limit = max(limit, 1)
	text = strings.TrimSpace(text)
	var parts []string
	for text != "" {
		if utf8.RuneCountInString(text) <= limit {
			parts = append(parts, text)
			break
		}
		cut := byteIndexOfRune(text, limit) // text[:cut] holds limit runes
		head := text[:cut]
		at := -1
		for _, sep := range []string{"\n\n", "\n", " "} {
			if i := strings.LastIndex(head, sep); i > 0 {
				at = i
				break
			}
		}
		if at <= 0 {
			at = cut
		}
		parts = append(parts, strings.TrimRight(text[:at], " \n\t"))
		text = strings.TrimLeft(text[at:], " \n\t")
	}
	return parts
}

// byteIndexOfRune is the byte offset of the n-th rune of s (len(s) when s
// is shorter).
func byteIndexOfRune(s string, n int) int {
	i := 0
	for k := range s {
		if i == n {
			return k
		}
		i++
	}
	return len(s)
}

// clip cuts s to at most limit runes, marking the cut with "…".
func clip(s string, limit int) string {
	if utf8.RuneCountInString(s) <= limit {
		return s
	}
	return s[:byteIndexOfRune(s, max(limit-1, 0))] + "…"
}
