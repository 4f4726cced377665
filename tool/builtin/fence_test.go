package builtin

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reinhq/rein/exec"
	"github.com/reinhq/rein/tool"
)

// fenceWorld is a server's host as the tools find it: the run's workspace
// (with its history mirror, a link to another caller's workspace and one
// to the data directory), that other workspace, the server's data
// directory, and the operator's home.
type fenceWorld struct {
	ws, other, data, home string
	fence                 Fence
}

const fenceSecret = "FENCE-SECRET-7d1"

func newFenceWorld(t *testing.T) fenceWorld {
	t.Helper()
	w := fenceWorld{ws: t.TempDir(), other: t.TempDir(), data: t.TempDir(), home: t.TempDir()}
	writeFiles(t, w.ws, map[string]string{"main.go": "package main\n", ".rein/data/history.db": fenceSecret,
		".rein/settings.yaml": "{}\n", "nested/.rein/data/kb.db": fenceSecret, "inner-data/rein.db": fenceSecret})
	writeFiles(t, w.other, map[string]string{"notes.txt": fenceSecret})
	writeFiles(t, w.data, map[string]string{"rein.db": fenceSecret})
	writeFiles(t, w.home, map[string]string{"x": fenceSecret, ".ssh/config": fenceSecret})
	for name, target := range map[string]string{"peer": w.other, "db": filepath.Join(w.data, "rein.db"),
		"mirror": filepath.Join(w.ws, ".rein", "data"), "up": ".."} {
		if err := os.Symlink(target, filepath.Join(w.ws, name)); err != nil {
			t.Fatal(err)
		}
	}
	w.fence = Fence{Root: w.ws, Hidden: []string{w.data, filepath.Join(w.ws, "inner-data")}}
	return w
}

// fencedTools are the tools a server gives a run, behind w's fence.
func (w fenceWorld) tools() map[string]tool.Tool {
	out := map[string]tool.Tool{}
	for _, tl := range FileTools(ftBackend{}, nil, w.fence) {
		out[tl.Spec().Name] = tl
	}
	out["list_dir"] = NewListDir(ListDirOptions{Fence: w.fence})
	out["glob"] = NewGlob(GlobOptions{Fence: w.fence})
	out["grep"] = NewGrep(GrepOptions{Fence: w.fence, NoRipgrep: true})
	out["bash"] = NewBash(&exec.Local{}, BashOptions{Fence: w.fence, AllowOutsideWorkspace: true})
	return out
}

