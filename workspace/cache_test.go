package workspace

import (
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// cacheFixture writes a home and a workspace holding every kind of file
// Load reads: user settings, hooks, agents, skills (one linked from
// elsewhere), commands, ~/.claude.json, managed settings, and a workspace
// with settings, hooks running scripts (one through a wildcard), actions
// (one a linked directory), skills, agents, commands and MCP servers.
func cacheFixture(tb testing.TB) (ws, home string, opts Options) {
	base := tb.TempDir()
	ws, home = filepath.Join(base, "repo"), filepath.Join(base, "home")
	files := map[string]string{
		".rein/settings.yaml":          "model: aaa\n",
		".rein/hooks.yaml":             "hooks:\n  pre_tool_use:\n    - {matcher: bash, command: \"bash .rein/hooks/guard.sh\"}\n  stop:\n    - {command: \"sh tools/*.sh\"}\n    - {command: \"sh lint/*.sh\"}\n",
		".rein/hooks/guard.sh":         "# guard\n",
		"tools/a.sh":                   "echo a\n",
		"lint/README":                  "No script yet.\n",
		".claude/settings.json":        `{"permissions": {"deny": ["Bash(rm:*)"]}}`,
		".mcp.json":                    `{"mcpServers": {"local": {"command": "node", "args": ["mcp/server.js"]}}}`,
		"mcp/server.js":                "// server\n",
		"shared/lint/ACTION.yaml":      "description: Lint.\ncommand: [./run.sh]\n",
		"shared/lint/run.sh":           "go vet ./...\n",
		".rein/actions/a0/ACTION.yaml": "description: A.\ncommand: \"bash $REIN_ACTION_DIR/run.sh\"\n",
		".rein/actions/a0/run.sh":      "echo\n",
		".rein/agents/reviewer.md":     "---\nname: reviewer\ndescription: Reviews.\n---\nYou review.\n",
		".claude/agents/helper.md":     "---\nname: helper\ndescription: Helps.\n---\nYou help.\n",
		".rein/skills/s0/SKILL.md":     "---\nname: s0\ndescription: S.\n---\nStep.\n",
		".rein/commands/go.md":         "---\ndescription: Go.\n---\nGo on.\n",
	}
	for rel, body := range files {
		writeTB(tb, filepath.Join(ws, rel), body)
	}
	if err := os.Symlink("../../shared/lint", filepath.Join(ws, ".rein", "actions", "lint")); err != nil {
		tb.Fatal(err)
	}
	homeFiles := map[string]string{
		".config/rein/settings.yaml":     "permissions:\n  allow: [\"Bash(echo:*)\"]\n",
		".config/rein/agents/mine.md":    "---\nname: mine\ndescription: Mine.\n---\nYou.\n",
		"skills-elsewhere/one/SKILL.md":  "---\nname: one\ndescription: One.\n---\nOne.\n",
		"skills-elsewhere/two/SKILL.md":  "---\nname: two\ndescription: Two.\n---\nTwo.\n",
		".claude.json":                   `{"mcpServers": {"u": {"command": "u-server"}}}`,
		"managed/managed-settings.json":  `{"permissions": {"deny": ["Bash(curl:*)"]}}`,
		".config/rein/commands/hello.md": "---\ndescription: Hello.\n---\nHi.\n",
	}
	for rel, body := range homeFiles {
		writeTB(tb, filepath.Join(home, rel), body)
	}
	if err := os.MkdirAll(filepath.Join(home, ".config", "rein", "skills"), 0o755); err != nil {
		tb.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(home, "skills-elsewhere", "one"), filepath.Join(home, ".config", "rein", "skills", "linked")); err != nil {
		tb.Fatal(err)
	}
	env := map[string]string{"HOME": home, "ANTHROPIC_API_KEY": "k"}
	opts = Options{WorkDir: ws, Root: ws, Getenv: func(k string) string { return env[k] },
		ClaudeManagedDir: filepath.Join(home, "managed")}
	return ws, home, opts
}

// testSettle is the settling time of a test's cache: above this
// machine's timestamp tick (a jiffy), so the rule that keeps a result
// only when its files settled still holds, but short enough to wait.
const testSettle = 50 * time.Millisecond

// settledCache returns a cache that settles in testSettle, once the
// files a test just wrote have settled.
func settledCache() *Cache {
	c := NewCache()
	c.settle = testSettle
	time.Sleep(testSettle + 10*time.Millisecond)
	return c
}

// nextTick waits until a change made now gets a change time the file
// system has not given yet (its clock ticks coarsely).
func nextTick() { time.Sleep(25 * time.Millisecond) }

// sameSize rewrites the file at p in place with content of the same
// size, and puts its modification time back: only its change time
// tells.
func sameSize(t *testing.T, p, from, to string) {
	t.Helper()
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	next := strings.Replace(string(data), from, to, 1)
	if len(next) != len(data) || next == string(data) {
		t.Fatalf("sameSize: %q to %q in %s", from, to, p)
	}
	f, err := os.OpenFile(p, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte(next), 0); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if err := os.Chtimes(p, fi.ModTime(), fi.ModTime()); err != nil {
		t.Fatal(err)
	}
}

// TestCacheSeesEveryChange_API3 edits, creates, deletes, renames and
// relinks each kind of file Load reads between two loads through a cache:
// the second must be what a fresh Load returns, which differs from the
// first.
func TestCacheSeesEveryChange_API3(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("environment: not Linux: a Cache keeps results on Linux only; elsewhere it loads every time")
	}
	cases := []struct {
		name   string
		change func(t *testing.T, ws, home string)
	}{
		{"settings edited in place, same size, same mtime", func(t *testing.T, ws, home string) {
			sameSize(t, filepath.Join(ws, ".rein/settings.yaml"), "aaa", "bbb")
		}},
		{"settings replaced by rename, same size, same mtime", func(t *testing.T, ws, home string) {
			p := filepath.Join(ws, ".rein/settings.yaml")
			fi, _ := os.Stat(p)
			writeTB(t, p+".tmp", "model: bbb\n")
			os.Chtimes(p+".tmp", fi.ModTime(), fi.ModTime())
			if err := os.Rename(p+".tmp", p); err != nil {
				t.Fatal(err)
			}
		}},
		{"settings deleted", func(t *testing.T, ws, home string) { os.Remove(filepath.Join(ws, ".rein/settings.yaml")) }},
		{"local settings created", func(t *testing.T, ws, home string) {
			writeTB(t, filepath.Join(ws, ".rein/settings.local.yaml"), "model: ccc\n")
		}},
		{"models file created", func(t *testing.T, ws, home string) {
			writeTB(t, filepath.Join(ws, ".rein/models.yaml"), "models:\n  - {name: m1, provider: anthropic}\n")
		}},
		{"hooks file edited", func(t *testing.T, ws, home string) {
			sameSize(t, filepath.Join(ws, ".rein/hooks.yaml"), "matcher: bash", "matcher: grep")
		}},
		{"script a hook runs edited", func(t *testing.T, ws, home string) {
			sameSize(t, filepath.Join(ws, ".rein/hooks/guard.sh"), "guard", "GUARD")
		}},
		{"file a hook's wildcard matches created", func(t *testing.T, ws, home string) {
			writeTB(t, filepath.Join(ws, "tools/b.sh"), "echo b\n")
		}},
		{"first file a hook's wildcard matches created", func(t *testing.T, ws, home string) {
			writeTB(t, filepath.Join(ws, "lint/x.sh"), "echo x\n")
		}},
		{"script an MCP server runs edited", func(t *testing.T, ws, home string) {
			sameSize(t, filepath.Join(ws, "mcp/server.js"), "server", "SERVER")
		}},
		{"skill renamed", func(t *testing.T, ws, home string) {
			if err := os.Rename(filepath.Join(ws, ".rein/skills/s0"), filepath.Join(ws, ".rein/skills/s9")); err != nil {
				t.Fatal(err)
			}
		}},
		{"skill file deleted", func(t *testing.T, ws, home string) { os.Remove(filepath.Join(ws, ".rein/skills/s0/SKILL.md")) }},
		{"skill edited", func(t *testing.T, ws, home string) {
			sameSize(t, filepath.Join(ws, ".rein/skills/s0/SKILL.md"), "Step.", "Stop.")
		}},
		{"agent created in .claude/agents", func(t *testing.T, ws, home string) {
			writeTB(t, filepath.Join(ws, ".claude/agents/new.md"), "---\nname: new\ndescription: New.\n---\nNew.\n")
		}},
		{"command created in a new subdirectory", func(t *testing.T, ws, home string) {
			writeTB(t, filepath.Join(ws, ".rein/commands/sub/x.md"), "---\ndescription: X.\n---\nX.\n")
		}},
		{"linked action's file edited", func(t *testing.T, ws, home string) {
			sameSize(t, filepath.Join(ws, "shared/lint/ACTION.yaml"), "Lint.", "LINT.")
		}},
		{"linked action relinked", func(t *testing.T, ws, home string) {
			writeTB(t, filepath.Join(ws, "shared/lint2/ACTION.yaml"), "description: Other.\ncommand: [./run.sh]\n")
			l := filepath.Join(ws, ".rein/actions/lint")
			os.Remove(l)
			if err := os.Symlink("../../shared/lint2", l); err != nil {
				t.Fatal(err)
			}
		}},
		{"workspace MCP file edited", func(t *testing.T, ws, home string) {
			sameSize(t, filepath.Join(ws, ".mcp.json"), `"node"`, `"nodx"`)
		}},
		{"Claude Code settings edited", func(t *testing.T, ws, home string) {
			sameSize(t, filepath.Join(ws, ".claude/settings.json"), "rm:", "mv:")
		}},
		{"Claude Code local settings created", func(t *testing.T, ws, home string) {
			writeTB(t, filepath.Join(ws, ".claude/settings.local.json"), `{"permissions": {"deny": ["Bash(dd:*)"]}}`)
		}},
		{"user settings edited", func(t *testing.T, ws, home string) {
			sameSize(t, filepath.Join(home, ".config/rein/settings.yaml"), "echo", "ECHO")
		}},
		{"user skill link retargeted", func(t *testing.T, ws, home string) {
			l := filepath.Join(home, ".config/rein/skills/linked")
			os.Remove(l)
			if err := os.Symlink(filepath.Join(home, "skills-elsewhere", "two"), l); err != nil {
				t.Fatal(err)
			}
		}},
		{"user skill linked to a directory edited", func(t *testing.T, ws, home string) {
			sameSize(t, filepath.Join(home, "skills-elsewhere/one/SKILL.md"), "One.\n---", "Uno.\n---")
		}},
		{"user agent deleted", func(t *testing.T, ws, home string) { os.Remove(filepath.Join(home, ".config/rein/agents/mine.md")) }},
		{"user hooks created", func(t *testing.T, ws, home string) {
			writeTB(t, filepath.Join(home, ".config/rein/hooks.yaml"), "hooks:\n  stop:\n    - {command: \"true\"}\n")
		}},
		{"user command edited", func(t *testing.T, ws, home string) {
			sameSize(t, filepath.Join(home, ".config/rein/commands/hello.md"), "Hello.", "Howdy.")
		}},
		{"profiles created", func(t *testing.T, ws, home string) {
			writeTB(t, filepath.Join(home, ".config/rein/config.yaml"), "default: anthropic\n")
		}},
		{"~/.claude.json edited", func(t *testing.T, ws, home string) {
			sameSize(t, filepath.Join(home, ".claude.json"), "u-server", "v-server")
		}},
		{"managed settings file added", func(t *testing.T, ws, home string) {
			writeTB(t, filepath.Join(home, "managed/managed-settings.d/10.json"), `{"permissions": {"deny": ["Bash(nc:*)"]}}`)
		}},
		{"~/.config/rein replaced by a link", func(t *testing.T, ws, home string) {
			other := filepath.Join(home, "other-config")
			writeTB(t, filepath.Join(other, "settings.yaml"), "model: zzz\n")
			if err := os.Rename(filepath.Join(home, ".config/rein"), filepath.Join(home, "old-config")); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(other, filepath.Join(home, ".config/rein")); err != nil {
				t.Fatal(err)
			}
		}},
		{"workspace trusted", func(t *testing.T, ws, home string) {
			l, err := Load(Options{WorkDir: ws, Root: ws, Getenv: func(k string) string { return map[string]string{"HOME": home}[k] },
				ClaudeManagedDir: filepath.Join(home, "managed")})
			if err != nil {
				t.Fatal(err)
			}
			if err := l.TrustNow(time.Now()); err != nil {
				t.Fatal(err)
			}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ws, home, opts := cacheFixture(t)
			c := settledCache()
			before, err := c.Load("alice", opts)
			if err != nil {
				t.Fatal(err)
			}
			if again, _ := c.Load("alice", opts); again != before || c.hits.Load() != 1 {
				t.Fatalf("an unchanged workspace was loaded again (hits %d)", c.hits.Load())
			}
			nextTick()
			tc.change(t, ws, home)
			got, err := c.Load("alice", opts)
			if err != nil {
				t.Fatal(err)
			}
			fresh, err := Load(opts)
			if err != nil {
				t.Fatal(err)
			}
			if got == before || c.hits.Load() != 1 {
				t.Fatalf("the change was not seen: the cached result was served (hits %d)", c.hits.Load())
			}
			if !reflect.DeepEqual(got, fresh) {
				t.Fatal("the cache's result differs from a fresh Load")
			}
			if reflect.DeepEqual(before, fresh) {
				t.Fatal("the change changes nothing Load returns: the case tests nothing")
			}
		})
	}
}

