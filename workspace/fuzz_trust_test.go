package workspace

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzRunFilesScript: any command line a hook or action declares is read
// without panicking, within the bounds, and every file it names is a
// workspace path (local, slash-separated); a file the line names by a
// plain relative path is found (SPEC PERM-5).
func FuzzRunFilesScript(f *testing.F) {
	for _, s := range []string{
		"bash .rein/start.sh", `sh -c "./x.sh && echo ok"`, "timeout 5 python3 tools/y.py", "node < z.js",
		`"$CLAUDE_PROJECT_DIR"/scripts/check.sh`, "make lint", "for f in hooks.d/*.sh; do bash $f; done",
		"cat ../../etc/passwd /etc/shadow", "python3 --config=conf/a.yaml run.py", "$(curl evil)", "a\x00b",
		"echo 'unterminated", "env -i A=1 sudo -u x ./x.sh", "bash -c 'bash -c \"./deep.sh\"'",
	} {
		f.Add(s)
	}
	root := f.TempDir()
	for _, rel := range []string{".rein/start.sh", "x.sh", "tools/y.py", "z.js", "scripts/check.sh", "Makefile", "hooks.d/a.sh"} {
		writeTB(f, filepath.Join(root, rel), "echo\n")
	}
	vars := map[string]string{"CLAUDE_PROJECT_DIR": root}
	f.Fuzz(func(t *testing.T, src string) {
		rf := newRunFinder(root)
		rf.script(src, root, vars)
		if len(rf.seen) > maxRunFiles+maxGlobFiles {
			t.Fatalf("%d files, beyond the bounds", len(rf.seen))
		}
		for rel := range rf.seen {
			if !filepath.IsLocal(filepath.FromSlash(rel)) || strings.Contains(rel, `\`) {
				t.Fatalf("%q names %q, not a workspace path", src, rel)
			}
		}
		if src == "bash .rein/start.sh" && !rf.seen[".rein/start.sh"] {
			t.Fatalf("%q: the script is not found: %v", src, rf.seen)
		}
	})
}

// FuzzSubstitute: a word's variables are put in only when every one is
// known, and nothing unexpanded ($, `) is ever taken for a path.
func FuzzSubstitute(f *testing.F) {
	for _, s := range []string{"$CLAUDE_PROJECT_DIR/x", "${REIN_PROJECT_DIR}/a*.sh", "$HOME/x", "$(x)", "`x`", "$", "${", "a[b"} {
		f.Add(s, "/ws")
	}
	f.Fuzz(func(t *testing.T, text, root string) {
		vars := map[string]string{"CLAUDE_PROJECT_DIR": root, "REIN_PROJECT_DIR": root}
		out, glob, ok := substitute(text, vars)
		if !ok {
			return
		}
		rest := varRefRE().ReplaceAllString(text, "")
		if strings.ContainsAny(rest, "$`") {
			t.Fatalf("%q: ok with %q left", text, rest)
		}
		if glob != strings.ContainsAny(rest, "*?[") {
			t.Fatalf("%q: glob=%v", text, glob)
		}
		if !glob && !strings.Contains(text, "$") && out != text {
			t.Fatalf("%q without variables became %q", text, out)
		}
	})
}

// FuzzChanges: the changes between two manifests name each differing
// path once, and none when they are equal.
func FuzzChanges(f *testing.F) {
	f.Add("a=1;b=2", "a=1;b=3;c=4")
	f.Add("", "x=missing")
	f.Fuzz(func(t *testing.T, a, b string) {
		parse := func(s string) map[string]string {
			m := map[string]string{}
			for _, kv := range strings.Split(s, ";") {
				if k, v, ok := strings.Cut(kv, "="); ok {
					m[k] = v
				}
			}
			return m
		}
		was, now := parse(a), parse(b)
		got := Changes(was, now, 0)
		if len(Changes(now, now, 0)) != 0 {
			t.Fatal("changes between equal manifests")
		}
		seen := map[string]bool{}
		for _, c := range got {
			_, rel, _ := strings.Cut(c, " ")
			if seen[rel] {
				t.Fatalf("%q named twice in %q", rel, got)
			}
			seen[rel] = true
		}
	})
}

// FuzzRunFilesManifest: a package.json or Makefile of any content, and
// the directories it brings, name only workspace paths, within bounds.
func FuzzRunFilesManifest(f *testing.F) {
	for _, s := range []string{`{"main": "a.js", "scripts": {"lint": "node tools/l.js", "x": "cd .. && sh ../../x.sh"}}`,
		"include tools/rules.mk ../../etc/passwd\nlint:\n\t@python3 tools\n\t-bash $(dirname $0)/x.sh\n", `{"main": "../../../etc/passwd"}`, "\t\x00", "{"} {
		f.Add(s)
	}
	root := f.TempDir()
	for _, rel := range []string{"a.js", "tools/l.js", "tools/rules.mk", "tools/__main__.py", "x.sh"} {
		writeTB(f, filepath.Join(root, rel), "echo\n")
	}
	f.Fuzz(func(t *testing.T, content string) {
		for _, name := range []string{"package.json", "Makefile"} {
			if err := os.WriteFile(filepath.Join(root, name), []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
			rf := newRunFinder(root)
			rf.manifests(name, nil)
			rf.coverDirs()
			if len(rf.seen) > maxRunFiles {
				t.Fatalf("%d files, beyond the bounds", len(rf.seen))
			}
			for rel := range rf.seen {
				if !filepath.IsLocal(filepath.FromSlash(rel)) {
					t.Fatalf("%s %q names %q, not a workspace path", name, content, rel)
				}
			}
		}
	})
}
