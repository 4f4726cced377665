package permission

import (
	"errors"
	"io/fs"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"sync"

	"github.com/reinhq/rein/internal/shellparse"
)

// noFileArgs are programs that never open the files their arguments name:
// naming .env to echo reads nothing.
var noFileArgs = map[string]bool{
	"echo": true, "printf": true, "true": true, "false": true, ":": true, "sleep": true,
	"basename": true, "dirname": true, "seq": true, "expr": true, "exit": true, "return": true,
	"type": true, "which": true, "hash": true, "export": true, "declare": true, "local": true,
	"readonly": true, "typeset": true, "unset": true, "set": true, "shift": true, "kill": true,
	"wait": true, "date": true, "pwd": true, "cd": true, "pushd": true, "popd": true, "test": true, "[": true,
}

// namesOnly are programs that look at files' names and sizes, never their
// content: an argument known only at run time or naming a sensitive file
// reveals nothing through them.
var namesOnly = map[string]bool{"ls": true, "stat": true, "du": true, "realpath": true, "readlink": true, "tree": true, "wc": true}

// patternFirst are programs whose first operand is a pattern, script or
// filter, not a file (unless -e or -f give it).
var patternFirst = map[string]bool{
	"grep": true, "egrep": true, "fgrep": true, "rg": true, "ag": true, "ack": true,
	"sed": true, "awk": true, "gawk": true, "mawk": true, "nawk": true, "jq": true,
}

// patternValued are the options whose value is a pattern, never a file.
var patternValued = map[string]bool{"-e": true, "--regexp": true, "--expression": true, "-g": true, "--glob": true, "--iglob": true}

// argWord is one argument of a command that may name a file.
type argWord struct {
	w     word
	index int    // in the command's words
	value string // the part after NAME= or --opt=, "" when the word has none
}

// command is one simple command with what the policy reads from it,
// worked out once per decision.
type command struct {
	shellparse.Command
	inner []word       // what the wrappers finally run, program by base name
	prog  string       // its program, "" when computed at run time
	args  []argWord    // the words that may name files (see fileArgs)
	esc   []escalation // options that write, read or run (see escalationsIn)
}

// newCommand reads c; withArgs says its file arguments are wanted (not
// for a command too long to check word by word).
func newCommand(c shellparse.Command, withArgs bool) *command {
	inner, _ := c.Inner()
	cmd := &command{Command: c, inner: inner, prog: c.Program(), esc: escalationsIn(inner)}
	if withArgs {
		cmd.args = fileArgs(c, inner)
	}
	return cmd
}

// commands returns the commands of the parsed script.
func (f *facts) commands() []*command {
	if f.cmds == nil && f.shell != nil {
		f.cmds = make([]*command, len(f.shell.Commands))
		for i, c := range f.shell.Commands {
			f.cmds[i] = newCommand(c, !f.tooLong())
		}
	}
	return f.cmds
}

// fileArgs returns the words of a command that may name files: every word
// after the program (wrappers' included), without the pattern operand of
// grep and friends and the values of their pattern options; nil for a
// program that opens none (echo, printf, …).
func fileArgs(c shellparse.Command, inner []word) []argWord {
	prog := c.Program()
	if noFileArgs[prog] || len(c.Words) < 2 {
		return nil
	}
	skip := map[int]bool{}
	if len(inner) > 0 {
		off := len(c.Words) - len(inner)
		explicit := false
		for i := 1; i < len(inner); i++ {
			v := inner[i].Value
			if patternValued[v] || (prog != "sed" && v == "-f") || v == "--file" {
				explicit = true
				if patternValued[v] {
					skip[off+i+1] = true
				}
				i++
			}
		}
		if patternFirst[prog] && !explicit {
			for i := 1; i < len(inner); i++ {
				if !strings.HasPrefix(inner[i].Value, "-") || !inner[i].Static {
					skip[off+i] = true
					break
				}
			}
		}
	}
	var out []argWord
	opts := true
	for i, w := range c.Words[1:] {
		if skip[i+1] {
			continue
		}
		a := argWord{w: w, index: i + 1}
		switch {
		case w.Static && w.Value == "--":
			opts = false
			continue
		case opts && w.Static && len(w.Value) > 1 && w.Value[0] == '-':
			// An option is no file; the value of --opt=FILE may be.
			_, v, ok := strings.Cut(w.Value, "=")
			if !ok || v == "" {
				continue
			}
			a.w = shellparse.Lit(v)
		case w.Static:
			if _, v, ok := strings.Cut(w.Value, "="); ok && v != "" {
				a.value = v // NAME=value, if=FILE
			}
		}
		out = append(out, a)
	}
	return out
}

