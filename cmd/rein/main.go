// Command rein is the rein CLI: one-shot runs (rein run), the interactive
// terminal session (rein), and the commands around them. See package cli.
//
// rein re-executes itself as the sandbox's Landlock helper: package
// exec/helper serves it from its init, before most of the binary is
// initialised, and main, before anything else, serves a helper that also
// forwards connections (see exec.HelperMain). Then main takes the
// environment away from everything but rein itself (see package
// secretenv): the configuration and the provider keys are read from a
// snapshot, and neither the programs rein runs nor other processes of the
// user can read the keys from the environment or /proc.
package main

import (
	"fmt"
	"os"

	"github.com/reinhq/rein/cli"
	"github.com/reinhq/rein/exec"
	"github.com/reinhq/rein/internal/secretenv"
)

func main() {
	exec.HelperMain(os.Args) // returns unless rein runs as the sandbox's helper
	env, _, err := secretenv.Scrub()
	if err != nil {
		// Not fatal: the keys are out of the inherited environment; only
		// the kernel's copy or the dumpable flag could not be changed.
		fmt.Fprintf(os.Stderr, "rein: warning: %v\n", err)
	}
	os.Exit(cli.MainEnv(os.Args[1:], env.Getenv))
}
