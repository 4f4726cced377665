package secretenv

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"syscall"
)

// overwriteEnvBlock zeroes the process's original environment block, the
// bytes between env_start and env_end (fields 50 and 51 of
// /proc/self/stat) that /proc/PID/environ shows, through /proc/self/mem.
func overwriteEnvBlock() (int, error) {
	stat, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		return 0, fmt.Errorf("secretenv: %w", err)
	}
	start, end, err := envBounds(stat)
	if err != nil {
		return 0, err
	}
	if end <= start {
		return 0, nil
	}
	mem, err := os.OpenFile("/proc/self/mem", os.O_RDWR, 0)
	if err != nil {
		return 0, fmt.Errorf("secretenv: %w", err)
	}
	defer mem.Close()
	n, err := mem.WriteAt(make([]byte, end-start), int64(start))
	if err != nil {
		return n, fmt.Errorf("secretenv: overwrite the environment block: %w", err)
	}
	return n, nil
}

// envBounds reads env_start and env_end from /proc/PID/stat: fields 50 and
// 51, counting from 1, after the command name in parentheses (which may
// hold spaces and parentheses itself).
func envBounds(stat []byte) (start, end uint64, err error) {
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, 0, fmt.Errorf("secretenv: /proc/self/stat: no command name")
	}
	f := bytes.Fields(stat[i+1:]) // f[0] is field 3
	if len(f) < 49 {
		return 0, 0, fmt.Errorf("secretenv: /proc/self/stat has %d fields, env_start needs 51 (Linux 3.5)", len(f)+2)
	}
	if start, err = strconv.ParseUint(string(f[47]), 10, 64); err == nil {
		end, err = strconv.ParseUint(string(f[48]), 10, 64)
	}
	if err != nil {
		return 0, 0, fmt.Errorf("secretenv: /proc/self/stat: %w", err)
	}
	return start, end, nil
}

const (
	prSetDumpable = 4 // PR_SET_DUMPABLE
	prGetDumpable = 3 // PR_GET_DUMPABLE
)

// setNonDumpable makes /proc/PID/environ, mem and the like owned by root
// and closes ptrace to processes without CAP_SYS_PTRACE. Children, once
// they execute, are dumpable again.
func setNonDumpable() error {
	if _, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, prSetDumpable, 0, 0); errno != 0 {
		return fmt.Errorf("secretenv: prctl(PR_SET_DUMPABLE): %w", errno)
	}
	return nil
}

// nonDumpable reports whether the process is non-dumpable.
func nonDumpable() bool {
	r, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, prGetDumpable, 0, 0)
	return errno == 0 && r == 0
}
