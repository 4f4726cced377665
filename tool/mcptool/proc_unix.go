//go:build unix

package mcptool

import (
	"os/exec"
	"syscall"
)

// setProcessGroup starts the command in a process group of its own, so that
// killGroup reaches the server's children too.
func setProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// killGroup kills the command's process group. A group already gone is no
// error.
func killGroup(cmd *exec.Cmd) {
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}