// TestCacheRacyEdit_API3 edits a file in the same clock tick as the load
// before, with the real clock: a result whose files changed within
// CacheSettle is not kept, so the edit is seen.
func TestCacheRacyEdit_API3(t *testing.T) {
	ws, _, opts := cacheFixture(t)
	c := NewCache()
	if _, err := c.Load("alice", opts); err != nil {
		t.Fatal(err)
	}
	sameSize(t, filepath.Join(ws, ".rein/settings.yaml"), "aaa", "bbb") // no wait: maybe the same tick
	got, err := c.Load("alice", opts)
	if err != nil {
		t.Fatal(err)
	}
	if v := got.Effective.Get(Model).Value; v != "bbb" || c.hits.Load() != 0 {
		t.Fatalf("model %q after the edit (hits %d), want bbb", v, c.hits.Load())
	}
}

// TestCacheIgnoresUnlistedDirs_API3 creates a file at the workspace's
// top level and in the home directory, which Load passes through but
// does not list: the result is served again.
func TestCacheIgnoresUnlistedDirs_API3(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("environment: not Linux: a Cache keeps results on Linux only")
	}
	ws, home, opts := cacheFixture(t)
	c := settledCache()
	before, err := c.Load("alice", opts)
	if err != nil {
		t.Fatal(err)
	}
	nextTick()
	writeTB(t, filepath.Join(ws, "notes.txt"), "written by a run\n")
	writeTB(t, filepath.Join(home, ".bash_history"), "ls\n")
	if got, _ := c.Load("alice", opts); got != before {
		t.Fatal("a file no Load reads made the cache load again")
	}
}

