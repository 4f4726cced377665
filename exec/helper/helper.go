// Package helper is the Landlock half of the sandbox's helper: what runs
// inside bubblewrap between it and the command to restrict the command with
// Landlock (SPEC TOOL-5). Landlock rules name paths as the sandbox shows
// them, and a Landlock domain forbids the mounts bubblewrap makes, so the
// restriction cannot be applied before bubblewrap: it is applied by rein
// itself, executed again inside with [Arg], or by rein-sandbox-helper
// (cmd/rein-sandbox-helper), a 2 MB program that links only this package,
// when it is installed beside rein.
//
// The helper runs from this package's init, before most of the binary is
// initialised: Go initialises, at each step, the first package in import
// path order whose imports are initialised (The Go Programming Language
// Specification, "Package initialization"), and this one imports only the
// standard library's process and system packages. A 50 MB rein thus
// applies Landlock and executes the command after ~160 small inits instead
// of its 270, in about half the CPU (issue 30; bench/README.md); the Go
// runtime's own start over 50 MB is the rest, which rein-sandbox-helper
// does not pay. When the helper also forwards the command's connections
// to the egress gate (TOOL-7), the init leaves it to package exec's
// HelperMain, in rein's main: that needs package net, which is initialised
// late, and which rein-sandbox-helper does not link.
package helper

import (
	"errors"
	"fmt"
	"os"
	"strings"
)

// Arg, as a program's first argument, makes this package's init apply a
// Landlock restriction and run a command under it (see the package doc). It
// is not a user command.
const Arg = "__rein-sandbox-helper"

// Protocol is the version of the helper's command line and of what it does
// with it. [Argv] writes it first and [Parse] refuses any other, so a
// helper built from other sources than the rein that runs it — a
// rein-sandbox-helper left from an older install — fails closed, the
// command not run, instead of restricting it the old way. It changes with
// every change to what this package does (helper_test.go pins the sources).
const Protocol = "1"

func init() {
	if len(os.Args) > 1 && os.Args[1] == Arg {
		if _, f, _, err := Parse(os.Args[2:]); err == nil && f.Active() {
			return // forwarding: exec.HelperMain serves it
		}
		Main(os.Args[2:], nil)
	}
}

// Main serves as the helper with the arguments after [Arg]: it restricts
// the process as they say and executes the command. With forwards to
// serve, it calls forward (which serves them and runs the command as a
// child), and fails when forward is nil. It never returns: on failure it
// prints why and exits with 126, the command not run.
func Main(args []string, forward func(Rules, Forward, []string) error) {
	r, f, argv, err := Parse(args)
	switch {
	case err == nil && f.Active() && forward != nil:
		err = forward(r, f, argv)
	case err == nil && f.Active():
		err = errors.New("this program cannot forward connections")
	case err == nil:
		err = runHelper(r, argv)
	}
	fmt.Fprintf(os.Stderr, "rein sandbox: helper: %v; the command was not run\n", err)
	os.Exit(126)
}

// Rules is what a Landlock restriction grants: reading and executing
// everywhere, every file-system right under Dirs, reading and writing the
// files Files; NoTCP cuts TCP bind and connect (ABI 4).
type Rules struct {
	Dirs, Files []string
	NoTCP       bool
}

// Forward is what the helper forwards to the egress gate: the gate's
// socket, whether to offer the proxy port, and the loopback addresses to
// mirror.
type Forward struct {
	Socket  string
	Proxy   bool
	Mirrors []string
}

// Active reports whether there is anything to forward.
func (f Forward) Active() bool { return f.Socket != "" && (f.Proxy || len(f.Mirrors) > 0) }

// Argv is the command line that runs inner through the helper executable
// exe, under r when it grants directories (else no Landlock), with f's
// forwards.
func Argv(exe string, r Rules, f Forward, inner []string) []string {
	a := []string{exe, Arg, "--protocol", Protocol}
	if f.Active() {
		a = append(a, "--egress", f.Socket)
		if f.Proxy {
			a = append(a, "--proxy")
		}
		for _, m := range f.Mirrors {
			a = append(a, "--mirror", m)
		}
	}
	for _, d := range r.Dirs {
		a = append(a, "--rw", d)
	}
	for _, f := range r.Files {
		a = append(a, "--rw-file", f)
	}
	if r.NoTCP {
		a = append(a, "--no-tcp")
	}
	a = append(a, "--")
	return append(a, inner...)
}

// Parse reads the helper's arguments (after [Arg]), as [Argv] writes them:
// the protocol, the rules, the forwards and the command.
func Parse(args []string) (Rules, Forward, []string, error) {
	var r Rules
	var f Forward
	if len(args) < 2 || args[0] != "--protocol" {
		return r, f, nil, errors.New("no --protocol: this helper was built from other sources than the rein running it; rebuild rein-sandbox-helper beside rein (scripts/build), or remove it")
	}
	if args[1] != Protocol {
		return r, f, nil, fmt.Errorf("rein speaks helper protocol %q, this helper %q: it was built from other sources than the rein running it; rebuild rein-sandbox-helper beside rein (scripts/build), or remove it", args[1], Protocol)
	}
	args = args[2:]
	for i := 0; i < len(args); i++ {
		switch a := args[i]; {
		case a == "--":
			if i+1 >= len(args) {
				return r, f, nil, errors.New("no command")
			}
			if !f.Active() && len(r.Dirs) == 0 {
				return r, f, nil, errors.New("nothing to do: no --rw and no forward")
			}
			return r, f, args[i+1:], nil
		case a == "--no-tcp":
			r.NoTCP = true
		case a == "--proxy":
			f.Proxy = true
		case (a == "--egress" || a == "--mirror") && i+1 < len(args):
			if a == "--egress" {
				f.Socket = args[i+1]
			} else {
				f.Mirrors = append(f.Mirrors, args[i+1])
			}
			i++
		case (a == "--rw" || a == "--rw-file") && i+1 < len(args):
			if a == "--rw" {
				r.Dirs = append(r.Dirs, args[i+1])
			} else {
				r.Files = append(r.Files, args[i+1])
			}
			i++
		default:
			return r, f, nil, fmt.Errorf("bad helper argument %q", a)
		}
	}
	return r, f, nil, errors.New("no command")
}

// lookPath finds name as a shell would: as given when it holds a slash,
// else in the first directory of $PATH holding an executable file of that
// name. (Not os/exec's LookPath: importing os/exec would delay this
// package's init past path/filepath's, and the packages before it.)
func lookPath(name string) (string, error) {
	if strings.Contains(name, "/") {
		return name, nil
	}
	for _, dir := range strings.Split(os.Getenv("PATH"), ":") {
		if dir == "" {
			dir = "."
		}
		p := dir + "/" + name
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s: executable file not found in $PATH", name)
}
