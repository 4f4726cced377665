package exec

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// newSandbox returns a sandbox over a fresh workspace, or skips the test when
// bubblewrap cannot run here.
func newSandbox(t *testing.T) (*Sandbox, string) {
	t.Helper()
	ws := t.TempDir()
	s := &Sandbox{Workspace: ws, Local: Local{PipeGrace: 100 * time.Millisecond}}
	if err := s.Available(); err != nil {
		t.Skipf("environment: bwrap cannot run here, sandbox tests skipped: %v", err)
	}
	return s, ws
}

func TestSandboxConformance(t *testing.T) {
	s, ws := newSandbox(t)
	testBackend(t, s, ws)
}

// TOOL-5: the sandbox reads the host, writes only the workspace.
func TestSandboxFileSystem(t *testing.T) {
	s, ws := newSandbox(t)
	outside := t.TempDir() // on the host, outside the workspace
	rootFile := fmt.Sprintf("/root/rein-sandbox-test-%d", os.Getpid())
	t.Cleanup(func() { os.Remove(rootFile) })
	tests := []struct {
		name   string
		script string
		ok     bool
	}{
		{"read /etc/os-release", "grep -q NAME= /etc/os-release", true},
		{"write in workspace", "echo hi > made && mkdir -p d/e && echo x > d/e/f", true},
		{"write host temp dir", "echo x > " + filepath.Join(outside, "escaped"), false},
		{"write /root", "echo x > " + rootFile, false},
		{"write /etc", "touch /etc/rein-sandbox-test", false},
		{"tmp is private and writable", "echo x > /tmp/scratch && cat /tmp/scratch", true},
	}
	for _, tt := range tests {
		out, err := s.Run(context.Background(), Command{Script: tt.script, Dir: ws, Timeout: guard})
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if ok := out.ExitCode == 0; ok != tt.ok {
			t.Errorf("%s: exit %d, output %q; want success=%v", tt.name, out.ExitCode, out.Combined, tt.ok)
		}
	}
	if data, err := os.ReadFile(filepath.Join(ws, "made")); err != nil || string(data) != "hi\n" {
		t.Errorf("workspace write not on the host: %q, %v", data, err)
	}
	for _, p := range []string{filepath.Join(outside, "escaped"), rootFile, "/etc/rein-sandbox-test", "/tmp/scratch"} {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("%s was written on the host", p)
		}
	}
}

// TOOL-5: no network unless allowed.
func TestSandboxNetwork(t *testing.T) {
	s, ws := newSandbox(t)
	script, accepted := tcpProbe(t)

	out, err := s.Run(context.Background(), Command{Script: script, Dir: ws, Timeout: guard})
	if err != nil {
		t.Fatal(err)
	}
	if out.ExitCode == 0 || accepted.Load() != 0 {
		t.Fatalf("sandboxed command reached the host's listener: exit %d, %q", out.ExitCode, out.Combined)
	}

	open := *s
	open.AllowNetwork = true
	out, err = open.Run(context.Background(), Command{Script: script, Dir: ws, Timeout: guard})
	if err != nil || out.ExitCode != 0 {
		t.Fatalf("with AllowNetwork: %+v, %v", out, err)
	}
}