// TestCacheTenancy_API9 loads the same workspace for two callers: the
// second is never served the first one's result.
func TestCacheTenancy_API9(t *testing.T) {
	_, _, opts := cacheFixture(t)
	c := settledCache()
	a, err := c.Load("alice", opts)
	if err != nil {
		t.Fatal(err)
	}
	b, err := c.Load("bob", opts)
	if err != nil {
		t.Fatal(err)
	}
	if a == b || c.hits.Load() != 0 {
		t.Fatalf("bob was served alice's result (hits %d)", c.hits.Load())
	}
	if again, _ := c.Load("alice", opts); again != a && runtime.GOOS == "linux" {
		t.Fatal("alice's result was not kept")
	}
}

// TestCacheKey_API3 changes each option and a variable Load reads: each
// loads afresh.
func TestCacheKey_API3(t *testing.T) {
	ws, home, opts := cacheFixture(t)
	env := map[string]string{"HOME": home}
	opts.Getenv = func(k string) string { return env[k] }
	c := settledCache()
	base, err := c.Load("alice", opts)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		change func(o *Options)
	}{
		{"flag", func(o *Options) { o.Flags = map[string]string{Model: "flagged"} }},
		{"without user", func(o *Options) { o.WithoutUser = true }},
		{"MCP config", func(o *Options) {
			o.MCPConfigs = []MCPConfig{{Source: "--mcp-config", Data: []byte(`{"mcpServers": {"x": {"command": "x"}}}`)}}
		}},
		{"strict MCP", func(o *Options) { o.StrictMCP = true }},
		{"managed dir", func(o *Options) { o.ClaudeManagedDir = filepath.Join(home, "nowhere") }},
		{"work dir", func(o *Options) { o.WorkDir = filepath.Join(ws, ".rein") }},
		{"variable", func(o *Options) {
			o.Getenv = func(k string) string {
				if k == "REIN_MODEL" {
					return "from-env"
				}
				return env[k]
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := opts
			tc.change(&o)
			got, err := c.Load("alice", o)
			if err != nil {
				t.Fatal(err)
			}
			fresh, _ := Load(o)
			if got == base || !reflect.DeepEqual(got, fresh) {
				t.Fatal("served the result of other options")
			}
		})
	}
}

