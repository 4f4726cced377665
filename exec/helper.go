package exec

import (
	"fmt"
	"os"
	"sync"
	"sync/atomic"

	"github.com/reinhq/rein/exec/helper"
)

// HelperArg, as a program's first argument, makes the program serve as
// the sandbox's helper: apply a Landlock restriction and run a command
// under it, forwarding its connections to the egress gate when asked. rein
// re-executes itself this way inside bubblewrap, between it and bash, for
// the Sandbox's Landlock layer. It is not a user command. Package
// exec/helper serves it from its init, before the rest of the binary is
// initialised (when there is nothing to forward); every program linking
// this package does.
const HelperArg = helper.Arg

// helperReady says this program's main called HelperMain, so its
// executable can serve as the helper.
var helperReady atomic.Bool

// HelperMain must be called first in main, with os.Args. When the first
// argument is [HelperArg] it serves as the helper — restricts the process
// with Landlock as the rest of the arguments say, forwards connections to
// the egress gate when asked, and runs the command — and never returns; on
// failure it prints why and exits with 126, the command not run. (Without
// forwards, exec/helper's init has done this before main ran.) Otherwise
// it returns at once, and [SelfHelper] may offer this program as the
// helper.
func HelperMain(args []string) {
	if len(args) >= 2 && args[1] == HelperArg {
		helper.Main(args[2:], runForwarding)
	}
	helperReady.Store(true)
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
