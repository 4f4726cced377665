// Command rein-sandbox-helper is rein's Landlock helper on its own (SPEC
// TOOL-5): what bubblewrap runs inside the sandbox, between it and the
// command, to restrict the command with Landlock. rein can serve as the
// helper itself (it executes itself again inside), but it is a 50 MB
// program whose Go start-up adds ~4.7 ms of CPU to every sandboxed
// command; this one links only package exec/helper, is ~2 MB and adds
// ~1.6 ms (bench/README.md, issue 30). Built beside rein (scripts/build
// does), it is the helper rein uses (exec.SelfHelper); a helper that also
// forwards connections to the egress gate needs package net and stays rein
// itself.
//
// It is not a user command: it runs only as
//
//	rein-sandbox-helper __rein-sandbox-helper --rw DIR ... -- COMMAND ...
//
// (see exec/helper.Argv), and exits with 126, the command not run, when
// it cannot restrict the process as asked.
package main

import (
	"fmt"
	"os"

	"github.com/reinhq/rein/exec/helper"
)

func main() {
	// exec/helper's init has served every helper command line it can
	// serve (and never returned); what is left is a command line asking
	// for forwards, which Main refuses, or not a helper command line.
	if len(os.Args) > 1 && os.Args[1] == helper.Arg {
		helper.Main(os.Args[2:], nil)
	}
	fmt.Fprintf(os.Stderr, "rein-sandbox-helper: rein's sandbox helper, not a user command; rein runs it as %s %s --rw DIR -- COMMAND\n", os.Args[0], helper.Arg)
	os.Exit(2)
}
