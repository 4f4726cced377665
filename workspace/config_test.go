package workspace

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/reinhq/rein/llm/registry"
	"github.com/reinhq/rein/permission"
)

func TestKeyCheck(t *testing.T) {
	tests := []struct {
		key, in, want, err string
	}{
		{MaxTurns, " 12 ", "12", ""},
		{MaxTurns, "0", "", "at least 1"},
		{MaxTurns, "many", "", "whole number"},
		{MaxTokens, "0", "0", ""},
		{Timeout, "90s", "90s", ""},
		{Timeout, "300", "300", ""},
		{Timeout, "-1s", "", "duration"},
		{Timeout, "soon", "", "duration"},
		{Sandbox, "auto", "auto", ""},
		{Sandbox, "maybe", "", "want one of workspace, read-only, off, on, auto"},
		{PermissionMode, "acceptEdits", "accept-edits", ""},
		{PermissionMode, "yolo", "", "mode"},
		{Model, " gpt-5 ", "gpt-5", ""},
	}
	for _, tt := range tests {
		t.Run(tt.key+"="+tt.in, func(t *testing.T) {
			k, ok := Lookup(tt.key)
			if !ok {
				t.Fatalf("no key %s", tt.key)
			}
			got, err := k.Check(tt.in)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("Check(%q) error = %v, want one containing %q", tt.in, err, tt.err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("Check(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
			}
		})
	}
}

func TestParseDuration(t *testing.T) {
	tests := []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"5m", 5 * time.Minute, true},
		{"300", 300 * time.Second, true},
		{"0.5", 500 * time.Millisecond, true},
		{"0", 0, true},
		{"-3", 0, false},
		{"1e12", 0, false},
		{"", 0, false},
	}
	for _, tt := range tests {
		got, err := ParseDuration(tt.in)
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("ParseDuration(%q) = %v, %v; want %v, ok=%v", tt.in, got, err, tt.want, tt.ok)
		}
	}
}

