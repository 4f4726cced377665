package exec

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	osexec "os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/reinhq/rein/exec/egress"
	"github.com/reinhq/rein/exec/helper"
)

// ErrNoSandbox is what Sandbox.Run returns, wrapped with the reason, when
// bubblewrap is missing or cannot create namespaces here. The sandbox fails
// closed: nothing runs unsandboxed.
var ErrNoSandbox = errors.New("sandbox required but bwrap is not available: install bubblewrap (apt-get install bubblewrap) or set the sandbox to off")

// Sandbox runs commands under bubblewrap (SPEC TOOL-5): the whole file system
// read-only, the workspace (and Writable) bind-mounted writable at the same
// path, a fresh /dev, /proc and an empty /tmp, its own PID namespace (so a
// kill reaches every process it started, and rein's own process, its
// memory and environment, cannot be seen), no capabilities (not even when
// rein runs as root) and no network unless AllowNetwork.
//
// Inside the workspace, what decides what runs outside the sandbox stays
// read-only however deep it lies: every git directory (.git directories,
// the directories .git files point to, bare repositories) keeps its
// [GitProtected] entries read-only, missing ones included, and every
// .rein and .claude is read-only (see [ProtectedNames], [HomeProtected]).
// A scan of the workspace before each command finds them (DefaultMaxScan
// bounds it); a second scan after the command moves aside what the
// command created that could run code on the host — a new repository's
// hooks and config, a new .git file, a new .rein or .claude — and says so
// in Output.Notes. Files Hide matches are covered (reading them
// fails), as are HidePaths and the host sockets that run programs outside
// the sandbox (D-Bus, container engines; see [HostEscapes]). The
// repositories the command runs in and the workspace's own keep objects,
// refs and index writable (git add, commit, checkout work); every other
// repository's git directory is read-only whole.
//
// With Landlock set, the command runs under a Landlock restriction too
// (writes to the workspace, /tmp and a few devices only; see
// [SelfHelper]), a second layer should a mount be undone.
//
// Files are read and written on the host, writes only inside the writable
// directories and never to a protected path. The zero value is usable: the
// writable directory is then each command's Dir.
type Sandbox struct {
	// Workspace is bind-mounted writable; "" means the command's Dir.
	Workspace string
	// Writable lists more directories to bind-mount writable (caches, say).
	// Only their top is checked for HomeProtected paths.
	Writable []string
	// AllowNetwork keeps the host's network; by default the command gets an
	// empty network namespace (loopback only, its own).
	AllowNetwork bool
	// Profile says what commands may write (SPEC TOOL-7): ProfileWorkspace
	// ("" too) makes the workspace, Writable, Caches and TempDir writable;
	// ProfileReadOnly only TempDir.
	Profile Profile
	// TempDir is the session's temporary directory, made before the first
	// command (and again if removed), bound writable and named by TMPDIR,
	// TMP, TEMP, GOTMPDIR and TMPPREFIX; "" gives each command a fresh one
	// in its private /tmp, gone with it. /tmp itself stays a private, empty
	// tmpfs.
	TempDir string
	// Caches are the toolchain caches bound writable under
	// ProfileWorkspace (see ToolchainCaches); their Env is set.
	Caches Caches
	// Egress, unless AllowNetwork, carries the command's connections to the
	// hosts of its allow-list: rein serves a gate for each command on a
	// unix socket bound into the sandbox, the helper (Forwarder) turns it
	// into HTTP_PROXY and HTTPS_PROXY inside and mirrors the allowed
	// loopback ports of the host at their own addresses. An empty list
	// is no network.
	Egress *egress.Proxy
	// Forwarder is the executable that serves as the egress forwarder in
	// the sandbox, applying Landlock too when set (see HelperMain); ""
	// means SelfForwarder(), else Landlock's helper unless it is the
	// HelperProgram, which cannot forward.
	Forwarder string
	// Bwrap is the bubblewrap binary; "" means "bwrap" in PATH.
	Bwrap string
	// ProbeCache, when set, is a file where a successful probe of bwrap
	// (see Available) is remembered across processes, keyed by what
	// decides its outcome (see probe.go); "" probes once a process.
	ProbeCache string
	// Hide, when set, is asked about every entry of the workspace by
	// absolute path; the files and directories it matches are covered in
	// the sandbox (a file by /dev/null, which cannot be opened there; a
	// directory by an empty read-only tmpfs), so no command can read them.
	// A matching symbolic link covers its target.
	Hide func(path string) bool
	// HidePaths are more files or directories to cover when they exist,
	// such as credentials outside the workspace.
	HidePaths []string
	// Landlock is the helper executable that applies Landlock inside the
	// sandbox (see SelfHelper); "" means no Landlock layer.
	Landlock string
	// MaxScan bounds the entries the workspace scans visit; 0 means
	// DefaultMaxScan. A larger workspace is refused.
	MaxScan int
	// MaxMounts bounds the mounts that protect and hide; 0 means
	// DefaultMaxMounts. A workspace whose repositories and settings need
	// more is refused; sensitive files beyond it stay readable, with a note.
	MaxMounts int
	// ConfineReads builds the sandbox's file system from an allow-list
	// instead of the host's whole tree (SPEC API-9; a server's runs): on an
	// empty root, the [SystemDirs] read-only without the [SystemSecrets],
	// ReadOnly and GoModCache read-only, the workspace, Writable and Cache
	// writable, a private /tmp that is also the command's HOME. Nothing
	// else of the host can be read: no home directory, no other workspace,
	// no server data. ReadFile and Stat refuse what the command could not
	// see. HidePaths then only matter inside what is shown.
	ConfineReads bool
	// ReadOnly lists more directories shown read-only under ConfineReads
	// (not under /tmp, which the sandbox replaces).
	ReadOnly []string
	// GoModCache, under ConfineReads, is a Go module cache shown read-only
	// and named by GOMODCACHE, so a module's dependencies build offline.
	GoModCache string
	// Cache, under ConfineReads, is a directory (existing) bind-mounted
	// writable for the command's caches: XDG_CACHE_HOME, and GOCACHE in
	// it. "" means /tmp/.cache, gone after each command.
	Cache string
	// Local carries the output and kill settings (MaxMemory, MaxSpill,
	// SpillDir, PassEnv, KillDelay, PipeGrace).
	Local Local
}

