package exec

import (
	"fmt"
	"os"
	osexec "os/exec"
	"path/filepath"
	"slices"
	"sync"
)

// SystemDirs are the host directories a sandbox with ConfineReads shows,
// read-only, when they exist (SPEC API-9): what running programs needs —
// the binaries and libraries, /etc without its secrets (see
// [SystemSecrets]), /opt — and the Go toolchain wherever its GOROOT lies.
// Nothing else of the host is there: not /root, /home, /srv, /mnt,
// /var/lib, /run, nor any directory a server keeps its data in.
func SystemDirs() []string {
	dirs := []string{"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt"}
	if g := goRoot(); g != "" && !withinAny(dirs, g) {
		dirs = append(dirs, g)
	}
	return dirs
}

// SystemSecrets are the files and directories of the system directories
// a sandbox with ConfineReads covers: password hashes, SSH host keys, TLS
// private keys, sudo's rules. Globs are expanded at each run.
var SystemSecrets = []string{
	"/etc/shadow", "/etc/shadow-", "/etc/gshadow", "/etc/gshadow-", "/etc/security/opasswd",
	"/etc/ssh/ssh_host_*key", "/etc/ssl/private", "/etc/sudoers", "/etc/sudoers.d",
}

// goRoot is the GOROOT of the go command in PATH, "" without one: the
// directory above the bin directory its executable (links resolved) lies in.
var goRoot = sync.OnceValue(func() string {
	p, err := osexec.LookPath("go")
	if err != nil {
		return ""
	}
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		return ""
	}
	root := filepath.Dir(filepath.Dir(real))
	if fi, err := os.Stat(filepath.Join(root, "src", "runtime")); err != nil || !fi.IsDir() {
		return ""
	}
	return root
})

// confinedCache is where a confined command's caches live when the
// Sandbox has no Cache directory: the private /tmp, gone after the command.
const confinedCache = "/tmp/.cache"

// confinedRoot returns the bubblewrap options that build a confined
// sandbox's file system on an empty root: the system directories read-only
// (a top-level link such as /bin -> usr/bin or /lib64 -> /usr/lib64
// recreated as a link, which leads nowhere when its target is not shown),
// then ReadOnly. The writable binds, /dev, /proc and /tmp come after (see
// Sandbox.args).
func (s *Sandbox) confinedRoot(res *resolver) []string {
	var a, bound []string
	for _, d := range s.readOnlyDirs() {
		fi, err := res.lstat(d)
		switch {
		case err != nil:
			continue
		case fi.Mode()&os.ModeSymlink != 0 && filepath.Dir(d) == "/":
			if t, err := res.readlink(d); err == nil {
				a = append(a, "--symlink", t, d)
				continue
			}
		}
		real, err := res.evalSymlinks(d)
		if err != nil || withinAny(bound, real) {
			continue
		}
		bound = append(bound, real)
		a = append(a, "--ro-bind", real, real)
	}
	return a
}

// readOnlyDirs are the directories a confined sandbox shows read-only.
func (s *Sandbox) readOnlyDirs() []string {
	dirs := append(SystemDirs(), s.ReadOnly...)
	if s.GoModCache != "" {
		dirs = append(dirs, s.GoModCache)
	}
	if s.AllowNetwork {
		dirs = append(dirs, "/run/systemd/resolve") // where /etc/resolv.conf often points
	}
	return dirs
}

// confinedCovers are the options that empty, before the writable binds,
// each HidePaths directory that holds a writable directory and lies in a
// directory shown read-only — a server's root under /opt, say: the
// workspace is bound again on top, its neighbours are gone.
func (s *Sandbox) confinedCovers(writable []string, res *resolver) []string {
	shown := s.confinedVisible(nil, res)
	var a []string
	for _, p := range s.HidePaths {
		h, err := res.evalSymlinks(p)
		if err != nil || !withinAny(shown, h) {
			continue
		}
		if slices.ContainsFunc(writable, func(w string) bool { return within(h, w) }) {
			a = append(a, "--tmpfs", h)
		}
	}
	return a
}

// confinedVisible are the host directories a confined command sees:
// the system directories, ReadOnly and the writable directories, links
// resolved. res may be nil.
func (s *Sandbox) confinedVisible(writable []string, res *resolver) []string {
	out := slices.Clone(writable)
	for _, d := range s.readOnlyDirs() {
		if real, err := res.evalSymlinks(d); err == nil {
			out = append(out, real)
		}
	}
	return out
}

// confinedHides are the paths a confined sandbox covers: the system
// secrets, then HidePaths and HostEscapes that lie in what it shows (the
// others are not there to cover).
func (s *Sandbox) confinedHides(visible []string, res *resolver) []string {
	var out []string
	for _, g := range SystemSecrets {
		m, _ := filepath.Glob(g)
		out = append(out, m...)
	}
	for _, p := range append(HostEscapes(), s.HidePaths...) {
		if real, err := res.evalSymlinks(p); err == nil && withinAny(visible, real) {
			out = append(out, p)
		}
	}
	return out
}

// confinedEnv is the environment a confined command gets on top of the
// usual: a home and caches of its own (the host's home is not there), the
// Go module cache when one is shown read-only.
func (s *Sandbox) confinedEnv() []string {
	cache := s.Cache
	if cache == "" {
		cache = confinedCache
	}
	env := []string{"HOME=/tmp", "XDG_CACHE_HOME=" + cache, "GOCACHE=" + filepath.Join(cache, "go-build"),
		"GOPATH=/tmp/go"}
	if s.GoModCache != "" {
		env = append(env, "GOMODCACHE="+s.GoModCache)
	}
	if !s.AllowNetwork {
		env = append(env, "GOPROXY=off") // a missing module says so at once
	}
	return env
}

// readable reports whether a confined sandbox lets its file operations
// read path: it lies (links resolved) in the writable directories, the
// system directories or ReadOnly.
func (s *Sandbox) readable(path string) error {
	if !s.ConfineReads {
		return nil
	}
	real, err := ResolveExisting(path)
	if err != nil {
		return fmt.Errorf("read %s: %w", path, err)
	}
	if withinAny(s.confinedVisible(s.writableDirs(), nil), real) {
		return nil
	}
	return fmt.Errorf("read %s: outside what the sandbox shows (the workspace %s and the system's read-only directories)", path, s.Workspace)
}
