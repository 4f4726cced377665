package shellparse

import (
	"path"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// shells are the programs whose -c argument is a script.
var shells = map[string]bool{"sh": true, "bash": true, "zsh": true, "dash": true, "ksh": true, "mksh": true, "ash": true, "yash": true, "fish": true}

// IsShell reports a shell program (sh, bash, zsh, …), by base name.
func IsShell(name string) bool { return shells[path.Base(name)] }

// innerScript returns the script a command runs: the -c argument of a
// shell (or, with none, its here-document), eval's words, trap's action,
// `su -c`, `env -S`, watch's words. runs reports a command that runs a
// script; known whether its text is known.
func innerScript(ws []Word, hdoc *hereDoc) (script string, runs, known bool) {
	name := path.Base(ws[0].Value)
	args := ws[1:]
	switch {
	case name == "eval" || name == "watch":
		if name == "watch" {
			args = watchArgs(args)
		} else if len(args) > 0 && args[0].Static && args[0].Value == "--" {
			args = args[1:]
		}
		return joined(args)
	case name == "trap":
		if len(args) > 0 && args[0].Static && args[0].Value == "--" {
			args = args[1:]
		}
		if len(args) < 2 || (args[0].Static && (args[0].Value == "-" || strings.HasPrefix(args[0].Value, "-"))) {
			return "", false, false
		}
		return args[0].Value, true, args[0].Static
	case name == "source" || name == ".":
		if len(args) > 0 && !args[0].Static {
			return "", true, false
		}
	case name == "su" || name == "runuser" || name == "flock" || name == "script" || name == "sg":
		return optionScript(args, "-c", "--command")
	case name == "env":
		return optionScript(args, "-S", "--split-string")
	case shells[name]:
		return shellScript(args, hdoc)
	}
	return "", false, false
}

// joined is the script made of words joined by spaces, as eval does.
func joined(args []Word) (string, bool, bool) {
	if len(args) == 0 {
		return "", false, false
	}
	parts := make([]string, len(args))
	for i, w := range args {
		if !w.Static {
			return "", true, false
		}
		parts[i] = w.Value
	}
	return strings.Join(parts, " "), true, true
}

// watchArgs skips watch's options.
func watchArgs(args []Word) []Word {
	for len(args) > 0 && strings.HasPrefix(args[0].Value, "-") {
		v := args[0].Value
		args = args[1:]
		if v == "--" {
			break
		}
		if (v == "-n" || v == "--interval") && len(args) > 0 {
			args = args[1:]
		}
	}
	return args
}

// optionScript finds the script given as the value of an option (su -c
// CMD, --command=CMD, -cCMD, -lc CMD: getopt reads clusters and attached
// values); with env -S the words after it belong to it too.
func optionScript(args []Word, short, long string) (string, bool, bool) {
	for i, w := range args {
		v := w.Value
		if v == "--" {
			break
		}
		var script []Word
		k := strings.IndexByte(v, short[1])
		switch {
		case v == short || v == long || len(v) > 1 && v[0] == '-' && v[1] != '-' && k == len(v)-1:
			if i+1 >= len(args) {
				return "", false, false
			}
			script = args[i+1:]
		case strings.HasPrefix(v, long+"="):
			script = append([]Word{{Text: v, Value: strings.TrimPrefix(v, long+"="), Static: w.Static}}, args[i+1:]...)
		case len(v) > 1 && v[0] == '-' && v[1] != '-' && k > 0:
			script = append([]Word{{Text: v, Value: v[k+1:], Static: w.Static}}, args[i+1:]...)
		default:
			continue
		}
		if short != "-S" {
			script = script[:1]
		}
		return joined(script)
	}
	return "", false, false
}

// shellScript finds the script of `sh [options] -c SCRIPT` or of a shell
// reading its script from a here-document or another input. It reads the
// options as bash does: all of them first, -c anywhere in a cluster (-ec,
// `-c -e`, and +c alike), -o and -O taking the next word, --rcfile and
// --init-file too,
// up to the first word that is no option or after -- or -; then the script
// is the first word left (`bash -c -- 'rm x'` runs rm).
func shellScript(args []Word, hdoc *hereDoc) (string, bool, bool) {
	cmd, stdin := false, false
	i := 0
options:
	for ; i < len(args); i++ {
		w := args[i]
		if !w.Static {
			return "", true, false
		}
		v := w.Value
		switch {
		case v == "--" || v == "-":
			i++
			break options
		case v == "--rcfile" || v == "--init-file":
			i++
		case v == "--version" || v == "--help":
			return "", false, false
		case strings.HasPrefix(v, "--"):
		case len(v) < 2 || v[0] != '-' && v[0] != '+':
			break options
		default:
			flags := v[1:] // +c is -c too, for bash and dash
			cmd = cmd || strings.Contains(flags, "c")
			stdin = stdin || strings.Contains(flags, "s")
			i += strings.Count(flags, "o") + strings.Count(flags, "O") // their values follow
		}
	}
	rest := args[min(i, len(args)):]
	switch {
	case cmd && len(rest) == 0:
		return "", false, false // bash fails: -c wants a script
	case cmd && !rest[0].Static:
		return "", true, false
	case cmd:
		return rest[0].Value, true, true
	case stdin || len(rest) == 0:
		return stdinScript(hdoc)
	}
	return "", false, false // a script file
}

// stdinScript is the script a shell reads from its input: known when it is
// a here-document without expansions.
func stdinScript(hdoc *hereDoc) (string, bool, bool) {
	if hdoc == nil {
		return "", true, false
	}
	w := hdocText(hdoc.r, hdoc.src)
	return w.Value, true, w.Static
}

// hdocText is the text of a here-document as the command reads it: as
// written when its delimiter is quoted (<<'EOF'), else with \$, \`, \\
// and backslash-newline unescaped, expansions making it not static.
func hdocText(r *syntax.Redirect, src string) Word {
	w := Word{Static: true}
	if r.Hdoc == nil {
		return w
	}
	quoted := false
	for _, p := range r.Word.Parts {
		if l, ok := p.(*syntax.Lit); !ok || strings.Contains(l.Value, `\`) {
			quoted = true
		}
	}
	var b strings.Builder
	for _, p := range r.Hdoc.Parts {
		l, ok := p.(*syntax.Lit)
		switch {
		case !ok:
			w.Static = false
			b.WriteString(source(p, src))
		case quoted:
			b.WriteString(l.Value)
		default:
			b.WriteString(unescapeIn(l.Value, "$`\\\n"))
		}
	}
	w.Text, w.Value = b.String(), b.String()
	return w
}

// findRun is a command find runs.
type findRun struct {
	words []Word
	via   string
}

// findRuns returns the commands of find's -exec, -execdir, -ok and -okdir
// actions, and for -delete an equivalent `rm -rf START…`.
func findRuns(ws []Word) []findRun {
	var out []findRun
	args := ws[1:]
	for i := 0; i < len(args); i++ {
		switch args[i].Value {
		case "-exec", "-execdir", "-ok", "-okdir":
			j := i + 1
			for j < len(args) && args[j].Value != ";" && args[j].Value != "+" {
				j++
			}
			if j > i+1 {
				out = append(out, findRun{words: args[i+1 : j], via: "find " + args[i].Value})
			}
			i = j
		case "-delete":
			rm := []Word{Lit("rm"), Lit("-rf")}
			out = append(out, findRun{words: append(rm, findStarts(args)...), via: "find -delete"})
		}
	}
	return out
}

// findStarts returns the starting points of a find command (default .).
func findStarts(args []Word) []Word {
	var out []Word
	for i := 0; i < len(args); i++ {
		v := args[i].Value
		switch {
		case v == "-H" || v == "-L" || v == "-P" || strings.HasPrefix(v, "-O"):
			continue
		case v == "-D":
			i++
			continue
		case strings.HasPrefix(v, "-") || v == "(" || v == "!" || v == ",":
			i = len(args)
			continue
		}
		out = append(out, args[i])
	}
	if len(out) == 0 {
		out = []Word{Lit(".")}
	}
	return out
}
