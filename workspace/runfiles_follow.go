package workspace

import (
	"encoding/json"
	"maps"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/reinhq/rein/internal/shellparse"
)

// This file widens what [runFiles] follows beyond the words that name a
// file (SPEC PERM-5; found by issue 22's second set of probes): a script
// runs its neighbours (`import helper`, `source "$(dirname "$0")/lib.sh"`,
// `require('./util')`), a directory runs what it holds (`python3 tools`,
// `node tools`, `go run ./cmd/hook`, `find tools -exec`, `cd tools &&
// ./x.sh`), a module is named without a path (`python3 -m tools.lint`), and
// package.json's scripts and a Makefile's recipes run further files. The
// rule is an over-reading: more files, never fewer.

// maxDirFiles bounds the files covered per directory.
const maxDirFiles = 256

// coverDir notes the directory rel (slash-separated, relative to the
// root) so that its files are covered: not the root, whose files are the
// whole repository, nor .rein and .claude, whose trust-relevant files are
// covered by name ([TrustFiles], [TrustDirs]).
func (rf *runFinder) coverDir(rel string) {
	switch rel {
	case "", ".", ".rein", ".claude":
		return
	}
	rf.dirs[rel] = true
}

// coverDirs adds the regular files (through links) directly inside each
// directory noted, once each, in name order, at most maxDirFiles of one:
// the neighbours a script imports or sources, the files a directory run
// as a program holds. Subdirectories are not walked.
func (rf *runFinder) coverDirs() {
	for _, rel := range slices.Sorted(maps.Keys(rf.dirs)) {
		if rf.dirsDone[rel] {
			continue
		}
		rf.dirsDone[rel] = true
		dir := filepath.Join(rf.root, filepath.FromSlash(rel))
		rf.t.add(dir)
		entries, err := os.ReadDir(dir)
		if err != nil {
			continue
		}
		n := 0
		for _, e := range entries {
			if n == maxDirFiles || len(rf.seen) >= maxRunFiles {
				break
			}
			p := filepath.Join(dir, e.Name())
			rf.t.add(p)
			if fi, err := os.Stat(p); err != nil || !fi.Mode().IsRegular() {
				continue
			}
			if r, ok := rf.rel(p); ok {
				rf.seen[filepath.ToSlash(r)] = true
				n++
			}
		}
	}
}

// pythonRE matches the programs whose -m names a module (python3.12).
var pythonRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^python[0-9.]*$`) })

// module adds the files of a Python module named by `python3 -m a.b`:
// a/b.py, and a/b/ as a package (its __main__.py among its files).
func (rf *runFinder) module(ws []shellparse.Word, dir string) {
	if !ws[0].Static || !pythonRE().MatchString(path.Base(ws[0].Value)) {
		return
	}
	for i := 1; i+1 < len(ws); i++ {
		if !ws[i].Static || ws[i].Value != "-m" {
			continue
		}
		if m := ws[i+1]; m.Static && m.Value != "" && !strings.HasPrefix(m.Value, "-") {
			rel := strings.ReplaceAll(m.Value, ".", "/")
			rf.word(shellparse.Lit(rel+".py"), dir, nil, false)
			rf.word(shellparse.Lit(rel), dir, nil, false)
		}
		return
	}
}

// tailRE is the literal path that ends a word after its last expansion:
// "/lib.sh" of "$(dirname "$0")/lib.sh" or ${DIR}/lib.sh.
var tailRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?:[)}]|\$[A-Za-z_][A-Za-z0-9_]*|\$[0-9@*#?$!-])["']?(/[^$` + "`" + `"'()}\s]+)["']?$`)
})

// tail returns the literal path after the last expansion of a word's
// text, relative ("lib.sh"), or "" when there is none: a script's
// `. "$DIR/lib.sh"` is found beside the script or in the workspace.
func tail(text string) string {
	m := tailRE().FindStringSubmatch(text)
	if m == nil {
		return ""
	}
	rel := strings.TrimLeft(m[1], "/")
	if rel == "" || !filepath.IsLocal(rel) {
		return ""
	}
	return rel
}