// API-9, PERM-2: attacks on the file tools of a server's run. Each row is
// a call that must be refused by the fence — an error naming why — and
// must not show the secret, whatever the permission policy allowed.
func TestFenceAttacks(t *testing.T) {
	w := newFenceWorld(t)
	tools := w.tools()
	attacks := []struct {
		name, tool string
		in         map[string]any
	}{
		{"read_file of the server's database", "read_file", map[string]any{"path": filepath.Join(w.data, "rein.db")}},
		{"read_file of the operator's home", "read_file", map[string]any{"path": filepath.Join(w.home, "x")}},
		{"read_file of another root's workspace", "read_file", map[string]any{"path": filepath.Join(w.other, "notes.txt")}},
		{"read_file through a symlink to another workspace", "read_file", map[string]any{"path": "peer/notes.txt"}},
		{"read_file through a symlink to the database", "read_file", map[string]any{"path": "db"}},
		{"read_file with .. out of the workspace", "read_file", map[string]any{"path": "../" + filepath.Base(w.other) + "/notes.txt"}},
		{"read_file through a symlink to ..", "read_file", map[string]any{"path": "up/" + filepath.Base(w.other) + "/notes.txt"}},
		{"read_file of the history mirror", "read_file", map[string]any{"path": ".rein/data/history.db"}},
		{"read_file of a nested project's knowledge base", "read_file", map[string]any{"path": "nested/.rein/data/kb.db"}},
		{"read_file through a link to the mirror", "read_file", map[string]any{"path": "mirror/history.db"}},
		{"read_file of a data directory inside the workspace", "read_file", map[string]any{"path": "inner-data/rein.db"}},
		{"read_file of /etc/shadow", "read_file", map[string]any{"path": "/etc/shadow"}},
		{"write_file into another workspace through a symlink", "write_file", map[string]any{"path": "peer/pwned", "content": "x"}},
		{"write_file into the history mirror", "write_file", map[string]any{"path": ".rein/data/history.db", "content": "x"}},
		{"write_file of a new file in the mirror", "write_file", map[string]any{"path": ".rein/data/new.db", "content": "x"}},
		{"write_file in the operator's home", "write_file", map[string]any{"path": filepath.Join(w.home, ".bashrc"), "content": "x"}},
		{"edit_file of the database", "edit_file", map[string]any{"path": filepath.Join(w.data, "rein.db"), "old_string": "F", "new_string": "G"}},
		{"multi_edit of another workspace", "multi_edit", map[string]any{"path": "peer/notes.txt", "edits": []map[string]any{{"old_string": "F", "new_string": "G"}}}},
		{"list_dir /", "list_dir", map[string]any{"path": "/"}},
		{"list_dir /home (the operator's home)", "list_dir", map[string]any{"path": w.home}},
		{"list_dir of the data directory", "list_dir", map[string]any{"path": w.data}},
		{"list_dir of the mirror", "list_dir", map[string]any{"path": ".rein/data"}},
		{"list_dir through a link to another workspace", "list_dir", map[string]any{"path": "peer"}},
		{"glob with an absolute pattern over the home", "glob", map[string]any{"pattern": filepath.Join(w.home, "**")}},
		{"glob with path ..", "glob", map[string]any{"pattern": "**", "path": ".."}},
		{"glob through a link to another workspace", "glob", map[string]any{"pattern": "peer/**"}},
		{"glob over the mirror", "glob", map[string]any{"pattern": ".rein/data/*"}},
		{"grep -r over the home", "grep", map[string]any{"pattern": "SECRET", "path": w.home}},
		{"grep over /", "grep", map[string]any{"pattern": "SECRET", "path": "/"}},
		{"grep of the mirror", "grep", map[string]any{"pattern": "SECRET", "path": ".rein/data"}},
		{"grep through a link to the database", "grep", map[string]any{"pattern": "SECRET", "path": "db"}},
		{"bash dir=/", "bash", map[string]any{"command": "cat " + filepath.Join(w.data, "rein.db"), "dir": "/"}},
		{"bash dir=the data directory", "bash", map[string]any{"command": "cat rein.db", "dir": w.data}},
		{"bash dir=.rein/data", "bash", map[string]any{"command": "cat history.db", "dir": ".rein/data"}},
		{"bash dir=a link to another workspace", "bash", map[string]any{"command": "cat notes.txt", "dir": "peer"}},
	}
	for _, a := range attacks {
		t.Run(a.name, func(t *testing.T) {
			res := runTool(t, tools[a.tool], w.ws, a.in)
			text := res.TextOf()
			if !res.IsError || !strings.Contains(text, "refused by rein's fence") {
				t.Errorf("not refused by the fence: error=%v %q", res.IsError, text)
			}
			if strings.Contains(text, fenceSecret) {
				t.Errorf("the secret leaked: %q", text)
			}
		})
	}
	if _, err := os.Stat(filepath.Join(w.other, "pwned")); err == nil {
		t.Error("a file was written into another workspace")
	}
	if data, _ := os.ReadFile(filepath.Join(w.ws, ".rein", "data", "history.db")); string(data) != fenceSecret {
		t.Errorf("the mirror changed: %q", data)
	}
}

// API-9: inside the fence the tools work as ever, and the search tools
// walk past the mirror.
func TestFenceAllows(t *testing.T) {
	w := newFenceWorld(t)
	tools := w.tools()
	ok := []struct {
		name, tool string
		in         map[string]any
		want       string
	}{
		{"read a workspace file", "read_file", map[string]any{"path": "main.go"}, "package main"},
		{"read by absolute path", "read_file", map[string]any{"path": filepath.Join(w.ws, "main.go")}, "package main"},
		{"create a file", "write_file", map[string]any{"path": "sub/new.go", "content": "package sub\n"}, "Created"},
		{"list the workspace", "list_dir", map[string]any{}, "main.go"},
		{"a link out is listed, not followed", "list_dir", map[string]any{}, "peer\n"},
		{"glob the workspace", "glob", map[string]any{"pattern": "**/*.db"}, "No files match"},
		{"grep the workspace", "grep", map[string]any{"pattern": "package"}, "main.go"},
		{"read .rein/settings.yaml", "read_file", map[string]any{"path": ".rein/settings.yaml"}, "{}"},
	}
	for _, c := range ok {
		t.Run(c.name, func(t *testing.T) {
			res := runTool(t, tools[c.tool], w.ws, c.in)
			if text := res.TextOf(); res.IsError || !strings.Contains(text, c.want) || strings.Contains(text, fenceSecret) {
				t.Errorf("error=%v %q, want %q", res.IsError, text, c.want)
			}
		})
	}
}

