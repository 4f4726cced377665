package permission

import (
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/reinhq/rein/internal/shellparse"
)

// Limits of the path analysis of a shell command (SPEC PERM-6): past them
// a word counts as unknown, which asks.
const (
	maxDirs      = 16   // working directories a script may be in
	maxExpansion = 64   // values one word may expand to
	maxGlobHits  = 1000 // files one glob may match
	maxWords     = 4096 // words of a command whose paths are resolved
)

// shellDirs are the directories a command's relative paths may be resolved
// against: the call's dir input (or the workspace), and every static
// target of cd and pushd, each against every directory before it (a cd in
// a subshell is taken as if it stayed). Unknown is set, with the reason,
// when a target is not static, CDPATH is set, or there are too many.
type shellDirs struct {
	dirs    []string
	unknown string
}

// scriptDirs follows the cd and pushd commands of a script.
func scriptDirs(base string, s *shellparse.Script) shellDirs {
	sd := shellDirs{dirs: []string{base}}
	for _, a := range s.Assigns {
		switch a.Name {
		case "CDPATH", "OLDPWD", "HOME":
			return shellDirs{unknown: "the command sets " + a.Name + ", so cd may go anywhere"}
		}
	}
	home, _ := os.UserHomeDir()
	for _, c := range s.Commands {
		ws, _ := c.Inner()
		if len(ws) > 1 && ws[0].Value == "shopt" && slices.ContainsFunc(ws[1:], func(w word) bool { return !w.Static || w.Value == "cdable_vars" }) {
			return shellDirs{unknown: "the command sets cdable_vars, so cd may go where a variable says"}
		}
		if len(ws) == 0 || !ws[0].Static || (ws[0].Value != "cd" && ws[0].Value != "pushd") {
			continue
		}
		if ws[0].Value == "pushd" && slices.ContainsFunc(ws[1:], func(w word) bool { return isStackIndex(w.Value) }) {
			return shellDirs{unknown: "pushd rotates the directory stack, so the directory is known only when it runs"}
		}
		args := ws[1:]
		for len(args) > 0 && args[0].Static && strings.HasPrefix(args[0].Value, "-") && args[0].Value != "-" {
			args = args[1:]
		}
		var target string
		switch {
		case len(args) == 0:
			target = home
		case !args[0].Static:
			return shellDirs{unknown: "the command changes to the directory " + args[0].Text + ", known only when it runs"}
		case args[0].Value == "-":
			continue // back to a directory already listed
		default:
			target = args[0].Value
		}
		for _, d := range sd.dirs {
			next := target
			if !filepath.IsAbs(next) {
				next = filepath.Join(d, next)
			}
			next = filepath.Clean(next)
			if !slices.Contains(sd.dirs, next) {
				sd.dirs = append(sd.dirs, next)
			}
			if len(sd.dirs) > maxDirs {
				return shellDirs{unknown: "the command changes directory too many times to follow"}
			}
		}
	}
	return sd
}

// isStackIndex reports pushd's +N and -N, which rotate the directory stack.
func isStackIndex(s string) bool {
	return len(s) > 1 && (s[0] == '+' || s[0] == '-') && strings.Trim(s[1:], "0123456789") == ""
}

// callDir is the directory a shell call starts in: its dir input resolved
// against the workspace, or the workspace.
func callDir(ws workspace, in map[string]any) string {
	d, _ := in["dir"].(string)
	if d == "" {
		return ws.dir
	}
	d = expandHome(d)
	if !filepath.IsAbs(d) {
		d = filepath.Join(ws.dir, d)
	}
	return filepath.Clean(d)
}

// scriptVars are the values a script assigns to each variable, when every
// assignment of it is static.
func scriptVars(s *shellparse.Script) map[string][]string {
	vars := map[string][]string{}
	bad := map[string]bool{}
	for _, a := range s.Assigns {
		if !a.Value.Static {
			bad[a.Name] = true
			continue
		}
		if !slices.Contains(vars[a.Name], a.Value.Value) {
			vars[a.Name] = append(vars[a.Name], a.Value.Value)
		}
	}
	for n := range bad {
		delete(vars, n)
	}
	return vars
}

// varRef matches $NAME and ${NAME} in a word's text.
var varRef = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`\$(?:\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*))`)
})

// expand returns the values a word may take, globs still unexpanded, and
// whether they are all known: variables the script assigns statically
// (and PWD, OLDPWD, HOME) are substituted, brace alternatives expanded.
// Command substitutions, other variables and arithmetic are unknown.
func (f *facts) expand(w word) ([]string, bool) {
	if w.Static {
		return []string{w.Value}, true
	}
	t := w.Text
	if strings.ContainsAny(t, "`") || strings.Contains(t, "$(") || strings.Contains(t, "<(") || strings.Contains(t, ">(") {
		return nil, false
	}
	vals := []string{t}
	for i := 0; i < len(vals); i++ {
		m := varRef().FindStringSubmatchIndex(vals[i])
		if m == nil {
			continue
		}
		var name string
		if m[2] >= 0 {
			name = vals[i][m[2]:m[3]]
		} else {
			name = vals[i][m[4]:m[5]]
		}
		subs, ok := f.varValues(name)
		if !ok {
			return nil, false
		}
		v := vals[i]
		vals = slices.Delete(vals, i, i+1)
		for _, s := range subs {
			vals = append(vals, v[:m[0]]+s+v[m[1]:])
		}
		if len(vals) > maxExpansion {
			return nil, false
		}
		i--
	}
	var out []string
	for _, v := range vals {
		if strings.Contains(v, "$") {
			return nil, false
		}
		b, ok := braces(v, maxExpansion)
		if !ok {
			return nil, false
		}
		out = append(out, b...)
	}
	return out, len(out) <= maxExpansion
}