// Name implements Backend.
func (s *Sandbox) Name() string { return "bwrap" }

// probed caches the bwrap binaries known to work here.
var probed sync.Map // path → struct{}

// Available reports whether bubblewrap can run here: found, and able to
// create the namespaces the sandbox uses. The error wraps ErrNoSandbox.
func (s *Sandbox) Available() error {
	_, err := s.bwrap()
	return err
}

func (s *Sandbox) bwrap() (string, error) {
	name := s.Bwrap
	if name == "" {
		name = "bwrap"
	}
	path, err := lookBwrap(name)
	if err != nil {
		return "", fmt.Errorf("%w (%s not found in PATH)", ErrNoSandbox, name)
	}
	if _, ok := probed.Load(path); ok {
		return path, nil
	}
	var key string
	if s.ProbeCache != "" {
		if key = probeKey(path); probeRemembered(s.ProbeCache, key) {
			probed.Store(path, struct{}{})
			return path, nil
		}
	}
	// The strictest set of namespaces the sandbox uses.
	c := osexec.Command(path, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--cap-drop", "ALL",
		"--unshare-pid", "--unshare-ipc", "--unshare-net", "--die-with-parent", "--new-session", "--", "true")
	c.Env = baseEnv(nil)
	msg, err := c.CombinedOutput()
	if err != nil {
		reason := strings.TrimSpace(string(msg))
		if reason == "" {
			reason = err.Error()
		}
		return "", fmt.Errorf("%w (%s)", ErrNoSandbox, reason)
	}
	probed.Store(path, struct{}{})
	rememberProbe(s.ProbeCache, key)
	return path, nil
}

// foundBwrap remembers where PATH led to each bubblewrap name: a server
// asks at every run and every command, and a look-up stats the name in
// each directory of PATH (issue 30).
var foundBwrap sync.Map // name NUL PATH → path

// lookBwrap is exec.LookPath(name), remembered for the same name and PATH
// while what it found is still an executable file. A bubblewrap placed
// later in a directory earlier in PATH is not seen until then: the
// operator's bubblewrap stays the one the process started with.
func lookBwrap(name string) (string, error) {
	key := name + "\x00" + os.Getenv("PATH")
	if p, ok := foundBwrap.Load(key); ok {
		if fi, err := os.Stat(p.(string)); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return p.(string), nil
		}
		foundBwrap.Delete(key)
	}
	p, err := osexec.LookPath(name)
	if err != nil {
		return "", err
	}
	foundBwrap.Store(key, p)
	return p, nil
}

