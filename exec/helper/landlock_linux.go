package helper

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"runtime"
	"sync"
	"syscall"
	"unsafe"
)

// Landlock system calls and constants (linux/landlock.h), the same on
// every architecture.
const (
	sysLandlockCreateRuleset = 444
	sysLandlockAddRule       = 445
	sysLandlockRestrictSelf  = 446

	landlockCreateRulesetVersion = 1 << 0
	landlockRulePathBeneath      = 1

	llExecute    = 1 << 0
	llWriteFile  = 1 << 1
	llReadFile   = 1 << 2
	llReadDir    = 1 << 3
	llRemoveDir  = 1 << 4
	llRemoveFile = 1 << 5
	llMakeChar   = 1 << 6
	llMakeDir    = 1 << 7
	llMakeReg    = 1 << 8
	llMakeSock   = 1 << 9
	llMakeFifo   = 1 << 10
	llMakeBlock  = 1 << 11
	llMakeSym    = 1 << 12
	llRefer      = 1 << 13 // ABI 2
	llTruncate   = 1 << 14 // ABI 3

	llNetBindTCP    = 1 << 0 // ABI 4
	llNetConnectTCP = 1 << 1

	llScopeAbstractUnix = 1 << 0 // ABI 6
	llScopeSignal       = 1 << 1

	prSetNoNewPrivs = 38       // PR_SET_NO_NEW_PRIVS
	oPath           = 0x200000 // O_PATH on the architectures Go supports
)

var landlockABI = sync.OnceValue(func() int {
	abi, _, errno := syscall.Syscall(sysLandlockCreateRuleset, 0, 0, landlockCreateRulesetVersion)
	if errno != 0 {
		return 0
	}
	return int(abi)
})

// LandlockABI returns the Landlock ABI version the kernel offers, 0 when it
// has none (older than 5.13, disabled at boot, or blocked by a seccomp
// filter).
func LandlockABI() int { return landlockABI() }

// Restrict confines the calling thread, and what it executes, to r (and
// sets no_new_privs on it). The caller has locked the thread to its
// goroutine and never unlocks it, so the restriction ends with the thread.
func Restrict(r Rules) error {
	abi := LandlockABI()
	if abi < 1 {
		return errors.New("the kernel offers no Landlock")
	}
	fsAll := uint64(llExecute | llWriteFile | llReadFile | llReadDir | llRemoveDir | llRemoveFile |
		llMakeChar | llMakeDir | llMakeReg | llMakeSock | llMakeFifo | llMakeBlock | llMakeSym)
	fileRights := uint64(llExecute | llWriteFile | llReadFile)
	if abi >= 2 {
		fsAll |= llRefer
	}
	if abi >= 3 {
		fsAll |= llTruncate
		fileRights |= llTruncate
	}
	// struct landlock_ruleset_attr grew with the ABI: fs, then net (4),
	// then scoped (6).
	attr := []uint64{fsAll}
	if abi >= 4 {
		var net uint64
		if r.NoTCP {
			net = llNetBindTCP | llNetConnectTCP
		}
		attr = append(attr, net)
	}
	if abi >= 6 {
		attr = append(attr, llScopeAbstractUnix|llScopeSignal)
	}
	fd, _, errno := syscall.Syscall(sysLandlockCreateRuleset, uintptr(unsafe.Pointer(&attr[0])), uintptr(8*len(attr)), 0)
	if errno != 0 {
		return fmt.Errorf("landlock_create_ruleset: %w", errno)
	}
	defer syscall.Close(int(fd))
	if err := addPathRule(int(fd), "/", llExecute|llReadFile|llReadDir); err != nil {
		return err
	}
	for _, d := range r.Dirs {
		if err := addPathRule(int(fd), d, fsAll); err != nil {
			return err
		}
	}
	for _, f := range r.Files {
		if err := addPathRule(int(fd), f, fileRights); err != nil && !errors.Is(err, syscall.ENOENT) {
			return err
		}
	}
	if err := prctl(prSetNoNewPrivs, 1); err != nil {
		return fmt.Errorf("no_new_privs: %w", err)
	}
	if _, _, errno := syscall.Syscall(sysLandlockRestrictSelf, fd, 0, 0); errno != 0 {
		return fmt.Errorf("landlock_restrict_self: %w", errno)
	}
	return nil
}

// addPathRule grants access beneath path (struct
// landlock_path_beneath_attr: a packed u64 and s32).
func addPathRule(ruleset int, path string, access uint64) error {
	fd, err := syscall.Open(path, oPath|syscall.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("landlock: %s: %w", path, err)
	}
	defer syscall.Close(fd)
	var attr [12]byte
	binary.NativeEndian.PutUint64(attr[0:8], access)
	binary.NativeEndian.PutUint32(attr[8:12], uint32(fd))
	_, _, errno := syscall.Syscall6(sysLandlockAddRule, uintptr(ruleset), landlockRulePathBeneath,
		uintptr(unsafe.Pointer(&attr[0])), 0, 0, 0)
	runtime.KeepAlive(&attr)
	if errno != 0 {
		return fmt.Errorf("landlock: %s: %w", path, errno)
	}
	return nil
}

func prctl(option, arg int) error {
	if _, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, uintptr(option), uintptr(arg), 0); errno != 0 {
		return errno
	}
	return nil
}

// runHelper applies the rules and replaces the process with argv; it
// returns only on failure.
func runHelper(r Rules, argv []string) error {
	runtime.LockOSThread() // Landlock and no_new_privs bind this thread; execve runs on it
	if err := Restrict(r); err != nil {
		return err
	}
	path, err := lookPath(argv[0])
	if err != nil {
		return err
	}
	return syscall.Exec(path, argv, os.Environ())
}
