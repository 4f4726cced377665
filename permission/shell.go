package permission

import (
	"fmt"
	"path"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/reinhq/rein/internal/shellparse"
	"mvdan.cc/sh/v3/syntax"
)

// word is a shell word as far as it can be known without running anything.
type word = shellparse.Word

// shellCommands returns the commands of a parsed script, or a rough split of
// a command line that does not parse, so deny rules still see what plainly
// reads like a denied command.
func (f *facts) shellCommands() []shellparse.Command {
	if f.shell != nil {
		return f.shell.Commands
	}
	return shellparse.Rough(f.command)
}

// riskyEnv are variables that make an ordinary command run other code.
func riskyEnv(a shellparse.Assign) bool {
	if a.Value.Static {
		switch a.Value.Value {
		case "", "0", "1", "true", "false", "cat", "less", "more":
			return false
		}
	}
	n := a.Name
	switch n {
	case "PATH", "BASH_ENV", "ENV", "PROMPT_COMMAND", "IFS", "SHELLOPTS", "BASHOPTS", "PS4",
		"PAGER", "MANPAGER", "EDITOR", "VISUAL", "BROWSER", "SSH_ASKPASS", "LESSOPEN", "LESSCLOSE",
		"PYTHONSTARTUP", "PYTHONPATH", "NODE_OPTIONS", "PERL5OPT", "RUBYOPT", "HOME", "XDG_CONFIG_HOME":
		return true
	}
	return strings.HasPrefix(n, "LD_") || strings.HasPrefix(n, "DYLD_") || strings.HasPrefix(n, "GIT_")
}

// shellPattern is a compiled bash rule pattern.
type shellPattern struct {
	words  []string
	prefix bool // `words:*`: the command starts with words
	any    bool // `*`
	// glob, when set, matches the joined words instead (`git * main`,
	// deny and ask rules only: see shellglob.go).
	glob *regexp.Regexp
}

// parseShellPattern reads `git diff:*` (prefix), `git diff *` (the same) or an
// exact command. Quotes work as in the shell.
func parseShellPattern(p string) (shellPattern, error) {
	p = strings.TrimSpace(p)
	if p == "*" {
		return shellPattern{any: true}, nil
	}
	if shellGlob(p) {
		return parseShellGlob(p)
	}
	sp := shellPattern{}
	if s, ok := strings.CutSuffix(p, ":*"); ok {
		p, sp.prefix = strings.TrimSpace(s), true
	} else if s, ok := strings.CutSuffix(p, " *"); ok {
		p, sp.prefix = strings.TrimSpace(s), true
	}
	bad := fmt.Errorf("write a command prefix such as `git diff:*`, or an exact command; %q is not one", p)
	file, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(p), "")
	if err != nil || len(file.Stmts) != 1 {
		return sp, bad
	}
	st := file.Stmts[0]
	call, ok := st.Cmd.(*syntax.CallExpr)
	if !ok || len(st.Redirs) > 0 || len(call.Assigns) > 0 || len(call.Args) == 0 || st.Background || st.Negated {
		return sp, bad
	}
	for _, w := range call.Args {
		v := shellparse.WordOf(w)
		if !v.Static {
			return sp, fmt.Errorf("%q: only a trailing :* wildcard is supported, and no $ or globs", p)
		}
		sp.words = append(sp.words, v.Value)
	}
	return sp, nil
}

// match reports whether the pattern covers the command words.
func (sp shellPattern) match(ws []word) bool {
	if sp.any {
		return true
	}
	if sp.glob != nil {
		return sp.matchGlob(ws)
	}
	if len(ws) < len(sp.words) || (!sp.prefix && len(ws) != len(sp.words)) {
		return false
	}
	for i, w := range sp.words {
		if !ws[i].Static || ws[i].Value != w {
			return false
		}
	}
	return true
}

// findEscalations are find's actions that run or delete; a prefix rule must
// name them to cover them.
var findEscalations = map[string]bool{"-exec": true, "-execdir": true, "-ok": true, "-okdir": true, "-delete": true, "-fprint": true, "-fprintf": true, "-fls": true}

// allows reports whether an allow pattern covers the command: it must match,
// and what follows the prefix must not make the command run another one.
func (sp shellPattern) allows(ws []word) bool {
	if !sp.match(ws) {
		return false
	}
	if sp.any || len(ws) == 0 || path.Base(ws[0].Value) != "find" {
		return true
	}
	for _, w := range ws[len(sp.words):] {
		if findEscalations[w.Value] {
			return false
		}
	}
	return true
}

// argsCovered reports whether what a prefix rule leaves open is harmless:
// no option beyond the rule's words that writes files, reads arbitrary
// ones or runs programs (git diff --output, sed -i, find -exec: see
// escalations), no argument known only when the command runs (a glob over
// nothing, a variable), and no file outside the workspace. An exact rule
// names every word itself.
func (d *decider) argsCovered(cmd *command, sp shellPattern) bool {
	if sp.any || !sp.prefix {
		return true
	}
	off := len(cmd.Words) - len(cmd.inner)
	for _, e := range cmd.esc {
		if e.word == 0 || off+e.word >= len(sp.words) {
			return false
		}
	}
	for _, a := range cmd.args {
		if a.index < len(sp.words) {
			continue
		}
		ps, known := d.f.argPaths(a)
		if !known && !namesOnly[cmd.prog] {
			return false
		}
		for _, p := range ps {
			if !p.inside() && !harmlessDevice(p.abs) {
				return false
			}
			if !a.w.Static && strings.HasPrefix(filepath.Base(p.abs), "-") {
				return false // a glob matched a file named like an option (-delete, --output=x)
			}
		}
	}
	return true
}
