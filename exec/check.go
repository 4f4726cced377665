package exec

import (
	"bufio"
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// QuarantineSuffix is added to the name of what the check after a
// sandboxed command moves aside: sub/.git/hooks becomes
// sub/.git/hooks.rein-quarantine. Git and rein do not read such names; the
// user can look and move it back.
const QuarantineSuffix = ".rein-quarantine"

// check runs after the command: it walks the workspace again and vets
// what appeared — a git directory (a new .git, or a directory made to look
// like a bare repository) keeps its entries when they are what git init and
// git clone make, and has the others moved aside; a new .git file or link,
// and a new .rein or .claude that is not empty, are moved aside whole; a
// protected entry of a git directory that was a symbolic link and was
// replaced, or came to resolve, is moved aside. It returns a line for each
// move, for the command's output. Moving, not deleting, keeps the user's
// data; the names moved to are never read as configuration.
func (sh *shield) check() []string {
	after, err := scanDirs(sh.before.root, sh.hide, sh.limit)
	if err != nil {
		return []string{fmt.Sprintf("the check for new git repositories and rein or Claude Code settings after the command could not finish: %v", err)}
	}
	var notes []string
	isNew := func(p string) bool {
		id, ok := lstatID(p)
		return ok && !sh.before.seen[id] && !held(p)
	}
	for _, g := range after.gitDirs {
		if isNew(g) {
			notes = append(notes, vetGitDir(sh.rel(g), g)...)
		}
	}
	for _, f := range append(after.gitFiles, after.gitLinks...) {
		if isNew(f) {
			notes = append(notes, quarantine(sh.rel(f), f, "a new .git file or link points git at another directory, whose config and hooks would run on the host"))
		}
	}
	for _, c := range after.configs {
		if isNew(c) && !emptyDir(c) {
			notes = append(notes, quarantine(sh.rel(c), c, "a new "+filepath.Base(c)+" holds settings or hooks that would run on the host"))
		}
	}
	for p, st := range sh.links {
		id, ok := lstatID(p)
		if !ok {
			continue
		}
		_, err := filepath.EvalSymlinks(p)
		if id != st.id || (err == nil && !st.resolved) {
			notes = append(notes, quarantine(sh.rel(p), p, "it was a symbolic link the command replaced or made resolve"))
		}
	}
	return notes
}

// rel names p relative to the workspace for the notes.
func (sh *shield) rel(p string) string {
	if r, err := filepath.Rel(sh.before.root, p); err == nil && !strings.HasPrefix(r, "..") {
		return r
	}
	return p
}

// vetGitDir moves aside the entries of new git directory g that could run
// code on the host.
func vetGitDir(rel, g string) []string {
	var notes []string
	for _, name := range GitProtected {
		p := filepath.Join(g, name)
		fi, err := os.Lstat(p)
		if err != nil {
			continue
		}
		if why := vetGitEntry(name, p, fi); why != "" {
			notes = append(notes, quarantine(filepath.Join(rel, name), p, why))
		}
	}
	return notes
}

// vetGitEntry says why an entry of a new git directory is unsafe; "" when
// it is what git init or git clone makes.
func vetGitEntry(name, p string, fi fs.FileInfo) string {
	if fi.Mode()&fs.ModeSymlink != 0 {
		return "it is a symbolic link"
	}
	switch name {
	case "config":
		if !fi.Mode().IsRegular() {
			return "it is not a regular file"
		}
		return vetGitConfig(p)
	case "hooks":
		return vetDir(p, func(e fs.DirEntry) bool { return e.Type().IsRegular() && strings.HasSuffix(e.Name(), ".sample") },
			"it holds hook %s, which git would run on the host")
	case "info":
		return vetDir(p, func(e fs.DirEntry) bool {
			n := e.Name()
			return e.Type().IsRegular() && (n == "exclude" || n == "refs" || n == "sparse-checkout")
		}, "it holds %s, which can choose the programs git runs")
	case "modules", "worktrees":
		return vetDir(p, func(fs.DirEntry) bool { return false }, "it holds the repository %s, with its own config and hooks")
	case "commondir":
		return "it points git at another repository's config and hooks"
	case "config.worktree":
		return "git reads it as configuration"
	}
	return ""
}

// vetDir says why directory p is unsafe: not a directory, unreadable, or
// holding an entry ok refuses (named in format).
func vetDir(p string, ok func(fs.DirEntry) bool, format string) string {
	ents, err := readDir(p)
	if err != nil {
		return "it cannot be read: " + err.Error()
	}
	for _, e := range ents {
		if !ok(e) {
			return fmt.Sprintf(format, e.Name())
		}
	}
	return ""
}

// gitConfigAllowed are the keys git init and git clone write, and a few
// more that run nothing: section.key, or section.*.key for a section with
// a subsection. Everything else (core.fsmonitor, core.hooksPath,
// core.sshCommand, core.pager, core.worktree, alias.*, filter.*, include.*,
// credential.*, submodule.*.update, …) makes a new repository's config
// move aside.
var gitConfigAllowed = setOf(
	"core.repositoryformatversion", "core.filemode", "core.bare", "core.logallrefupdates",
	"core.ignorecase", "core.precomposeunicode", "core.symlinks", "core.autocrlf", "core.eol",
	"core.safecrlf", "core.sparsecheckout", "core.sparsecheckoutcone", "core.quotepath",
	"extensions.objectformat", "extensions.refstorage", "extensions.worktreeconfig",
	"extensions.partialclone", "extensions.preciousobjects",
	"init.defaultbranch", "user.name", "user.email",
	"remote.*.url", "remote.*.pushurl", "remote.*.fetch", "remote.*.push", "remote.*.tagopt",
	"remote.*.mirror", "remote.*.prune", "remote.*.promisor", "remote.*.partialclonefilter",
	"branch.*.remote", "branch.*.merge", "branch.*.rebase", "branch.*.pushremote", "branch.*.description",
	"submodule.*.url", "submodule.*.active", "submodule.*.branch",
	"pull.rebase", "pull.ff", "push.default", "push.autosetupremote", "fetch.prune", "index.version",
	"lfs.repositoryformatversion",
)

func setOf(names ...string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}

// vetGitConfig says why a new repository's config is unsafe: a key outside
// gitConfigAllowed, or syntax this strict reader does not follow (a line
// continued with a backslash, a key on a section's line, an escaped
// subsection name), where git's reading could differ from it.
func vetGitConfig(p string) string {
	data, err := readSmall(p)
	if err != nil {
		return "it cannot be read whole: " + err.Error()
	}
	if bytes.IndexByte(data, 0) >= 0 {
		return "it holds a NUL byte"
	}
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	section, sub := "", false
	sc := bufio.NewScanner(bytes.NewReader(data))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(strings.TrimSuffix(sc.Text(), "\r"))
		if strings.HasSuffix(line, `\`) {
			return fmt.Sprintf("line %d is continued with a backslash", n)
		}
		if line == "" || line[0] == '#' || line[0] == ';' {
			continue
		}
		if line[0] == '[' {
			var ok bool
			if section, sub, ok = parseSection(line); !ok {
				return fmt.Sprintf("line %d: section header %q is not one git init writes", n, line)
			}
			continue
		}
		key := configKey(line)
		if key == "" || section == "" {
			return fmt.Sprintf("line %d: %q is not a plain key", n, line)
		}
		name := section + "." + key
		if sub {
			name = section + ".*." + key
		}
		if !gitConfigAllowed[name] {
			return "it sets " + name + ", which git init and git clone do not set"
		}
	}
	return ""
}

// parseSection reads `[name]` or `[name "subsection"]` (no escapes), with
// nothing after it but a comment.
func parseSection(line string) (name string, sub, ok bool) {
	end := strings.IndexByte(line, ']')
	if end < 0 {
		return "", false, false
	}
	if rest := strings.TrimSpace(line[end+1:]); rest != "" && rest[0] != '#' && rest[0] != ';' {
		return "", false, false
	}
	inner := line[1:end]
	name, subPart, hasSub := strings.Cut(inner, " ")
	if !plainName(name, false) {
		return "", false, false
	}
	if hasSub {
		s := strings.TrimSpace(subPart)
		if len(s) < 2 || s[0] != '"' || s[len(s)-1] != '"' || strings.ContainsAny(s[1:len(s)-1], `"\`) {
			return "", false, false
		}
	}
	return strings.ToLower(name), hasSub, true
}

