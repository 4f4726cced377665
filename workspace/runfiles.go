package workspace

import (
	"maps"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/reinhq/rein/hook"
	"github.com/reinhq/rein/internal/shellparse"
)

// This file finds the files a workspace's declarations run — the scripts
// of its hooks, actions and MCP servers — so that the fingerprint covers
// them by content (SPEC PERM-5): trusting `command: bash .rein/start.sh`
// trusts start.sh as it is, and an edit of it withdraws the trust.

// The bounds of following a declaration's command line.
const (
	maxRunFiles  = 1024 // per workspace
	maxGlobFiles = 64   // per word with a wildcard
)

// scriptExts are the endings of a word taken for a script even while no
// such file exists: a trusted hook `bash x.sh` must lose its trust when
// x.sh appears.
var scriptExts = []string{".sh", ".bash", ".zsh", ".py", ".js", ".mjs", ".cjs", ".ts", ".rb", ".pl", ".php", ".lua", ".ps1"}

// impliedFiles are the files a program reads without naming them: their
// targets run code too.
var impliedFiles = map[string][]string{
	"make":  {"Makefile", "makefile", "GNUmakefile"},
	"npm":   {"package.json"},
	"pnpm":  {"package.json"},
	"yarn":  {"package.json"},
	"bun":   {"package.json"},
	"just":  {"justfile", "Justfile", ".justfile"},
	"task":  {"Taskfile.yml", "Taskfile.yaml"},
	"cargo": {"Cargo.toml", "build.rs"},
	"node":  {"package.json"}, // its main (node .), its type and imports
}

// projectVars are the variables a hook's command gets that name the
// workspace root: `"$CLAUDE_PROJECT_DIR"/.claude/hooks/check.sh` is a file
// of the workspace.
var projectVars = []string{"CLAUDE_PROJECT_DIR", "REIN_PROJECT_DIR"}

// runFiles returns the workspace files, relative to root and
// slash-separated, that the workspace's hooks, actions and MCP servers
// run or read as they start: every word of their command lines (through
// `sh -c`, wrappers such as env or timeout, and input redirections) that
// names a file inside the workspace, a script name even when missing, and
// the files make, npm and the like read implicitly — then, a few levels
// deep, the same of the shell scripts found ([runFinder.nested]). Files
// that do not parse name nothing here: their own content is fingerprinted.
//
// What it reads is recorded in t (nil records nothing).
func runFiles(root string, t *trace) []string {
	rf := newRunFinder(root)
	rf.t = t
	t.lookup(root)
	ws := Workspace{Root: root}
	vars := map[string]string{}
	for _, v := range projectVars {
		vars[v] = rf.root
	}
	for _, p := range []string{ws.Hooks(), ws.ClaudeSettings()} {
		t.add(p)
		specs, _ := hook.Load(p)
		for _, s := range specs {
			if s.Command != "" {
				rf.script(s.Command, rf.root, vars)
			}
		}
	}
	rf.actions(ws.ActionsDir())
	noEnv := func(string) string { return "" }
	for _, f := range []struct {
		path  string
		parse func(string, []byte, envReader) ([]MCPServer, []Problem)
	}{{ws.ClaudeMCP(), parseMCPJSON}, {ws.MCP(), parseMCPYAML}} {
		t.add(f.path)
		data, err := readBounded(f.path, root)
		if err != nil {
			continue
		}
		servers, _ := f.parse(f.path, data, envReader{getenv: noEnv})
		for _, s := range servers {
			if s.Command != "" {
				rf.argv(append([]string{s.Command}, s.Args...), rf.root, rf.root)
			}
		}
	}
	rf.nested(vars)
	rf.coverDirs()
	return slices.Sorted(maps.Keys(rf.seen))
}

// newRunFinder returns a runFinder of the workspace at root.
func newRunFinder(root string) *runFinder {
	return &runFinder{root: filepath.Clean(root), rootReal: realPath(root),
		seen: map[string]bool{}, checked: map[string]bool{}, dirs: map[string]bool{}, dirsDone: map[string]bool{}}
}

// runFinder collects the files of a workspace's command lines.
type runFinder struct {
	root, rootReal string
	seen           map[string]bool
	// checked are the paths looked at, found or not.
	checked map[string]bool
	// also is another directory relative paths are found in: a nested
	// script's own (see nested).
	also string
	// dirs are the directories whose files are covered, dirsDone those
	// already added (see coverDirs).
	dirs, dirsDone map[string]bool
	// code is set while following a word that runs as code (see
	// codeWords): only such a word brings its directory or neighbours.
	code bool
	// t records the paths read (see [Cache]); nil records nothing.
	t *trace
}

// The bounds of following the scripts a declaration runs.
const (
	maxNestedDepth = 3        // levels of scripts run by scripts
	maxScriptBytes = 64 << 10 // a larger file is fingerprinted, not read
)

