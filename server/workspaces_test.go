package server_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reinhq/rein/api"
	"github.com/reinhq/rein/server"
)

// TestWorkspaceRoots opens project workspaces inside and outside the root:
// neither "..", nor a symbolic link, nor an absolute path elsewhere leaves
// it, and nothing refused is stored.
func TestWorkspaceRoots(t *testing.T) {
	e := newEnv(t)
	tok := token(t, "ada")
	outside := t.TempDir()
	mk := func(p string) string {
		if err := os.MkdirAll(p, 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	inside := mk(filepath.Join(e.root, "repo", "sub"))
	if err := os.Symlink(outside, filepath.Join(e.root, "escape")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(inside, filepath.Join(e.root, "shortcut")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(e.root, "file"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	home, _ := os.UserHomeDir()
	resolvedInside, _ := filepath.EvalSymlinks(inside)
	resolvedRoot, _ := filepath.EvalSymlinks(e.root)

	for _, tc := range []struct {
		name, dir string
		want      int
		stored    string // the dir stored, on success
		detail    string // part of the problem's detail, on failure
	}{
		{"the root itself", e.root, 201, resolvedRoot, ""},
		{"a directory under it", inside, 201, resolvedInside, ""},
		{"a link that stays inside", filepath.Join(e.root, "shortcut"), 201, resolvedInside, ""},
		{"dot-dot out of the root", filepath.Join(e.root, "..", filepath.Base(outside)), 422, "", "is not a directory under"},
		{"dot-dot in a longer path", e.root + "/repo/../../" + filepath.Base(outside), 422, "", "is not a directory under"},
		{"a link out of the root", filepath.Join(e.root, "escape"), 422, "", "is not a directory under"},
		{"under a link out of the root", filepath.Join(e.root, "escape", "x"), 422, "", "is not a directory under"},
		{"the file system root", "/", 422, "", "is not a directory under"},
		{"~/.ssh literally", "~/.ssh", 422, "", "not an absolute path"},
		{"the home .ssh", filepath.Join(home, ".ssh"), 422, "", "is not a directory under"},
		{"a relative path", "repo/sub", 422, "", "not an absolute path"},
		{"a missing directory", filepath.Join(e.root, "nope"), 422, "", "is not a directory under"},
		{"a file", filepath.Join(e.root, "file"), 422, "", "is not a directory under"},
		{"no dir", "", 422, "", "needs dir"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before, _ := e.ledger.ListWorkspaces(bg, "ada")
			r := e.do(t, "POST", "/workspaces", tok, api.CreateWorkspace{Kind: "project", Dir: tc.dir})
			if r.status != tc.want {
				t.Fatalf("status %d, want %d: %s", r.status, tc.want, r.body)
			}
			if tc.want == 201 {
				if w := decode[api.Workspace](t, r, 201); w.Dir != tc.stored {
					t.Errorf("dir %q, want %q", w.Dir, tc.stored)
				}
				return
			}
			if p := r.problem(t); !strings.Contains(p.Detail, tc.detail) || len(p.Errors) == 0 || p.Errors[0].Location != "body.dir" {
				t.Errorf("problem %+v, want a detail with %q about body.dir", p, tc.detail)
			}
			if after, _ := e.ledger.ListWorkspaces(bg, "ada"); len(after) != len(before) {
				t.Errorf("a refused workspace was stored")
			}
		})
	}

	// A chat workspace has no directory.
	r := e.do(t, "POST", "/workspaces", tok, api.CreateWorkspace{Kind: "chat", Dir: inside})
	if p := r.problem(t); r.status != 422 || !strings.Contains(p.Detail, "chat workspace has no directory") {
		t.Errorf("chat with dir: %d %+v", r.status, p)
	}
}

func TestWorkspaceNoRoots(t *testing.T) {
	e := newEnv(t, func(c *server.Config) { c.Roots = nil })
	r := e.do(t, "POST", "/workspaces", token(t, "ada"), api.CreateWorkspace{Kind: "project", Dir: t.TempDir()})
	if p := r.problem(t); r.status != 422 || !strings.Contains(p.Detail, "rein serve --root DIR") {
		t.Errorf("no roots: %d %+v", r.status, p)
	}
	if r := e.do(t, "POST", "/workspaces", token(t, "ada"), api.CreateWorkspace{Kind: "chat"}); r.status != 201 {
		t.Errorf("chat without roots: %d", r.status)
	}
}

func TestNewChecksRoots(t *testing.T) {
	f := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(f, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, root := range []string{filepath.Join(t.TempDir(), "missing"), f} {
		cfg := newEnvConfig(t)
		cfg.Roots = []string{root}
		if _, err := server.New(cfg); err == nil {
			t.Errorf("root %s accepted", root)
		}
	}
}
