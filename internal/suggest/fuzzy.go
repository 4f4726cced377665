package suggest

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Fuzzy scores how well query matches s as a subsequence, case
// insensitively (the terminal UI's / menu and @ picker): ok is false when
// some rune of query is not in s in order. Higher is better: a prefix
// match, runs of consecutive runes, and matches at the start of a word or
// a path element score more; a long s scores a little less.
func Fuzzy(query, s string) (score int, ok bool) {
	if query == "" {
		return 0, true
	}
	if len(query) > len(s) {
		return 0, false
	}
	ls := strings.ToLower(s)
	lq := strings.ToLower(query)
	if strings.HasPrefix(ls, lq) {
		score += 100
	}
	if i := strings.Index(ls, lq); i >= 0 {
		score += 50
		if i == 0 || isBoundary(ls, i) {
			score += 30
		}
	}
	qi, run, prev := 0, 0, -2
	for i, r := range ls {
		if qi >= len(lq) {
			break
		}
		q, n := utf8.DecodeRuneInString(lq[qi:])
		if r != q {
			continue
		}
		qi += n
		if i == prev+utf8.RuneLen(r) || (prev >= 0 && i == prev+1) {
			run++
			score += 5 * run
		} else {
			run = 0
		}
		if i == 0 || isBoundary(ls, i) {
			score += 10
		}
		prev = i
	}
	if qi < len(lq) {
		return 0, false
	}
	return score - len(s)/8, true
}

// isBoundary reports whether the rune at byte i of s starts a word: it
// follows a separator.
func isBoundary(s string, i int) bool {
	r, _ := utf8.DecodeLastRuneInString(s[:i])
	return r == '/' || r == '-' || r == '_' || r == '.' || r == ' ' || unicode.IsSpace(r)
}