// shebangShell is the first line of a shell script.
var shebangShell = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^#!\S*(?:/|\s|env\s+)(?:ba|z|da|k)?sh\b`) })

// nested follows the shell scripts among the files found, level by
// level: what a script runs or sources (`. ./lib.sh`, `python3 tools/x.py`)
// is found the same way — relative paths both from the workspace, where
// hooks and actions run, and from the script's directory — so a trusted
// `bash .rein/start.sh` covers what start.sh runs. Other languages'
// imports are not followed.
func (rf *runFinder) nested(vars map[string]string) {
	done := map[string]bool{}
	for range maxNestedDepth {
		rf.coverDirs()
		var next []string
		for _, rel := range slices.Sorted(maps.Keys(rf.seen)) {
			if !done[rel] {
				done[rel] = true
				next = append(next, rel)
			}
		}
		if len(next) == 0 {
			return
		}
		for _, rel := range next {
			rf.manifests(rel, vars)
			p := filepath.Join(rf.root, filepath.FromSlash(rel))
			rf.t.add(p)
			src, ok := shellScript(p)
			if !ok {
				continue
			}
			if rf.also = filepath.Dir(p); rf.also == rf.root {
				rf.also = ""
			}
			rf.script(src, rf.root, vars)
			rf.also = ""
		}
	}
}

// shellScript returns the text of the file at p when it is a shell script
// (by its name or its #! line) of at most maxScriptBytes.
func shellScript(p string) (string, bool) {
	data, err := readRegular(p, false, maxScriptBytes) // never blocks, never reads a larger file
	if err != nil {
		return "", false
	}
	ext := strings.ToLower(filepath.Ext(p))
	if ext != ".sh" && ext != ".bash" && !shebangShell().Match(data) {
		return "", false
	}
	return string(data), true
}

// actions follows the command of each action of the actions directory: an
// argv's program written as a relative path is found in the action's
// directory (as the runner does); the rest, and a script's words, in the
// workspace, where the command runs.
func (rf *runFinder) actions(dir string) {
	rf.t.add(dir)
	entries, err := os.ReadDir(dir)
	if err != nil || len(entries) > maxDirEntries {
		return
	}
	for _, e := range entries {
		ad := filepath.Join(dir, e.Name())
		rf.t.add(filepath.Join(ad, actionFile))
		data, err := readBounded(filepath.Join(ad, actionFile), rf.root)
		if err != nil {
			continue
		}
		a, _, ok := parseAction(filepath.Join(ad, actionFile), data, e.Name())
		if !ok {
			continue
		}
		if len(a.Command) > 0 {
			rf.argv(a.Command, ad, rf.root)
		}
		if a.Script != "" {
			rf.script(a.Script, rf.root, map[string]string{"REIN_ACTION_DIR": ad})
		}
	}
}

// argv follows a command given as a list: its program (a relative path
// found in progDir) and its arguments (in dir); a shell's -c script is
// parsed.
func (rf *runFinder) argv(args []string, progDir, dir string) {
	words := make([]shellparse.Word, len(args))
	for i, a := range args {
		words[i] = argWord(a)
	}
	if shellparse.IsShell(args[0]) {
		for i := 1; i+1 < len(args); i++ {
			if strings.HasPrefix(args[i], "-") && strings.Contains(args[i], "c") && !strings.HasPrefix(args[i], "--") {
				rf.script(args[i+1], dir, nil)
				break
			}
		}
	}
	if strings.Contains(args[0], "/") && !filepath.IsAbs(args[0]) {
		rf.code = true
		rf.word(words[0], progDir, nil, true)
		rf.code = false
		words = words[1:]
	}
	rf.words(words, dir, nil)
}

// argWord is an argument of an argv: static unless it holds a variable
// left unexpanded.
func argWord(a string) shellparse.Word {
	if strings.Contains(a, "${") {
		return shellparse.Word{Text: a}
	}
	return shellparse.Lit(a)
}

// script follows the commands of a shell script run in dir, whose
// variables vars are known.
func (rf *runFinder) script(src, dir string, vars map[string]string) {
	var cmds []shellparse.Command
	var redirs []shellparse.Redirect
	var assigns []shellparse.Assign
	if s, err := shellparse.Parse(src); err == nil {
		cmds, redirs, assigns = s.Commands, s.Redirs, s.Assigns
	} else {
		cmds = shellparse.Rough(src) // an over-reading: more files, never fewer
	}
	for _, c := range cmds {
		for _, l := range c.Layers() {
			rf.words(l.Words, dir, vars)
		}
	}
	for _, a := range assigns { // X=tools/x.sh; bash $X
		rf.word(a.Value, dir, vars, false)
	}
	for _, r := range redirs {
		if !r.Write {
			rf.word(r.Target, dir, vars, false)
		}
	}
}

