package exec

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/reinhq/rein/exec/egress"
	"github.com/reinhq/rein/exec/helper"
)

// bigTree makes a workspace of dirs×subdirs×files files, with a nested
// repository in every top directory.
func bigTree(b *testing.B, dirs, subdirs, files int) string {
	b.Helper()
	ws := b.TempDir()
	for i := range dirs {
		for j := range subdirs {
			d := filepath.Join(ws, fmt.Sprintf("d%03d", i), fmt.Sprintf("s%02d", j))
			if err := os.MkdirAll(d, 0o755); err != nil {
				b.Fatal(err)
			}
			for k := range files {
				if err := os.WriteFile(filepath.Join(d, fmt.Sprintf("f%03d.go", k)), nil, 0o644); err != nil {
					b.Fatal(err)
				}
			}
		}
		for _, p := range []string{".git/hooks", ".git/objects", ".git/refs", ".git/info"} {
			if err := os.MkdirAll(filepath.Join(ws, fmt.Sprintf("d%03d", i), p), 0o755); err != nil {
				b.Fatal(err)
			}
		}
		if err := os.WriteFile(filepath.Join(ws, fmt.Sprintf("d%03d", i), ".git", "HEAD"), []byte("ref: refs/heads/main\n"), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	return ws
}

// sensitiveLike matches as the CLI's sensitive-file set does for names.
func sensitiveLike(p string) bool {
	base := filepath.Base(p)
	for _, pat := range []string{".env", ".env.*", "*.pem", "*.key", "id_rsa*", "id_ed25519*", ".ssh", ".netrc", "*.p12"} {
		if ok, _ := filepath.Match(pat, base); ok {
			return true
		}
	}
	return strings.HasSuffix(p, "/.aws/credentials")
}

// BenchmarkScanTree measures the scan the sandbox runs before (with Hide)
// and after each command, on 100,000 files in 11,100 directories with 100
// nested repositories (SPEC TOOL-5).
func BenchmarkScanTree(b *testing.B) {
	ws := bigTree(b, 100, 10, 100)
	for _, bc := range []struct {
		name string
		hide func(string) bool
	}{{"plain", nil}, {"hide", sensitiveLike}} {
		b.Run(bc.name, func(b *testing.B) {
			for b.Loop() {
				s, err := scanTree(ws, bc.hide, DefaultMaxScan)
				if err != nil || len(s.gitDirs) != 100 {
					b.Fatal(err, len(s.gitDirs))
				}
			}
		})
	}
}

// BenchmarkSandboxRun measures running `true` on the host, under
// bubblewrap (empty workspace, and the 100,000-file one), with and without
// the Landlock layer, confined to an allow-list (ConfineReads, a server's
// runs) or not, and under Landlock alone.
func BenchmarkSandboxRun(b *testing.B) {
	ctx := context.Background()
	small := b.TempDir()
	big := bigTree(b, 100, 10, 100)
	run := func(b *testing.B, be Backend, dir string) {
		start := selfCPU()
		for b.Loop() {
			out, err := be.Run(ctx, Command{Script: "true", Dir: dir})
			if err != nil || out.ExitCode != 0 {
				b.Fatal(out, err)
			}
		}
		b.ReportMetric(float64(selfCPU()-start)/float64(time.Millisecond)/float64(b.N), "self-cpu-ms/op")
	}
	b.Run("local", func(b *testing.B) { run(b, &Local{}, small) })
	sb := &Sandbox{Workspace: small}
	if sb.Available() != nil {
		b.Skip("no bwrap")
	}
	b.Run("bwrap", func(b *testing.B) { run(b, sb, small) })
	b.Run("bwrap-confined", func(b *testing.B) { run(b, &Sandbox{Workspace: small, ConfineReads: true}, small) })
	b.Run("bwrap-server", func(b *testing.B) {
		// As a server's run sets it up (runner.tenantBackend): confined,
		// a cache directory, the home's credentials and the server's data
		// hidden, under a deeper path.
		deep := filepath.Join(b.TempDir(), "srv", "rein", "root", "project")
		home := filepath.Join(b.TempDir(), "home")
		for _, d := range []string{deep, filepath.Join(home, ".ssh"), filepath.Join(home, ".config", "rein")} {
			if err := os.MkdirAll(d, 0o755); err != nil {
				b.Fatal(err)
			}
		}
		var hides []string
		for _, rel := range []string{".ssh", ".gnupg", ".aws", ".azure", ".config/gcloud", ".kube/config", ".docker/config.json",
			".netrc", ".git-credentials", ".config/gh/hosts.yml", ".npmrc", ".pypirc", ".cargo/credentials.toml"} {
			hides = append(hides, filepath.Join(home, rel))
		}
		hides = append(hides, filepath.Join(filepath.Dir(deep), "data"))
		run(b, &Sandbox{Workspace: deep, ConfineReads: true, Cache: b.TempDir(), HidePaths: hides, Hide: sensitiveLike}, deep)
	})
	b.Run("bwrap-100k", func(b *testing.B) { run(b, &Sandbox{Workspace: big, Hide: sensitiveLike}, big) })
	b.Run("bwrap-confined-100k", func(b *testing.B) { run(b, &Sandbox{Workspace: big, Hide: sensitiveLike, ConfineReads: true}, big) })
	if h := SelfHelper(); h != "" {
		b.Run("bwrap+landlock", func(b *testing.B) { run(b, &Sandbox{Workspace: small, Landlock: h}, small) })
		b.Run("landlock", func(b *testing.B) { run(b, &Confined{Workspace: small}, small) })
	}
}

// BenchmarkHelperRun measures what the Landlock helper adds to one
// sandboxed command (`true`, empty workspace; SPEC TOOL-5, issue 30): the
// helper started on its own (no bubblewrap), bubblewrap's own floor
// (bwrap true by hand), the Sandbox without the helper, and with it. The
// helper is this test binary, or the executable $REIN_BENCH_HELPER names:
// a built rein (`go build -o /tmp/rein ./cmd/rein`), whose start-up is
// what a run pays without rein-sandbox-helper, or rein-sandbox-helper
// (`go build -o /tmp/rein-sandbox-helper ./cmd/rein-sandbox-helper`). Besides wall time
// it reports child-cpu-ms/op, the CPU of every process a command took
// (bubblewrap, the helper, `true`): on a loaded machine the steadier figure.
func BenchmarkHelperRun(b *testing.B) {
	ctx := context.Background()
	ws := b.TempDir()
	h := SelfHelper()
	if e := os.Getenv("REIN_BENCH_HELPER"); e != "" {
		h = e
	}
	if h == "" {
		b.Skip("environment: no Landlock here, no helper to measure")
	}
	b.Run("helper-alone", func(b *testing.B) {
		defer childCPU(b)()
		for b.Loop() {
			argv := helper.Argv(h, helper.Rules{Dirs: []string{ws}}, helper.Forward{}, []string{"true"})
			c := osexec.Command(argv[0], argv[1:]...)
			if out, err := c.CombinedOutput(); err != nil {
				b.Fatal(string(out), err)
			}
		}
	})
	sb := &Sandbox{Workspace: ws}
	if sb.Available() != nil {
		b.Skip("environment: no bwrap")
	}
	run := func(b *testing.B, be Backend) {
		defer childCPU(b)()
		for b.Loop() {
			out, err := be.Run(ctx, Command{Script: "true", Dir: ws})
			if err != nil || out.ExitCode != 0 {
				b.Fatal(out, err)
			}
		}
	}
	bw, _ := sb.bwrap()
	b.Run("bwrap-floor", func(b *testing.B) {
		// bubblewrap's own start: its namespaces, no Sandbox, no mounts
		// beyond the probe's, /bin/true.
		defer childCPU(b)()
		for b.Loop() {
			c := osexec.Command(bw, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp", "--cap-drop", "ALL",
				"--unshare-pid", "--unshare-ipc", "--unshare-net", "--die-with-parent", "--new-session", "--", "true")
			if out, err := c.CombinedOutput(); err != nil {
				b.Fatal(string(out), err)
			}
		}
	})
	b.Run("bwrap", func(b *testing.B) { run(b, sb) })
	b.Run("bwrap+helper", func(b *testing.B) { run(b, &Sandbox{Workspace: ws, Landlock: h}) })
}

// selfCPU is the CPU time (user and system) of this process: the
// preparation of a command around its processes.
func selfCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// childCPU reports, when the function it returns is called, the CPU time
// of the child processes that ended meanwhile, per op. bubblewrap's outer
// process exits without waiting for the processes of its PID namespace,
// whose time would then be lost: the benchmark is their subreaper
// meanwhile, and reaps them before it counts.
func childCPU(b *testing.B) func() {
	cpu := func() time.Duration {
		var ru syscall.Rusage
		if err := syscall.Getrusage(syscall.RUSAGE_CHILDREN, &ru); err != nil {
			b.Fatal(err)
		}
		return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	const prSetChildSubreaper = 36
	setSubreaper := func(on uintptr) {
		if _, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, prSetChildSubreaper, on, 0); errno != 0 {
			b.Fatal("PR_SET_CHILD_SUBREAPER:", errno)
		}
	}
	setSubreaper(1)
	start := cpu()
	return func() {
		// Every command has returned: what is left are orphans of its
		// namespaces, on their way out.
		for deadline := time.Now().Add(2 * time.Second); time.Now().Before(deadline); {
			var ws syscall.WaitStatus
			pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG|syscall.WALL, nil)
			if err == syscall.ECHILD {
				break
			}
			if pid <= 0 {
				time.Sleep(time.Millisecond)
			}
		}
		setSubreaper(0)
		b.ReportMetric(float64(cpu()-start)/float64(time.Millisecond)/float64(b.N), "child-cpu-ms/op")
	}
}

// BenchmarkProfileRun measures what SPEC TOOL-7 adds to one command
// (`true`, empty workspace): the default profile with the user's caches
// and a session temporary directory, then with the egress proxy (a gate
// per command, the forwarder in the sandbox), then a request through it
// to a server on the host's loopback, allow-listed and mirrored.
func BenchmarkProfileRun(b *testing.B) {
	ctx := context.Background()
	ws := b.TempDir()
	base := &Sandbox{Workspace: ws}
	if base.Available() != nil {
		b.Skip("no bwrap")
	}
	home, _ := os.UserHomeDir()
	caches, err := ToolchainCaches(CachesShared, home, os.Getenv, "")
	if err != nil {
		b.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte("ok")) }))
	b.Cleanup(srv.Close)
	addr := strings.TrimPrefix(srv.URL, "http://")
	list, err := egress.ParseList([]string{addr})
	if err != nil {
		b.Fatal(err)
	}
	landlock := SelfHelper()
	profile := &Sandbox{Workspace: ws, TempDir: filepath.Join(b.TempDir(), "tmp"), Caches: caches, Landlock: landlock}
	proxied := *profile
	proxied.Egress = &egress.Proxy{Allow: list, Hint: EgressHint}
	run := func(b *testing.B, s *Sandbox, script string) {
		for b.Loop() {
			out, err := s.Run(ctx, Command{Script: script, Dir: ws})
			if err != nil || out.ExitCode != 0 {
				b.Fatal(string(out.Combined), err)
			}
		}
	}
	b.Run("bwrap-bare", func(b *testing.B) { run(b, &Sandbox{Workspace: ws, Landlock: landlock}, "true") })
	b.Run("workspace-profile", func(b *testing.B) { run(b, profile, "true") })
	b.Run("workspace-profile+egress", func(b *testing.B) { run(b, &proxied, "true") })
	if _, err := osexec.LookPath("curl"); err == nil {
		b.Run("egress+curl-loopback", func(b *testing.B) { run(b, &proxied, "curl -fsS "+srv.URL+" >/dev/null") })
	}
}
