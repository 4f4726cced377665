package builtin

import (
	"fmt"
	"regexp"
	"strings"
	"sync"
)

// BlockRule refuses a command before it runs (SPEC TOOL-4). The blocklist is
// a last line of defence against the obviously catastrophic; the permission
// layer is where commands are allowed or not.
type BlockRule struct {
	// Name is shown to the model: `rm -rf /`.
	Name string
	// Command, when set, is asked about each simple command of the input,
	// those inside bash -c, eval and $(…) included.
	Command func(c BashCommand) bool
	// Script, when set, is asked about the whole input text.
	Script func(script string) bool
}

// blocked returns the first rule that refuses script.
func blocked(rules []BlockRule, script string, cmds []BashCommand) (BlockRule, bool) {
	for _, r := range rules {
		if r.Script != nil && r.Script(script) {
			return r, true
		}
		if r.Command == nil {
			continue
		}
		for _, c := range cmds {
			if r.Command(c) {
				return r, true
			}
		}
	}
	return BlockRule{}, false
}

// DefaultBlocklist returns the rules NewBash uses when BashOptions.Blocklist
// is nil: recursive deletion of / or a top-level system directory or home,
// mkfs and friends, fork bombs, shutdown and reboot, and writes to disk
// devices (dd of=/dev/sda, > /dev/nvme0n1).
func DefaultBlocklist() []BlockRule {
	return []BlockRule{
		{Name: "rm -rf /", Command: rmRoot},
		{Name: "chmod/chown -R /", Command: chRoot},
		{Name: "mkfs", Command: func(c BashCommand) bool {
			n := c.Args[0]
			return n == "mkfs" || strings.HasPrefix(n, "mkfs.") || n == "mke2fs" || n == "wipefs"
		}},
		{Name: "fork bomb", Script: isForkBomb},
		{Name: "shutdown/reboot", Command: powerOff},
		{Name: "write to a disk device", Command: diskWrite},
	}
}

