package exec

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha1"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	osexec "os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/reinhq/rein/exec/egress"
)

// The acceptance suite of SPEC TOOL-7: real toolchains, driven through
// real bash, under the default profile (workspace, the user's caches
// shared, network off but the allow-list). Each test skips, saying why,
// when a tool it needs is missing. Traffic goes to 127.0.0.1 only.

// toolchainGuard ends a toolchain command that hangs; it is no assertion.
const toolchainGuard = 5 * time.Minute

// defaultSandbox is the sandbox a run gets with default settings over ws:
// the workspace profile, a session temporary directory, the user's
// toolchain caches, Landlock inside when the kernel has it, and egress for
// allow (none when empty).
func defaultSandbox(t *testing.T, ws string, allow ...string) *Sandbox {
	t.Helper()
	home, err := os.UserHomeDir()
	if err != nil {
		t.Skipf("environment: no home directory: %v", err)
	}
	caches, err := ToolchainCaches(CachesShared, home, os.Getenv, "")
	if err != nil {
		t.Fatal(err)
	}
	list, err := egress.ParseList(allow)
	if err != nil {
		t.Fatal(err)
	}
	s := &Sandbox{Workspace: ws, Profile: ProfileWorkspace, TempDir: filepath.Join(t.TempDir(), "session-tmp"),
		Caches: caches, Landlock: SelfHelper(), Egress: &egress.Proxy{Allow: list, Hint: EgressHint},
		Local: Local{PipeGrace: 100 * time.Millisecond}}
	if err := s.Available(); err != nil {
		t.Skipf("environment: bwrap cannot run here: %v", err)
	}
	return s
}

func needTool(t *testing.T, names ...string) {
	t.Helper()
	for _, n := range names {
		if _, err := osexec.LookPath(n); err != nil {
			t.Skipf("environment: %s is not installed", n)
		}
	}
}

func runOK(t *testing.T, s *Sandbox, cmd Command) Output {
	t.Helper()
	if cmd.Timeout == 0 {
		cmd.Timeout = toolchainGuard
	}
	out, err := s.Run(context.Background(), cmd)
	if err != nil {
		t.Fatal(err)
	}
	if out.ExitCode != 0 {
		t.Fatalf("exit %d\n%s\nnotes: %q", out.ExitCode, out.Combined, out.Notes)
	}
	return out
}

func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, body := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TOOL-7: go build and go test of a module, with the user's Go caches.
func TestAcceptGoBuildAndTest_TOOL7(t *testing.T) {
	needTool(t, "go")
	ws := t.TempDir()
	s := defaultSandbox(t, ws)
	writeFiles(t, ws, map[string]string{
		"go.mod":       "module example.com/hello\n\ngo 1.22\n",
		"main.go":      "package main\n\nimport \"fmt\"\n\nfunc greet() string { return \"hello from the sandbox\" }\n\nfunc main() { fmt.Println(greet()) }\n",
		"main_test.go": "package main\n\nimport \"testing\"\n\nfunc TestGreet(t *testing.T) {\n\tif greet() == \"\" {\n\t\tt.Fatal(\"empty\")\n\t}\n}\n",
	})
	out := runOK(t, s, Command{Script: "go build -o hello . && ./hello && go test -count=1 ./...", Dir: ws})
	if !bytes.Contains(out.Combined, []byte("hello from the sandbox")) || !bytes.Contains(out.Combined, []byte("ok")) {
		t.Fatalf("output %q", out.Combined)
	}
	if _, err := os.Stat(filepath.Join(ws, "hello")); err != nil {
		t.Errorf("the binary is not on the host: %v", err)
	}
}

// TOOL-7: without the caches (what rein did before), the build fails and
// the note names the path and the setting that would allow it.
func TestAcceptGoBuildDeniedIsExplained_TOOL7(t *testing.T) {
	needTool(t, "go")
	ws := t.TempDir()
	s := defaultSandbox(t, ws)
	s.Caches = Caches{}
	gocache := filepath.Join(t.TempDir(), "gocache") // outside every writable directory
	if err := os.MkdirAll(gocache, 0o755); err != nil {
		t.Fatal(err)
	}
	writeFiles(t, ws, map[string]string{"go.mod": "module m\n\ngo 1.22\n", "main.go": "package main\n\nfunc main() {}\n"})
	// Under /tmp the sandbox shows an empty tmpfs; a directory of the host
	// elsewhere shows the denial itself. The home may be under /tmp (CI
	// runs the tests in a fresh HOME there), so /var/tmp is the fallback.
	ro := hostDirOutsideTmp(t)
	out, err := s.Run(context.Background(), Command{Script: "go build -o hello .", Dir: ws, Timeout: toolchainGuard,
		Env: []string{"GOCACHE=" + ro}})
	if err != nil {
		t.Fatal(err)
	}
	if out.ExitCode == 0 {
		t.Fatalf("go build wrote a read-only cache: %q", out.Combined)
	}
	if !slices.ContainsFunc(out.Notes, func(n string) bool {
		return strings.Contains(n, ro) && strings.Contains(n, SettingWritable)
	}) {
		t.Fatalf("no note names %s and %s: %q\n%s", ro, SettingWritable, out.Notes, out.Combined)
	}
}

