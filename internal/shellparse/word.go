package shellparse

import (
	"os"
	"path/filepath"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// Word is one shell word as far as it can be known without running anything.
type Word struct {
	// Text is the word with quotes and escapes removed and every expansion
	// kept as written: `"$HOME"/x` gives `$HOME/x`, `~/y` stays `~/y`.
	Text string
	// Value is what the command receives when Static: Text with a leading
	// ~ or ~/ expanded to the home directory. For a word that is not static
	// it holds the literal parts only.
	Value string
	// Static reports a word whose value is known before the script runs: no
	// parameter, command substitution, arithmetic, glob, brace expansion or
	// ~user.
	Static bool
}

// Lit returns the static word s.
func Lit(s string) Word { return Word{Text: s, Value: s, Static: true} }

// wordOf evaluates a syntax word statically.
func wordOf(w *syntax.Word) Word { return wordIn(w, "") }

// wordIn evaluates a syntax word parsed from src statically. The texts of
// expansions are cut from src; without it they are printed from the tree.
func wordIn(w *syntax.Word, src string) Word {
	word, _ := wordCost(w, src)
	return word
}

// wordCost is wordIn, also returning the bytes it copied. A word that is
// one literal or one expansion costs nothing: its text is a piece of src.
// Others are built piece by piece, and a word holding nested expansions
// copies their text: a parser limits the total (see parser.word).
func wordCost(w *syntax.Word, src string) (Word, int) {
	if w == nil {
		return Word{Static: true}, 0
	}
	if len(w.Parts) == 1 {
		switch p := w.Parts[0].(type) {
		case *syntax.Lit:
			if plain(p.Value) {
				return Lit(p.Value), 0 // the common case, without copying
			}
		case *syntax.DblQuoted:
			if len(p.Parts) == 1 && src != "" {
				if _, ok := p.Parts[0].(*syntax.Lit); !ok {
					return Word{Text: source(p.Parts[0], src)}, 0 // "$(…)"
				}
			}
		case *syntax.SglQuoted:
		default:
			if src != "" {
				return Word{Text: source(p, src)}, 0 // $x, $(…)
			}
		}
	}
	var text, val strings.Builder
	static := true
	for i, p := range w.Parts {
		switch p := p.(type) {
		case *syntax.Lit:
			v := p.Value
			text.WriteString(unescape(v, false))
			if i == 0 && (v == "~" || strings.HasPrefix(v, "~/")) {
				if h := expandHome(v); h != v {
					v = h
				} else {
					static = false
				}
			} else if i == 0 && strings.HasPrefix(v, "~") {
				static = false // ~user
			}
			if hasGlob(p.Value) {
				static = false
			}
			val.WriteString(unescape(v, false))
		case *syntax.SglQuoted:
			if p.Dollar && strings.Contains(p.Value, `\`) {
				static = false // $'…' escapes are not decoded here
			}
			text.WriteString(p.Value)
			val.WriteString(p.Value)
		case *syntax.DblQuoted:
			for _, q := range p.Parts {
				if l, ok := q.(*syntax.Lit); ok {
					v := unescape(l.Value, true)
					text.WriteString(v)
					val.WriteString(v)
				} else {
					static = false
					text.WriteString(source(q, src))
				}
			}
		default:
			static = false
			text.WriteString(source(p, src))
		}
	}
	return Word{Text: text.String(), Value: val.String(), Static: static}, text.Len() + val.Len()
}

// plain reports a literal without escapes, pattern characters or a
// leading ~: its value is its text.
func plain(v string) bool {
	return !strings.ContainsAny(v, `\*?[{~`)
}

// hasGlob reports pattern characters (* ? and a [ with its ]) and brace
// expansion in an unquoted literal.
func hasGlob(v string) bool {
	if i := strings.IndexByte(v, '['); i >= 0 && strings.IndexByte(v[i+1:], ']') >= 0 {
		return true
	}
	return strings.ContainsAny(v, "*?") || (strings.Contains(v, "{") && (strings.Contains(v, ",") || strings.Contains(v, "..")))
}

// source returns the text of n as written in src, or as printed when src
// is not the text n was parsed from. Cutting the text costs nothing, where
// printing costs the size of n: nested expansions would make it quadratic.
func source(n syntax.Node, src string) string {
	if src != "" {
		from, to := n.Pos().Offset(), n.End().Offset()
		if n.Pos().IsValid() && n.End().IsValid() && from <= to && to <= uint(len(src)) {
			return src[from:to]
		}
	}
	return printed(n)
}

// printed renders a syntax node as the shell would print it.
func printed(n syntax.Node) string {
	var b strings.Builder
	if err := syntax.NewPrinter().Print(&b, n); err != nil {
		return ""
	}
	return b.String()
}

// unescape removes backslash escapes: all of them outside quotes, only those
// before $ ` " \ and newline inside double quotes.
func unescape(s string, dquoted bool) string {
	if dquoted {
		return unescapeIn(s, "$`\"\\\n")
	}
	return unescapeIn(s, "")
}

// unescapeIn removes the backslashes before the characters of special, or
// before any character when special is "". A backslash-newline goes
// altogether.
func unescapeIn(s, special string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' || i+1 >= len(s) {
			b.WriteByte(c)
			continue
		}
		n := s[i+1]
		if special != "" && strings.IndexByte(special, n) < 0 {
			b.WriteByte(c)
			continue
		}
		i++
		if n != '\n' {
			b.WriteByte(n)
		}
	}
	return b.String()
}

// expandHome replaces a leading ~ with the user's home directory.
func expandHome(p string) string {
	if p != "~" && !strings.HasPrefix(p, "~/") {
		return p
	}
	home, err := os.UserHomeDir()
	if err != nil || home == "" {
		return p
	}
	return filepath.Join(home, p[1:])
}

// IsAssignment reports whether s reads NAME=value.
func IsAssignment(s string) bool {
	name, _, ok := strings.Cut(s, "=")
	return ok && isName(name)
}

// isName reports a valid shell variable name.
func isName(s string) bool {
	if s == "" {
		return false
	}
	for i, c := range s {
		if c != '_' && !(c >= 'a' && c <= 'z') && !(c >= 'A' && c <= 'Z') && !(i > 0 && c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// isDigits reports a non-empty run of decimal digits.
func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// String returns the word's Text.
func (w Word) String() string { return w.Text }

// WordOf evaluates a word of a syntax tree the way [Parse] does.
func WordOf(w *syntax.Word) Word { return wordOf(w) }
