package exec

import (
	"context"
	"fmt"
	"os"
	osexec "os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestMain lets the test binary serve as the Landlock helper, as rein's
// main does.
func TestMain(m *testing.M) {
	HelperMain(os.Args)
	os.Exit(m.Run())
}

// gitWorkspace makes a workspace holding a git repository with a commit, a
// nested repository, a submodule-like checkout (a .git file pointing into
// .git/modules), .rein and .claude in a subdirectory, and a .gitconfig at
// the top.
func gitWorkspace(t *testing.T) string {
	t.Helper()
	if _, err := osexec.LookPath("git"); err != nil {
		t.Skip("environment: git is not installed")
	}
	ws := t.TempDir()
	git := func(args ...string) {
		t.Helper()
		c := osexec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@t", "-c", "init.defaultBranch=main"}, args...)...)
		c.Dir = ws
		if out, err := c.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	git("init", "-q")
	write(t, ws, "README", "hello\n")
	git("add", "README")
	git("commit", "-q", "-m", "one")
	git("init", "-q", "sub")
	git("init", "-q", "--bare", ".git/modules/mod")
	write(t, ws, "mod/.git", "gitdir: ../.git/modules/mod\n")
	write(t, ws, "other/.rein/settings.yaml", "permissions: {mode: default}\n")
	write(t, ws, "other/.claude/settings.json", "{}\n")
	write(t, ws, ".gitconfig", "[user]\n\tname = me\n")
	return ws
}

func write(t *testing.T, dir, rel, data string) {
	t.Helper()
	p := filepath.Join(dir, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

func readHost(dir, rel string) (string, bool) {
	data, err := os.ReadFile(filepath.Join(dir, rel))
	return string(data), err == nil
}

// snapshot reads every file below dir's protected entries, on the host.
func snapshot(t *testing.T, ws string) map[string]string {
	t.Helper()
	files := map[string]string{}
	for _, rel := range []string{".git/config", ".git/HEAD", "sub/.git/config", ".git/modules/mod/config", "mod/.git",
		"other/.rein/settings.yaml", "other/.claude/settings.json", ".gitconfig"} {
		data, ok := readHost(ws, rel)
		if !ok {
			t.Fatalf("%s missing before the run", rel)
		}
		files[rel] = data
	}
	return files
}

// TOOL-5, PERM-5: a sandboxed command cannot plant code that runs on the
// host later, wherever in the workspace it tries: every .git, .rein and
// .claude stays as it was (checked on the host after each command), and
// what it creates anew is moved aside.
func TestSandboxProtectsEveryRepository_TOOL5_PERM5(t *testing.T) {
	s, _ := newSandbox(t)
	outside := t.TempDir()
	tests := []struct {
		name, script string
		// absent must not exist on the host after the command; moved must
		// have been moved aside (with QuarantineSuffix).
		absent, moved []string
	}{
		{name: "nested hook", script: "printf '#!/bin/sh\\necho pwned\\n' > sub/.git/hooks/pre-commit; chmod +x sub/.git/hooks/pre-commit",
			absent: []string{"sub/.git/hooks/pre-commit"}},
		{name: "nested config", script: "printf '[core]\\n\\tfsmonitor = touch /tmp/pwned\\n' >> sub/.git/config; git -C sub config core.hooksPath /x"},
		{name: "commondir", script: "mkdir -p evil && printf '[core]\\n\\tfsmonitor = x\\n' > evil/config; echo ../evil > .git/commondir",
			absent: []string{".git/commondir"}},
		{name: "nested commondir", script: "echo ../../evil > sub/.git/commondir", absent: []string{"sub/.git/commondir"}},
		{name: "config.worktree", script: "printf '[core]\\n\\thooksPath = /x\\n' > .git/config.worktree", absent: []string{".git/config.worktree"}},
		{name: "submodule config", script: "echo '[core] fsmonitor = x' >> .git/modules/mod/config; echo x > .git/modules/mod/hooks/post-checkout",
			absent: []string{".git/modules/mod/hooks/post-checkout"}},
		{name: "gitdir file", script: "echo 'gitdir: /tmp/evil' > mod/.git; rm -f mod/.git"},
		{name: "info attributes", script: "echo '* filter=evil' > .git/info/attributes", absent: []string{".git/info/attributes"}},
		{name: "worktrees", script: "mkdir -p .git/worktrees/w && echo x > .git/worktrees/w/commondir", absent: []string{".git/worktrees/w"}},
		{name: "top hook", script: "echo x > .git/hooks/pre-commit", absent: []string{".git/hooks/pre-commit"}},
		{name: "rein settings", script: "echo 'permissions: {mode: bypass}' > other/.rein/settings.yaml; echo x > other/.rein/hooks.yaml",
			absent: []string{"other/.rein/hooks.yaml"}},
		{name: "claude settings", script: "echo '{\"hooks\":{}}' > other/.claude/settings.json; rm -rf other/.claude"},
		{name: "gitconfig", script: "echo '[core] pager = evil' >> .gitconfig"},
		{name: "replace .git", script: "mv .git g; mv sub/.git sub/g; rm -rf sub/.git", absent: []string{"g", "sub/g"}},
		{name: "new repository with a hook", script: "git init -q fresh && printf '#!/bin/sh\\n' > fresh/.git/hooks/pre-commit && chmod +x fresh/.git/hooks/pre-commit",
			absent: []string{"fresh/.git/hooks"}, moved: []string{"fresh/.git/hooks"}},
		{name: "new repository with fsmonitor", script: "git init -q f2 && git -C f2 config core.fsmonitor 'touch /tmp/x'",
			absent: []string{"f2/.git/config"}, moved: []string{"f2/.git/config"}},
		{name: "new .git dir by hand", script: "mkdir -p h/.git/hooks h/.git/objects h/.git/refs && echo 'ref: refs/heads/main' > h/.git/HEAD && echo x > h/.git/hooks/post-checkout",
			moved: []string{"h/.git/hooks"}},
		{name: "new bare repository", script: "git init -q --bare b && git -C b config alias.st '!touch /tmp/x'", moved: []string{"b/config"}},
		{name: "new .git file", script: "mkdir -p g2 && echo 'gitdir: ../evil' > g2/.git", absent: []string{"g2/.git"}, moved: []string{"g2/.git"}},
		{name: "new .git link", script: "mkdir -p g3 && ln -s ../sub/.git g3/.git", moved: []string{"g3/.git"}},
		{name: "parent moved aside", script: "mv sub sub2 && git init -q sub && echo x > sub/.git/hooks/pre-commit",
			moved: []string{"sub/.git/hooks"}},
		{name: "new .rein in a subdirectory", script: "mkdir -p n/.rein && echo x > n/.rein/hooks.yaml", absent: []string{"n/.rein"}, moved: []string{"n/.rein"}},
		{name: "new .claude in a subdirectory", script: "mkdir -p n/.claude && echo '{}' > n/.claude/settings.json", moved: []string{"n/.claude"}},
		{name: "write outside", script: "echo x > " + filepath.Join(outside, "f"), absent: []string{filepath.Join(outside, "f")}},
		{name: "symlink to a protected path", script: "ln -s .git/hooks h1; echo x > h1/pre-push", absent: []string{".git/hooks/pre-push"}},
		{name: "symlink to a nested protected path", script: "ln -s sub/.git h2; echo x > h2/config.worktree; echo x > h2/hooks/pre-push",
			absent: []string{"sub/.git/config.worktree", "sub/.git/hooks/pre-push"}},
		{name: "symlink outside", script: "ln -s " + outside + " o; echo x > o/g", absent: []string{filepath.Join(outside, "g")}},
		{name: "dot-dot path", script: "echo x > ../" + filepath.Base(outside) + "/h; echo x > .git/../.git/hooks/x",
			absent: []string{filepath.Join(outside, "h"), ".git/hooks/x"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ws := gitWorkspace(t)
			s := *s
			s.Workspace = ws
			before := snapshot(t, ws)
			out, err := s.Run(context.Background(), Command{Script: tt.script, Dir: ws, Timeout: guard,
				Env: []string{"GIT_CONFIG_GLOBAL=/dev/null"}})
			if err != nil {
				t.Fatal(err)
			}
			for rel, data := range before {
				if rel == "sub/.git/config" && strings.HasPrefix(tt.name, "parent moved") {
					rel = "sub2/.git/config"
				}
				if got, ok := readHost(ws, rel); !ok || got != data {
					t.Errorf("%s changed on the host: %q (exists %v), was %q; output %q", rel, got, ok, data, out.Combined)
				}
			}
			for _, p := range tt.absent {
				if !filepath.IsAbs(p) {
					p = filepath.Join(ws, p)
				}
				if _, err := os.Lstat(p); err == nil {
					t.Errorf("%s exists on the host; output %q", p, out.Combined)
				}
			}
			for _, p := range tt.moved {
				if _, err := os.Lstat(filepath.Join(ws, p+QuarantineSuffix)); err != nil {
					t.Errorf("%s was not moved aside: %v; notes %q", p, err, out.Notes)
				}
				if !slices.ContainsFunc(out.Notes, func(n string) bool { return strings.Contains(n, p) }) {
					t.Errorf("no note names %s: %q", p, out.Notes)
				}
			}
			// A refused write is explained as protected, with no setting
			// offered to widen it (SPEC TOOL-7); nothing else is noted.
			for _, n := range out.Notes {
				if len(tt.moved) == 0 && !strings.Contains(n, "is protected: ") {
					t.Errorf("unexpected note: %q", n)
				}
				if strings.Contains(n, "sandbox.writable") {
					t.Errorf("a protected path is offered a setting: %q", n)
				}
			}
			// Nothing the run made for itself is left behind.
			for _, p := range []string{".git/commondir", ".git/config.worktree", "sub/.git/commondir", ".rein", ".claude"} {
				if _, err := os.Lstat(filepath.Join(ws, p)); err == nil {
					t.Errorf("placeholder %s left behind", p)
				}
			}
		})
	}
}

// TOOL-5: the protection leaves ordinary git work alone: commit in the
// workspace's repository and in a nested one, and a clean new repository
// is kept as it is.
func TestSandboxGitStillWorks_TOOL5(t *testing.T) {
	s, _ := newSandbox(t)
	ws := gitWorkspace(t)
	s.Workspace = ws
	script := `set -e
export GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@t GIT_COMMITTER_NAME=t GIT_COMMITTER_EMAIL=t@t GIT_CONFIG_GLOBAL=/dev/null
echo more >> README && git commit -qam two && git log --oneline | wc -l
echo x > sub/f && git -C sub add f && git -C sub commit -qm first && git -C sub status --short
git checkout -qb feature && git status --short
git init -q -b main newrepo && echo y > newrepo/y && git -C newrepo add y && git -C newrepo commit -qm init
cargo_like=$(git -C newrepo rev-parse --is-inside-work-tree); echo $cargo_like`
	out, err := s.Run(context.Background(), Command{Script: script, Dir: ws, Timeout: guard})
	if err != nil || out.ExitCode != 0 {
		t.Fatalf("exit %d, %v: %s", out.ExitCode, err, out.Combined)
	}
	if len(out.Notes) != 0 {
		t.Errorf("a clean new repository was moved aside: %q", out.Notes)
	}
	c := osexec.Command("git", "-C", filepath.Join(ws, "newrepo"), "log", "--oneline")
	if got, err := c.CombinedOutput(); err != nil || !strings.Contains(string(got), "init") {
		t.Errorf("the new repository on the host: %s, %v", got, err)
	}
}

// TOOL-5: git's config commands fail in the sandbox with a clear message
// rather than succeeding somewhere else.
func TestSandboxGitConfigReadOnly_TOOL5(t *testing.T) {
	s, _ := newSandbox(t)
	ws := gitWorkspace(t)
	s.Workspace = ws
	out, err := s.Run(context.Background(), Command{Script: "git config core.fsmonitor evil", Dir: ws, Timeout: guard})
	if err != nil || out.ExitCode == 0 {
		t.Fatalf("git config succeeded: %s, %v", out.Combined, err)
	}
	if got, _ := readHost(ws, ".git/config"); strings.Contains(got, "fsmonitor") {
		t.Fatalf("config changed: %s", got)
	}
}

// TOOL-5, PERM-2: files Hide matches cannot be read in the sandbox, by
// cat, grep -r or a symbolic link, nor through the backend; HidePaths
// covers files outside the workspace.
func TestSandboxHidesSensitiveFiles_TOOL5(t *testing.T) {
	s, ws := newSandbox(t)
	outside := t.TempDir()
	const secret = "sk-test-SECRET-hidden"
	write(t, ws, ".env", "KEY="+secret+"\n")
	write(t, ws, "deep/er/.env.local", "KEY="+secret+"\n")
	write(t, ws, ".ssh/id_ed25519", secret+"\n")
	write(t, ws, "ok.txt", "visible\n")
	write(t, outside, "credentials", secret+"\n")
	if err := os.Symlink(".env", filepath.Join(ws, "link")); err != nil {
		t.Fatal(err)
	}
	s.Hide = func(p string) bool {
		b := filepath.Base(p)
		return b == ".env" || strings.HasPrefix(b, ".env.") || b == ".ssh"
	}
	s.HidePaths = []string{filepath.Join(outside, "credentials")}
	for _, script := range []string{
		"cat .env", "cat deep/er/.env.local", "grep -r SECRET . 2>&1", "cat link", "ls -a .ssh; cat .ssh/id_ed25519",
		"cat " + filepath.Join(outside, "credentials"), "ln -s .env l2; cat l2", "cp .env copy; cat copy",
		"echo x >> .env; rm -f .env; mv .env gone",
	} {
		out, err := s.Run(context.Background(), Command{Script: script, Dir: ws, Timeout: guard})
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(out.Combined), secret) {
			t.Errorf("%q read the secret: %q", script, out.Combined)
		}
	}
	out, _ := s.Run(context.Background(), Command{Script: "grep -r visible .", Dir: ws, Timeout: guard})
	if !strings.Contains(string(out.Combined), "ok.txt:visible") {
		t.Errorf("grep -r no longer reads ordinary files: %q", out.Combined)
	}
	if got, _ := readHost(ws, ".env"); got != "KEY="+secret+"\n" {
		t.Errorf(".env changed on the host: %q", got)
	}
	if _, err := s.ReadFile(context.Background(), filepath.Join(ws, ".env")); err == nil {
		t.Error("ReadFile read a hidden file")
	}
	if err := s.WriteFile(context.Background(), filepath.Join(ws, ".env"), []byte("x"), 0o600); err == nil {
		t.Error("WriteFile wrote a hidden file")
	}
}

// TOOL-5: the backend's own writes (write_file, edit_file) keep off the
// protected paths too.
func TestSandboxWriteFileProtected_TOOL5(t *testing.T) {
	ws := t.TempDir()
	s := &Sandbox{Workspace: ws}
	for _, rel := range []string{".git/hooks/pre-commit", "sub/.git/config", "a/.rein/settings.yaml", ".claude/settings.json", ".gitconfig", ".config/rein/config.yaml"} {
		if err := s.WriteFile(context.Background(), filepath.Join(ws, rel), []byte("x"), 0o644); err == nil {
			t.Errorf("WriteFile(%s) succeeded", rel)
		}
	}
	if err := s.WriteFile(context.Background(), filepath.Join(ws, "src/.gitignore"), []byte("x"), 0o644); err != nil {
		t.Errorf("WriteFile(.gitignore): %v", err)
	}
}

// TOOL-5: a sandboxed command has no capabilities, even when rein runs as
// root, so it cannot undo the read-only mounts; it cannot see rein's
// process, and the pipe bubblewrap read its options from is empty.
func TestSandboxNoCapabilities_TOOL5(t *testing.T) {
	s, ws := newSandbox(t)
	write(t, ws, ".git/hooks/pre-commit", "ok\n")
	hooks := filepath.Join(ws, ".git/hooks")
	script := "grep CapEff /proc/self/status; umount " + hooks + " && echo UMOUNTED; mount -o remount,rw / && echo REMOUNTED; " +
		"ls /proc | grep -cx '[0-9]*'; echo fd3=$(cat <&3 2>/dev/null | wc -c)"
	out, err := s.Run(context.Background(), Command{Script: script, Dir: ws, Timeout: guard})
	if err != nil {
		t.Fatal(err)
	}
	got := string(out.Combined)
	if !strings.Contains(got, "CapEff:\t0000000000000000") || strings.Contains(got, "MOUNTED") {
		t.Fatalf("capabilities left: %s", got)
	}
	if !strings.Contains(got, "fd3=0") {
		t.Errorf("fd 3 (bwrap's options) is not an emptied pipe: %s", got)
	}
}

// TOOL-5: the scan finds what it must however deep, and goes into no git
// directory or hidden entry.
func TestScanTree(t *testing.T) {
	ws := t.TempDir()
	for _, rel := range []string{
		"a/b/c/d/e/.git/HEAD", "a/b/c/.rein/x", "x/.claude/y", "bare/HEAD", "bare/objects/o", "bare/refs/r",
		".git/HEAD", "n/node_modules/p/.git/HEAD", "s/.env", "s/.git/hooks/x",
	} {
		write(t, ws, rel, "x")
	}
	write(t, ws, "m/.git", "gitdir: ../.git/modules/m\n")
	sc, err := scanTree(ws, func(p string) bool { return strings.HasSuffix(p, "/s") }, 1000)
	if err != nil {
		t.Fatal(err)
	}
	rel := func(ps []string) []string {
		var out []string
		for _, p := range ps {
			r, _ := filepath.Rel(ws, p)
			out = append(out, r)
		}
		slices.Sort(out)
		return out
	}
	if got, want := rel(sc.gitDirs), []string{".git", "a/b/c/d/e/.git", "bare", "n/node_modules/p/.git"}; !slices.Equal(got, want) {
		t.Errorf("git dirs %q, want %q", got, want)
	}
	if got := rel(sc.gitFiles); !slices.Equal(got, []string{"m/.git"}) {
		t.Errorf("git files %q", got)
	}
	if got := rel(sc.configs); !slices.Equal(got, []string{"a/b/c/.rein", "x/.claude"}) {
		t.Errorf("configs %q", got)
	}
	if len(sc.hidden) != 1 || !sc.hidden[0].dir {
		t.Errorf("hidden %v", sc.hidden)
	}
	if _, err := scanTree(ws, nil, 5); err == nil {
		t.Error("no error past the limit")
	}
}

// PERM-5: the vetting of a new repository's config reads only plain
// syntax and keys git init and git clone write.
func TestVetGitConfig(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		config string
		ok     bool
	}{
		{"[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = false\n\tlogallrefupdates = true\n", true},
		{"[remote \"origin\"]\n\turl = https://x/y.git\n\tfetch = +refs/heads/*:refs/remotes/origin/*\n[branch \"main\"]\n\tremote = origin\n\tmerge = refs/heads/main\n", true},
		{"# comment\n; other\n[Core]\n\tBare = false ; trailing\n", true},
		{"[core]\n\tfsmonitor = evil\n", false},
		{"[core]\n\thooksPath = /x\n", false},
		{"[core] fsmonitor = evil\n", false},
		{"[core]\n\tbare = false \\\n\nfsmonitor = evil\n", false},
		{"[alias]\n\tst = !evil\n", false},
		{"[include]\n\tpath = ../x\n", false},
		{"[includeIf \"gitdir:/\"]\n\tpath = x\n", false},
		{"[core.x]\n\tbare = false\n", false},
		{"[submodule \"s\"]\n\tupdate = !evil\n", false},
		{"[remote \"o\\\"x\"]\n\turl = y\n", false},
		{"bare = false\n", false},
		{"[core]\n\tworktree = /home\n", false},
	}
	for _, tt := range tests {
		p := filepath.Join(dir, "config")
		if err := os.WriteFile(p, []byte(tt.config), 0o644); err != nil {
			t.Fatal(err)
		}
		if why := vetGitConfig(p); (why == "") != tt.ok {
			t.Errorf("%q: %q, want ok=%v", tt.config, why, tt.ok)
		}
	}
}

// TOOL-5: a command run in a nested repository can commit there, and still
// cannot touch that repository's hooks, config or commondir; so can it in
// the workspace's own; a repository the command does not run in is
// read-only whole.
func TestSandboxNestedRepository_TOOL5(t *testing.T) {
	s, _ := newSandbox(t)
	ws := gitWorkspace(t)
	s.Workspace = ws
	sub := filepath.Join(ws, "sub")
	if out, err := osexec.Command("git", "init", "-q", filepath.Join(ws, "lib")).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v %s", err, out)
	}
	env := []string{"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t", "GIT_CONFIG_GLOBAL=/dev/null"}
	before := snapshot(t, ws)
	out, err := s.Run(context.Background(), Command{Dir: sub, Env: env, Timeout: guard,
		Script: "echo x > f && git add f && git commit -qm one && echo committed; " +
			"echo x > .git/hooks/pre-commit; echo ../x > .git/commondir; echo '[core] fsmonitor=x' >> .git/config; " +
			"echo y > ../lib/y && git -C ../lib add y; echo rc=$?; echo z >> ../README && git -C .. commit -qam two && echo top-committed"})
	if err != nil {
		t.Fatal(err)
	}
	got := string(out.Combined)
	if !strings.Contains(got, "committed\n") || !strings.Contains(got, "rc=128") || !strings.Contains(got, "top-committed") {
		t.Errorf("output %q: want commits in sub and the workspace's repository to work, git add in lib to fail", got)
	}
	for rel, data := range before {
		if now, _ := readHost(ws, rel); now != data {
			t.Errorf("%s changed on the host: %q", rel, now)
		}
	}
	for _, rel := range []string{"sub/.git/hooks/pre-commit", "sub/.git/commondir"} {
		if _, err := os.Lstat(filepath.Join(ws, rel)); err == nil {
			t.Errorf("%s exists on the host", rel)
		}
	}
}

// TOOL-5: past the mount budget a workspace is refused rather than half
// protected; sensitive files past it stay readable, with a note.
func TestShieldMountBudget_TOOL5(t *testing.T) {
	ws := t.TempDir()
	for i := range 5 {
		write(t, ws, fmt.Sprintf("r%d/.git/HEAD", i), "ref: refs/heads/main\n")
		write(t, ws, fmt.Sprintf("k%d.pem", i), "secret")
	}
	hide := func(p string) bool { return strings.HasSuffix(p, ".pem") }
	if _, err := newShield(shieldOptions{writable: []string{ws}, dir: ws, hide: hide, maxMounts: 3}); err == nil ||
		!strings.Contains(err.Error(), "narrower directory") {
		t.Fatalf("err %v", err)
	}
	sh, err := newShield(shieldOptions{writable: []string{ws}, dir: ws, hide: hide, maxMounts: 9})
	if err != nil {
		t.Fatal(err)
	}
	defer sh.release()
	if sh.mounts != 9 || len(sh.notes) != 1 || !strings.Contains(sh.notes[0], "left 3 sensitive files readable") {
		t.Fatalf("mounts %d, notes %q", sh.mounts, sh.notes)
	}
}
