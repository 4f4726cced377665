package exec

import (
	"context"
	"fmt"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// confinedFixture is a host laid out like a server's: a data directory
// with a database, the run's workspace, another caller's workspace, and a
// secret in the operator's home (/root, or $HOME).
type confinedFixture struct {
	s                           *Sandbox
	ws, data, other, homeSecret string
	hostTmp                     string // a directory in the host's /tmp with a name nothing else has
}

const confinedSecret = "REIN-CONFINE-SECRET-42"

func newReadConfined(t *testing.T) confinedFixture {
	t.Helper()
	s, ws := newSandbox(t)
	s.ConfineReads = true
	f := confinedFixture{s: s, ws: ws, data: t.TempDir(), other: t.TempDir()}
	write := func(p string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(confinedSecret+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(f.data, "rein.db"))
	write(filepath.Join(f.other, "notes.txt"))
	write(filepath.Join(ws, ".rein", "data", "history.db"))
	home, err := os.UserHomeDir()
	if err != nil || home == "" || home == "/" {
		t.Skipf("environment: no home directory to plant the operator's secret in (%v)", err)
	}
	f.homeSecret = filepath.Join(home, fmt.Sprintf(".rein-confine-test-%d", os.Getpid()))
	write(f.homeSecret)
	t.Cleanup(func() { os.Remove(f.homeSecret) })
	if err := os.Symlink(f.other, filepath.Join(ws, "peer")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(f.data, filepath.Join(ws, "data")); err != nil {
		t.Fatal(err)
	}
	// t.TempDir's names end in 001, 002…, which a random name in the
	// sandbox's own /tmp can contain; this name cannot occur there.
	hostTmp, err := os.MkdirTemp("/tmp", "rein-confine-host-")
	if err != nil {
		t.Skipf("environment: no host /tmp to plant a directory in: %v", err)
	}
	t.Cleanup(func() { os.RemoveAll(hostTmp) })
	f.hostTmp = hostTmp
	s.Hide = func(p string) bool { return strings.Contains(filepath.ToSlash(p), "/.rein/data") }
	s.HidePaths = []string{f.data}
	return f
}

// API-9, TOOL-5: attacks on a confined sandbox. Each row is a command that
// exits 0 only when the attack worked; every one must fail. The rows are
// the attempts observed against a server whose sandbox bound the host's
// whole tree read-only, and the ones tried since.
func TestConfinedSandboxAttacks(t *testing.T) {
	f := newReadConfined(t)
	t.Setenv("REIN_CONFINE_PARENT", confinedSecret) // in rein's environment, not passed on
	grepQ := "grep -rqs " + confinedSecret + " "
	attacks := []struct {
		name, script string
	}{
		{"cat the server's database ($DATA/rein.db)", grepQ + filepath.Join(f.data, "rein.db")},
		{"list the server's data directory", "ls -A " + f.data + " | grep -q ."},
		{"read another caller's workspace (another root)", grepQ + f.other},
		{"symlink in the workspace to another workspace", grepQ + "peer/notes.txt"},
		{"symlink in the workspace to the data directory", grepQ + "data/"},
		{"write through a symlink to another workspace", "echo x > peer/pwned && test -f peer/pwned"},
		{"cd .. out of the workspace", "cd ../" + filepath.Base(f.other) + " && " + grepQ + "."},
		{"cat the workspace's history mirror (.rein/data/history.db)", grepQ + ".rein/data/history.db"},
		{"find the history mirror through a glob", "cat .rein/*/history.db | grep -q " + confinedSecret},
		{"cat a file in the operator's home", grepQ + f.homeSecret},
		{"grep -r over the operator's home", grepQ + filepath.Dir(f.homeSecret)},
		{"cat /root/x", "ls -A /root | grep -q ."},
		{"ls /home", "ls -A /home | grep -q ."},
		{"ls /srv, /mnt, /var/lib", "ls -A /srv /mnt /var/lib 2>/dev/null | grep -q ."},
		{"read /etc/shadow", "grep -q root: /etc/shadow"},
		{"read /etc/gshadow", "grep -q root: /etc/gshadow"},
		{"read rein's environment through /proc", "cat /proc/*/environ 2>/dev/null | tr '\\0' '\\n' | grep -q " + confinedSecret},
		{"read the host's root through /proc/1/root", "ls -A /proc/1/root/root 2>/dev/null | grep -q ."},
		{"new user and mount namespace, then look at the host", "unshare -Urm sh -c 'ls -A /root /home' 2>/dev/null | grep -q ."},
		{"the host's /tmp", "ls -A /tmp | grep -q " + filepath.Base(f.hostTmp)},
		{"a symlink the command makes to the data directory", "ln -s " + f.data + " d2 && " + grepQ + "d2/rein.db"},
		{"a hard link the command makes to the database", "ln " + filepath.Join(f.data, "rein.db") + " h && " + grepQ + "h"},
	}
	if fi, err := os.Stat(filepath.Dir(f.homeSecret)); err == nil && !fi.IsDir() {
		t.Fatal("home is not a directory")
	}
	for _, a := range attacks {
		t.Run(a.name, func(t *testing.T) {
			out, err := f.s.Run(context.Background(), Command{Script: a.script, Dir: f.ws, Timeout: guard})
			if err != nil {
				t.Fatal(err)
			}
			if out.ExitCode == 0 {
				t.Errorf("attack worked: %q", out.Combined)
			}
		})
	}
	if _, err := os.Stat(filepath.Join(f.other, "pwned")); err == nil {
		t.Error("a file was written into another workspace")
	}
}

// API-9: a server's root that lies in a directory the confined sandbox
// shows read-only (under /opt, say) is emptied but for the run's
// workspace: the other workspaces in it are not there.
func TestConfinedSandboxCoversRootInShownDir(t *testing.T) {
	s, _ := newSandbox(t)
	// Not under /tmp, which the sandbox replaces with its own.
	root, err := os.MkdirTemp("/var/tmp", "rein-root-")
	if err != nil {
		t.Skipf("environment: no /var/tmp to make a root outside /tmp in: %v", err)
	}
	t.Cleanup(func() { os.RemoveAll(root) })
	ws, other := filepath.Join(root, "alice"), filepath.Join(root, "bob")
	for _, d := range []string{ws, other} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(other, "notes.txt"), []byte(confinedSecret), 0o644); err != nil {
		t.Fatal(err)
	}
	s.Workspace, s.ConfineReads, s.ReadOnly, s.HidePaths = ws, true, []string{root}, []string{root}
	for _, script := range []string{"grep -rqs " + confinedSecret + " " + root, "ls -A " + root + " | grep -q bob"} {
		out, err := s.Run(context.Background(), Command{Script: script, Dir: ws, Timeout: guard})
		if err != nil {
			t.Fatal(err)
		}
		if out.ExitCode == 0 {
			t.Errorf("%s: another workspace of the root was visible: %q", script, out.Combined)
		}
	}
	out, err := s.Run(context.Background(), Command{Script: "echo x > f && cat f", Dir: ws, Timeout: guard})
	if err != nil || out.ExitCode != 0 {
		t.Fatalf("the workspace itself: %v %q", err, out.Combined)
	}
	// Without the cover the neighbour shows: the test tests something.
	s.HidePaths = nil
	if out, err := s.Run(context.Background(), Command{Script: "ls -A " + root + " | grep -q bob", Dir: ws, Timeout: guard}); err != nil || out.ExitCode != 0 {
		t.Errorf("control: the root's other workspace was not visible without the cover: %v %q", err, out.Combined)
	}
}

// API-9: a confined sandbox refuses a working directory outside what it
// shows (bash dir=/) before running anything, and its ReadFile and Stat
// refuse what the command could not read.
func TestConfinedSandboxRefuses(t *testing.T) {
	f := newReadConfined(t)
	ctx := context.Background()
	for _, dir := range []string{"/", f.other, f.data, filepath.Dir(f.homeSecret)} {
		if _, err := f.s.Run(ctx, Command{Script: "true", Dir: dir}); err == nil || !strings.Contains(err.Error(), "not in the sandbox") {
			t.Errorf("dir %s: %v", dir, err)
		}
	}
	for _, p := range []string{filepath.Join(f.data, "rein.db"), filepath.Join(f.other, "notes.txt"), f.homeSecret,
		filepath.Join(f.ws, "peer", "notes.txt"), filepath.Join(f.ws, "..", filepath.Base(f.other), "notes.txt")} {
		if _, err := f.s.ReadFile(ctx, p); err == nil || !strings.Contains(err.Error(), "outside what the sandbox shows") {
			t.Errorf("ReadFile(%s): %v", p, err)
		}
		if _, err := f.s.Stat(ctx, p); err == nil {
			t.Errorf("Stat(%s) succeeded", p)
		}
	}
	if _, err := f.s.ReadFile(ctx, "/etc/os-release"); err != nil {
		t.Errorf("a system file: %v", err)
	}
}

// API-9: what a confined run still does — programs, git, and go build and
// test in a workspace that is a Go module, with a cache kept across
// commands in Cache.
func TestConfinedSandboxWorks(t *testing.T) {
	f := newReadConfined(t)
	f.s.Cache = t.TempDir()
	mod := "module example.com/m\n\ngo 1.21\n"
	prog := "package main\n\nfunc main() { println(\"built\") }\n"
	for name, body := range map[string]string{"go.mod": mod, "main.go": prog,
		"main_test.go": "package main\n\nimport \"testing\"\n\nfunc TestX(t *testing.T) {}\n"} {
		if err := os.WriteFile(filepath.Join(f.ws, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	steps := []struct{ name, script, tool string }{
		{"system files", "grep -q NAME= /etc/os-release && ls /usr/bin >/dev/null", ""},
		{"home and tmp are writable", "echo x > $HOME/f && echo y > /tmp/g && cat $HOME/f /tmp/g", ""},
		{"git", "git init -q && git -c user.email=a@b -c user.name=a add -A && git -c user.email=a@b -c user.name=a commit -qm x && git log --oneline | grep -q x", "git"},
		{"go build", "go build -o prog . && ./prog 2>&1 | grep -q built", "go"},
		{"go test", "go test ./...", "go"},
		{"go vet", "go vet ./...", "go"},
	}
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			if st.tool != "" {
				if _, err := osexec.LookPath(st.tool); err != nil {
					t.Skipf("environment: %s is not installed", st.tool)
				}
			}
			out, err := f.s.Run(context.Background(), Command{Script: st.script, Dir: f.ws, Timeout: 3 * time.Minute})
			if err != nil || out.ExitCode != 0 {
				t.Fatalf("exit %d, %v: %s", out.ExitCode, err, out.Combined)
			}
		})
	}
	if ents, err := os.ReadDir(filepath.Join(f.s.Cache, "go-build")); err != nil || len(ents) == 0 {
		t.Errorf("the Go build cache was not kept in Cache: %v", err)
	}
}

// API-9: without ConfineReads (the CLI's sandbox), .rein/data is covered
// all the same: no command reads the history mirror or knowledge base.
func TestSandboxCoversReinData(t *testing.T) {
	s, ws := newSandbox(t)
	for _, dir := range []string{".rein/data", "sub/.rein/data"} {
		p := filepath.Join(ws, dir, "history.db")
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(confinedSecret), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out, err := s.Run(context.Background(), Command{Script: "cat .rein/data/history.db sub/.rein/data/history.db; grep -rqs " + confinedSecret + " .", Dir: ws, Timeout: guard})
	if err != nil {
		t.Fatal(err)
	}
	if out.ExitCode == 0 || strings.Contains(string(out.Combined), confinedSecret) {
		t.Errorf("the mirror was read: exit %d, %q", out.ExitCode, out.Combined)
	}
	if data, err := os.ReadFile(filepath.Join(ws, ".rein", "data", "history.db")); err != nil || string(data) != confinedSecret {
		t.Errorf("the mirror changed on the host: %q, %v", data, err)
	}
}