// TestCacheTraceCoversReads_API3 runs one traced Load of the fixture
// under strace and checks that every path a system call named under the
// fixture is one the trace recorded, a directory above one, or a
// directory a recorded wildcard lists: a read the trace misses would let
// a cache serve a stale result.
func TestCacheTraceCoversReads_API3(t *testing.T) {
	if dir := os.Getenv("REIN_TRACE_HELPER"); dir != "" {
		traceHelper(t, dir)
		return
	}
	strace, err := exec.LookPath("strace")
	if err != nil || runtime.GOOS != "linux" {
		t.Skip("environment: strace is not installed, or this is not Linux: it shows the system calls of a Load (scripts/test installs it)")
	}
	ws, home, _ := cacheFixture(t)
	base := filepath.Dir(ws)
	out := filepath.Join(t.TempDir(), "strace")
	cmd := exec.Command(strace, "-f", "-qq", "-e", "trace=%file,%desc", "-o", out, os.Args[0], "-test.run", "^TestCacheTraceCoversReads_API3$")
	cmd.Env = append(os.Environ(), "REIN_TRACE_HELPER="+base, "REIN_TRACE_HOME="+home)
	if msg, err := cmd.CombinedOutput(); err != nil {
		if strings.Contains(string(msg), "PTRACE") || strings.Contains(string(msg), "Operation not permitted") {
			t.Skipf("environment: strace cannot trace here (ptrace is not permitted): %s", msg)
		}
		t.Fatalf("%v: %s", err, msg)
	}
	recorded := readLines(t, filepath.Join(base, "recorded"))
	syscalls, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	marker := filepath.Join(base, "begin")
	on, seen := false, 0
	for _, line := range strings.Split(string(syscalls), "\n") {
		if strings.Contains(line, marker) {
			on = !on
			continue
		}
		if !on {
			continue
		}
		for _, p := range quoted(line) {
			if !strings.HasPrefix(p, base+"/") {
				continue
			}
			seen++
			if !covered(p, recorded) {
				t.Errorf("Load read %s (%s) but the trace did not record it", p, line)
			}
		}
	}
	if seen < 50 {
		t.Fatalf("only %d paths seen in the system calls: the helper's Load was not traced", seen)
	}
}

