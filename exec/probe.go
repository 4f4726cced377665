package exec

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// The bubblewrap probe (Sandbox.Available) starts bwrap with the
// namespaces the sandbox uses and runs true: ~10 ms of wall time, which
// was a quarter of a one-shot run's start before its first model request
// (issue 30, CLI-1). A Sandbox with ProbeCache remembers a successful
// probe in that file, keyed by everything that decides whether bwrap can
// create its namespaces: the bwrap binary (path, size, modification time,
// inode), the boot, the user, the user and PID namespaces rein runs in
// (another container is another key), its seccomp and no-new-privileges
// state, and the kernel's switches for unprivileged user namespaces.
// A failure is never remembered. A stale entry can only say bwrap works
// where it no longer does: the sandbox then fails closed (bwrap's error,
// nothing run unsandboxed) until the key changes.

// probeKeyFiles are the kernel switches that decide whether an
// unprivileged process may create user namespaces.
var probeKeyFiles = []string{
	"/proc/sys/kernel/random/boot_id",
	"/proc/sys/kernel/unprivileged_userns_clone",
	"/proc/sys/user/max_user_namespaces",
	"/proc/sys/kernel/apparmor_restrict_unprivileged_userns",
}

// probeKey is the key of a probe of the bwrap binary at path; "" when it
// cannot be computed (then nothing is remembered).
func probeKey(path string) string {
	st, err := os.Stat(path)
	if err != nil {
		return ""
	}
	id, ok := idOf(st)
	if !ok {
		return ""
	}
	h := sha256.New()
	fmt.Fprintf(h, "bwrap %s %d %d %v uid %d\n", path, st.Size(), st.ModTime().UnixNano(), id, os.Getuid())
	for _, ns := range []string{"/proc/self/ns/user", "/proc/self/ns/pid"} {
		link, err := os.Readlink(ns)
		if err != nil {
			return ""
		}
		fmt.Fprintf(h, "%s %s\n", ns, link)
	}
	for _, f := range probeKeyFiles {
		b, _ := os.ReadFile(f) // absent on some kernels: part of the key as ""
		fmt.Fprintf(h, "%s %q\n", f, b)
	}
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return ""
	}
	for line := range strings.Lines(string(status)) {
		if strings.HasPrefix(line, "Seccomp") || strings.HasPrefix(line, "NoNewPrivs") {
			h.Write([]byte(line))
		}
	}
	return hex.EncodeToString(h.Sum(nil))
}

// probeRemembered reports whether file remembers a successful probe under key.
func probeRemembered(file, key string) bool {
	if file == "" || key == "" {
		return false
	}
	b, err := os.ReadFile(file)
	return err == nil && strings.TrimSpace(string(b)) == key
}

// rememberProbe writes key to file (atomically, mode 0600); a failure only
// costs the next run a probe.
func rememberProbe(file, key string) {
	if file == "" || key == "" {
		return
	}
	dir := filepath.Dir(file)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return
	}
	tmp, err := os.CreateTemp(dir, ".bwrap-probe-*")
	if err != nil {
		return
	}
	_, werr := tmp.WriteString(key + "\n")
	if cerr := tmp.Close(); werr != nil || cerr != nil {
		os.Remove(tmp.Name())
		return
	}
	if err := os.Rename(tmp.Name(), file); err != nil {
		os.Remove(tmp.Name())
	}
}