// configKey returns the lower-cased key of a `key = value` or bare `key`
// line, "" when the line is not one.
func configKey(line string) string {
	i := 0
	for i < len(line) && (isAlnum(line[i]) || line[i] == '-') {
		i++
	}
	key, rest := line[:i], strings.TrimLeft(line[i:], " \t")
	if !plainName(key, true) || (rest != "" && rest[0] != '=' && rest[0] != '#' && rest[0] != ';') {
		return ""
	}
	return strings.ToLower(key)
}

// plainName reports a name of letters, digits and dashes (a key starts with
// a letter).
func plainName(s string, key bool) bool {
	if s == "" || (key && !isAlpha(s[0])) {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isAlnum(s[i]) && s[i] != '-' {
			return false
		}
	}
	return true
}

func isAlpha(c byte) bool { return c|0x20 >= 'a' && c|0x20 <= 'z' }
func isAlnum(c byte) bool { return isAlpha(c) || c >= '0' && c <= '9' }

// emptyDir reports an empty directory: a new one holds nothing to run (and
// may be another process's placeholder).
func emptyDir(p string) bool {
	fi, err := os.Lstat(p)
	if err != nil || !fi.IsDir() {
		return false
	}
	ents, err := readDir(p)
	return err == nil && len(ents) == 0
}

// quarantine moves p aside to p + QuarantineSuffix (numbered when taken)
// and returns the note saying so.
func quarantine(rel, p, why string) string {
	dest := p + QuarantineSuffix
	for i := 2; ; i++ {
		if _, err := os.Lstat(dest); err != nil {
			break
		}
		dest = fmt.Sprintf("%s%s-%d", p, QuarantineSuffix, i)
	}
	if err := os.Rename(p, dest); err != nil {
		return fmt.Sprintf("rein could not move aside %s (%s): %v — do not run git or rein there before checking it", rel, why, err)
	}
	return fmt.Sprintf("rein moved %s to %s: %s. Check it; move it back only if you trust it.", rel, filepath.Base(dest), why)
}