// npmPackage packs a package as npm publishes it: package/ in a gzipped tar.
func npmPackage(t *testing.T, name, version, index string) []byte {
	t.Helper()
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	pkg := fmt.Sprintf(`{"name":%q,"version":%q,"main":"index.js"}`, name, version)
	for _, f := range []struct{ name, body string }{{"package/package.json", pkg}, {"package/index.js", index}} {
		if err := tw.WriteHeader(&tar.Header{Name: f.name, Mode: 0o644, Size: int64(len(f.body)), ModTime: time.Unix(499162500, 0)}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write([]byte(f.body)); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := gz.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// npmRegistry serves one package on 127.0.0.1 as the npm registry does;
// hits counts the requests.
func npmRegistry(t *testing.T, name, version string, tarball []byte) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	var hits atomic.Int64
	var srv *httptest.Server
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		sha := sha1.Sum(tarball)
		sum := sha512.Sum512(tarball)
		switch r.URL.Path {
		case "/" + name:
			doc := map[string]any{"name": name, "dist-tags": map[string]string{"latest": version},
				"versions": map[string]any{version: map[string]any{"name": name, "version": version,
					"dist": map[string]string{"tarball": srv.URL + "/" + name + "/-/" + name + "-" + version + ".tgz",
						"shasum": hex.EncodeToString(sha[:]), "integrity": "sha512-" + base64.StdEncoding.EncodeToString(sum[:])}}}}
			w.Header().Set("Content-Type", "application/json")
			_ = json.NewEncoder(w).Encode(doc)
		case "/" + name + "/-/" + name + "-" + version + ".tgz":
			_, _ = w.Write(tarball)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv, &hits
}

// TOOL-7: npm install from a registry on the host's 127.0.0.1, allow-listed:
// the port is mirrored into the sandbox, ~/.npm is writable.
func TestAcceptNpmInstallFromLocalRegistry_TOOL7(t *testing.T) {
	needTool(t, "npm", "node")
	name := "rein-accept-pad"
	tgz := npmPackage(t, name, "1.0.0", `module.exports = s => "[" + s + "]";`)
	srv, hits := npmRegistry(t, name, "1.0.0", tgz)
	addr := strings.TrimPrefix(srv.URL, "http://")
	ws := t.TempDir()
	writeFiles(t, ws, map[string]string{"package.json": fmt.Sprintf(`{"name":"app","version":"1.0.0","dependencies":{%q:"1.0.0"}}`, name)})
	s := defaultSandbox(t, ws, addr)
	// A cache of this test's own, so the install really fetches; npm's
	// default cache (~/.npm) is in the shared caches too.
	cache := filepath.Join(s.Caches.Dirs[0], "rein-accept-npm-"+fmt.Sprint(time.Now().UnixNano()))
	t.Cleanup(func() { os.RemoveAll(cache) })
	out := runOK(t, s, Command{Dir: ws, Script: fmt.Sprintf(
		`npm install --registry %s/ --no-audit --no-fund --cache %s && node -e 'console.log(require(%q)("ok"))'`, srv.URL, cache, name),
		Env: []string{"npm_config_update_notifier=false"}})
	if !bytes.Contains(out.Combined, []byte("[ok]")) || hits.Load() < 2 {
		t.Fatalf("output %q, registry hits %d", out.Combined, hits.Load())
	}

	// Not on the list: refused, and the note says how to allow it.
	other, _ := npmRegistry(t, name, "1.0.0", tgz)
	otherPort := other.URL[strings.LastIndexByte(other.URL, ':')+1:]
	out, err := s.Run(context.Background(), Command{Dir: ws, Timeout: toolchainGuard,
		Script: fmt.Sprintf(`rm -rf node_modules package-lock.json && npm install --registry %s/ --no-audit --no-fund --cache %s --fetch-retries=0`, other.URL, cache+"2")})
	if err != nil {
		t.Fatal(err)
	}
	if out.ExitCode == 0 {
		t.Fatalf("npm reached a registry not on the allow-list: %q", out.Combined)
	}
	if !slices.ContainsFunc(out.Notes, func(n string) bool {
		return strings.Contains(n, "localhost:"+otherPort) && strings.Contains(n, SettingAllowHosts)
	}) {
		t.Fatalf("no note names localhost:%s and %s: %q\n%s", otherPort, SettingAllowHosts, out.Notes, out.Combined)
	}
	_ = addr
}

// TOOL-7: the proxy lets an allowed name through (plain HTTP and CONNECT)
// and refuses any other with a note naming host and setting.
func TestAcceptEgressProxy_TOOL7(t *testing.T) {
	needTool(t, "curl")
	plain := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = fmt.Fprint(w, "plain-ok") }))
	t.Cleanup(plain.Close)
	tlsSrv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = fmt.Fprint(w, "tls-ok") }))
	t.Cleanup(tlsSrv.Close)
	ws := t.TempDir()
	s := defaultSandbox(t, ws, "registry.test", "*.example.test")
	// registry.test stands for a public host: it resolves to a TEST-NET
	// address, which the dialer maps to the local servers.
	public := netip.MustParseAddr("203.0.113.7")
	s.Egress.Lookup = func(ctx context.Context, host string) ([]netip.Addr, error) { return []netip.Addr{public}, nil }
	s.Egress.Dial = func(ctx context.Context, network, addr string) (net.Conn, error) {
		to := strings.TrimPrefix(plain.URL, "http://")
		if strings.HasSuffix(addr, ":443") {
			to = strings.TrimPrefix(tlsSrv.URL, "https://")
		}
		return (&net.Dialer{}).DialContext(ctx, network, to)
	}
	out := runOK(t, s, Command{Dir: ws, Script: "curl -fsS http://registry.test/ && echo && curl -fsSk https://cdn.example.test/"})
	if !bytes.Contains(out.Combined, []byte("plain-ok")) || !bytes.Contains(out.Combined, []byte("tls-ok")) {
		t.Fatalf("output %q", out.Combined)
	}
	// Without Landlock the helper only forwards.
	bare := *s
	bare.Landlock, bare.Forwarder = "", SelfForwarder()
	if bare.Forwarder == "" {
		t.Fatal("the test binary cannot serve as the forwarder: TestMain must call HelperMain")
	}
	out = runOK(t, &bare, Command{Dir: ws, Script: "curl -fsS http://registry.test/"})
	if !bytes.Contains(out.Combined, []byte("plain-ok")) {
		t.Fatalf("without Landlock: %q", out.Combined)
	}
	out, err := s.Run(context.Background(), Command{Dir: ws, Timeout: guard, Script: "curl -fsS https://blocked.test/"})
	if err != nil {
		t.Fatal(err)
	}
	if out.ExitCode == 0 || !slices.ContainsFunc(out.Notes, func(n string) bool {
		return strings.Contains(n, "blocked.test:443") && strings.Contains(n, `"blocked.test"`) && strings.Contains(n, SettingAllowHosts)
	}) {
		t.Fatalf("exit %d, notes %q\n%s", out.ExitCode, out.Notes, out.Combined)
	}
}

