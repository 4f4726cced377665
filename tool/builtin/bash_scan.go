package builtin

import (
	"path"
	"regexp"
	"sync"

	"github.com/reinhq/rein/internal/shellparse"
)

// BashCommand is one simple command of a bash input, as the blocklist and
// the interactive preflight see it.
type BashCommand struct {
	// Args are the words with quotes removed and expansions kept as written
	// ("$HOME"). Wrappers (sudo, env, nohup, time, timeout, nice, exec, …) are
	// stripped, and Args[0] is the program's base name ("/bin/rm" → "rm").
	Args []string
	// Env holds the NAME=value assignments before the command and in env.
	Env []string
	// Writes holds the targets of output redirections (> >> &> <>).
	Writes []string
	// Stdin says input comes from a pipe, a file or a here-document.
	Stdin bool
}

// scanBash returns the simple commands of script, those inside bash -c, sh
// -c, eval and trap strings, command substitutions and find -exec included
// (find -delete reads as `rm -rf START…`). ok is false when script does not
// parse; the commands are then a rough split of the text. The analysis is
// the permission policy's: [shellparse.Parse].
func scanBash(script string) (cmds []BashCommand, ok bool) {
	s, err := shellparse.Parse(script)
	if err != nil {
		return bashCommands(shellparse.Rough(script)), false
	}
	return bashCommands(s.Commands), true
}

// bashCommands turns parsed commands into what the blocklist and the
// preflight see: each command and, level by level, what its wrappers run
// (`sudo nano x` gives `sudo nano x` and `nano x`). A command under xargs
// or parallel counts as fed: they give it arguments.
func bashCommands(cs []shellparse.Command) []BashCommand {
	var out []BashCommand
	for _, c := range cs {
		fed := c.Stdin
		for _, l := range c.Layers() {
			bc := BashCommand{Stdin: fed}
			for _, a := range c.Assigns {
				bc.Env = append(bc.Env, a.Name+"="+a.Value.Text)
			}
			for _, w := range l.Env {
				bc.Env = append(bc.Env, w.Text)
			}
			for _, r := range c.Redirs {
				if r.Write {
					bc.Writes = append(bc.Writes, r.Target.Text)
				}
			}
			for _, w := range l.Words {
				bc.Args = append(bc.Args, w.Text)
			}
			bc.Args[0] = path.Base(bc.Args[0])
			if bc.Args[0] == "xargs" || bc.Args[0] == "parallel" {
				fed = true
			}
			out = append(out, bc)
		}
	}
	return out
}

// isForkBomb reports a function that starts copies of itself in the
// background or through a pipe: `:(){ :|:& };:`, at any nesting depth.
func isForkBomb(script string) bool {
	if forkBombText().MatchString(script) {
		return true
	}
	s, err := shellparse.Parse(script)
	return err == nil && s.ForkBomb
}

var forkBombText = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`:\s*\(\s*\)\s*\{[^}]*:\s*\|\s*:`) })