// Run implements Backend. It fails closed with an error wrapping ErrNoSandbox
// when bubblewrap cannot run, and with an error when the workspace cannot
// be scanned for what to protect.
func (s *Sandbox) Run(ctx context.Context, cmd Command) (Output, error) {
	inner, err := argvOf(cmd)
	if err != nil {
		return Output{}, err
	}
	res := newResolver() // the preparation's lookups, until the command starts
	dir, err := s.dirOf(cmd, res)
	if err != nil {
		return Output{}, err
	}
	bw, err := s.bwrap()
	if err != nil {
		return Output{}, err
	}
	var pinned *os.File
	if s.ConfineReads && s.Workspace != "" {
		if pinned, err = s.pinWorkspace(res); err != nil {
			return Output{}, fmt.Errorf("exec: sandbox: %w", err)
		}
		defer pinned.Close()
	}
	writable := s.writable(dir, res)
	if len(writable) == 0 {
		return Output{}, fmt.Errorf("exec: sandbox: workspace %s does not exist", s.Workspace)
	}
	if s.Profile == ProfileOff {
		return Output{}, errors.New("exec: sandbox: the profile off runs commands on the host: use exec.Local")
	}
	if s.Profile != ProfileReadOnly {
		writable = append(writable, s.Caches.Dirs...)
	}
	tmp, err := s.tempDir(res)
	if err != nil {
		return Output{}, fmt.Errorf("exec: sandbox: %w", err)
	}
	if !s.visible(dir, writable, res) {
		return Output{}, fmt.Errorf("exec: sandbox: working directory %s is not in the sandbox (under /tmp, which is an empty tmpfs there, or outside the confined sandbox's directories); make it the workspace", dir)
	}
	hides := append(HostEscapes(), s.HidePaths...)
	var env []string
	if s.ConfineReads {
		hides = s.confinedHides(s.confinedVisible(writable, res), res)
		env = s.confinedEnv()
	}
	sh, err := newShield(shieldOptions{writable: writable, dir: dir, hide: s.Hide,
		hidePaths: hides, limit: s.MaxScan, maxMounts: s.MaxMounts, res: res})
	if err != nil {
		return Output{}, fmt.Errorf("exec: sandbox: %w", err)
	}
	if s.Profile != ProfileReadOnly {
		if err := sh.linkedWorktree(writable[0]); err != nil {
			sh.release()
			return Output{}, fmt.Errorf("exec: sandbox: %w", err)
		}
	}
	eg, err := s.openEgress()
	if err != nil {
		sh.release()
		return Output{}, fmt.Errorf("exec: sandbox: %w", err)
	}
	defer eg.close()
	hexe := s.Landlock
	var fwd helper.Forward
	if eg != nil {
		fwd = eg.fwd
		hexe = s.forwarder()
		if hexe == "" {
			sh.release()
			return Output{}, errors.New("exec: sandbox: the network allow-list needs rein's helper in the sandbox, and this program offers none (its main does not call exec.HelperMain)")
		}
	}
	args := s.args(writable, tmp, hexe, sh.args, eg.args(), res)
	if hexe != "" {
		var rules helper.Rules
		if s.Landlock != "" {
			// No TCP rule: the empty network namespace is the boundary,
			// and loopback inside it (a dev server and its client) is the
			// command's own.
			rules = helper.Rules{Dirs: append(s.landlockDirs(writable), tmp, "/tmp", "/dev/shm"), Files: landlockDevices}
		}
		inner = helper.Argv(hexe, rules, fwd, inner)
	}
	if pinned != nil {
		args = bindPinned(args, filepath.Clean(s.Workspace), 4, bw) // ExtraFiles[1] below
	}
	args = append(args, "--chdir", dir)
	argFile, err := argsPipe(args)
	if err != nil {
		sh.release()
		return Output{}, fmt.Errorf("exec: sandbox: %w", err)
	}
	defer argFile.Close()
	// The options come from the file; the command must be on the command line.
	c := osexec.Command(bw, append([]string{"--args", "3", "--"}, inner...)...)
	c.ExtraFiles = []*os.File{argFile}
	if pinned != nil {
		c.ExtraFiles = append(c.ExtraFiles, pinned) // descriptor 4
	}
	var caches []string
	if s.Profile != ProfileReadOnly {
		caches = s.Caches.Env
	}
	c.Env = baseEnv(s.Local.PassEnv, tempEnv(tmp), env, caches, cmd.Env)
	sh.res = nil // from here on the file system is looked at afresh
	out, err := runProcess(ctx, c, cmd, s.Local.limits())
	sh.release()
	if err != nil {
		return Output{}, fmt.Errorf("exec: sandbox run: %w", err)
	}
	out.Notes = append(sh.notes, sh.check()...)
	out.Notes = append(out.Notes, eg.notes()...)
	out.Notes = append(out.Notes, s.explain(out, dir, eg != nil)...)
	return out, nil
}

