package shellparse

import (
	"strings"
)

// Rough splits text that does not parse, or that [Parse] refused, into
// commands, so that a deny rule or the blocklist still has something to
// look at. It reads more than bash would run, never less on purpose: it
// splits on every command separator (; & | && || newline ( ) $( `) even
// inside quotes, ignores comments, reads backslash-newline both as a
// continuation and as a line break (bash ends a comment there),
// removes quotes and backslashes inside words (`r"m"` is rm), drops
// leading reserved words and redirections (`then rm`, `{ rm`, `>x rm`),
// takes leading NAME=value words as assignments, and reads the text of
// every quoted string as a script too (the `sh -c '…'` case; those
// commands have Depth 1). Every word is taken as static. Each command is
// listed once.
//
// Rough is bounded like [Parse]: it reads the first 4×[MaxSize] bytes of
// src, in time linear in them, and lists at most [MaxCommands] commands.
// What lies beyond is not read: such a command is refused by Parse, and
// must never be allowed.
func Rough(src string) []Command {
	if len(src) > 4*MaxSize {
		src = src[:4*MaxSize]
	}
	r := rougher{seen: map[string]bool{}}
	for _, text := range []string{strings.ReplaceAll(src, "\\\n", ""), src} {
		r.split(text, 0)
		for _, q := range quotedTexts(text) {
			r.split(q, 1)
		}
	}
	return r.out
}

type rougher struct {
	out  []Command
	seen map[string]bool
}

// split adds the commands of text, cut at every separator.
func (r *rougher) split(text string, depth int) {
	start := 0
	for i := 0; i <= len(text) && len(r.out) < MaxCommands; i++ {
		if i < len(text) && !strings.ContainsRune(";&|\n()`", rune(text[i])) {
			continue
		}
		r.add(text[start:i], depth)
		start = i + 1
	}
}

// add adds the command of one part, if it has words and is new.
func (r *rougher) add(part string, depth int) {
	var ws []string
	for _, f := range strings.Fields(part) {
		if f = unquoteRough(f); f != "" {
			ws = append(ws, f)
		}
	}
	for len(ws) > 0 {
		if reserved[ws[0]] {
			ws = ws[1:]
			continue
		}
		op := strings.TrimLeft(ws[0], "0123456789&")
		if op == "" || op[0] != '<' && op[0] != '>' {
			break
		}
		ws = ws[1:] // a redirection: >out, 2>err, <<EOF
		if strings.Trim(op, "<>&|-") == "" && len(ws) > 0 {
			ws = ws[1:] // an operator alone: its target follows
		}
	}
	var c Command
	for len(ws) > 0 && IsAssignment(ws[0]) {
		name, value, _ := strings.Cut(ws[0], "=")
		c.Assigns = append(c.Assigns, Assign{Name: name, Value: Lit(value)})
		ws = ws[1:]
	}
	if len(ws) == 0 {
		return
	}
	for _, w := range ws {
		c.Words = append(c.Words, Lit(w))
	}
	c.Depth = depth
	key := string(rune('0'+depth)) + strings.Join(ws, "\x00")
	if r.seen[key] || len(r.out) >= MaxCommands {
		return
	}
	r.seen[key] = true
	r.out = append(r.out, c)
}

// reserved are the words that start a compound command or go before one.
var reserved = map[string]bool{"!": true, "{": true, "}": true, "if": true, "then": true, "else": true, "elif": true,
	"fi": true, "do": true, "done": true, "while": true, "until": true, "case": true, "esac": true, "for": true,
	"select": true, "in": true, "function": true, "time": true, "coproc": true, "[[": true, "]]": true}

// unquoteRough removes quotes and backslashes from a word, and the $ of
// $'…' and $"…".
func unquoteRough(f string) string {
	if !strings.ContainsAny(f, `'"\`) {
		return f
	}
	var b strings.Builder
	for i := 0; i < len(f); i++ {
		c := f[i]
		switch {
		case c == '\'' || c == '"' || c == '\\':
		case c == '$' && i+1 < len(f) && (f[i+1] == '\'' || f[i+1] == '"'):
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// quotedTexts returns the texts of the quoted strings of src; an
// unterminated one runs to the end.
func quotedTexts(src string) []string {
	var out []string
	for i := 0; i < len(src); i++ {
		switch src[i] {
		case '\\':
			i++
		case '\'':
			j := strings.IndexByte(src[i+1:], '\'')
			if j < 0 {
				j = len(src) - i - 1
			}
			out = append(out, src[i+1:i+1+j])
			i += j + 1
		case '"':
			j := i + 1
			for j < len(src) && src[j] != '"' {
				if src[j] == '\\' {
					j++
				}
				j++
			}
			j = min(j, len(src))
			out = append(out, src[i+1:j])
			i = j
		}
	}
	return out
}
