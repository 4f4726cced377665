package exec

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TOOL-7: the read-only profile writes nothing but $TMPDIR, and says which
// setting would let it write the workspace.
func TestReadOnlyProfile_TOOL7(t *testing.T) {
	ws := t.TempDir()
	s := defaultSandbox(t, ws)
	s.Profile = ProfileReadOnly
	out, err := s.Run(context.Background(), Command{Dir: ws, Timeout: guard,
		Script: `echo t > "$TMPDIR/ok" && cat "$TMPDIR/ok" && echo x > made`})
	if err != nil {
		t.Fatal(err)
	}
	if out.ExitCode == 0 || !bytes.Contains(out.Combined, []byte("t\n")) {
		t.Fatalf("exit %d: %q", out.ExitCode, out.Combined)
	}
	if _, err := os.Stat(filepath.Join(ws, "made")); err == nil {
		t.Fatal("the read-only profile wrote the workspace")
	}
	if !slices.ContainsFunc(out.Notes, func(n string) bool {
		return strings.Contains(n, "made") && strings.Contains(n, "sandbox: workspace")
	}) {
		t.Fatalf("no note names the path and the setting: %q", out.Notes)
	}
	// The caches are read-only too.
	if len(s.Caches.Dirs) > 0 {
		probe := filepath.Join(s.Caches.Dirs[0], ".rein-readonly-probe")
		t.Cleanup(func() { os.Remove(probe) })
		out, _ := s.Run(context.Background(), Command{Dir: ws, Timeout: guard, Script: "touch " + probe})
		if _, err := os.Stat(probe); err == nil || out.ExitCode == 0 {
			t.Fatalf("the read-only profile wrote a cache: %q", out.Combined)
		}
	}
}

// TOOL-7: isolated caches point the toolchains at the workspace's own
// directory; the user's ~/.cache is not writable then.
func TestIsolatedCaches_TOOL7(t *testing.T) {
	home := t.TempDir()
	root := filepath.Join(t.TempDir(), "iso")
	c, err := ToolchainCaches(CachesIsolated, home, func(string) string { return "" }, root)
	if err != nil {
		t.Fatal(err)
	}
	env := strings.Join(c.Env, "\n")
	for _, want := range []string{"GOCACHE=" + root, "GOMODCACHE=" + root, "npm_config_cache=" + root, "PIP_CACHE_DIR=" + root, "UV_CACHE_DIR=" + root, "CARGO_HOME=" + root} {
		if !strings.Contains(env, want) {
			t.Errorf("env lacks %s:\n%s", want, env)
		}
	}
	ws := t.TempDir()
	s := defaultSandbox(t, ws)
	s.Caches = c
	out, err := s.Run(context.Background(), Command{Dir: ws, Timeout: guard, Script: `echo "$GOCACHE" && mkdir -p "$GOCACHE" && touch "$GOCACHE/x"`})
	if err != nil || out.ExitCode != 0 {
		t.Fatalf("%v: %q", err, out.Combined)
	}
	if _, err := os.Stat(filepath.Join(root, "go-build", "x")); err != nil {
		t.Fatalf("not written in the isolated root: %v", err)
	}
	if _, err := ToolchainCaches(CachesIsolated, home, nil, "relative"); err == nil {
		t.Error("a relative isolated root was accepted")
	}
	if _, err := ToolchainCaches("sometimes", home, nil, root); err == nil || !strings.Contains(err.Error(), SettingCaches) {
		t.Errorf("a bad mode: %v", err)
	}
}