// TOOL-7: git commit in a linked worktree whose repository is outside the
// workspace; the repository's config and hooks stay read-only.
func TestAcceptGitCommitInWorktree_TOOL7(t *testing.T) {
	needTool(t, "git")
	root := t.TempDir()
	main, wt := filepath.Join(root, "main"), filepath.Join(root, "wt")
	env := []string{"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com",
		"GIT_CONFIG_NOSYSTEM=1", "HOME=" + root}
	host := func(dir string, args ...string) string {
		c := osexec.Command("git", args...)
		c.Dir, c.Env = dir, append(os.Environ(), env...)
		b, err := c.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, b)
		}
		return string(b)
	}
	if err := os.MkdirAll(main, 0o755); err != nil {
		t.Fatal(err)
	}
	host(main, "init", "-q", "-b", "main")
	writeFiles(t, main, map[string]string{"README": "hi\n"})
	host(main, "add", "README")
	host(main, "commit", "-qm", "first")
	host(main, "worktree", "add", "-q", "-b", "feature", wt)
	config, _ := os.ReadFile(filepath.Join(main, ".git", "config"))

	s := defaultSandbox(t, wt)
	runOK(t, s, Command{Dir: wt, Env: env, Script: "echo change > f && git add f && git commit -qm 'in the sandbox' && git log --oneline -1"})
	if log := host(main, "log", "--format=%s", "-1", "feature"); strings.TrimSpace(log) != "in the sandbox" {
		t.Fatalf("the commit is not in the repository: %q", log)
	}
	out, err := s.Run(context.Background(), Command{Dir: wt, Env: env, Timeout: guard,
		Script: `common=$(git rev-parse --path-format=absolute --git-common-dir); echo x > "$common/hooks/pre-commit"; git config core.hooksPath /tmp/x; echo y > "$(git rev-parse --git-dir)/config.worktree"; true`})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(main, ".git", "hooks", "pre-commit")); err == nil {
		t.Errorf("a hook was written in the repository: %s", out.Combined)
	}
	if now, _ := os.ReadFile(filepath.Join(main, ".git", "config")); !bytes.Equal(now, config) {
		t.Errorf("the repository's config changed: %s", now)
	}
	if _, err := os.Stat(filepath.Join(main, ".git", "worktrees", "wt", "config.worktree")); err == nil {
		t.Errorf("config.worktree was written")
	}
}