// traceHelper is the process strace watches: one traced Load of the
// fixture under dir, between two lookups of a marker, and the paths the
// trace recorded (globs as their listed directories) written to dir/recorded.
func traceHelper(t *testing.T, dir string) {
	ws, home := filepath.Join(dir, "repo"), os.Getenv("REIN_TRACE_HOME")
	env := map[string]string{"HOME": home, "ANTHROPIC_API_KEY": "k"}
	opts := Options{WorkDir: ws, Root: ws, Getenv: func(k string) string { return env[k] }, ClaudeManagedDir: filepath.Join(home, "managed")}
	tr := newTrace()
	os.Stat(filepath.Join(dir, "begin"))
	if _, err := load(opts, tr); err != nil {
		t.Fatal(err)
	}
	os.Stat(filepath.Join(dir, "begin"))
	var lines []string
	for p := range tr.paths {
		lines = append(lines, p)
	}
	for p := range tr.lookups {
		lines = append(lines, p)
	}
	for _, g := range tr.globs {
		lines = append(lines, globDirs(g)...)
	}
	if err := os.WriteFile(filepath.Join(dir, "recorded"), []byte(strings.Join(lines, "\n")), 0o644); err != nil {
		t.Fatal(err)
	}
}

// covered reports whether p is a recorded path or a directory above one.
func covered(p string, recorded []string) bool {
	for _, r := range recorded {
		if r == p || strings.HasPrefix(r, p+"/") {
			return true
		}
	}
	return false
}

