package skill

import "strings"

// Vars are the substitutions of SKILL-1: the values ${env:X}, ${config:X}
// and ${runtime:X} stand for. A nil func or map resolves nothing.
type Vars struct {
	// Env returns an environment variable; the caller has already
	// restricted it to the variables the user's settings allow.
	Env func(name string) (string, bool)
	// Config returns a resolved setting ("model", "permissions.mode", …).
	Config func(key string) (string, bool)
	// Runtime holds facts of the run: session_id, workspace, skill_dir,
	// skill_name, date, os, …
	Runtime map[string]string
}

// The kinds of reference [Expand] replaces.
const (
	kindEnv     = "env"
	kindConfig  = "config"
	kindRuntime = "runtime"
)

// maxRefName bounds the name in a reference; a longer one is not a
// reference, and the search for its closing brace stops there.
const maxRefName = 128

// Expand replaces ${env:X}, ${config:X} and ${runtime:X} in text, in one
// pass: a substituted value is never looked at again, so a value holding
// ${env:Y} stays as it is. A reference that does not resolve (an unknown
// name, a variable the user did not allow, a nil source) becomes a visible
// marker, "[env:X not available]", never a guess. Anything else is left
// untouched — ${HOME}, ${x:-default}, ${env:-default}, ${other:X}, an
// unterminated ${ — so the shell snippets skills are full of survive. X is
// letters, digits, '_', '.' and '-', at most 128 of them, starting with a
// letter, a digit or '_'; an environment variable's name must also be a
// valid one ([A-Za-z_][A-Za-z0-9_]*) or it is not available.
func Expand(text string, v Vars) string {
	i := strings.Index(text, "${")
	if i < 0 {
		return text
	}
	var b strings.Builder
	b.Grow(len(text))
	for i >= 0 {
		b.WriteString(text[:i])
		text = text[i:]
		if n, repl, ok := reference(text, v); ok {
			b.WriteString(repl)
			text = text[n:]
		} else {
			b.WriteString("${")
			text = text[2:]
		}
		i = strings.Index(text, "${")
	}
	b.WriteString(text)
	return b.String()
}

// reference reads the reference s starts with ("${kind:name}"): how many
// bytes it takes and what replaces it; ok is false when s does not start
// with one of the kinds Expand knows.
func reference(s string, v Vars) (n int, repl string, ok bool) {
	body := s[2:]
	kind, _, found := strings.Cut(body[:min(len(body), len(kindRuntime)+1)], ":")
	if !found || (kind != kindEnv && kind != kindConfig && kind != kindRuntime) {
		return 0, "", false
	}
	rest := body[len(kind)+1:]
	end := strings.IndexByte(rest[:min(len(rest), maxRefName+1)], '}')
	if end <= 0 {
		return 0, "", false
	}
	name := rest[:end]
	if !validName(name) {
		return 0, "", false
	}
	var val string
	var has bool
	switch kind {
	case kindEnv:
		if v.Env != nil && envName(name) {
			val, has = v.Env(name)
		}
	case kindConfig:
		if v.Config != nil {
			val, has = v.Config(name)
		}
	case kindRuntime:
		val, has = v.Runtime[name]
	}
	if !has {
		val = "[" + kind + ":" + name + " not available]"
	}
	return 2 + len(kind) + 1 + end + 1, val, true
}

// validName reports a reference name: letters, digits, '_', '.', '-', not
// starting with '-' or '.' (`${env:-x}` is bash's default value of $env).
func validName(name string) bool {
	if name == "" || name[0] == '-' || name[0] == '.' {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c == '_' || c == '.' || c == '-' || isAlnum(c)) {
			return false
		}
	}
	return true
}

// envName reports a valid environment variable name.
func envName(name string) bool {
	if name == "" || name[0] >= '0' && name[0] <= '9' {
		return false
	}
	for i := 0; i < len(name); i++ {
		if c := name[i]; c != '_' && !isAlnum(c) {
			return false
		}
	}
	return true
}

func isAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}
