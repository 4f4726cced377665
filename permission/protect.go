package permission

import (
	"path/filepath"
	"regexp"
	"strings"
	"sync"

	"github.com/bmatcuk/doublestar/v4"
	"github.com/reinhq/rein/internal/shellparse"
)

// protectedPaths are the files that decide what an agent, or git, may run:
// rein's and Claude Code's settings and hooks, and git's hooks and config
// (a hook or core.hooksPath runs code at the user's next commit). A change
// to them asks in every mode, bypass included, unless an allow rule names
// them; a tool must not widen its own permissions. Each is matched at any
// depth, so a nested repository and the user's ~/.claude are covered too.
var protectedPaths = []struct {
	name  string   // what an allow rule must name to lift the protection
	globs []string // over the slash path without its leading /
}{
	{".rein", []string{"**/.rein", "**/.rein/**"}},
	{".claude", []string{"**/.claude", "**/.claude/**"}},
	{".config/rein", []string{"**/.config/rein", "**/.config/rein/**"}},
	{".git/hooks", []string{"**/.git/hooks", "**/.git/hooks/**", "**/.git/modules/**/hooks", "**/.git/modules/**/hooks/**"}},
	{".git/config", []string{"**/.git/config", "**/.git/config.worktree", "**/.git/commondir", "**/.git/modules/**/config",
		"**/.git/modules/**/config.worktree", "**/.git/worktrees/**/config.worktree", "**/.git/worktrees/**/commondir"}},
	{".git", []string{"**/.git", "**/.git/**"}},
}

// protectedName returns the protected path p lies in, if any. Names are
// compared without case: on a case-insensitive file system .REIN is .rein.
func protectedName(p pathInfo) (string, bool) {
	abs := strings.ToLower(strings.TrimPrefix(filepath.ToSlash(p.abs), "/"))
	real := strings.ToLower(strings.TrimPrefix(filepath.ToSlash(p.real), "/"))
	if !mayBeProtected(abs) && !mayBeProtected(real) {
		return "", false
	}
	for _, pp := range protectedPaths {
		for _, g := range pp.globs {
			if globMatch(g, abs) || globMatch(g, real) {
				return pp.name, true
			}
		}
	}
	return "", false
}

// mayBeProtected reports a lower-case path holding one of the names every
// protected glob holds: a cheap test before the globs.
func mayBeProtected(p string) bool {
	return strings.Contains(p, ".rein") || strings.Contains(p, ".claude") || strings.Contains(p, ".git") || strings.Contains(p, ".config/rein")
}

// protectedText finds a protected directory named in a word's text.
var protectedText = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)(^|/)(\.rein|\.claude|\.git|\.config/rein)(/|$)`)
})

// mentionsProtected reports a word that names a protected path somewhere in
// its text ("$d/.rein/x"), for words only known when the command runs.
func mentionsProtected(s string) bool { return protectedText().MatchString(s) }

// protectedAsk asks before a call changes a protected path, in every mode;
// in a server caller's run it denies (see Settings.Tenant).
func (d *decider) protectedAsk() (Outcome, bool) {
	if shellTools[d.f.req.Tool] {
		o, ok := d.protectedShell()
		if ok && d.tenant && o.Decision == DecisionAsk {
			o = deny("%s: a caller's run of a server may not", o.Reason)
		}
		return o, ok
	}
	if readOnly(d.f.req.Meta) {
		return Outcome{}, false
	}
	for _, p := range d.f.paths {
		name, ok := protectedName(p)
		if !ok || d.allowNames(p, name) {
			continue
		}
		if d.tenant {
			return deny("%s would change %s, which decides what rein, Claude Code or git may run for everyone who uses this directory, "+
				"the server's operator included: a caller's run may not; the operator can allow it with an allow rule naming %s in the server's settings",
				d.f.req.Tool, p.shown(), name), true
		}
		return ask("%s would change %s, which decides what rein, Claude Code or git may run; "+
			"that needs confirmation in every mode unless an allow rule names %s", d.f.req.Tool, p.shown(), name), true
	}
	return Outcome{}, false
}

// allowNames reports an allow rule that matches p and names the protected
// path in its pattern (`write_file(.rein/settings.yaml)`): a wider rule
// such as `edit_file(**)` does not lift the protection. In a server
// caller's run only the operator's rules count (see Settings.Tenant).
func (d *decider) allowNames(p pathInfo, name string) bool {
	if d.mode == ModeStrict {
		return false
	}
	for i := range d.rules {
		c := &d.rules[i]
		if c.rule.Action == DecisionAllow && c.kind == kindPath && c.matchTool(d.f.req) &&
			strings.Contains(c.glob, name) && c.matchPath(p, false) && (!d.tenant || operatorSource(c.rule.Source)) {
			return true
		}
	}
	return false
}

// readers are programs that only read the files they name.
var readers = map[string]bool{
	"cat": true, "head": true, "tail": true, "less": true, "more": true, "ls": true, "stat": true,
	"file": true, "wc": true, "grep": true, "egrep": true, "fgrep": true, "rg": true, "diff": true,
	"cmp": true, "md5sum": true, "sha1sum": true, "sha256sum": true, "readlink": true, "realpath": true,
	"test": true, "[": true, "echo": true, "tree": true, "du": true, "bat": true, "jq": true,
}

// readingGit are the git subcommands that change nothing in the work tree
// or the repository's configuration.
var readingGit = map[string]bool{
	"status": true, "diff": true, "log": true, "show": true, "blame": true, "ls-files": true,
	"grep": true, "add": true, "rev-parse": true, "check-ignore": true,
}

// protectedShell asks before a command that writes to a protected path by
// a redirection, names one as an argument of a program that may change it
// (cp, mv, tee, sed -i, ln, chmod, mkdir, …) or as the file an option
// writes (git diff --output), or changes git's configuration (`git
// config`). Paths are resolved against every directory the command may be
// in, globs and the variables it sets expanded.
func (d *decider) protectedShell() (Outcome, bool) {
	if d.f.shell == nil {
		return Outcome{}, false
	}
	for _, r := range d.f.shell.Redirs {
		if !r.Write {
			continue
		}
		ps, _ := d.f.wordPaths(r.Target)
		for _, p := range ps {
			if name, ok := protectedName(p); ok {
				return ask("the command writes to %s (in %s), which decides what rein, Claude Code or git may run", p.shown(), name), true
			}
		}
	}
	for _, c := range d.f.commands() {
		if o, ok := d.protectedArgs(c); ok {
			return o, true
		}
	}
	return Outcome{}, false
}