// quoted returns the double-quoted strings of an strace line.
func quoted(line string) []string {
	var out []string
	for {
		i := strings.IndexByte(line, '"')
		if i < 0 {
			return out
		}
		j := strings.IndexByte(line[i+1:], '"')
		if j < 0 {
			return out
		}
		out = append(out, line[i+1:i+1+j])
		line = line[i+j+2:]
	}
}

// readLines reads the lines of the file at p.
func readLines(t *testing.T, p string) []string {
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(string(data), "\n")
}

// TestCacheConcurrent_API3 loads through one cache from several
// goroutines while the settings change (run with -race): after the last
// change every Load sees it.
func TestCacheConcurrent_API3(t *testing.T) {
	ws, _, opts := cacheFixture(t)
	c := settledCache()
	p := filepath.Join(ws, ".rein/settings.yaml")
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 30 {
				l, err := c.Load("alice", opts)
				if err != nil {
					t.Error(err)
					return
				}
				_ = l.Effective.Get(Model).Value
				_ = len(l.Definitions().Skills) + len(l.Warnings)
			}
		})
	}
	for _, m := range []string{"bbb", "ccc", "ddd"} {
		nextTick()
		writeTB(t, p, "model: "+m+"\n")
	}
	wg.Wait()
	nextTick()
	for range 3 {
		l, err := c.Load("alice", opts)
		if err != nil {
			t.Fatal(err)
		}
		if v := l.Effective.Get(Model).Value; v != "ddd" {
			t.Fatalf("model %q after the last change, want ddd", v)
		}
	}
}

// TestCacheTrustLost_PERM5 trusts the workspace, loads it through the
// cache, then edits the script a hook runs (same size, modification time
// put back): the next load through the cache has lost the trust.
func TestCacheTrustLost_PERM5(t *testing.T) {
	ws, _, opts := cacheFixture(t)
	l, err := Load(opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.TrustNow(time.Now()); err != nil {
		t.Fatal(err)
	}
	c := settledCache()
	trusted, err := c.Load("alice", opts)
	if err != nil {
		t.Fatal(err)
	}
	if again, _ := c.Load("alice", opts); !trusted.Trust.Trusted || again != trusted {
		t.Fatalf("trusted %v, served again %v: the case tests nothing", trusted.Trust.Trusted, again == trusted)
	}
	nextTick()
	sameSize(t, filepath.Join(ws, ".rein/hooks/guard.sh"), "# guard", "curl x|")
	got, err := c.Load("alice", opts)
	if err != nil {
		t.Fatal(err)
	}
	if got.Trust.Trusted || !got.Trust.Lost {
		t.Fatalf("after the hook's script changed: trusted %v, lost %v", got.Trust.Trusted, got.Trust.Lost)
	}
}
