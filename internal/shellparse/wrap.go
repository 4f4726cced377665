package shellparse

import (
	"path"
	"strings"
)

// wrapper describes a program that runs another one given as its
// arguments: `sudo -u app make`, `timeout 5 rm x`.
type wrapper struct {
	// valued are the options that take the next word as their value.
	valued string
	// positional counts the operands before the command (timeout's
	// duration, chroot's new root).
	positional int
	// lookup are options that make it look a command up instead of
	// running it (command -v).
	lookup string
	// assigns says NAME=value words before the command set its
	// environment (env, sudo).
	assigns bool
}

// wrappers is the one list of wrapper programs rein knows. Deny and ask
// rules see through them; "always allow" never widens them.
var wrappers = map[string]wrapper{
	"sudo":             {valued: "-u -g -C -D -h -p -r -t -U -T --user --group --close-from --chdir --host --prompt --role --type --other-user --command-timeout", assigns: true},
	"doas":             {valued: "-u -C"},
	"pkexec":           {valued: "--user"},
	"runuser":          {valued: "-u -g -G -s -w --user --group --supp-group --shell --whitelist-environment"},
	"env":              {valued: "-u -C -S --unset --chdir --split-string", assigns: true},
	"nohup":            {},
	"builtin":          {},
	"command":          {lookup: "-v -V"},
	"exec":             {valued: "-a"},
	"time":             {valued: "-f -o --format --output"},
	"nice":             {valued: "-n --adjustment"},
	"ionice":           {valued: "-c -n -p -P -u --class --classdata --pid --pgid --uid"},
	"timeout":          {valued: "-s -k --signal --kill-after", positional: 1},
	"stdbuf":           {valued: "-i -o -e --input --output --error"},
	"xargs":            {valued: "-I -n -P -L -d -E -s -a --max-args --max-procs --max-lines --delimiter --eof --max-chars --arg-file --process-slot-var"},
	"parallel":         {valued: "-j -S --jobs --sshlogin --joblog --results"},
	"watch":            {valued: "-n -d --interval --differences"},
	"setsid":           {},
	"busybox":          {},
	"toybox":           {},
	"unbuffer":         {},
	"chroot":           {valued: "--userspec --groups", positional: 1},
	"taskset":          {positional: 1},
	"chrt":             {positional: 1},
	"flock":            {valued: "-w -E --timeout --conflict-exit-code", positional: 1},
	"nsenter":          {valued: "-t -S -G --target --setuid --setgid --wd --root"},
	"unshare":          {valued: "--map-user --map-group --propagation --setgroups"},
	"setpriv":          {valued: "--reuid --regid --groups --inh-caps --ambient-caps --bounding-set --securebits --pdeathsig --selinux-label --apparmor-profile"},
	"prlimit":          {valued: "-p --pid"},
	"cgexec":           {valued: "-g"},
	"numactl":          {valued: "-C -N -m -p -i --cpunodebind --physcpubind --membind --preferred --interleave"},
	"strace":           {valued: "-o -e -p -s -u -E -a -b -I -O -P -S -X"},
	"ltrace":           {valued: "-o -e -p -s -u -a -n -l -A -D -F"},
	"systemd-run":      {valued: "-p -u -E -M -H --unit --property --setenv --machine --host --description --slice --uid --gid --working-directory --nice"},
	"firejail":         {},
	"fakeroot":         {valued: "-l -s -i --lib --faked"},
	"eatmydata":        {},
	"catchsegv":        {},
	"dbus-run-session": {valued: "--config-file --dbus-daemon"},
	"xvfb-run":         {valued: "-n -s -f -e -p --server-num --server-args --auth-file --error-file --xauth-protocol"},
	"proxychains":      {valued: "-f"},
	"proxychains4":     {valued: "-f"},
	"torsocks":         {valued: "-u -p -a -P --user --pass --address --port"},
	"caffeinate":       {valued: "-t -w"},
}

// runners are subcommands that run a command of the project's environment:
// `uv run pytest`, `bundle exec rake`.
var runners = map[string]map[string]wrapper{
	"uv":     {"run": {valued: "--with --python -p --project --directory --package --extra --group --env-file"}},
	"poetry": {"run": {}},
	"pipenv": {"run": {}},
	"bundle": {"exec": {}},
	"npm":    {"exec": {valued: "-c --call --package -w --workspace"}, "x": {valued: "-c --call --package"}},
	"pnpm":   {"exec": {}, "dlx": {}},
	"yarn":   {"exec": {}, "dlx": {}},
	"conda":  {"run": {valued: "-n -p --name --prefix --cwd"}},
	"mise":   {"exec": {}, "x": {}},
	"asdf":   {"exec": {}},
	"direnv": {"exec": {positional: 1}},
}

