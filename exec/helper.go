package exec

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"

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

// HelperProgram is the name of the Landlock helper on its own
// (cmd/rein-sandbox-helper, built beside rein by scripts/build): a 2 MB
// program that adds ~1.6 ms of CPU to a sandboxed command where rein,
// executed again as the helper, adds ~4.7 (issue 30). It cannot forward
// connections to the egress gate; rein itself does that.
const HelperProgram = "rein-sandbox-helper"

// SelfHelper returns the executable that serves as the Sandbox's Landlock
// helper when this program can offer one (its main calls [HelperMain], and
// the kernel offers Landlock): [HelperProgram] in the directory of this
// program's executable when it is there and no one but its owner, root or
// this user, can change it, else the executable itself; "" otherwise. A
// HelperProgram built from other sources than this program refuses to run
// the command (exec/helper.Protocol): it is rebuilt or removed, never used
// to restrict a command the old way.
func SelfHelper() string {
	if !helperReady.Load() || LandlockABI() < 1 {
		return ""
	}
	if h := companion(); h != "" {
		return h
	}
	return selfExe()
}

var companion = sync.OnceValue(func() string { return companionOf(selfExe()) })

// companionOf returns HelperProgram in the directory of the executable exe
// when it may stand in for exe: a regular file (not a link), executable,
// and it and its directory owned by root or this user and writable by no
// one else — whoever could change it could as well change exe. "" when
// not.
func companionOf(exe string) string {
	if exe == "" {
		return ""
	}
	dir := filepath.Dir(exe)
	p := filepath.Join(dir, HelperProgram)
	if !ownerOnly(dir, true) || !ownerOnly(p, false) {
		return ""
	}
	return p
}

// ownerOnly reports whether path (not followed if a link) is a directory
// (dir) or an executable regular file (!dir), owned by root or this user,
// writable by its owner only.
func ownerOnly(path string, dir bool) bool {
	fi, err := os.Lstat(path)
	if err != nil {
		return false
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok || (st.Uid != 0 && int(st.Uid) != os.Getuid()) || fi.Mode().Perm()&0o022 != 0 {
		return false
	}
	if dir {
		return fi.IsDir()
	}
	return fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0
}

// SelfForwarder returns this program's executable when it can serve as
// the Sandbox's egress forwarder (its main calls [HelperMain]); "" when
// not. Unlike SelfHelper it needs no Landlock, and it is never
// [HelperProgram], which cannot forward.
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
