package exec

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	osexec "os/exec"
	"path/filepath"
	"slices"
	"strings"
)

// Cache modes of SettingCaches.
const (
	// CachesShared (the default): the user's own toolchain caches,
	// writable in the sandbox — a build inside reuses and fills them.
	CachesShared = "shared"
	// CachesIsolated: caches of the workspace's own under a rein-owned
	// root, the user's untouched (a command cannot plant anything in the
	// caches the user's own builds read).
	CachesIsolated = "isolated"
)

// Caches are the toolchain caches a command of the workspace profile may
// write (SPEC TOOL-7): regenerable downloads and build outputs, not
// secrets.
type Caches struct {
	// Mode is CachesShared or CachesIsolated.
	Mode string
	// Dirs are bound writable; they exist (see ToolchainCaches).
	Dirs []string
	// Env points the tools at them.
	Env []string
}

// cacheTool is one toolchain's cache: its directory relative to home (or
// from a variable), the program whose presence makes rein create it when
// missing, and the variable that moves it in isolated mode.
type cacheTool struct {
	rel, program string
	env          func(dir string) []string
}

// toolCaches are the caches bound in shared mode (beside Go's and the XDG
// cache directory, which depend on variables).
var toolCaches = []cacheTool{
	{rel: ".npm", program: "npm", env: func(d string) []string { return []string{"npm_config_cache=" + d} }},
	{rel: ".local/share/pnpm/store", program: "pnpm", env: func(d string) []string { return []string{"npm_config_store_dir=" + d} }},
	{rel: ".yarn/berry", program: "yarn", env: func(d string) []string {
		return []string{"YARN_CACHE_FOLDER=" + filepath.Join(d, "cache"), "YARN_GLOBAL_FOLDER=" + d}
	}},
	{rel: ".cargo/registry", program: "cargo"},
	{rel: ".cargo/git", program: "cargo"},
	{rel: ".m2/repository", program: "mvn", env: func(d string) []string { return []string{"MAVEN_OPTS=-Dmaven.repo.local=" + d} }},
	{rel: ".gradle/caches", program: "gradle"},
	{rel: ".gradle/wrapper", program: "gradle"},
	{rel: ".bun/install/cache", program: "bun", env: func(d string) []string { return []string{"BUN_INSTALL_CACHE_DIR=" + d} }},
}

// ToolchainCaches returns the caches for mode (CachesShared when ""), as
// the user's environment (getenv) and home place them:
//
//   - shared: Go's build cache and module cache (GOCACHE, GOMODCACHE, or
//     their defaults), the XDG cache directory (~/.cache: pip, uv, Yarn 1,
//     pnpm's metadata, pre-commit, golangci-lint), ~/.npm, pnpm's store,
//     Yarn's berry cache, cargo's registry and git checkouts, Maven's
//     repository, Gradle's caches and wrappers, bun's cache. One that is
//     missing is created when its program is installed (the XDG cache
//     directory and Go's always), so the first build can fill it.
//   - isolated: one directory per workspace under isolatedRoot (see
//     [IsolatedCacheRoot]), with GOCACHE, GOMODCACHE, XDG_CACHE_HOME,
//     npm_config_cache, PIP_CACHE_DIR, UV_CACHE_DIR, CARGO_HOME,
//     GRADLE_USER_HOME and the others pointing into it.
//
// An error says which directory could not be made.
func ToolchainCaches(mode, home string, getenv func(string) string, isolatedRoot string) (Caches, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	switch mode {
	case "", CachesShared:
		return sharedCaches(home, getenv)
	case CachesIsolated:
		return isolatedCaches(isolatedRoot, getenv)
	}
	return Caches{}, fmt.Errorf("%s: want %s or %s, got %q", SettingCaches, CachesShared, CachesIsolated, mode)
}