// manifests follows the commands that a package.json's scripts and a
// Makefile's recipes run, and the files a Makefile includes: `npm run
// lint` runs what package.json says, in the workspace.
func (rf *runFinder) manifests(rel string, vars map[string]string) {
	p := filepath.Join(rf.root, filepath.FromSlash(rel))
	base := path.Base(rel)
	isMake := base == "Makefile" || base == "makefile" || base == "GNUmakefile" || strings.HasSuffix(base, ".mk")
	if base != "package.json" && !isMake {
		return
	}
	rf.t.add(p)
	data, err := readRegular(p, false, maxScriptBytes)
	if err != nil {
		return
	}
	if base == "package.json" {
		var pkg struct {
			Main    string            `json:"main"`
			Scripts map[string]string `json:"scripts"`
		}
		if json.Unmarshal(data, &pkg) != nil {
			return
		}
		if pkg.Main != "" {
			rf.word(shellparse.Lit(pkg.Main), filepath.Dir(p), nil, true)
		}
		for _, name := range slices.Sorted(maps.Keys(pkg.Scripts)) {
			rf.script(pkg.Scripts[name], filepath.Dir(p), vars)
		}
		return
	}
	for _, line := range strings.Split(string(data), "\n") {
		switch {
		case strings.HasPrefix(line, "\t"):
			rf.script(strings.TrimLeft(strings.TrimSpace(line), "@-+"), filepath.Dir(p), vars)
		case strings.HasPrefix(line, "include ") || strings.HasPrefix(line, "-include ") || strings.HasPrefix(line, "sinclude "):
			for _, f := range strings.Fields(line)[1:] {
				rf.word(shellparse.Lit(f), filepath.Dir(p), nil, true)
			}
		}
	}
}

// interpreters are the programs whose first arguments run as code: a
// script or a directory (python3 tools, node ., bash x.sh, source lib.sh).
var interpreters = []string{"node", "nodejs", "bun", "deno", "ruby", "perl", "php", "lua", "Rscript", "tsx", "ts-node",
	"npx", "bunx", "source", "."}

// codeWords marks the words of a command that run as code, whose
// directory (or, for a directory, whose files) the fingerprint covers too:
// the program, the first two arguments of an interpreter or a shell that
// are not options, what `go run` runs, where `cd` goes, and where a
// `find … -exec` starts. Other arguments are data — `eslint src`,
// `prettier --write src/index.js` — and bring only the file they name,
// so that editing the project's code does not withdraw the trust.
func codeWords(ws []shellparse.Word) []bool {
	code := make([]bool, len(ws))
	if len(ws) == 0 {
		return code
	}
	code[0] = true
	if !ws[0].Static {
		return code
	}
	prog := path.Base(ws[0].Value)
	mark := func(from, n int) {
		for i := from; i < len(ws) && n > 0; i++ {
			if ws[i].Static && strings.HasPrefix(ws[i].Value, "-") {
				continue
			}
			code[i] = true
			n--
		}
	}
	switch {
	case pythonRE().MatchString(prog) || slices.Contains(interpreters, prog) || shellparse.IsShell(prog):
		mark(1, 2)
	case prog == "cd" || prog == "pushd":
		mark(1, 1)
	case prog == "go" && len(ws) > 1 && ws[1].Static && ws[1].Value == "run":
		mark(2, 1)
	case prog == "find" && slices.ContainsFunc(ws, func(w shellparse.Word) bool {
		return w.Static && slices.Contains([]string{"-exec", "-execdir", "-ok", "-okdir"}, w.Value)
	}):
		for i := 1; i < len(ws) && !(ws[i].Static && strings.HasPrefix(ws[i].Value, "-")); i++ {
			code[i] = true
		}
	}
	return code
}
