package permission

import (
	"fmt"
	"regexp"
	"strings"
)

// This file reads command patterns with a * other than a trailing
// prefix wildcard, as Claude Code writes them (SPEC PERM-2, COMPAT-1):
// `git * main`, `* install`, `ls*`, `git:* push`. Such a pattern matches
// the command's words joined by single spaces, each * standing for any
// run of characters (spaces included), a trailing ` *` also for nothing
// (`git * main *` matches `git push origin main`). It is read in deny and
// ask rules only: it only ever widens what is refused or asked about; an
// allow rule must name its command words (see [compileRule]).

// maxShellGlob bounds a pattern's length.
const maxShellGlob = 1024

// shellGlob reports a pattern that holds a * other than a trailing `:*`
// or ` *`.
func shellGlob(p string) bool {
	p = strings.TrimSpace(p)
	if p == "*" {
		return false
	}
	if s, ok := strings.CutSuffix(p, ":*"); ok {
		p = s
	} else if s, ok := strings.CutSuffix(p, " *"); ok {
		p = s
	}
	return strings.Contains(p, "*")
}

// parseShellGlob compiles a glob pattern into an anchored expression.
func parseShellGlob(p string) (shellPattern, error) {
	p = strings.Join(strings.Fields(p), " ")
	if len(p) > maxShellGlob {
		return shellPattern{}, fmt.Errorf("a command pattern of more than %d bytes", maxShellGlob)
	}
	optTail := false
	if s, ok := strings.CutSuffix(p, " *"); ok {
		p, optTail = s, true
	}
	parts := strings.Split(p, "*")
	for i := range parts {
		parts[i] = regexp.QuoteMeta(parts[i])
	}
	expr := "(?s)^" + strings.Join(parts, ".*")
	if optTail {
		expr += "( .*)?"
	}
	re, err := regexp.Compile(expr + "$")
	if err != nil {
		return shellPattern{}, fmt.Errorf("%q: %v", p, err)
	}
	return shellPattern{glob: re}, nil
}

// matchGlob reports whether the command's words, joined by spaces, match
// the glob; a word known only when the command runs is taken as written.
func (sp shellPattern) matchGlob(ws []word) bool {
	texts := make([]string, len(ws))
	for i, w := range ws {
		if w.Static {
			texts[i] = w.Value
		} else {
			texts[i] = w.Text
		}
	}
	return sp.glob.MatchString(strings.Join(texts, " "))
}