// protectedArgs checks the arguments of one command.
func (d *decider) protectedArgs(c *command) (Outcome, bool) {
	prog, inner := c.prog, c.inner
	changes := false
	for _, e := range c.esc {
		if e.eff == effectReads {
			continue
		}
		changes = true
		if e.value == "" {
			continue
		}
		ps, _ := d.f.wordPaths(shellparse.Lit(e.value))
		for _, p := range ps {
			if name, ok := protectedName(p); ok {
				return ask("%s %s %s (in %s), which decides what rein, Claude Code or git may run", commandName(c), e.eff, p.shown(), name), true
			}
		}
	}
	if prog == "git" {
		if sub, rest := gitSubcommand(inner[1:]); sub == "config" && !readingGitConfig(rest) {
			return ask("`git config` changes git's configuration, where a setting such as core.hooksPath runs code"), true
		}
		if readingGit[gitSub(inner[1:])] && !changes {
			return Outcome{}, false
		}
	}
	if (readers[prog] || prog == "find") && !changes {
		return Outcome{}, false
	}
	for _, a := range c.args {
		ps, _ := d.f.argPaths(a)
		for _, p := range ps {
			if name, ok := protectedName(p); ok {
				return ask("%s names %s (in %s), which decides what rein, Claude Code or git may run", commandName(c), p.shown(), name), true
			}
		}
	}
	return Outcome{}, false
}

func commandName(c *command) string {
	if p := c.prog; p != "" {
		return "`" + p + "`"
	}
	return "the command"
}

// findRunsCode reports a find with an action that runs or deletes.
func findRunsCode(ws []word) bool {
	if len(ws) == 0 || ws[0].Value != "find" {
		return false
	}
	for _, w := range ws[1:] {
		if findEscalations[w.Value] {
			return true
		}
	}
	return false
}

// gitSubcommand skips git's global options and returns the subcommand and
// its arguments.
func gitSubcommand(args []word) (string, []word) {
	for i := 0; i < len(args); i++ {
		v := args[i].Value
		switch {
		case v == "-c" || v == "-C" || v == "--git-dir" || v == "--work-tree" || v == "--namespace":
			i++
		case strings.HasPrefix(v, "-"):
		default:
			return v, args[i+1:]
		}
	}
	return "", nil
}

func gitSub(args []word) string {
	s, _ := gitSubcommand(args)
	return s
}

// readingGitConfig reports a `git config` that only reads.
func readingGitConfig(args []word) bool {
	if len(args) > 0 && (args[0].Value == "get" || args[0].Value == "list") {
		return true
	}
	positional := 0
	for _, a := range args {
		switch v := a.Value; {
		case v == "--get" || v == "--get-all" || v == "--get-regexp" || v == "--get-urlmatch" || v == "--list" || v == "-l" ||
			v == "--get-color" || v == "--get-colorbool":
			return true
		case strings.HasPrefix(v, "-"):
		default:
			positional++
		}
	}
	return positional == 1 // `git config user.name` reads the value
}

// globBase returns the directory a glob call searches: its path joined with
// the pattern's part before the first wildcard (`../**/x` searches ..,
// `/etc/**` searches /etc).
func globBase(in map[string]any, pattern string) (string, bool) {
	base, _ := in["path"].(string)
	if base == "" {
		base = "."
	}
	p := filepath.ToSlash(pattern)
	if strings.HasPrefix(p, "/") {
		base, p = "/", strings.TrimLeft(p, "/")
	}
	dir, _ := doublestar.SplitPattern(p)
	if dir == "." || dir == "" {
		return "", false
	}
	return filepath.Join(base, filepath.FromSlash(dir)), true
}