// systemTarget matches /, home and the top-level system directories, with an
// optional trailing / or /*.
var systemTarget = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^(/+|/+\*|/+\.\.?/*|~|~/|~/\*|\$HOME|\$\{HOME\}|\$HOME/\*?|\$\{HOME\}/\*?|` +
		`/(bin|boot|dev|etc|home|lib|lib32|lib64|opt|proc|root|sbin|srv|sys|usr|var)(/|/\*)?)$`)
})

func rmRoot(c BashCommand) bool {
	if c.Args[0] != "rm" {
		return false
	}
	recursive := false
	for _, a := range c.Args[1:] {
		switch {
		case a == "--no-preserve-root":
			return true
		case a == "--recursive" || shortFlag(a, 'r') || shortFlag(a, 'R'):
			recursive = true
		}
	}
	return recursive && anyTarget(c.Args[1:])
}

func chRoot(c BashCommand) bool {
	switch c.Args[0] {
	case "chmod", "chown", "chgrp":
	default:
		return false
	}
	for _, a := range c.Args[1:] {
		if a == "--recursive" || shortFlag(a, 'R') {
			return anyTarget(c.Args[1:])
		}
	}
	return false
}

func anyTarget(args []string) bool {
	for _, a := range args {
		if !strings.HasPrefix(a, "-") && systemTarget().MatchString(a) {
			return true
		}
	}
	return false
}

// shortFlag reports whether a is a cluster of short options holding f (-rf).
func shortFlag(a string, f byte) bool {
	return len(a) > 1 && a[0] == '-' && a[1] != '-' && strings.IndexByte(a[1:], f) >= 0
}

func powerOff(c BashCommand) bool {
	switch c.Args[0] {
	case "shutdown", "reboot", "halt", "poweroff":
		return true
	case "init", "telinit":
		return len(c.Args) > 1 && (c.Args[1] == "0" || c.Args[1] == "6")
	case "systemctl":
		for _, a := range c.Args[1:] {
			switch a {
			case "poweroff", "reboot", "halt", "kexec", "soft-reboot":
				return true
			}
		}
	}
	return false
}

var diskDevice = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^/dev/(sd[a-z]|hd[a-z]|vd[a-z]|xvd[a-z]|nvme\d|mmcblk\d|disk\d|md\d|dm-\d)`)
})

func diskWrite(c BashCommand) bool {
	for _, w := range c.Writes {
		if diskDevice().MatchString(w) {
			return true
		}
	}
	if c.Args[0] == "dd" {
		for _, a := range c.Args[1:] {
			if of, ok := strings.CutPrefix(a, "of="); ok && diskDevice().MatchString(of) {
				return true
			}
		}
	}
	return false
}

// interactive returns why c would wait for a terminal that is not there, and
// what to run instead; "" when it would not.
func interactive(c BashCommand) string {
	name, args := c.Args[0], c.Args[1:]
	switch name {
	case "npm", "yarn", "pnpm", "bun", "npx", "bunx":
		return scaffold(name, args)
	case "git":
		return gitInteractive(args, c.Env)
	case "vi", "vim", "nvim", "nano", "pico", "micro", "joe", "hx", "emacs":
		if name == "emacs" && (has(args, "--batch") || has(args, "-batch") || has(args, "--script")) {
			return ""
		}
		return fmt.Sprintf("`%s` is an interactive editor. Change files with edit_file or write_file instead.", name)
	case "less", "more", "most":
		return fmt.Sprintf("`%s` is a pager; output here is captured, not paged. Use cat, head, tail or sed -n '10,50p'.", name)
	case "top":
		if has(args, "-b") || hasPrefix(args, "-b") {
			return ""
		}
		return "`top` is a full-screen program. Use `top -b -n 1` or `ps aux`."
	case "htop", "btop", "atop", "nmon":
		return fmt.Sprintf("`%s` is a full-screen program. Use `ps aux` or `top -b -n 1`.", name)
	case "watch":
		return "`watch` never ends. Run the command once, or a bounded loop: for i in 1 2 3; do CMD; sleep 2; done."
	case "tmux", "screen":
		if len(args) == 0 || args[0] == "attach" || args[0] == "a" || args[0] == "attach-session" || args[0] == "-r" {
			return fmt.Sprintf("`%s` attaches to a terminal. Start a detached session instead: tmux new-session -d -s NAME 'CMD'.", name)
		}
	}
	return repl(c)
}

var nonInteractive = []string{"--yes", "-y", "--defaults", "--default", "--non-interactive", "--ci", "--no-interactive"}

func scaffold(name string, args []string) string {
	if len(args) == 0 {
		return ""
	}
	sub := args[0]
	var what string
	switch {
	case (name == "npm" || name == "yarn" || name == "pnpm" || name == "bun") && sub == "create":
		what = name + " create"
	case name == "npm" && (sub == "init" || sub == "innit"):
		what = "npm init"
	case (name == "npx" || name == "bunx") && firstPositionalHas(args, "create-"):
		what = name + " create-…"
	case (name == "pnpm" || name == "yarn") && sub == "dlx" && firstPositionalHas(args[1:], "create-"):
		what = name + " dlx create-…"
	case name == "npm" && sub == "exec" && firstPositionalHas(args[1:], "create-"):
		what = "npm exec create-…"
	default:
		return ""
	}
	for _, a := range args {
		for _, m := range nonInteractive {
			if a == m {
				return ""
			}
		}
	}
	return fmt.Sprintf("`%s` asks its questions on a terminal and would wait here until the timeout. "+
		"Add --yes (or -y) and give the answers as flags (see `--help` of the scaffolder), e.g. `npm create vite@latest app -- --template react-ts`.", what)
}

func firstPositionalHas(args []string, prefix string) bool {
	for _, a := range args {
		if strings.HasPrefix(a, "-") {
			continue
		}
		base := a[strings.LastIndexByte(a, '/')+1:]
		return strings.HasPrefix(base, prefix) || strings.HasPrefix(a, prefix)
	}
	return false
}

// gitInteractive flags git commands that open an editor or prompt per hunk,
// unless an editor is set on the command line (GIT_EDITOR=…, -c core.editor).
func gitInteractive(args, env []string) string {
	var sub string
	var rest []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "-c" && i+1 < len(args) {
			if strings.HasPrefix(args[i+1], "core.editor=") || strings.HasPrefix(args[i+1], "sequence.editor=") {
				return ""
			}
			i++
			continue
		}
		if a == "-C" || a == "--git-dir" || a == "--work-tree" || a == "--namespace" {
			i++
			continue
		}
		if strings.HasPrefix(a, "-") {
			continue
		}
		sub, rest = a, args[i+1:]
		break
	}
	for _, e := range env {
		if strings.HasPrefix(e, "GIT_EDITOR=") || strings.HasPrefix(e, "EDITOR=") || strings.HasPrefix(e, "VISUAL=") ||
			(sub == "rebase" && strings.HasPrefix(e, "GIT_SEQUENCE_EDITOR=")) {
			return ""
		}
	}
	switch sub {
	case "rebase":
		if has(rest, "-i") || has(rest, "--interactive") {
			return "`git rebase -i` opens an editor. Run a plain `git rebase BASE`, or script the todo list: GIT_SEQUENCE_EDITOR=\"sed -i 's/^pick/squash/'\" git rebase -i BASE."
		}
	case "add", "checkout", "reset", "restore", "stash":
		if has(rest, "-p") || has(rest, "--patch") || (sub == "add" && (has(rest, "-i") || has(rest, "--interactive"))) {
			return fmt.Sprintf("`git %s --patch` prompts for every hunk. Name the files instead (git %s PATH…).", sub, sub)
		}
	case "commit":
		if has(rest, "--no-edit") || has(rest, "--fixup") || hasPrefix(rest, "--fixup=") || hasPrefix(rest, "-m") ||
			hasPrefix(rest, "--message") || hasPrefix(rest, "-F") || hasPrefix(rest, "--file") || has(rest, "-C") ||
			hasPrefix(rest, "--reuse-message") || shortCluster(rest, 'm') {
			return ""
		}
		return "`git commit` without a message opens an editor. Pass it with -m \"…\" (or -F FILE, or --no-edit with --amend)."
	case "tag":
		if (has(rest, "-a") || has(rest, "-s") || has(rest, "--annotate")) && !hasPrefix(rest, "-m") && !hasPrefix(rest, "-F") && !hasPrefix(rest, "--message") {
			return "`git tag -a` without a message opens an editor. Pass it with -m \"…\"."
		}
	}
	return ""
}

// repl flags interpreters started with no script, no code and no input:
// they would start a REPL on a closed stdin.
func repl(c BashCommand) string {
	name, args := c.Args[0], c.Args[1:]
	var script []string // options that give the program something to run
	switch {
	case isPython(name):
		if has(args, "-i") {
			return fmt.Sprintf("`%s -i` enters a REPL after the script, and stdin is closed. Drop -i.", name)
		}
		script = []string{"-c", "-m", "-", "-V", "--version", "-h", "--help"}
	case name == "node" || name == "nodejs":
		script = []string{"-e", "--eval", "-p", "--print", "-", "-v", "--version", "-h", "--help", "--test", "-c", "--check"}
	case name == "irb" || name == "ipython" || name == "ghci" || name == "lua" || name == "R" || name == "scala" || name == "deno" && (len(args) == 0 || args[0] == "repl"):
		script = []string{"-e", "-c", "-v", "--version", "-h", "--help"}
	case name == "psql" || name == "mysql" || name == "sqlite3":
		return dbShell(c)
	default:
		return ""
	}
	if c.Stdin {
		return ""
	}
	for _, a := range args {
		if !strings.HasPrefix(a, "-") || has(script, a) || (len(a) > 2 && has(script, a[:2]) && a[1] != '-') {
			return ""
		}
	}
	return fmt.Sprintf("`%s` with no script starts a REPL, and stdin is closed here: it would do nothing or wait. "+
		"Pass the code inline (%s -c '…', node -e '…'), run a script file, or feed a here-document (%s - <<'EOF' … EOF).", c.Args[0], pyOr(name), pyOr(name))
}

func pyOr(name string) string {
	if isPython(name) {
		return name
	}
	return "python3"
}

func isPython(name string) bool {
	return name == "python" || name == "ipython3" || name == "pypy" || name == "pypy3" ||
		(strings.HasPrefix(name, "python") && strings.Trim(name[len("python"):], "0123456789.") == "")
}

func dbShell(c BashCommand) string {
	if c.Stdin {
		return ""
	}
	name, args := c.Args[0], c.Args[1:]
	flags := map[string][]string{
		"psql":    {"-c", "--command", "-f", "--file", "-l", "--list", "-V", "--version", "--help"},
		"mysql":   {"-e", "--execute", "-V", "--version", "--help"},
		"sqlite3": {"-cmd", "-version", "-help", "--help", "--version"},
	}[name]
	positional := 0
	for _, a := range args {
		if has(flags, a) {
			return ""
		}
		for _, f := range flags {
			if strings.HasPrefix(a, f+"=") || (len(f) == 2 && strings.HasPrefix(a, f) && len(a) > 2 && a[1] != '-') {
				return ""
			}
		}
		if !strings.HasPrefix(a, "-") {
			positional++
		}
	}
	if name == "sqlite3" && positional >= 2 {
		return "" // sqlite3 DB 'SQL'
	}
	return fmt.Sprintf("`%s` with no SQL to run opens an interactive prompt, and stdin is closed here. "+
		"Pass the SQL inline (psql -c '…', mysql -e '…', sqlite3 DB '…') or redirect a file into it.", name)
}

func has(list []string, s string) bool {
	for _, a := range list {
		if a == s {
			return true
		}
	}
	return false
}

// hasPrefix reports an element of list starting with p (-mMSG, --message=…).
func hasPrefix(list []string, p string) bool {
	for _, a := range list {
		if strings.HasPrefix(a, p) {
			return true
		}
	}
	return false
}

// shortCluster reports a short-option cluster holding f (-am).
func shortCluster(list []string, f byte) bool {
	for _, a := range list {
		if shortFlag(a, f) {
			return true
		}
	}
	return false
}