// TOOL-5: a missing or broken bwrap fails closed; nothing runs unsandboxed.
func TestSandboxFailsClosed(t *testing.T) {
	dir := t.TempDir()
	broken := filepath.Join(dir, "fake-bwrap")
	script := "#!/bin/sh\necho 'bwrap: No permissions to create new namespace' >&2\nexit 1\n"
	if err := os.WriteFile(broken, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	ran := filepath.Join(dir, "ran")
	for _, bw := range []string{filepath.Join(dir, "missing-bwrap"), broken} {
		s := &Sandbox{Workspace: dir, Bwrap: bw}
		_, err := s.Run(context.Background(), Command{Script: "touch " + ran, Dir: dir})
		if !errors.Is(err, ErrNoSandbox) || !strings.Contains(err.Error(), "sandbox required but bwrap is not available: install bubblewrap (apt-get install bubblewrap) or set the sandbox to off") {
			t.Errorf("%s: err %v", bw, err)
		}
		if _, err := os.Stat(ran); err == nil {
			t.Fatalf("%s: the command ran unsandboxed", bw)
		}
	}
}

// TOOL-5: the sandbox's WriteFile keeps to the workspace, symlinks included.
func TestSandboxWriteFile(t *testing.T) {
	ws, outside := t.TempDir(), t.TempDir()
	s := &Sandbox{Workspace: ws}
	ctx := context.Background()
	if err := os.Symlink(outside, filepath.Join(ws, "out")); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		path string
		ok   bool
	}{
		{filepath.Join(ws, "a", "b.txt"), true},
		{filepath.Join(outside, "x.txt"), false},
		{filepath.Join(ws, "..", filepath.Base(outside), "y.txt"), false},
		{filepath.Join(ws, "out", "z.txt"), false},
		{filepath.Join(ws, "out", "new", "z.txt"), false},
	}
	for _, tt := range tests {
		err := s.WriteFile(ctx, tt.path, []byte("x"), 0o644)
		if (err == nil) != tt.ok {
			t.Errorf("WriteFile(%s): %v, want ok=%v", tt.path, err, tt.ok)
		}
	}
	if ents, _ := os.ReadDir(outside); len(ents) != 0 {
		t.Fatalf("written outside: %v", ents)
	}
}

// TOOL-5: a working directory hidden by the sandbox's /tmp is refused early.
func TestSandboxHiddenDir(t *testing.T) {
	s, _ := newSandbox(t)
	other := t.TempDir()
	if !strings.HasPrefix(realPath(t, other), "/tmp/") {
		t.Skip("temp dir is not under /tmp")
	}
	if _, err := s.Run(context.Background(), Command{Script: "true", Dir: other}); err == nil || !strings.Contains(err.Error(), "tmpfs") {
		t.Fatalf("err %v", err)
	}
}