// words follows the words of one command: each one naming a file, and
// the files its program reads implicitly.
func (rf *runFinder) words(ws []shellparse.Word, dir string, vars map[string]string) {
	if len(ws) == 0 {
		return
	}
	if ws[0].Static {
		for _, f := range impliedFiles[path.Base(ws[0].Value)] {
			rf.word(shellparse.Lit(f), dir, nil, false)
		}
	}
	code := codeWords(ws)
	for i, w := range ws {
		rf.code = code[i]
		rf.word(w, dir, vars, false)
	}
	rf.code = false
	rf.module(ws, dir)
}

// word adds the workspace file w names, if any: its static value, or its
// text with vars put in (a leading $CLAUDE_PROJECT_DIR), a wildcard
// expanded; an option's value (--config=x.yaml) too. A file that does not
// exist counts when its name looks like a script's (or always, when
// script is set); a directory never does.
func (rf *runFinder) word(w shellparse.Word, dir string, vars map[string]string, script bool) {
	if len(rf.seen) >= maxRunFiles {
		return
	}
	text, glob, ok := w.Value, false, w.Static
	if !ok {
		text, glob, ok = substitute(w.Text, vars)
	}
	if !ok {
		text, glob = tail(w.Text), false // "$(dirname "$0")/lib.sh": lib.sh
	}
	if text == "" {
		return
	}
	if strings.HasPrefix(text, "-") {
		_, v, found := strings.Cut(text, "=")
		if !found {
			return
		}
		text = v
	}
	if filepath.IsAbs(text) {
		rf.resolve(text, glob, script)
		return
	}
	for _, d := range []string{dir, rf.also} {
		if d == "" {
			continue
		}
		if glob {
			d = escapeGlob(d)
		}
		rf.resolve(filepath.Join(d, text), glob, script)
	}
}

// resolve adds the file at the absolute path p, or the files its wildcard
// matches.
func (rf *runFinder) resolve(p string, glob, script bool) {
	if !glob {
		rf.add(p, script || looksLikeScript(p))
		return
	}
	rf.t.glob(p)
	matches, _ := filepath.Glob(p)
	for i, m := range matches {
		if i == maxGlobFiles {
			break
		}
		rf.add(m, false)
	}
}

// add records the file at the absolute path p if it is inside the
// workspace and a file (through links), or missing and a script's name.
func (rf *runFinder) add(p string, script bool) {
	p = filepath.Clean(p)
	if rf.checked[p] {
		return
	}
	rf.checked[p] = true
	rel, ok := rf.rel(p)
	if !ok {
		return
	}
	rf.t.add(p)
	fi, err := os.Stat(p)
	switch {
	case err == nil && fi.IsDir():
		if rf.code {
			rf.coverDir(filepath.ToSlash(rel)) // python3 tools, node tools, cd tools
		}
		return
	case err != nil && !script:
		return
	}
	rf.seen[filepath.ToSlash(rel)] = true
	if err == nil && rf.code {
		rf.coverDir(path.Dir(filepath.ToSlash(rel))) // the script's neighbours
	}
}

// rel returns p relative to the workspace root (as written, or with links
// resolved); false when it lies outside or is the root itself.
func (rf *runFinder) rel(p string) (string, bool) {
	for _, root := range []string{rf.root, rf.rootReal} {
		if r, err := filepath.Rel(root, p); err == nil && filepath.IsLocal(r) {
			return r, true
		}
	}
	return "", false
}

// looksLikeScript reports a path whose name ends like a script's.
func looksLikeScript(p string) bool {
	ext := strings.ToLower(filepath.Ext(p))
	return slices.Contains(scriptExts, ext)
}

// substitute puts the values of vars into a word's text written with
// them ($NAME or ${NAME}, "$NAME" once quotes are gone); ok is false when
// any other expansion remains. glob reports a wildcard in the text: the
// values put in are escaped for filepath.Glob then.
func substitute(text string, vars map[string]string) (out string, glob, ok bool) {
	ok = true
	rest := varRefRE().ReplaceAllStringFunc(text, func(ref string) string {
		m := varRefRE().FindStringSubmatch(ref)
		_, known := vars[m[1]+m[2]]
		ok = ok && known
		return ""
	})
	if !ok || strings.ContainsAny(rest, "$`") {
		return "", false, false
	}
	glob = strings.ContainsAny(rest, "*?[")
	out = varRefRE().ReplaceAllStringFunc(text, func(ref string) string {
		m := varRefRE().FindStringSubmatch(ref)
		if v := vars[m[1]+m[2]]; glob {
			return escapeGlob(v)
		} else {
			return v
		}
	})
	return out, glob, true
}

// escapeGlob escapes the wildcards of a path for filepath.Glob.
func escapeGlob(p string) string {
	var b strings.Builder
	for _, c := range p {
		if strings.ContainsRune(`*?[\`, c) {
			b.WriteByte('\\')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// varRefRE is a reference to a variable: ${NAME} or $NAME.
var varRefRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`\$(?:\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*))`)
})