// forwarder is the executable that serves as the egress forwarder (see
// the Forwarder field); "" when there is none.
func (s *Sandbox) forwarder() string {
	if s.Forwarder != "" {
		return s.Forwarder
	}
	if f := SelfForwarder(); f != "" {
		return f
	}
	if s.Landlock != "" && filepath.Base(s.Landlock) != HelperProgram {
		return s.Landlock
	}
	return ""
}

// argsPipe feeds bubblewrap's options, NUL-separated, for --args: a
// workspace with many repositories makes more than a command line holds.
// A pipe rather than a file, because bubblewrap leaves the descriptor open
// in the command: it finds only the end of an emptied pipe. The writer
// ends when the pipe is read whole or its read end closed.
func argsPipe(args []string) (*os.File, error) {
	var b strings.Builder
	for _, a := range args {
		if strings.IndexByte(a, 0) >= 0 {
			return nil, fmt.Errorf("argument %q holds a NUL byte", a)
		}
		b.WriteString(a)
		b.WriteByte(0)
	}
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	go func() {
		_, _ = io.WriteString(w, b.String())
		w.Close()
	}()
	return r, nil
}

func (s *Sandbox) dirOf(cmd Command, res *resolver) (string, error) {
	dir := cmd.Dir
	if dir == "" {
		dir = s.Workspace
	}
	if dir == "" {
		return "", errors.New("exec: sandbox: no working directory and no workspace")
	}
	if err := checkDir(dir); err != nil {
		return "", err
	}
	return res.realDir(dir)
}

// args are bubblewrap's options before --chdir. Order matters: the writable
// binds come after the tmpfs on /tmp, so a workspace under /tmp stays
// visible, and so does the Landlock helper; the shield's options (read-only
// binds and covers inside the workspace) come after them.
func (s *Sandbox) args(writable []string, tmp, helper string, shield, egress []string, res *resolver) []string {
	a := []string{"--ro-bind", "/", "/"}
	if s.ConfineReads {
		a = append(s.confinedRoot(res), s.confinedCovers(writable, res)...)
	}
	a = append(a,
		"--dev", "/dev",
		"--proc", "/proc",
		"--tmpfs", "/tmp",
	)
	bind := "--bind"
	if s.Profile == ProfileReadOnly {
		bind = "--ro-bind"
	}
	for _, w := range writable {
		a = append(a, bind, w, w)
	}
	a = append(a, s.tempArgs(tmp)...)
	if helper != "" {
		a = append(a, "--ro-bind", helper, helper)
	}
	a = append(a, egress...)
	a = append(a, shield...)
	a = append(a, "--cap-drop", "ALL", "--unshare-pid", "--unshare-ipc")
	if !s.AllowNetwork {
		a = append(a, "--unshare-net")
	}
	return append(a, "--die-with-parent", "--new-session")
}

// visible reports whether dir exists inside the sandbox: inside a
// writable bind, or anywhere but /tmp — in a confined sandbox, only in
// what it shows.
func (s *Sandbox) visible(dir string, writable []string, res *resolver) bool {
	real, err := res.realDir(dir)
	if err != nil {
		return false
	}
	if withinAny(writable, real) {
		return true
	}
	if s.ConfineReads {
		return withinAny(s.confinedVisible(nil, res), real)
	}
	return !within("/tmp", real)
}