// bigHeredoc is a script whose here-document is larger than a pipe holds,
// so the shell writes it to a temporary file.
func bigHeredoc() string {
	line := strings.Repeat("x", 99) + "\n"
	return "cat > out.txt <<'EOF'\n" + strings.Repeat(line, 2000) + "EOF\nwc -c < out.txt\n"
}

// TOOL-7: here-documents in bash and zsh (zsh writes them under
// TMPPREFIX, not TMPDIR), and a TMPDIR that lasts the session.
func TestAcceptHeredocAndTempDir_TOOL7(t *testing.T) {
	ws := t.TempDir()
	s := defaultSandbox(t, ws)
	// In a file: a 200 KB argument is more than one argument may hold.
	writeFiles(t, ws, map[string]string{"heredoc.sh": bigHeredoc()})
	out := runOK(t, s, Command{Dir: ws, Args: []string{"bash", "heredoc.sh"}})
	if !bytes.Contains(out.Combined, []byte("200000")) {
		t.Fatalf("bash here-document: %q", out.Combined)
	}
	runOK(t, s, Command{Dir: ws, Script: `test "$TMPDIR" = "$TMP" && test "$TMPDIR" = "$GOTMPDIR" && echo kept > "$TMPDIR/keep"`})
	out = runOK(t, s, Command{Dir: ws, Script: `cat "$TMPDIR/keep"`})
	if !bytes.Contains(out.Combined, []byte("kept")) {
		t.Fatalf("the session's temporary directory did not last: %q", out.Combined)
	}
	t.Run("zsh", func(t *testing.T) {
		needTool(t, "zsh")
		out := runOK(t, s, Command{Dir: ws, Args: []string{"zsh", "heredoc.sh"}})
		if !bytes.Contains(out.Combined, []byte("200000")) {
			t.Fatalf("zsh here-document: %q", out.Combined)
		}
	})
}

// TOOL-7: a dev server started in the background is reached by a later
// command of the same run, over the sandbox's own loopback, while the
// egress proxy is on (loopback is not proxied).
func TestAcceptBackgroundDevServer_TOOL7(t *testing.T) {
	needTool(t, "node", "curl")
	ws := t.TempDir()
	s := defaultSandbox(t, ws, "registries")
	writeFiles(t, ws, map[string]string{"server.js": `require("http").createServer((q, r) => r.end("dev-server-up")).listen(0, "127.0.0.1", function () { require("fs").writeFileSync("port", String(this.address().port)) })`})
	out := runOK(t, s, Command{Dir: ws, Script: `node server.js & srv=$!
for i in $(seq 200); do [ -s port ] && break; sleep 0.05; done
curl -fsS "http://localhost:$(cat port)/"; status=$?; kill $srv; exit $status`})
	if !bytes.Contains(out.Combined, []byte("dev-server-up")) {
		t.Fatalf("output %q", out.Combined)
	}
}

// hostDirOutsideTmp makes a directory of the host outside /tmp (which the
// sandbox replaces with a tmpfs): in the home, else in /var/tmp; the test
// skips, saying why, when neither can hold one.
func hostDirOutsideTmp(t *testing.T) string {
	t.Helper()
	home, _ := os.UserHomeDir()
	var tried []string
	for _, dir := range []string{home, "/var/tmp"} {
		if dir == "" || dir == "/tmp" || strings.HasPrefix(dir, "/tmp/") {
			continue
		}
		d, err := os.MkdirTemp(dir, ".rein-accept-ro-")
		if err != nil {
			tried = append(tried, err.Error())
			continue
		}
		t.Cleanup(func() { os.RemoveAll(d) })
		return d
	}
	t.Skipf("environment: no directory of the host outside /tmp to make one in (home %q; %v)", home, tried)
	return ""
}
