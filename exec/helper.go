package exec

import (
	"errors"
	"fmt"
	"os"
	osexec "os/exec"
	"sync"
	"sync/atomic"
)

// HelperArg, as a program's first argument, makes [HelperMain] apply a
// Landlock restriction and run a command under it: rein re-executes itself
// this way inside bubblewrap, between it and bash, for the Sandbox's
// Landlock layer. It is not a user command.
const HelperArg = "__rein-sandbox-helper"

// helperReady says this program's main called HelperMain, so its
// executable can serve as the helper.
var helperReady atomic.Bool

// HelperMain must be called first in main, with os.Args. When the first
// argument is [HelperArg] it restricts the process with Landlock as the
// rest of the arguments say and executes the command — it never returns;
// on failure it prints why and exits with 126, the command not run.
// Otherwise it returns at once, and [SelfHelper] may offer this program as
// the helper.
func HelperMain(args []string) {
	if len(args) < 2 || args[1] != HelperArg {
		helperReady.Store(true)
		return
	}
	r, f, argv, err := parseHelper(args[2:])
	switch {
	case err == nil && f.active():
		err = runForwarding(r, f, argv)
	case err == nil:
		err = runHelper(r, argv)
	}
	fmt.Fprintf(os.Stderr, "rein sandbox: helper: %v; the command was not run\n", err)
	os.Exit(126)
}

var selfExe = sync.OnceValue(func() string {
	exe, err := os.Executable()
	if err != nil {
		return ""
	}
	if _, err := os.Stat(exe); err != nil {
		return ""
	}
	return exe
})

// SelfHelper returns this program's executable when it can serve as the
// Sandbox's Landlock helper (its main calls [HelperMain], and the kernel
// offers Landlock); "" otherwise.
func SelfHelper() string {
	if !helperReady.Load() || LandlockABI() < 1 {
		return ""
	}
	return selfExe()
}

// SelfForwarder returns this program's executable when it can serve as
// the Sandbox's egress forwarder (its main calls [HelperMain]); "" when
// not. Unlike SelfHelper it needs no Landlock.
func SelfForwarder() string {
	if !helperReady.Load() {
		return ""
	}
	return selfExe()
}

// landlockRules is what a Landlock restriction grants: reading and executing
// everywhere, every file-system right under dirs, reading and writing
// files; noTCP cuts TCP bind and connect (ABI 4).
type landlockRules struct {
	dirs, files []string
	noTCP       bool
}

// helperArgv is the command line that runs inner through helper, under
// rules when they grant directories (else no Landlock), with f's forwards.
func helperArgv(helper string, r landlockRules, f forwardSpec, inner []string) []string {
	a := append([]string{helper, HelperArg}, forwardArgs(f)...)
	for _, d := range r.dirs {
		a = append(a, "--rw", d)
	}
	for _, f := range r.files {
		a = append(a, "--rw-file", f)
	}
	if r.noTCP {
		a = append(a, "--no-tcp")
	}
	a = append(a, "--")
	return append(a, inner...)
}

func parseHelperArgs(args []string) (landlockRules, []string, error) {
	r, _, argv, err := parseHelper(args)
	return r, argv, err
}

func parseHelper(args []string) (landlockRules, forwardSpec, []string, error) {
	var r landlockRules
	var f forwardSpec
	for i := 0; i < len(args); i++ {
		switch a := args[i]; {
		case a == "--":
			if i+1 >= len(args) {
				return r, f, nil, errors.New("no command")
			}
			if !f.active() && len(r.dirs) == 0 {
				return r, f, nil, errors.New("nothing to do: no --rw and no forward")
			}
			return r, f, args[i+1:], nil
		case a == "--no-tcp":
			r.noTCP = true
		case a == "--proxy":
			f.proxy = true
		case (a == "--egress" || a == "--mirror") && i+1 < len(args):
			if a == "--egress" {
				f.socket = args[i+1]
			} else {
				f.mirrors = append(f.mirrors, args[i+1])
			}
			i++
		case (a == "--rw" || a == "--rw-file") && i+1 < len(args):
			if a == "--rw" {
				r.dirs = append(r.dirs, args[i+1])
			} else {
				r.files = append(r.files, args[i+1])
			}
			i++
		default:
			return r, f, nil, fmt.Errorf("bad helper argument %q", a)
		}
	}
	return r, f, nil, errors.New("no command")
}

func lookPath(name string) (string, error) { return osexec.LookPath(name) }

// landlockDevices are the device files a restricted command may write.
var landlockDevices = []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/tty", "/dev/random", "/dev/urandom"}

// HostEscapes are host paths through which a sandboxed command could have
// a program run outside the sandbox, hidden by the sandbox when they
// exist: the D-Bus buses (systemd-run), systemd's private socket, the
// container engines' sockets, and the user's runtime directory (user bus,
// agents' sockets).
func HostEscapes() []string {
	return []string{
		"/run/dbus", "/var/run/dbus", "/run/systemd/private",
		"/run/docker.sock", "/var/run/docker.sock", "/run/containerd", "/run/podman",
		fmt.Sprintf("/run/user/%d", os.Getuid()),
	}
}