// argPaths returns the files an argument may name, the part after = too.
func (f *facts) argPaths(a argWord) ([]pathInfo, bool) {
	ps, known := f.wordPaths(a.w)
	if a.value != "" {
		more, k := f.wordPaths(shellparse.Lit(a.value))
		ps, known = append(ps, more...), known && k
	}
	return ps, known
}

// shellSensitive denies a command that reads or changes a sensitive file,
// in every mode (SPEC PERM-2): through a redirection, as an argument of a
// program that opens files (a glob or a variable the script sets
// included), or as the file an option reads or writes.
func (d *decider) shellSensitive() (Outcome, bool) {
	s := d.f.shell
	if s == nil {
		return Outcome{}, false
	}
	for _, r := range s.Redirs {
		ps, _ := d.f.wordPaths(r.Target)
		if p, g, ok := d.sensitiveIn(ps); ok {
			return deny("the command redirects to or from %s, a sensitive file (matches %s) that rein never lets tools read or change", p.shown(), g), true
		}
	}
	for _, c := range d.f.commands() {
		if namesOnly[c.prog] {
			continue
		}
		for _, e := range c.esc {
			v := e.value
			if i := strings.IndexAny(v, "@<"); i >= 0 && e.eff == effectReads {
				v = v[i+1:] // curl -d @FILE, -F name=<FILE
			}
			if v == "" {
				continue
			}
			ps, _ := d.f.wordPaths(shellparse.Lit(v))
			if p, g, ok := d.sensitiveIn(ps); ok {
				return deny("%s %s %s, a sensitive file (matches %s) that rein never lets tools read or change", commandName(c), e.eff, p.shown(), g), true
			}
		}
		for _, a := range c.args {
			ps, _ := d.f.argPaths(a)
			if p, g, ok := d.sensitiveIn(ps); ok {
				return deny("%s would open %s, a sensitive file (matches %s) that rein never lets tools read or change; "+
					"leave it out (the grep and glob tools skip such files by themselves)", commandName(c), p.shown(), g), true
			}
		}
	}
	return Outcome{}, false
}

// sensitiveIn returns the first sensitive path of ps.
func (d *decider) sensitiveIn(ps []pathInfo) (pathInfo, string, bool) {
	for _, p := range ps {
		if g, ok := d.sensitive.match(p); ok {
			return p, g, true
		}
	}
	return pathInfo{}, "", false
}

// shellUnknown asks, in every mode, about what the analysis cannot see
// through (SPEC PERM-6): a command that does not parse or that the analysis
// refuses, words known only when the command runs that name a sensitive or
// protected file, relative paths after a cd to a directory known only at
// run time, and recursive reads of a tree holding sensitive files.
func (d *decider) shellUnknown() (Outcome, bool) {
	if !shellTools[d.f.req.Tool] {
		return Outcome{}, false
	}
	s := d.f.shell
	if s == nil {
		if errors.Is(d.f.shellErr, shellparse.ErrRefused) {
			return ask("%v; it needs confirmation", d.f.shellErr), true
		}
		return ask("cannot check the command (%v), so it needs confirmation", d.f.shellErr), true
	}
	if d.f.tooLong() {
		return ask("the command has more than %d words, more than rein checks file by file; it needs confirmation", maxWords), true
	}
	for _, r := range s.Redirs {
		if o, ok := d.unknownWord(r.Target, r.Write, r.Write); ok {
			return o, true
		}
	}
	for _, c := range d.f.commands() {
		for _, a := range c.args {
			if o, ok := d.unknownWord(a.w, !readers[c.prog], writers[c.prog]); ok {
				return o, true
			}
			if o, ok := d.mentionsSensitive(c, a.w); ok {
				return o, true
			}
		}
		if o, ok := d.recursiveRead(c); ok {
			return o, true
		}
	}
	return Outcome{}, false
}

