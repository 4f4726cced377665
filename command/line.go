package command

import (
	"regexp"
	"strings"
	"sync"
)

// lineRE matches a slash command line: /NAME, then arguments. A name is
// letters, digits, - and _, in parts joined by ":" (frontend:test).
var lineRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^/([A-Za-z0-9_][A-Za-z0-9_-]*(?::[A-Za-z0-9_][A-Za-z0-9_-]*)*)(?:\s+([\s\S]*))?$`)
})

// Split splits a line "/NAME ARGS" into the name and the arguments
// (trimmed); ok is false for a line that is not a command ("/etc/hosts is
// wrong", a plain prompt, a line beginning with a blank: the way to send
// text that begins with a slash).
func Split(line string) (name, args string, ok bool) {
	sm := lineRE().FindStringSubmatch(strings.TrimRight(line, " \t\r\n"))
	if sm == nil {
		return "", "", false
	}
	return sm[1], strings.TrimSpace(sm[2]), true
}

// Arguments splits an argument string shell-style: blanks separate words,
// single quotes keep everything literally, double quotes keep blanks and
// take \" \\ \$ \` as escapes, a backslash outside quotes escapes the
// next character. Nothing is expanded: $HOME stays $HOME. A string whose
// quotes are not closed is split at blanks, as Claude Code does.
func Arguments(s string) []string {
	if out, ok := splitQuoted(s); ok {
		return out
	}
	return strings.Fields(s)
}

// splitQuoted is [Arguments] of a string whose quotes are closed; ok is
// false otherwise.
func splitQuoted(s string) (out []string, ok bool) {
	var b strings.Builder
	word := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			if word {
				out = append(out, b.String())
				b.Reset()
				word = false
			}
		case c == '\'':
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				return nil, false
			}
			b.WriteString(s[i+1 : i+1+j])
			i += j + 1
			word = true
		case c == '"':
			i++
			for ; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' && i+1 < len(s) && strings.IndexByte("\"\\$`", s[i+1]) >= 0 {
					i++
				}
				b.WriteByte(s[i])
			}
			if i >= len(s) {
				return nil, false
			}
			word = true
		case c == '\\' && i+1 < len(s):
			i++
			b.WriteByte(s[i])
			word = true
		default:
			b.WriteByte(c)
			word = true
		}
	}
	if word {
		out = append(out, b.String())
	}
	return out, true
}

// quote returns s as one shell word.
func quote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./=:,+@%") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
