package command

import (
	"strconv"
	"strings"
)

// part is a piece of a command's body: text, or a prelude to run.
type part struct {
	text    string
	prelude bool
	// pattern is the prelude as written (!`git status`), for errors.
	pattern string
}

// parts splits a body into text and preludes: !`cmd` at the start of a
// line or after a blank, and fenced blocks opened by a line ```! and
// closed by a line ```. A prelude with nothing between its backticks,
// or a fence never closed, is text.
func parts(body string) []part {
	var out []part
	var text strings.Builder
	flush := func() {
		if text.Len() > 0 {
			out = append(out, part{text: text.String()})
			text.Reset()
		}
	}
	for i := 0; i < len(body); {
		lineStart := i == 0 || body[i-1] == '\n'
		if lineStart {
			if cmd, n, ok := fence(body[i:]); ok {
				flush()
				out = append(out, part{text: cmd, prelude: true, pattern: clip(body[i:i+n], 80)})
				i += n
				continue
			}
		}
		if body[i] == '!' && (lineStart || body[i-1] == ' ' || body[i-1] == '\t') && strings.HasPrefix(body[i+1:], "`") {
			if end := strings.IndexAny(body[i+2:], "`\n"); end > 0 && body[i+2+end] == '`' {
				flush()
				cmd := body[i+2 : i+2+end]
				out = append(out, part{text: cmd, prelude: true, pattern: clip("!`"+cmd+"`", 80)})
				i += end + 3
				continue
			}
		}
		text.WriteByte(body[i])
		i++
	}
	flush()
	return out
}

// fence reads a fenced prelude at the start of s: a line ```!, the
// commands, a line ```. n is how much of s it takes (its closing line's
// end included).
func fence(s string) (cmd string, n int, ok bool) {
	first, _, found := strings.Cut(s, "\n")
	if !found || strings.TrimRight(first, " \t\r") != "```!" {
		return "", 0, false
	}
	off := len(first) + 1
	for off <= len(s) {
		line, _, more := strings.Cut(s[off:], "\n")
		if strings.TrimRight(line, " \t\r") == "```" {
			end := off + len(line)
			if more {
				end++
			}
			return strings.TrimRight(s[len(first)+1:off], "\n"), end, strings.TrimSpace(s[len(first)+1:off]) != ""
		}
		if !more {
			break
		}
		off += len(line) + 1
	}
	return "", 0, false
}

// args are the arguments of one invocation.
type args struct {
	raw  string
	argv []string
}

// substitute replaces the argument placeholders of s (see the package
// doc) in one pass: what an argument brings is never read again. In a
// prelude (shell), an argument is written as one quoted shell word.
// used reports whether s holds any placeholder.
func (a args) substitute(s string, shell bool) (out string, used bool) {
	var b strings.Builder
	for i := 0; i < len(s); {
		if s[i] == '\\' && i+1 < len(s) && s[i+1] == '$' {
			if n, _, ok := placeholder(s[i+1:]); ok {
				b.WriteString(s[i+1 : i+1+n]) // \$1 writes $1
				i += 1 + n
				continue
			}
		}
		if s[i] != '$' {
			b.WriteByte(s[i])
			i++
			continue
		}
		n, idx, ok := placeholder(s[i:])
		if !ok {
			b.WriteByte(s[i])
			i++
			continue
		}
		used = true
		switch {
		case idx < 0:
			b.WriteString(a.all(shell))
		case idx < len(a.argv):
			b.WriteString(a.word(idx, shell))
		default:
			b.WriteString(s[i : i+n]) // not given: stays as written
		}
		i += n
	}
	return b.String(), used
}

// all is the whole argument string: as typed in text, quoted words in a
// prelude.
func (a args) all(shell bool) string {
	if !shell {
		return a.raw
	}
	q := make([]string, len(a.argv))
	for i, w := range a.argv {
		q[i] = quote(w)
	}
	return strings.Join(q, " ")
}

// word is argument i: as split in text, one quoted word in a prelude.
func (a args) word(i int, shell bool) string {
	if shell {
		return quote(a.argv[i])
	}
	return a.argv[i]
}

// maxIndex bounds the digits of a positional placeholder.
const maxIndex = 6

// placeholder reads the placeholder at the start of s (which starts with
// $): $ARGUMENTS[N], $ARGUMENTS (idx -1) or $N not followed by a letter,
// digit or _. n is its length.
func placeholder(s string) (n, idx int, ok bool) {
	const kw = "$ARGUMENTS"
	if strings.HasPrefix(s, kw) {
		if rest := s[len(kw):]; strings.HasPrefix(rest, "[") {
			if end := strings.IndexByte(rest, ']'); end > 1 && end <= maxIndex+1 && digits(rest[1:end]) {
				i, _ := strconv.Atoi(rest[1:end])
				return len(kw) + end + 1, i, true
			}
		}
		return len(kw), -1, true
	}
	j := 1
	for j < len(s) && j <= maxIndex && s[j] >= '0' && s[j] <= '9' {
		j++
	}
	if j == 1 || (j < len(s) && isWord(s[j])) {
		return 0, 0, false
	}
	i, _ := strconv.Atoi(s[1:j])
	return j, i, true
}

func digits(s string) bool {
	return s != "" && strings.Trim(s, "0123456789") == ""
}

func isWord(c byte) bool {
	return c == '_' || (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
}

// clip shortens s to n runes for a message.
func clip(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}

// Preludes returns the preludes of a command's body as written
// (!`git status`), for a report.
func Preludes(body string) []string {
	var out []string
	for _, p := range parts(body) {
		if p.prelude {
			out = append(out, p.pattern)
		}
	}
	return out
}

// OneBased reports a body that uses $1 and not $0: written when Claude
// Code counted $1 as the first argument (its 2025 documentation); rein,
// as Claude Code since v2.1.19, counts from $0, so $1 is the second.
func OneBased(body string) bool {
	used := map[int]bool{}
	for _, p := range parts(body) {
		s := p.text
		for i := 0; i < len(s); i++ {
			if s[i] != '$' || (i > 0 && s[i-1] == '\\') {
				continue
			}
			if n, idx, ok := placeholder(s[i:]); ok {
				used[idx] = true
				i += n - 1
			}
		}
	}
	return used[1] && !used[0]
}