// writers are programs whose file arguments they create, change or
// remove: a path known only at run time there may be a protected file.
var writers = map[string]bool{
	"cp": true, "mv": true, "tee": true, "ln": true, "install": true, "rsync": true, "dd": true, "touch": true,
	"mkdir": true, "rm": true, "rmdir": true, "chmod": true, "chown": true, "chgrp": true, "truncate": true,
	"patch": true, "unzip": true, "shred": true,
}

// unknownWord asks about a word whose value or directory is known only at
// run time when its text names a sensitive or protected file; when it is
// the file a redirection or a writer (cp, tee, …) writes (written), in
// every mode: the file may be one that decides what rein or git may run
// (SPEC PERM-6); and — for a file a command may write (writes) — when it
// is relative to a directory the analysis lost.
func (d *decider) unknownWord(w word, writes, written bool) (Outcome, bool) {
	if _, known := d.f.wordPaths(w); known {
		return Outcome{}, false
	}
	if g, ok := d.sensitive.match(d.f.ws.lexical(w.Text)); ok {
		return ask("%s may name a sensitive file (matches %s), and is known only when the command runs", w.Text, g), true
	}
	if mentionsProtected(w.Text) {
		return ask("%s may name a file that decides what rein or git may run, and is known only when the command runs", w.Text), true
	}
	if written {
		return ask("the command writes to %s, a path known only when it runs, which may be a file that decides what rein or git may run", w.Text), true
	}
	if writes && d.f.dirs.unknown != "" && !filepath.IsAbs(expandHome(w.Text)) {
		return ask("%s; the relative path %s may then lead anywhere", d.f.dirs.unknown, w.Text), true
	}
	return Outcome{}, false
}

// tokenSep splits a word into the names it may hold: code for an
// interpreter (open(".env")), a git object (HEAD:.env), a list (a,.env).
var tokenSep = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile("[\\s\"'()\\[\\]{},;:=+<>|&$@`*?!]+") })

// mentionsSensitive asks, in every mode, about a word that holds the name
// of a sensitive file among other text: python -c 'open(".env")', git show
// HEAD:.env, $(echo .env). What the program does with it is not known.
func (d *decider) mentionsSensitive(c *command, w word) (Outcome, bool) {
	if namesOnly[c.prog] {
		return Outcome{}, false
	}
	for _, t := range tokenSep().Split(w.Text, -1) {
		if t == "" || t == w.Value {
			continue
		}
		if g, ok := d.sensitive.match(d.f.ws.lexical(t)); ok {
			return ask("%s is given %q, which names %s, a sensitive file (matches %s); what it does with it cannot be checked",
				commandName(c), w.Text, t, g), true
		}
	}
	return Outcome{}, false
}

// recursiveReaders are programs that read whole trees: the search tools
// (always, or with -r), archivers and copies. hidden says the tool skips
// dot files unless told otherwise (rg, ag, ack); flags are the short
// options that make it recurse.
var recursiveReaders = map[string]struct {
	always, hidden bool
	flags          string
}{
	"grep": {flags: "rR"}, "egrep": {flags: "rR"}, "fgrep": {flags: "rR"},
	"rg": {always: true, hidden: true}, "ag": {always: true, hidden: true}, "ack": {always: true, hidden: true},
	"tar": {always: true}, "zip": {flags: "r"}, "cp": {flags: "rRa"}, "rsync": {flags: "ra"}, "scp": {flags: "r"},
}