func TestParseSettings(t *testing.T) {
	tests := []struct {
		name        string
		doc         string
		want        map[string]string
		unknown     []string
		rules       []string
		errContains string
	}{
		{name: "empty", doc: "", want: map[string]string{}},
		{name: "null", doc: "~\n", want: map[string]string{}},
		{name: "comments only", doc: "# nothing\n", want: map[string]string{}},
		{name: "values", doc: "model: gpt-5\nmax_turns: 7\ntimeout: 10m\npermissions:\n  mode: bypass\n  ask_timeout: 30\n",
			want: map[string]string{Model: "gpt-5", MaxTurns: "7", Timeout: "10m", PermissionMode: "bypass", AskTimeout: "30"}},
		{name: "rules", doc: "permissions:\n  allow: [\"bash(go test:*)\"]\n  deny: [read_file(secrets/**)]\n",
			want: map[string]string{}, rules: []string{"deny read_file(secrets/**)", "allow bash(go test:*)"}},
		{name: "unknown keys", doc: "modle: x\npermissions:\n  mood: happy\n",
			want: map[string]string{}, unknown: []string{"modle (line 1) (did you mean model?)", "permissions.mood (line 3) (did you mean permissions.mode?)"}},
		{name: "unknown key far from every setting", doc: "zebra_stripes: 3\n",
			want: map[string]string{}, unknown: []string{"zebra_stripes (line 1)"}},
		{name: "null value", doc: "model:\n", want: map[string]string{}},
		{name: "bad int", doc: "max_turns: lots\n", errContains: "line 1: max_turns"},
		{name: "bad mode", doc: "permissions:\n  mode: wild\n", errContains: "line 2"},
		{name: "list for scalar", doc: "model: [a, b]\n", errContains: "single value"},
		{name: "not a mapping", doc: "- a\n- b\n", errContains: "mapping"},
		{name: "bad yaml", doc: "model: [\n", errContains: "YAML"},
		{name: "bad rule", doc: "permissions:\n  allow: [\"bash(\"]\n", errContains: "allow"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := ParseSettings([]byte(tt.doc), permission.SourceWorkspace)
			if tt.errContains != "" {
				if err == nil || !strings.Contains(err.Error(), tt.errContains) {
					t.Fatalf("error = %v, want one containing %q", err, tt.errContains)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, s.Values); diff != "" {
				t.Errorf("values (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.unknown, s.Unknown); diff != "" {
				t.Errorf("unknown (-want +got):\n%s", diff)
			}
			if len(tt.rules) > 0 {
				if diff := cmp.Diff(tt.rules, s.RuleLines()); diff != "" {
					t.Errorf("rules (-want +got):\n%s", diff)
				}
			}
		})
	}
}

// WS-3: flags > env > workspace > user > defaults.
func TestResolvePrecedence(t *testing.T) {
	flags := Layer{Source: SourceFlag, Values: map[string]string{Model: "flag-model"}, Origins: map[string]string{Model: "--model"}}
	env := Layer{Source: SourceEnv, Values: map[string]string{Model: "env-model", MaxTurns: "5"}, Origins: map[string]string{Model: "REIN_MODEL", MaxTurns: "REIN_MAX_TURNS"}}
	ws := Layer{Source: SourceWorkspace, Origin: "/w/.rein/settings.yaml", Values: map[string]string{MaxTurns: "9", Sandbox: "on"}}
	user := Layer{Source: SourceUser, Origin: "/u/settings.yaml", Values: map[string]string{Sandbox: "auto", Timeout: "1h"}}
	e := Resolve(flags, env, ws, user)
	tests := []Value{
		{Key: Model, Value: "flag-model", Source: SourceFlag, Origin: "--model"},
		{Key: MaxTurns, Value: "5", Source: SourceEnv, Origin: "REIN_MAX_TURNS"},
		{Key: Sandbox, Value: "on", Source: SourceWorkspace, Origin: "/w/.rein/settings.yaml"},
		{Key: Timeout, Value: "1h", Source: SourceUser, Origin: "/u/settings.yaml"},
		{Key: PermissionMode, Value: "default", Source: SourceDefault},
	}
	for _, want := range tests {
		if got := e.Get(want.Key); got != want {
			t.Errorf("Get(%s) = %+v, want %+v", want.Key, got, want)
		}
	}
	if e.Int(MaxTurns) != 5 || e.Duration(Timeout) != time.Hour {
		t.Errorf("typed accessors: %d, %v", e.Int(MaxTurns), e.Duration(Timeout))
	}
	if n := len(e.All()); n != len(Keys()) {
		t.Errorf("All() has %d values, want %d", n, len(Keys()))
	}
}

func TestEnvLayer(t *testing.T) {
	env := map[string]string{"REIN_MODEL": "gpt-5", "REIN_PERMISSION_MODE": "plan", "UNRELATED": "x"}
	l, err := EnvLayer(func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{Model: "gpt-5", PermissionMode: "plan"}
	if diff := cmp.Diff(want, l.Values); diff != "" {
		t.Errorf("values (-want +got):\n%s", diff)
	}
	env["REIN_MAX_TURNS"] = "x"
	if _, err := EnvLayer(func(k string) string { return env[k] }); err == nil || !strings.Contains(err.Error(), "REIN_MAX_TURNS") {
		t.Errorf("bad variable: error = %v, want one naming REIN_MAX_TURNS", err)
	}
}

func TestFlagLayer(t *testing.T) {
	if _, err := FlagLayer(map[string]string{MaxTurns: "0"}); err == nil || !strings.Contains(err.Error(), "--max-turns") {
		t.Errorf("error = %v, want one naming --max-turns", err)
	}
	if _, err := FlagLayer(map[string]string{"nope": "1"}); err == nil {
		t.Error("unknown setting accepted")
	}
}

func TestFindWorkspace(t *testing.T) {
	home := t.TempDir()
	proj := filepath.Join(home, "proj")
	sub := filepath.Join(proj, "a", "b")
	mkdir(t, sub)
	mkdir(t, filepath.Join(proj, ".rein"))
	loose := filepath.Join(home, "loose", "x")
	mkdir(t, loose)
	mkdir(t, filepath.Join(home, ".git")) // a dotfiles repo in home is not a workspace of its subdirectories
	tests := []struct{ dir, want string }{
		{sub, proj},
		{proj, proj},
		{loose, loose},
		{home, home},
	}
	for _, tt := range tests {
		if got := FindWorkspace(tt.dir, home).Root; got != tt.want {
			t.Errorf("FindWorkspace(%s) = %s, want %s", tt.dir, got, tt.want)
		}
	}
}

func TestInstructions(t *testing.T) {
	dir := t.TempDir()
	w := Workspace{Root: dir}
	if text, name, err := w.Instructions(); text != "" || name != "" || err != nil {
		t.Fatalf("empty workspace: %q %q %v", text, name, err)
	}
	write(t, filepath.Join(dir, "CLAUDE.md"), "claude\n")
	if text, name, _ := w.Instructions(); text != "claude\n" || name != "CLAUDE.md" {
		t.Errorf("fallback: %q %q", text, name)
	}
	write(t, filepath.Join(dir, "AGENTS.md"), "agents\n")
	if text, name, _ := w.Instructions(); text != "agents\n" || name != "AGENTS.md" {
		t.Errorf("preferred: %q %q", text, name)
	}
}

func TestLoad(t *testing.T) {
	home := t.TempDir()
	ws := filepath.Join(home, "ws")
	write(t, filepath.Join(ws, ".rein", "settings.yaml"), "max_turns: 9\npermissions:\n  deny: [bash(rm:*)]\n")
	write(t, filepath.Join(home, ".config", "rein", "settings.yaml"), "max_turns: 3\nsandbox: auto\nfoo: 1\n")
	write(t, filepath.Join(home, ".config", "rein", "config.yaml"), "default: work\nprofiles:\n  - {name: work, provider: openai, default_model: gpt-4o}\n")
	env := map[string]string{"HOME": home, "OPENAI_API_KEY": "k", "REIN_TIMEOUT": "2m"}
	l, err := Load(Options{WorkDir: ws, Getenv: func(k string) string { return env[k] }, Flags: map[string]string{PermissionMode: "bypass"}})
	if err != nil {
		t.Fatal(err)
	}
	checks := []struct {
		key, value string
		src        Source
	}{
		{MaxTurns, "9", SourceWorkspace},
		{Sandbox, "auto", SourceUser},
		{Timeout, "2m", SourceEnv},
		{PermissionMode, "bypass", SourceFlag},
		{Model, "work", SourceUser},
		{SessionsDir, filepath.Join(home, ".local", "share", "rein", "sessions"), SourceDefault},
	}
	for _, c := range checks {
		if v := l.Effective.Get(c.key); v.Value != c.value || v.Source != c.src {
			t.Errorf("%s = %+v, want %q from %s", c.key, v, c.value, c.src)
		}
	}
	if u := l.Unknown(); len(u) != 1 || !strings.Contains(u[0], "foo (line 3)") {
		t.Errorf("Unknown() = %v", u)
	}
	if got := l.Permissions(permission.Settings{}).Rules; len(got) != 1 || got[0].Source != permission.SourceWorkspace {
		t.Errorf("rules = %+v", got)
	}

	// Without a profile default, the first vendor whose key is set picks the model.
	write(t, filepath.Join(home, ".config", "rein", "config.yaml"), "")
	l, err = Load(Options{WorkDir: ws, Getenv: func(k string) string { return env[k] }})
	if err != nil {
		t.Fatal(err)
	}
	if v := l.Effective.Get(Model); v.Value != "openai" || v.Origin != "OPENAI_API_KEY is set" {
		t.Errorf("auto model = %+v", v)
	}

	write(t, filepath.Join(ws, ".rein", "settings.yaml"), "max_turns: [\n")
	if _, err := Load(Options{WorkDir: ws, Getenv: func(k string) string { return env[k] }}); err == nil ||
		!strings.Contains(err.Error(), filepath.Join(".rein", "settings.yaml")) {
		t.Errorf("bad file: error = %v, want one naming the file", err)
	}
}

func TestPathsFrom(t *testing.T) {
	tests := []struct {
		env       map[string]string
		cfg, data string
	}{
		{map[string]string{"HOME": "/h"}, "/h/.config/rein", "/h/.local/share/rein"},
		{map[string]string{"HOME": "/h", "XDG_CONFIG_HOME": "/c", "XDG_DATA_HOME": "/d"}, "/c/rein", "/d/rein"},
		{map[string]string{"HOME": "/h", "XDG_CONFIG_HOME": "/c", "REIN_CONFIG_DIR": "/r"}, "/r", "/h/.local/share/rein"},
	}
	for _, tt := range tests {
		p := PathsFrom(func(k string) string { return tt.env[k] })
		if p.ConfigDir != tt.cfg || p.DataDir != tt.data {
			t.Errorf("PathsFrom(%v) = %+v", tt.env, p)
		}
	}
}

func TestProfiles(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cfg", "config.yaml")
	p, err := LoadProfiles(path)
	if err != nil || len(p.Profiles) != 0 {
		t.Fatalf("missing file: %+v, %v", p, err)
	}
	p.Put(registry.Profile{Name: "a", Provider: "openai"})
	p.Put(registry.Profile{Name: "b", Provider: "anthropic"})
	p.Put(registry.Profile{Name: "a", Provider: "openai", DefaultModel: "gpt-4o"})
	p.Default = "b"
	if err := p.Save(path); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want 0600", fi.Mode().Perm())
	}
	got, err := LoadProfiles(path)
	if err != nil {
		t.Fatal(err)
	}
	got.Path = ""
	p.Path = ""
	if diff := cmp.Diff(p, got); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
	if !got.Remove("b") || got.Default != "" || got.Remove("zzz") {
		t.Errorf("Remove: %+v", got)
	}
}

func TestParseProfilesErrors(t *testing.T) {
	tests := []struct{ doc, err string }{
		{"profiles:\n  - {provider: openai}\n", "needs a name"},
		{"profiles:\n  - {name: a, provider: openai}\n  - {name: a, provider: openai}\n", "twice"},
		{"defualt: x\n", "not a valid config file"},
		{"profiles: 3\n", "not a valid config file"},
	}
	for _, tt := range tests {
		if _, err := ParseProfiles([]byte(tt.doc)); err == nil || !strings.Contains(err.Error(), tt.err) {
			t.Errorf("ParseProfiles(%q) error = %v, want %q", tt.doc, err, tt.err)
		}
	}
}

func TestParseModels(t *testing.T) {
	m, err := ParseModels([]byte("models:\n  - {name: my-model, provider: ollama, context_window: 32000, max_output: 4096}\n"))
	if err != nil || len(m) != 1 || m[0].ContextWindow != 32000 {
		t.Fatalf("ParseModels = %+v, %v", m, err)
	}
	if _, err := ParseModels([]byte("models:\n  - {name: x}\n")); err == nil {
		t.Error("model without provider accepted")
	}
	if m, err := ParseModels(nil); err != nil || m != nil {
		t.Errorf("empty: %v %v", m, err)
	}
}

func mkdir(t *testing.T, dir string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
}

func write(t *testing.T, path, content string) {
	t.Helper()
	mkdir(t, filepath.Dir(path))
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// A workspace's settings may tighten the permission mode and the sandbox,
// never loosen them; flags and REIN_* variables still set anything.
func TestWorkspaceOnlyTightens(t *testing.T) {
	tests := []struct {
		name             string
		user, ws, local  string // settings.yaml contents
		env, flags       map[string]string
		wantMode, wantSB string
		wantModeSrc      Source
		wantWarn         string
	}{
		{name: "bypass over the default is ignored", ws: "permissions:\n  mode: bypass\n",
			wantMode: "default", wantSB: "workspace", wantModeSrc: SourceDefault,
			wantWarn: "workspace .rein/settings.yaml asks for permissions.mode bypass; ignored: a workspace may only tighten it — pass --permission-mode bypass to allow"},
		{name: "accept-edits over the user's strict is ignored", user: "permissions:\n  mode: strict\n", ws: "permissions:\n  mode: accept-edits\n",
			wantMode: "strict", wantSB: "workspace", wantModeSrc: SourceUser, wantWarn: "permissions.mode accept-edits; ignored"},
		{name: "sandbox off over the user's on is ignored", user: "sandbox: on\n", ws: "sandbox: off\n",
			wantMode: "default", wantSB: "on", wantModeSrc: SourceDefault,
			wantWarn: "workspace .rein/settings.yaml asks for sandbox off; ignored: a workspace may only tighten it — pass --sandbox off to allow"},
		{name: "the local file is guarded too", local: "permissions:\n  mode: bypass\n",
			wantMode: "default", wantSB: "workspace", wantModeSrc: SourceDefault, wantWarn: ".rein/settings.local.yaml asks for permissions.mode bypass"},
		{name: "read-only tightens the default", ws: "permissions:\n  mode: read-only\nsandbox: on\n",
			wantMode: "read-only", wantSB: "on", wantModeSrc: SourceWorkspace},
		{name: "strict tightens the user's accept-edits", user: "permissions:\n  mode: accept-edits\nsandbox: auto\n", ws: "permissions:\n  mode: strict\nsandbox: on\n",
			wantMode: "strict", wantSB: "on", wantModeSrc: SourceWorkspace},
		{name: "bypass when the user chose bypass", user: "permissions:\n  mode: bypass\n", ws: "permissions:\n  mode: bypass\n",
			wantMode: "bypass", wantSB: "workspace", wantModeSrc: SourceWorkspace},
		{name: "a flag still wins", ws: "permissions:\n  mode: bypass\n", flags: map[string]string{PermissionMode: "bypass"},
			wantMode: "bypass", wantSB: "workspace", wantModeSrc: SourceFlag},
		{name: "sandbox off over the default workspace is ignored", ws: "sandbox: off\n",
			wantMode: "default", wantSB: "workspace", wantModeSrc: SourceDefault,
			wantWarn: "workspace .rein/settings.yaml asks for sandbox off; ignored"},
		{name: "a variable still wins", user: "sandbox: on\n", ws: "sandbox: off\n", env: map[string]string{"REIN_SANDBOX": "off"},
			wantMode: "default", wantSB: "off", wantModeSrc: SourceDefault},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			home := t.TempDir()
			ws := filepath.Join(home, "ws")
			write(t, filepath.Join(home, ".config", "rein", "settings.yaml"), tt.user)
			write(t, filepath.Join(ws, ".rein", "settings.yaml"), tt.ws)
			write(t, filepath.Join(ws, ".rein", "settings.local.yaml"), tt.local)
			env := map[string]string{"HOME": home}
			for k, v := range tt.env {
				env[k] = v
			}
			l, err := Load(Options{WorkDir: ws, Getenv: func(k string) string { return env[k] }, Flags: tt.flags})
			if err != nil {
				t.Fatal(err)
			}
			if v := l.Effective.Get(PermissionMode); v.Value != tt.wantMode || v.Source != tt.wantModeSrc {
				t.Errorf("mode %+v, want %s from %s", v, tt.wantMode, tt.wantModeSrc)
			}
			if v := l.Effective.String(Sandbox); v != tt.wantSB {
				t.Errorf("sandbox %s, want %s", v, tt.wantSB)
			}
			warnings := strings.Join(l.Warnings, "\n")
			if tt.wantWarn == "" && warnings != "" {
				t.Errorf("unexpected warnings: %s", warnings)
			}
			if !strings.Contains(warnings, tt.wantWarn) {
				t.Errorf("warnings %q lack %q", warnings, tt.wantWarn)
			}
			if l.Project.Values == nil || (tt.ws != "" && len(l.Project.Values) == 0) {
				t.Errorf("the workspace file's own values were changed: %v", l.Project.Values)
			}
		})
	}
}