// writable lists the writable directories, absolute and with symlinks
// resolved, as bind mounts need them, the workspace first; nil when the
// workspace does not resolve. res may be nil.
func (s *Sandbox) writable(dir string, res *resolver) []string {
	ws := s.Workspace
	if ws == "" {
		ws = dir
	}
	var out []string
	more := s.Writable
	if s.ConfineReads && s.Cache != "" {
		more = append(slices.Clone(more), s.Cache)
	}
	for i, d := range append([]string{ws}, more...) {
		r, err := res.realDir(d)
		if err != nil && i == 0 {
			return nil // no workspace, nothing writable
		}
		if i == 0 && s.ConfineReads && s.Workspace != "" && r != filepath.Clean(s.Workspace) {
			// A server's workspace is given without links; one swapped for
			// a link since leads to another caller's directory: nothing is
			// writable (or, confined, readable) through it (SPEC API-9).
			return nil
		}
		if err == nil {
			out = append(out, r)
		}
	}
	return out
}

func realDir(d string) (string, error) { return (*resolver)(nil).realDir(d) }

// ReadFile implements Backend; the host is readable as in the sandbox:
// all of it but what Hide matches, or, with ConfineReads, only what the
// sandbox shows.
func (s *Sandbox) ReadFile(ctx context.Context, path string) ([]byte, error) {
	if s.hidden(path) {
		return nil, fmt.Errorf("read %s: the sandbox hides this file", path)
	}
	if err := s.readable(path); err != nil {
		return nil, err
	}
	return s.Local.ReadFile(ctx, path)
}

// hidden reports whether Hide matches path, as written or resolved.
func (s *Sandbox) hidden(path string) bool {
	if s.Hide == nil {
		return false
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return false
	}
	if s.Hide(abs) {
		return true
	}
	real, err := ResolveExisting(abs)
	return err == nil && s.Hide(real)
}

// Stat implements Backend.
func (s *Sandbox) Stat(ctx context.Context, path string) (fs.FileInfo, error) {
	if err := s.readable(path); err != nil {
		return nil, err
	}
	return s.Local.Stat(ctx, path)
}

// WriteFile implements Backend, refusing paths outside the writable
// directories (symlinks resolved). With no Workspace set nothing is writable.
func (s *Sandbox) WriteFile(ctx context.Context, path string, data []byte, perm fs.FileMode) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	real, err := ResolveExisting(path)
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if s.hidden(path) {
		return fmt.Errorf("write %s: the sandbox hides this file", path)
	}
	for _, w := range s.writableDirs() {
		if !within(w, real) {
			continue
		}
		rel, _ := filepath.Rel(w, real)
		if protectedRel(rel) || homeProtected(real) {
			return fmt.Errorf("write %s: the sandbox keeps git's repositories, .rein, .claude and your shell, git and rein settings read-only", path)
		}
		return writeResolved(real, data, perm) // no link followed after the checks
	}
	return fmt.Errorf("write %s: outside the sandbox's writable workspace %s", path, s.Workspace)
}

// protectedRel reports whether a path relative to a writable directory is
// one the sandbox keeps read-only: inside a .git, .rein or .claude, or a
// HomeProtected path.
func protectedRel(rel string) bool {
	rel = filepath.ToSlash(rel)
	for _, part := range strings.Split(rel, "/") {
		if slices.Contains(ProtectedNames, part) {
			return true
		}
	}
	for _, h := range HomeProtected {
		if rel == h || strings.HasPrefix(rel, h+"/") {
			return true
		}
	}
	return false
}

func (s *Sandbox) writableDirs() []string {
	if s.Workspace == "" {
		return nil
	}
	return s.writable(s.Workspace, nil)
}

// ResolveExisting resolves the symlinks of path's deepest existing
// ancestor and joins the rest, so a link inside the workspace that points
// out of it is seen for what it is even when the file itself does not
// exist yet.
func ResolveExisting(path string) (string, error) {
	p, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	var rest []string
	for {
		if r, err := filepath.EvalSymlinks(p); err == nil {
			return filepath.Join(append([]string{r}, rest...)...), nil
		} else if !errors.Is(err, fs.ErrNotExist) {
			return "", err
		}
		parent := filepath.Dir(p)
		if parent == p {
			return "", fmt.Errorf("no existing parent")
		}
		rest = append([]string{filepath.Base(p)}, rest...)
		p = parent
	}
}

// within reports whether path is dir or inside it; both are clean and absolute.
func within(dir, path string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

var _ Backend = (*Sandbox)(nil)
var _ Backend = (*Local)(nil)

// landlockDirs are the directories of writable Landlock lets the command
// write: all of them but under ProfileReadOnly.
func (s *Sandbox) landlockDirs(writable []string) []string {
	if s.Profile == ProfileReadOnly {
		return nil
	}
	return slices.Clone(writable)
}