// API-9: without a Root (the CLI), the tools still never reach .rein/data,
// built one by one or as a set.
func TestFenceZeroValueGuardsReinData(t *testing.T) {
	w := newFenceWorld(t)
	for _, tl := range append(FileTools(ftBackend{}, nil), NewReadFile(ftBackend{}, NewFileTracker()), NewListDir(), NewGrep(GrepOptions{NoRipgrep: true})) {
		in := map[string]any{"path": ".rein/data/history.db"}
		switch tl.Spec().Name {
		case "write_file":
			in["content"] = "x"
		case "edit_file":
			in["old_string"], in["new_string"] = "F", "G"
		case "multi_edit":
			in["edits"] = []map[string]any{{"old_string": "F", "new_string": "G"}}
		case "list_dir":
			in["path"] = ".rein/data"
		case "grep":
			in["pattern"] = "SECRET"
		}
		res := runTool(t, tl, w.ws, in)
		if text := res.TextOf(); !res.IsError || !strings.Contains(text, ".rein/data") || strings.Contains(text, fenceSecret) {
			t.Errorf("%s: error=%v %q", tl.Spec().Name, res.IsError, text)
		}
	}
	// Outside the workspace is the permission policy's to decide there.
	res := runTool(t, NewReadFile(ftBackend{}, NewFileTracker()), w.ws, map[string]any{"path": filepath.Join(w.other, "notes.txt")})
	if res.IsError {
		t.Errorf("without a Root, a path outside was refused: %q", res.TextOf())
	}
}

// FuzzFenceCheck: whatever the path, one Check lets through lies in the
// root with its links resolved, outside .rein/data and the hidden
// directories.
func FuzzFenceCheck(f *testing.F) {
	ws, other := f.TempDir(), f.TempDir()
	for _, d := range []string{"a/b", ".rein/data", "hidden"} {
		if err := os.MkdirAll(filepath.Join(ws, d), 0o755); err != nil {
			f.Fatal(err)
		}
	}
	for name, target := range map[string]string{"out": other, "loop": "loop", "up": "..", "m": ".rein/data"} {
		if err := os.Symlink(target, filepath.Join(ws, name)); err != nil {
			f.Fatal(err)
		}
	}
	fence := Fence{Root: ws, Hidden: []string{filepath.Join(ws, "hidden")}}
	for _, s := range []string{"a/b/c", "../x", "out/y", "up/z", ".rein/data/h", ".REIN/DATA", "m/x", "loop/x", "hidden/x", "a/../../b", "/etc/passwd", "a/./b//c"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, p string) {
		if strings.ContainsRune(p, 0) {
			return
		}
		abs := p
		if !filepath.IsAbs(abs) {
			abs = filepath.Join(ws, p)
		}
		abs = filepath.Clean(abs)
		if fence.Check(abs) != nil {
			return
		}
		real, err := exec.ResolveExisting(abs)
		if err != nil {
			t.Fatalf("%q let through but does not resolve: %v", p, err)
		}
		if !isWithin(ws, real) || inReinData(real) || inReinData(abs) || isWithin(filepath.Join(ws, "hidden"), real) {
			t.Fatalf("%q (%s) let through", p, real)
		}
	})
}

// BenchmarkFenceCheck measures the fence's cost per tool call: a file in
// the workspace, and one to create three directories deep.
func BenchmarkFenceCheck(b *testing.B) {
	ws, data := b.TempDir(), b.TempDir()
	if err := os.MkdirAll(filepath.Join(ws, "src", "pkg"), 0o755); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ws, "src", "pkg", "a.go"), nil, 0o644); err != nil {
		b.Fatal(err)
	}
	f := Fence{Root: ws, Hidden: []string{data}}
	for _, p := range []string{"src/pkg/a.go", "new/dir/deep/b.go"} {
		abs := filepath.Join(ws, p)
		b.Run(p, func(b *testing.B) {
			for b.Loop() {
				if err := f.Check(abs); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