func sharedCaches(home string, getenv func(string) string) (Caches, error) {
	c := Caches{Mode: CachesShared}
	if home == "" {
		return c, nil
	}
	xdg := getenv("XDG_CACHE_HOME")
	if xdg == "" {
		xdg = filepath.Join(home, ".cache")
	}
	gocache := getenv("GOCACHE")
	if gocache == "" {
		gocache = filepath.Join(xdg, "go-build")
	}
	modcache := getenv("GOMODCACHE")
	if modcache == "" {
		gopath := getenv("GOPATH")
		if i := strings.IndexByte(gopath, os.PathListSeparator); i >= 0 {
			gopath = gopath[:i]
		}
		if gopath == "" {
			gopath = filepath.Join(home, "go")
		}
		modcache = filepath.Join(gopath, "pkg", "mod")
	}
	// The variables the user set reach the command, so it uses the same
	// directories (rein passes few variables through; see DefaultPassEnv).
	for _, k := range []string{"XDG_CACHE_HOME", "GOCACHE", "GOMODCACHE", "GOPATH"} {
		if v := getenv(k); v != "" {
			c.Env = append(c.Env, k+"="+v)
		}
	}
	want := []string{xdg, gocache, modcache}
	for _, t := range toolCaches {
		d := filepath.Join(home, filepath.FromSlash(t.rel))
		if exists(d) || installed(t.program) {
			want = append(want, d)
		}
	}
	for _, d := range want {
		if !filepath.IsAbs(d) {
			continue // a relative GOCACHE is go's error to report, not ours
		}
		if err := os.MkdirAll(d, 0o755); err != nil {
			return Caches{}, fmt.Errorf("cannot create the cache directory %s: %w; create it yourself, or set %s: %s", d, err, SettingCaches, CachesIsolated)
		}
		if r, err := realDir(d); err == nil {
			c.Dirs = appendOutermost(c.Dirs, r)
		}
	}
	return c, nil
}

func isolatedCaches(root string, getenv func(string) string) (Caches, error) {
	if root == "" || !filepath.IsAbs(root) {
		return Caches{}, fmt.Errorf("%s: %s needs an absolute root directory, got %q", SettingCaches, CachesIsolated, root)
	}
	if err := os.MkdirAll(root, 0o700); err != nil {
		return Caches{}, fmt.Errorf("cannot create the isolated cache directory %s: %w", root, err)
	}
	real, err := realDir(root)
	if err != nil {
		return Caches{}, err
	}
	c := Caches{Mode: CachesIsolated, Dirs: []string{real}}
	j := func(n string) string { return filepath.Join(root, n) }
	c.Env = []string{"GOCACHE=" + j("go-build"), "GOMODCACHE=" + j("go-mod"), "XDG_CACHE_HOME=" + j("xdg"),
		"PIP_CACHE_DIR=" + j("pip"), "UV_CACHE_DIR=" + j("uv"), "CARGO_HOME=" + j("cargo"),
		"GRADLE_USER_HOME=" + j("gradle")}
	for _, t := range toolCaches {
		if t.env == nil {
			continue
		}
		env := t.env(j(strings.ReplaceAll(t.rel, "/", "_")))
		for i, kv := range env {
			if v, ok := strings.CutPrefix(kv, "MAVEN_OPTS="); ok && getenv("MAVEN_OPTS") != "" {
				env[i] = "MAVEN_OPTS=" + getenv("MAVEN_OPTS") + " " + v
			}
		}
		c.Env = append(c.Env, env...)
	}
	return c, nil
}

// IsolatedCacheRoot is the isolated caches' directory of a workspace:
// under base (the user's cache directory), named by a hash of the
// workspace's path.
func IsolatedCacheRoot(base, workspace string) string {
	sum := sha256.Sum256([]byte(filepath.Clean(workspace)))
	return filepath.Join(base, "rein", "sandbox-caches", hex.EncodeToString(sum[:8]))
}

// appendOutermost adds d unless a directory of dirs holds it, and drops
// those d holds.
func appendOutermost(dirs []string, d string) []string {
	for _, x := range dirs {
		if within(x, d) {
			return dirs
		}
	}
	dirs = slices.DeleteFunc(dirs, func(x string) bool { return within(d, x) })
	return append(dirs, d)
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

func installed(program string) bool {
	_, err := osexec.LookPath(program)
	return err == nil
}
