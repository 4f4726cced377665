package kb

import (
	"bytes"
	"strings"
	"unicode/utf8"
)

// Line is one line of a document, numbered from 1.
type Line struct {
	N    int    `json:"n"`
	Text string `json:"text"`
}

// Snippet limits.
const (
	// maxSnippetLines caps the lines of a hit's snippet.
	maxSnippetLines = 12
	// maxSnippetLine caps a snippet line, in bytes.
	maxSnippetLine = 240
)

// annotate sets a hit's Matched (the query terms its heading and text
// hold, in query order) and Snippet: the lines holding them, each with
// the line after it for context (the first lines when none does), at
// most maxSnippetLines.
func annotate(r *Result, q query) {
	want := make(map[string]bool, len(q.terms))
	for _, t := range q.terms {
		want[t] = true
	}
	found := map[string]bool{}
	for _, t := range Terms(r.Heading) {
		if want[t] {
			found[t] = true
		}
	}
	lines := strings.Split(r.Text, "\n")
	keep := make([]bool, len(lines))
	hits := 0
	var fold []byte
	for i, line := range lines {
		matched := false
		var may bool
		if fold, may = mayHold(fold, line, q.terms); !may {
			continue
		}
		for _, t := range Terms(line) {
			if want[t] {
				found[t], matched = true, true
			}
		}
		if matched && hits < maxSnippetLines {
			hits++
			keep[i] = true
			if i+1 < len(lines) && strings.TrimSpace(lines[i+1]) != "" {
				keep[i+1] = true
			}
		}
	}
	if hits == 0 {
		for i := range min(len(keep), 6) {
			keep[i] = true
		}
	}
	r.Snippet = r.Snippet[:0]
	for i, k := range keep {
		if k && len(r.Snippet) < maxSnippetLines {
			r.Snippet = append(r.Snippet, Line{N: r.Start + i, Text: clip(strings.TrimRight(lines[i], " \t\r"), maxSnippetLine)})
		}
	}
	r.Matched = r.Matched[:0]
	for _, t := range q.terms {
		if found[t] {
			r.Matched = append(r.Matched, t)
		}
	}
}

// mayHold reports whether Terms(line) may hold one of terms: false only
// when line is ASCII and none of the ASCII terms is a substring of it
// lowercased without underscores (every term of an ASCII line is), so
// that annotate analyses only the lines that can match. fold is scratch,
// returned for reuse.
func mayHold(fold []byte, line string, terms []string) ([]byte, bool) {
	fold = fold[:0]
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case c >= utf8.RuneSelf:
			return fold, true
		case c == '_':
			continue
		case 'A' <= c && c <= 'Z':
			c += 'a' - 'A'
		}
		fold = append(fold, c)
	}
	for _, t := range terms {
		if bytes.Contains(fold, []byte(t)) {
			return fold, true
		}
	}
	return fold, false
}
