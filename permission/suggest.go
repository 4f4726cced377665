package permission

import (
	"encoding/json"
	"net/url"
	"path"
	"slices"
	"strings"

	"github.com/reinhq/rein/internal/shellparse"
	"github.com/reinhq/rein/tool"
	"mvdan.cc/sh/v3/syntax"
)

// neverWidened are commands whose "always" answer keeps the exact command:
// allowing every rm because one was fine would be a surprise. Wrappers
// (sudo, env, timeout, nohup, …: [shellparse.IsWrapper]) are never widened
// either: `timeout:*` would allow any command under a timeout.
var neverWidened = map[string]bool{
	"rm": true, "rmdir": true, "su": true, "dd": true, "mkfs": true,
	"chmod": true, "chown": true, "shred": true, "kill": true, "killall": true, "pkill": true,
	"reboot": true, "shutdown": true, "eval": true, "source": true, ".": true, "trap": true,
	"curl": true, "wget": true, "mv": true, "truncate": true, "ssh": true, "scp": true,
}

// subcommanded are commands whose second word picks what they do.
var subcommanded = map[string]bool{
	"git": true, "go": true, "npm": true, "pnpm": true, "yarn": true, "bun": true, "cargo": true,
	"docker": true, "podman": true, "kubectl": true, "helm": true, "make": true, "gh": true,
	"pip": true, "pip3": true, "uv": true, "poetry": true, "dotnet": true, "mvn": true,
	"gradle": true, "terraform": true, "brew": true, "apt": true, "apt-get": true, "systemctl": true,
	"deno": true, "rustup": true, "bundle": true, "rake": true, "mix": true, "just": true,
}

// interpreters run the code their first argument names: an "always" answer
// keeps that argument (`python3 script.py:*`, `python3 -m pytest:*`,
// `npx vitest:*`), and the exact command when it is inline code or an
// option (`node -e …`).
var interpreters = map[string]bool{
	"python": true, "node": true, "nodejs": true, "deno": true, "bun": true, "npx": true, "bunx": true,
	"pnpx": true, "ruby": true, "perl": true, "php": true, "uvx": true, "pipx": true, "lua": true,
	"Rscript": true, "tsx": true, "ts-node": true, "java": true, "osascript": true,
}

// runSubcommands are the two-word interpreters beside [shellparse.IsRunner]:
// `go run`, `cargo run`, `deno run`, `bun run`.
var runSubcommands = map[string]string{"go": "run", "cargo": "run", "deno": "run", "bun": "run", "dotnet": "run", "swift": "run"}

// Suggest returns the allow rules an "always" answer to r would keep: for a
// shell command, each simple command's first word (two for git, go, npm…)
// followed by :* (`git status -s` gives `bash(git status:*)`), the script or
// module an interpreter runs (`python3 -m pytest:*`), and the exact command
// for wrappers and dangerous programs (`bash(timeout 60 npm test)`); for a
// file tool the exact path; for a URL its domain; otherwise the whole tool.
// For a workspace action it is the action's rule (`Action(deploy)`).
// Nil when no safe rule exists (a command built at run time).
func Suggest(r Request) []Rule {
	if IsPlanApproval(r) {
		return nil // "always" approves a plan into accept-edits; it keeps no rule (PERM-7)
	}
	if r.Origin == tool.OriginAction && checkToolName(r.Tool) == nil && !strings.Contains(r.Tool, "*") {
		return []Rule{{Action: DecisionAllow, Tool: ActionRuleTool, Pattern: r.Tool, Source: SourceSession}}
	}
	var in map[string]any
	_ = json.Unmarshal(r.Input, &in)
	mk := func(pattern string) Rule {
		return Rule{Action: DecisionAllow, Tool: r.Tool, Pattern: pattern, Source: SourceSession}
	}
	if shellTools[r.Tool] {
		cmd, _ := in["command"].(string)
		sh, err := shellparse.Parse(cmd)
		if err != nil || sh.Dynamic != "" {
			return nil
		}
		var out []Rule
		for _, c := range sh.Commands {
			if c.Via != "" {
				continue // covered by the command that runs it
			}
			if c.Decl {
				return nil // export, declare…: no command rule covers them
			}
			p, ok := widen(c.Words)
			if !ok {
				return nil
			}
			if rule := mk(p); !slices.Contains(out, rule) {
				out = append(out, rule)
			}
		}
		return out
	}
	for _, k := range []string{"path", "file_path"} {
		if s, ok := in[k].(string); ok && s != "" {
			p := newWorkspace(r.WorkDir, nil).resolve(s)
			return []Rule{mk(escapeGlob(p.shown()))}
		}
	}
	if s, ok := in["url"].(string); ok {
		if u, err := url.Parse(s); err == nil && u.Hostname() != "" {
			return []Rule{mk("domain:" + strings.ToLower(u.Hostname()))}
		}
	}
	return []Rule{{Action: DecisionAllow, Tool: r.Tool, Source: SourceSession}}
}

