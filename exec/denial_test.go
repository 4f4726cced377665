package exec

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TOOL-7: the path a denial message names, in the forms programs write.
func TestDeniedPath_TOOL7(t *testing.T) {
	for line, want := range map[string]string{
		"go: open /root/.cache/go-build/ab/x-d: read-only file system":        "/root/.cache/go-build/ab/x-d",
		"npm error EROFS: read-only file system, mkdir '/root/.npm/_cacache'": "/root/.npm/_cacache",
		"bash: line 1: made: Read-only file system":                           "made",
		"touch: cannot touch '/etc/x': Read-only file system":                 "/etc/x",
		"mkdir: cannot create directory ‘/opt/y’: Permission denied":          "/opt/y",
		"bash: line 3: 42: Read-only file system":                             "",
		"nothing to see": "",
	} {
		if got := deniedPath(line, strings.ToLower(line)); got != want {
			t.Errorf("%q: %q, want %q", line, got, want)
		}
	}
}

// TOOL-7 attack rows: a command's output is hostile — it may name any path
// to have rein suggest widening the sandbox there.
func TestExplainAttacks_TOOL7(t *testing.T) {
	ws := t.TempDir()
	home, _ := os.UserHomeDir()
	s := &Sandbox{Workspace: ws}
	tests := []struct {
		name, output string
		forbid       string
	}{
		{"the root", "x: open /: read-only file system", "add / to"},
		{"the home", "x: open " + home + "/.bashrc: read-only file system", "add " + home + " to"},
		{"a protected path", "x: open " + filepath.Join(ws, ".git/hooks/pre-commit") + ": read-only file system", "sandbox.writable"},
		{"rein's settings", "x: open " + filepath.Join(ws, ".rein/settings.yaml") + ": read-only file system", "sandbox.writable"},
	}
	for _, tt := range tests {
		notes := s.explain(Output{ExitCode: 1, Combined: []byte(tt.output)}, ws, false)
		for _, n := range notes {
			if strings.Contains(n, tt.forbid) {
				t.Errorf("%s: note %q", tt.name, n)
			}
		}
	}
	many := strings.Repeat("x: open /opt/a: read-only file system\nx: open /opt/b: read-only file system\nx: open /srv/c: read-only file system\ncurl: Could not resolve host\nx: open /var/d: read-only file system\nx: open /usr/e: read-only file system\n", 50)
	if n := s.explain(Output{ExitCode: 1, Combined: []byte(many)}, ws, false); len(n) > maxExplained {
		t.Errorf("%d notes, more than %d", len(n), maxExplained)
	}
	for _, line := range []string{"curl: (7) Failed to connect to localhost port 44579 after 0 ms: Couldn't connect to server",
		"dial tcp 127.0.0.1:44579: connect: connection refused", "Error: connect ECONNREFUSED 127.0.0.1:44579"} {
		n := s.explain(Output{ExitCode: 7, Combined: []byte(line)}, ws, false)
		if len(n) != 1 || !strings.Contains(n[0], `"localhost:44579"`) || !strings.Contains(n[0], SettingAllowHosts) {
			t.Errorf("%q: notes %q", line, n)
		}
	}
	if n := s.explain(Output{ExitCode: 0, Combined: []byte("open /opt/a: read-only file system")}, ws, false); n != nil {
		t.Errorf("a command that succeeded got notes: %q", n)
	}
}

func FuzzExplain(f *testing.F) {
	for _, s := range []string{"go: open /x/y: read-only file system", "EROFS: read-only file system, mkdir '/a'", "curl: (7) Failed to connect to localhost port 3000: Connection refused",
		"getaddrinfo ENOTFOUND registry.npmjs.org", "a: Permission denied", "‘’: read-only file system"} {
		f.Add(s)
	}
	ws := f.TempDir()
	s := &Sandbox{Workspace: ws}
	f.Fuzz(func(t *testing.T, out string) {
		notes := s.explain(Output{ExitCode: 1, Combined: []byte(out)}, ws, false)
		if len(notes) > maxExplained {
			t.Fatalf("%d notes", len(notes))
		}
		for _, n := range notes {
			if strings.Contains(n, "add / to") {
				t.Fatalf("suggests the root: %q", n)
			}
		}
	})
}
