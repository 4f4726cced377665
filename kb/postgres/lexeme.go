package postgres

import (
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// PostgreSQL's limits on a tsvector: a lexeme's length in bytes, the
// positions it keeps per lexeme and the highest position.
const (
	maxLexeme    = 2046
	maxPositions = 256
	maxPosition  = 16383
	// maxQueryTerms bounds the distinct terms of one keyword query.
	maxQueryTerms = 128
)

// quoteLexeme writes term as a quoted lexeme of a tsvector or tsquery
// literal: inside the quotes every character is literal once a quote is
// doubled and a backslash escaped, so no term can add an operator.
func quoteLexeme(b *strings.Builder, term string) {
	b.WriteByte('\'')
	for i := 0; i < len(term); i++ {
		switch c := term[i]; c {
		case '\'':
			b.WriteString("''")
		case '\\':
			b.WriteString(`\\`)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('\'')
}

// usable reports whether a term can be a lexeme: not empty, not too long,
// text PostgreSQL can hold (UTF-8 without NUL). A term that is not can
// match nothing: a query drops it.
func usable(term string) bool {
	return term != "" && len(term) <= maxLexeme && utf8.ValidString(term) && !strings.ContainsRune(term, 0)
}

// tsvector returns the tsvector literal of a chunk's terms, in order
// (term i at position i+1; positions past PostgreSQL's last are dropped,
// as are positions past the 256th of a lexeme), how many terms there are
// (the chunk's length for ranking) and its distinct terms, sorted.
func tsvector(terms []string) (literal string, length int, distinct []string) {
	pos := map[string][]int{}
	n := 0
	for _, t := range terms {
		if !usable(t) {
			continue
		}
		n++
		if n <= maxPosition && len(pos[t]) < maxPositions {
			pos[t] = append(pos[t], n)
		} else if _, ok := pos[t]; !ok {
			pos[t] = nil // a lexeme without a position: it still matches
		}
	}
	keys := make([]string, 0, len(pos))
	for t := range pos {
		keys = append(keys, t)
	}
	slices.Sort(keys)
	var b strings.Builder
	for i, t := range keys {
		if i > 0 {
			b.WriteByte(' ')
		}
		quoteLexeme(&b, t)
		for j, p := range pos[t] {
			if j == 0 {
				b.WriteByte(':')
			} else {
				b.WriteByte(',')
			}
			b.WriteString(strconv.Itoa(p))
		}
	}
	return b.String(), n, keys
}

// queryTerms returns the distinct usable terms of a query, in their first
// order, at most maxQueryTerms of them.
func queryTerms(terms []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, t := range terms {
		if usable(t) && !seen[t] && len(out) < maxQueryTerms {
			seen[t] = true
			out = append(out, t)
		}
	}
	return out
}

// tsquery returns the literal of a query matching any of terms:
// 't1' | 't2' | …; "" for none.
func tsquery(terms []string) string {
	var b strings.Builder
	for i, t := range terms {
		if i > 0 {
			b.WriteString(" | ")
		}
		quoteLexeme(&b, t)
	}
	return b.String()
}

// lexemes returns each term as a one-lexeme tsquery literal.
func lexemes(terms []string) []string {
	out := make([]string, len(terms))
	for i, t := range terms {
		var b strings.Builder
		quoteLexeme(&b, t)
		out[i] = b.String()
	}
	return out
}