// TOOL-5: inside the writable workspace, rein's and Claude Code's settings
// and hooks and git's hooks and config stay read-only, existing or not, and
// cannot be moved aside; the rest of the workspace, .git included, is
// writable.
func TestSandboxProtectsConfig(t *testing.T) {
	s, ws := newSandbox(t)
	files := map[string]string{
		".rein/settings.yaml":   "permissions: {mode: default}\n",
		".git/config":           "[core]\n",
		".git/hooks/pre-commit": "#!/bin/sh\n",
		".git/HEAD":             "ref: refs/heads/main\n",
	}
	for p, data := range files {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(ws, p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(ws, p), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name, script string
		ok           bool
	}{
		{"rewrite settings", "echo 'permissions: {mode: bypass}' > .rein/settings.yaml", false},
		{"add hooks file", "echo x > .rein/hooks.yaml", false},
		{"remove .rein", "rm -rf .rein", false},
		{"move .rein", "mv .rein r", false},
		{"create .claude", "mkdir -p .claude && echo '{}' > .claude/settings.json", false},
		{"git hook", "echo evil >> .git/hooks/pre-commit", false},
		{"new git hook", "echo evil > .git/hooks/post-checkout", false},
		{"git config", "echo '[core] hooksPath = /x' >> .git/config", false},
		{"replace .git", "mv .git g", false},
		{"read settings", "grep -q default .rein/settings.yaml && cat .git/config", true},
		{"write .git", "echo x > .git/ORIG_HEAD && mkdir -p .git/refs/heads", true},
		{"write workspace", "echo ok > src.txt", true},
	}
	for _, tt := range tests {
		out, err := s.Run(context.Background(), Command{Script: tt.script, Dir: ws, Timeout: guard})
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if ok := out.ExitCode == 0; ok != tt.ok {
			t.Errorf("%s: exit %d, output %q; want success=%v", tt.name, out.ExitCode, out.Combined, tt.ok)
		}
	}
	for p, data := range files {
		if got, err := os.ReadFile(filepath.Join(ws, p)); err != nil || string(got) != data {
			t.Errorf("%s on the host: %q, %v; want %q", p, got, err, data)
		}
	}
	for _, p := range []string{".rein/hooks.yaml", ".claude", ".git/hooks/post-checkout", "r", "g"} {
		if _, err := os.Lstat(filepath.Join(ws, p)); err == nil {
			t.Errorf("%s exists on the host after the runs", p)
		}
	}
	// A workspace without .rein: it cannot be created, and nothing is left.
	fresh := t.TempDir()
	s.Workspace = fresh
	out, err := s.Run(context.Background(), Command{Script: "mkdir -p .rein && echo x > .rein/settings.yaml", Dir: fresh, Timeout: guard})
	if err != nil || out.ExitCode == 0 {
		t.Errorf("created .rein/settings.yaml: exit %d, %v", out.ExitCode, err)
	}
	if ents, _ := os.ReadDir(fresh); len(ents) != 0 {
		t.Errorf("left behind in the workspace: %v", ents)
	}
}

// TOOL-5: commands running at once share the placeholder directories; the
// last one to finish removes them.
func TestSandboxPlaceholdersConcurrent(t *testing.T) {
	s, ws := newSandbox(t)
	errs := make(chan error, 4)
	for i := range 4 {
		go func() {
			script := fmt.Sprintf("sleep 0.%d; echo x > .rein/settings.yaml", i)
			out, err := s.Run(context.Background(), Command{Script: script, Dir: ws, Timeout: guard})
			if err == nil && out.ExitCode == 0 {
				err = fmt.Errorf("run %d wrote .rein/settings.yaml", i)
			}
			if err != nil && !strings.Contains(err.Error(), "wrote") {
				t.Errorf("run %d: %v", i, err)
				err = nil
			}
			errs <- err
		}()
	}
	for range 4 {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	if ents, _ := os.ReadDir(ws); len(ents) != 0 {
		t.Errorf("left behind in the workspace: %v", ents)
	}
}

// TOOL-5 (issue 30): without a session's TempDir each command gets a
// temporary directory of its own in its private /tmp — writable, mode
// 0700, named by TMPDIR and the rest, empty at every command — and
// nothing is made on the host for it; under the read-only profile, with
// the workspace read-only, it stays writable, and so does the confined
// sandbox's.
func TestSandboxPrivateTempDir_TOOL5(t *testing.T) {
	s, ws := newSandbox(t)
	hostTemps := func() []string {
		m, _ := filepath.Glob(filepath.Join(os.TempDir(), "rein-tmp*"))
		return m
	}
	before := len(hostTemps())
	script := `test "$TMPDIR" = "$TMP" && test "$TMPDIR" = "$TEMP" && test "$TMPDIR" = "$GOTMPDIR" &&
test "$(stat -c %a "$TMPDIR")" = 700 && test -z "$(ls -A "$TMPDIR")" &&
echo kept > "$TMPDIR/keep" && cat "$TMPDIR/keep" && echo "$TMPDIR"`
	for _, tc := range []struct {
		name string
		s    *Sandbox
	}{
		{"workspace", s},
		{"again", s}, // the last command's file is gone: the ls above
		{"read-only", &Sandbox{Workspace: ws, Profile: ProfileReadOnly, Local: s.Local}},
		{"confined", &Sandbox{Workspace: ws, ConfineReads: true, Local: s.Local}},
	} {
		out, err := tc.s.Run(context.Background(), Command{Script: script, Dir: ws, Timeout: guard})
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if out.ExitCode != 0 || !strings.Contains(string(out.Combined), "kept\n"+privateTemp) {
			t.Errorf("%s: exit %d, output %q", tc.name, out.ExitCode, out.Combined)
		}
	}
	if _, err := os.Stat(privateTemp); err == nil {
		t.Errorf("%s exists on the host", privateTemp)
	}
	if after := len(hostTemps()); after != before {
		t.Errorf("host temporary directories: %d before, %d after", before, after)
	}
}