// widen turns a command into the pattern an "always" answer keeps.
func widen(ws []word) (string, bool) {
	if len(ws) == 0 || !ws[0].Static {
		return "", false
	}
	name := path.Base(ws[0].Value)
	n := 1
	switch {
	case interpreterWords(ws) > 0:
		n = scriptWords(ws, interpreterWords(ws))
	case neverWidened[name] || shellparse.IsWrapper(name) || findRunsCode(ws):
		n = 0
	case subcommanded[name] && len(ws) > 1 && ws[1].Static && !strings.HasPrefix(ws[1].Value, "-"):
		n = 2
	case subcommanded[name] && len(ws) > 1:
		n = 0 // options before the subcommand (git -c …) change what it does
	}
	exact := n == 0
	if exact {
		n = len(ws)
	}
	parts := make([]string, n)
	for i, w := range ws[:n] {
		if !w.Static {
			return "", false
		}
		q, err := syntax.Quote(w.Value, syntax.LangBash)
		if err != nil {
			return "", false
		}
		parts[i] = q
	}
	p := strings.Join(parts, " ")
	if !exact {
		p += ":*"
	}
	return p, true
}

// interpreterWords returns how many words name an interpreter: 1 for
// python3 or node, 2 for `go run` or `uv run`, 0 for other commands.
func interpreterWords(ws []word) int {
	name := path.Base(ws[0].Value)
	if len(ws) > 1 && ws[1].Static && (runSubcommands[name] == ws[1].Value || shellparse.IsRunner(name, ws[1].Value)) {
		return 2
	}
	if interpreters[name] || isPython(name) || shellparse.IsShell(name) {
		return 1
	}
	return 0
}

// isPython matches python, python3, python3.12, pypy3.
func isPython(name string) bool {
	for _, p := range []string{"python", "pypy"} {
		if rest, ok := strings.CutPrefix(name, p); ok && strings.Trim(rest, "0123456789.") == "" {
			return true
		}
	}
	return false
}

// scriptWords returns how many words of an interpreter's command a rule
// keeps before :*: the interpreter and its script, module or package
// (python3 -m pytest), or 0 for the exact command when what it runs is
// inline code, an option or nothing.
func scriptWords(ws []word, k int) int {
	if len(ws) <= k || !ws[k].Static {
		return 0
	}
	v := ws[k].Value
	if v == "-m" && isPython(path.Base(ws[0].Value)) && len(ws) > k+1 && ws[k+1].Static {
		return k + 2
	}
	if strings.HasPrefix(v, "-") {
		return 0
	}
	return k + 1
}

// escapeGlob quotes the glob characters of a literal path.
func escapeGlob(p string) string {
	var b strings.Builder
	for _, c := range p {
		if strings.ContainsRune(`*?[]{}\`, c) {
			b.WriteByte('\\')
		}
		b.WriteRune(c)
	}
	return b.String()
}