// TOOL-7: shared caches are the user's, as the environment places them,
// created when the toolchain is there.
func TestSharedCaches_TOOL7(t *testing.T) {
	home := t.TempDir()
	gocache := filepath.Join(t.TempDir(), "gocache")
	c, err := ToolchainCaches(CachesShared, home, func(k string) string { return map[string]string{"GOCACHE": gocache}[k] }, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{filepath.Join(home, ".cache"), gocache, filepath.Join(home, "go", "pkg", "mod")} {
		real, err := filepath.EvalSymlinks(want)
		if err != nil || !slices.Contains(c.Dirs, real) {
			t.Errorf("dirs %q lack %s (%v)", c.Dirs, want, err)
		}
	}
	if !slices.Contains(c.Env, "GOCACHE="+gocache) {
		t.Errorf("the user's GOCACHE does not reach the command: %q", c.Env)
	}
}

// TOOL-7: settings values become a policy; bad ones are errors naming the
// setting.
func TestPolicyOf_TOOL7(t *testing.T) {
	for _, tt := range []struct {
		sandbox  string
		profile  Profile
		required bool
	}{{"", ProfileWorkspace, false}, {"auto", ProfileWorkspace, false}, {"workspace", ProfileWorkspace, false},
		{"on", ProfileWorkspace, true}, {"read-only", ProfileReadOnly, true}, {"off", ProfileOff, false}} {
		p, err := PolicyOf(tt.sandbox, "", nil, "", nil)
		if err != nil || p.Profile != tt.profile || p.Required != tt.required || p.Network != NetworkAllowList || p.Caches != CachesShared {
			t.Errorf("%q: %+v, %v", tt.sandbox, p, err)
		}
	}
	for _, bad := range [][]string{{"full", "", ""}, {"", "maybe", ""}, {"", "", "sometimes"}} {
		if _, err := PolicyOf(bad[0], bad[1], nil, bad[2], nil); err == nil || !strings.Contains(err.Error(), "sandbox") {
			t.Errorf("%q: %v", bad, err)
		}
	}
	if _, err := PolicyOf("", "", []string{"https://x.test/"}, "", nil); err == nil {
		t.Error("a bad host was accepted")
	}
	ws := t.TempDir()
	for _, tt := range []struct {
		network string
		hosts   []string
		open    bool
		egress  bool
	}{{NetworkOn, nil, true, false}, {NetworkOff, []string{"a.test"}, false, false}, {NetworkAllowList, nil, false, false}, {NetworkAllowList, []string{"a.test"}, false, true}} {
		p, err := PolicyOf("workspace", tt.network, tt.hosts, "", []string{"~/scratch"})
		if err != nil {
			t.Fatal(err)
		}
		s := &Sandbox{Workspace: ws}
		home := t.TempDir()
		if err := p.Configure(s, home, func(string) string { return "" }); err != nil {
			t.Fatal(err)
		}
		if s.AllowNetwork != tt.open || (s.Egress != nil) != tt.egress || !slices.Contains(s.Writable, filepath.Join(home, "scratch")) {
			t.Errorf("%s %v: network %v egress %v writable %q", tt.network, tt.hosts, s.AllowNetwork, s.Egress != nil, s.Writable)
		}
		if d := strings.Join(p.Describe(s), "\n"); !strings.Contains(d, "protected in every profile") {
			t.Errorf("describe: %s", d)
		}
	}
}

// TOOL-7: a writable directory of sandbox.writable that holds the user's
// protected files deeper than its top keeps them read-only.
func TestWritableKeepsHomeProtected_TOOL7(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	settings := filepath.Join(home, ".config", "rein", "settings.yaml")
	writeFiles(t, home, map[string]string{".config/rein/settings.yaml": "sandbox: workspace\n", ".config/other/x": "x\n"})
	ws := t.TempDir()
	s := defaultSandbox(t, ws)
	s.Writable = []string{filepath.Join(home, ".config")}
	out, err := s.Run(context.Background(), Command{Dir: ws, Timeout: guard,
		Script: `echo y > "$HOME/.config/other/x"; echo 'sandbox: off' > "$HOME/.config/rein/settings.yaml"`})
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(settings); string(b) != "sandbox: workspace\n" {
		t.Fatalf("rein's settings were rewritten: %q", b)
	}
	if b, _ := os.ReadFile(filepath.Join(home, ".config", "other", "x")); string(b) != "y\n" {
		t.Fatalf("the writable directory was not writable: %q\n%s", b, out.Combined)
	}
	if !slices.ContainsFunc(out.Notes, func(n string) bool { return strings.Contains(n, "is protected") }) {
		t.Errorf("no note says it is protected: %q", out.Notes)
	}
}