// recursiveRead asks, in every mode, before a command reads a tree that
// holds a sensitive file: a recursive search or copy, find running a
// program on what it finds, a program fed file names by xargs. The file's
// content would reach the model.
func (d *decider) recursiveRead(c *command) (Outcome, bool) {
	prog, inner := c.prog, c.inner
	if len(inner) == 0 {
		return Outcome{}, false
	}
	var roots []pathInfo
	hidden := false
	fed := len(c.Words) > 0 && (path.Base(c.Words[0].Value) == "xargs" || path.Base(c.Words[0].Value) == "parallel")
	switch rr, ok := recursiveReaders[prog]; {
	case fed && !namesOnly[prog] && !noFileArgs[prog]:
		// The names come from the input: any file below.
	case ok:
		if !rr.always && !recursiveFlag(inner[1:], rr.flags) {
			return Outcome{}, false
		}
		hidden = rr.hidden && !showsHidden(inner[1:])
		for _, a := range c.args {
			ps, _ := d.f.argPaths(a)
			roots = append(roots, ps...)
		}
	case prog == "find" && findRunsCode(inner):
		for _, w := range inner[1:] {
			if strings.HasPrefix(w.Value, "-") || w.Value == "(" || w.Value == "!" {
				break
			}
			ps, _ := d.f.wordPaths(w)
			roots = append(roots, ps...)
		}
	default:
		return Outcome{}, false
	}
	if len(roots) == 0 && d.f.dirs.unknown == "" {
		for _, dir := range d.f.dirs.dirs {
			roots = append(roots, d.f.ws.resolve(dir))
		}
	}
	for _, r := range roots {
		if d.hidden && r.inside() {
			continue // the sandbox hides them: nothing to reveal
		}
		found, complete := d.sensitiveUnder(r.abs, hidden)
		switch {
		case found != "":
			return ask("%s reads %s recursively, which holds %s, a sensitive file whose content would reach the model; "+
				"use the grep tool (it skips such files) or leave it out", commandName(c), r.shown(), found), true
		case !complete:
			return ask("%s reads %s recursively, which is too large to check for sensitive files; "+
				"use the grep tool (it skips them) or name the files", commandName(c), r.shown()), true
		}
	}
	return Outcome{}, false
}

// recursiveFlag reports -r (in flags) or a long option that recurses.
func recursiveFlag(args []word, flags string) bool {
	for _, w := range args {
		v := w.Value
		switch {
		case v == "--":
			return false
		case v == "--recursive" || v == "--dereference-recursive" || v == "--directories=recurse" || v == "--archive":
			return true
		case len(v) > 1 && v[0] == '-' && v[1] != '-' && strings.ContainsAny(v[1:], flags):
			return true
		}
	}
	return false
}

// showsHidden reports the options that make rg, ag and ack read dot files.
func showsHidden(args []word) bool {
	for _, w := range args {
		switch v := w.Value; {
		case v == "--hidden" || v == "-." || v == "--no-ignore" || v == "-a" || v == "--all-types" || strings.HasPrefix(v, "-uu"):
			return true
		}
	}
	return false
}

// maxWalk bounds the entries looked at for sensitive files under a root.
const maxWalk = 20000

// sensitiveUnder returns a sensitive file under root (relative), and
// whether the walk was complete. With skipHidden, dot entries are skipped,
// as rg and ag do by default.
func (d *decider) sensitiveUnder(root string, skipHidden bool) (string, bool) {
	found, n := "", 0
	err := filepath.WalkDir(root, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if n++; n > maxWalk {
			return fs.SkipAll
		}
		name := e.Name()
		if p != root && skipHidden && strings.HasPrefix(name, ".") {
			if e.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if e.IsDir() && name == ".git" {
			return fs.SkipDir
		}
		if _, ok := d.sensitive.Match(p, p); ok {
			found = p
			return fs.SkipAll
		}
		return nil
	})
	if rel, e := filepath.Rel(root, found); e == nil && found != "" {
		found = rel
	}
	return found, err == nil && n <= maxWalk
}