func (f *facts) varValues(name string) ([]string, bool) {
	switch name {
	case "PWD", "OLDPWD":
		if f.dirs.unknown != "" {
			return nil, false
		}
		return f.dirs.dirs, true
	case "HOME":
		h, err := os.UserHomeDir()
		return []string{h}, err == nil
	}
	v, ok := f.vars[name]
	return v, ok
}

// braces expands the comma alternatives of a word (a{b,c}d); a sequence
// ({1..3}) or more than limit results is unknown.
func braces(s string, limit int) ([]string, bool) {
	open := strings.IndexByte(s, '{')
	if open < 0 {
		return []string{s}, true
	}
	depth, end := 0, -1
	var cuts []int
	for i := open; i < len(s) && end < 0; i++ {
		switch s[i] {
		case '{':
			depth++
		case '}':
			depth--
			if depth == 0 {
				end = i
			}
		case ',':
			if depth == 1 {
				cuts = append(cuts, i)
			}
		}
	}
	if end < 0 {
		return []string{s}, true // an unmatched { is literal
	}
	if len(cuts) == 0 {
		if strings.Contains(s[open:end], "..") {
			return nil, false
		}
		rest, ok := braces(s[end+1:], limit)
		out := make([]string, 0, len(rest))
		for _, r := range rest {
			out = append(out, s[:end+1]+r)
		}
		return out, ok
	}
	var out []string
	start := open + 1
	for _, c := range append(cuts, end) {
		alts, ok := braces(s[:open]+s[start:c]+s[end+1:], limit)
		if !ok || len(out)+len(alts) > limit {
			return nil, false
		}
		out = append(out, alts...)
		start = c + 1
	}
	return out, true
}

// isGlob reports pattern characters in an expanded value.
func isGlob(s string) bool { return strings.ContainsAny(s, "*?[") }

// wordPaths returns the files a word may name: each value resolved against
// every working directory, globs matched on disk as bash would (a pattern
// that matches nothing stays as written). known is false when a value or
// the working directory is only known when the command runs.
func (f *facts) wordPaths(w word) ([]pathInfo, bool) {
	if f.tooLong() {
		return nil, false
	}
	key := wordKey{w.Text, w.Value, w.Static}
	if r, ok := f.wordMemo[key]; ok {
		return r.paths, r.known
	}
	paths, known := f.resolveWord(w)
	if f.wordMemo == nil {
		f.wordMemo = map[wordKey]wordPathsResult{}
	}
	f.wordMemo[key] = wordPathsResult{paths, known}
	return paths, known
}

// tooLong reports a command with more words than the analysis resolves
// (maxWords): it asks, in every mode, rather than spend seconds on it.
func (f *facts) tooLong() bool {
	if f.words == 0 && f.shell != nil {
		f.words = len(f.shell.Redirs)
		for _, c := range f.shell.Commands {
			f.words += len(c.Words)
		}
		f.words++ // counted
	}
	return f.words > maxWords
}

// wordKey and wordPathsResult memoise wordPaths within one decision.
type wordKey struct {
	text, value string
	static      bool
}

type wordPathsResult struct {
	paths []pathInfo
	known bool
}

func (f *facts) resolveWord(w word) (paths []pathInfo, known bool) {
	vals, ok := f.expand(w)
	if !ok {
		return nil, false
	}
	known = true
	for _, v := range vals {
		if v == "" {
			continue
		}
		v = expandHome(v)
		var dirs []string
		if filepath.IsAbs(v) {
			dirs = []string{""}
		} else if f.dirs.unknown != "" {
			known = false
			continue
		} else {
			dirs = f.dirs.dirs
		}
		for _, d := range dirs {
			p := v
			if d != "" {
				p = filepath.Join(d, v)
			}
			hits := []string{p}
			if isGlob(v) {
				m, ok := globFiles(p)
				if !ok {
					known = false
				}
				hits = append(hits, m...)
			}
			for _, h := range hits {
				paths = append(paths, f.ws.resolve(h))
			}
		}
	}
	return paths, known
}

// globFiles matches an absolute pattern on disk segment by segment, as
// bash does without dotglob: a * or ? does not match a leading dot.
func globFiles(pattern string) ([]string, bool) {
	segs := strings.Split(filepath.ToSlash(filepath.Clean(pattern)), "/")
	cur := []string{"/"}
	for _, seg := range segs[1:] {
		if seg == "" {
			continue
		}
		if !isGlob(seg) {
			for i := range cur {
				cur[i] = filepath.Join(cur[i], seg)
			}
			continue
		}
		pat := strings.ReplaceAll(seg, "[!", "[^")
		if _, err := path.Match(pat, ""); err != nil {
			return nil, false
		}
		var next []string
		for _, dir := range cur {
			ents, err := os.ReadDir(dir)
			if err != nil {
				continue
			}
			for _, e := range ents {
				n := e.Name()
				if strings.HasPrefix(n, ".") && !strings.HasPrefix(seg, ".") {
					continue
				}
				if ok, _ := path.Match(pat, n); ok {
					next = append(next, filepath.Join(dir, n))
				}
				if len(next) > maxGlobHits {
					return next, false
				}
			}
		}
		cur = next
	}
	return cur, true
}