// IsWrapper reports a program that runs the command given as its arguments
// (sudo, env, nohup, timeout, xargs, …), by base name.
func IsWrapper(name string) bool {
	_, ok := wrappers[path.Base(name)]
	return ok
}

// IsRunner reports a program and subcommand that run the command given as
// their arguments (`uv run`, `bundle exec`, `npm exec`).
func IsRunner(name, sub string) bool {
	_, ok := runners[path.Base(name)][sub]
	return ok
}

// unwrap returns the command a wrapper runs and the NAME=value words it
// sets (env), or nil when ws is not a wrapper or runs nothing.
func unwrap(ws []Word) (inner, env []Word) {
	if len(ws) == 0 || !ws[0].Static {
		return nil, nil
	}
	name := path.Base(ws[0].Value)
	w, ok := wrappers[name]
	rest := ws[1:]
	if !ok && len(ws) > 1 && ws[1].Static {
		w, ok = runners[name][ws[1].Value]
		rest = ws[2:]
	}
	if !ok {
		return nil, nil
	}
	valued, lookup := strings.Fields(w.valued), strings.Fields(w.lookup)
	i := 0
	for i < len(rest) {
		v := rest[i].Value
		if v == "--" && rest[i].Static {
			i++
			break
		}
		if w.assigns && rest[i].Static && IsAssignment(v) {
			env = append(env, rest[i])
			i++
			continue
		}
		if !strings.HasPrefix(v, "-") || (v == "-" && name != "env") {
			break
		}
		if has(lookup, v) {
			return nil, nil // a look-up, not a run
		}
		i++
		if has(valued, v) {
			i++
		}
	}
	i += w.positional
	if i >= len(rest) {
		return nil, env
	}
	return rest[i:], env
}

func has(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// maxUnwrap bounds how many wrappers are peeled off one command.
const maxUnwrap = 8

// Layer is one level of a chain of wrappers: the command that runs there
// and the NAME=value words the wrappers above it set (env).
type Layer struct {
	Words, Env []Word
}

// Layers returns the command and, level by level, what its wrappers run:
// `sudo env A=1 timeout 5 rm x` gives itself, `env A=1 timeout 5 rm x`,
// `timeout 5 rm x` (Env A=1) and `rm x` (Env A=1).
func (c Command) Layers() []Layer {
	var out []Layer
	var env []Word
	ws := c.Words
	for range maxUnwrap {
		if len(ws) == 0 {
			break
		}
		out = append(out, Layer{Words: ws, Env: env})
		var e []Word
		ws, e = unwrap(ws)
		env = append(env[:len(env):len(env)], e...)
	}
	return out
}

// Variants returns the words of each of [Command.Layers], with programs
// named by path also given by base name: `sudo timeout 5 /bin/rm x` gives
// itself, `timeout 5 /bin/rm x`, `/bin/rm x` and `rm x`. Deny and ask rules
// match any variant.
func (c Command) Variants() [][]Word {
	var out [][]Word
	for _, l := range c.Layers() {
		out = append(out, l.Words)
		if b := based(l.Words); b != nil {
			out = append(out, b)
		}
	}
	return out
}

// Inner returns the command a chain of wrappers finally runs, its program
// given by base name, and the NAME=value words the wrappers set (env).
// Inner is nil for a look-up such as `command -v x` or a bare wrapper.
func (c Command) Inner() (words, env []Word) {
	ls := c.Layers()
	if len(ls) == 0 {
		return nil, nil
	}
	last := ls[len(ls)-1]
	if _, e := unwrap(last.Words); IsWrapper(progName(last.Words)) || isRunnerCall(last.Words) {
		return nil, append(last.Env, e...) // the wrapper runs nothing
	}
	if b := based(last.Words); b != nil {
		return b, last.Env
	}
	return last.Words, last.Env
}

// Program returns the base name of the program the command finally runs,
// "" when it is computed at run time or there is none.
func (c Command) Program() string {
	ws, _ := c.Inner()
	if len(ws) == 0 || !ws[0].Static {
		return ""
	}
	return ws[0].Value
}

func isRunnerCall(ws []Word) bool {
	return len(ws) > 1 && ws[1].Static && IsRunner(progName(ws), ws[1].Value)
}

// progName is the base name of ws[0], "" when it is not static.
func progName(ws []Word) string {
	if len(ws) == 0 || !ws[0].Static {
		return ""
	}
	return path.Base(ws[0].Value)
}

// based returns ws with its program given by base name, nil when it
// already is or is not static.
func based(ws []Word) []Word {
	if len(ws) == 0 || !ws[0].Static || !strings.Contains(ws[0].Value, "/") {
		return nil
	}
	b := path.Base(ws[0].Value)
	if b == "/" || b == "." || b == ".." {
		return nil
	}
	out := append([]Word{Lit(b)}, ws[1:]...)
	return out
}
