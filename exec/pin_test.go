package exec

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// API-9: the confined sandbox binds its workspace by the directory it
// opened (bubblewrap's --bind-fd where it has it); a command there sees the
// workspace's files and writes into it as ever.
func TestPinnedWorkspaceWorks(t *testing.T) {
	sb := &Sandbox{}
	if err := sb.Available(); err != nil {
		t.Skipf("environment: bwrap cannot run here: %v", err)
	}
	ws := t.TempDir()
	if err := os.WriteFile(filepath.Join(ws, "in.txt"), []byte("inside\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	sb = &Sandbox{Workspace: ws, ConfineReads: true}
	out, err := sb.Run(context.Background(), Command{Script: "cat in.txt && echo made > out.txt && pwd"})
	if err != nil {
		t.Fatal(err)
	}
	if text := string(out.Combined); !strings.Contains(text, "inside") || !strings.Contains(text, ws) {
		t.Errorf("output %q", text)
	}
	if data, err := os.ReadFile(filepath.Join(ws, "out.txt")); err != nil || string(data) != "made\n" {
		t.Errorf("the command's file: %q %v", data, err)
	}
	bw, _ := sb.bwrap()
	t.Logf("bubblewrap binds by descriptor: %v", bindFDSupported(bw))
}

// API-9: the attack table of a confined sandbox whose workspace was swapped
// for a link to another caller's directory after the run found it (the
// fence looked a moment before): its own file operations must not follow
// the link.
func TestSandboxSwappedWorkspaceAttacks(t *testing.T) {
	parent, other := t.TempDir(), t.TempDir()
	ws := filepath.Join(parent, "ws")
	if err := os.Mkdir(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(other, "notes.txt"), []byte("OTHER-SECRET"), 0o644); err != nil {
		t.Fatal(err)
	}
	sb := &Sandbox{Workspace: ws, ConfineReads: true}
	if err := os.Rename(ws, ws+".aside"); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(other, ws); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, a := range []struct {
		name string
		try  func(t *testing.T) error
	}{
		{"WriteFile into the swapped workspace", func(*testing.T) error {
			return sb.WriteFile(ctx, filepath.Join(ws, "pwned.txt"), []byte("x"), 0o644)
		}},
		{"WriteFile by the path the link resolves to", func(*testing.T) error {
			return sb.WriteFile(ctx, filepath.Join(other, "pwned2.txt"), []byte("x"), 0o644)
		}},
		{"ReadFile from the swapped workspace", func(*testing.T) error {
			_, err := sb.ReadFile(ctx, filepath.Join(ws, "notes.txt"))
			return err
		}},
		{"Run in the swapped workspace", func(t *testing.T) error {
			if err := (&Sandbox{}).Available(); err != nil {
				t.Skipf("environment: bwrap cannot run here: %v", err)
			}
			_, err := sb.Run(ctx, Command{Script: "cat notes.txt"})
			return err
		}},
	} {
		t.Run(a.name, func(t *testing.T) {
			if err := a.try(t); err == nil {
				t.Error("not refused")
			}
		})
	}
	for _, f := range []string{"pwned.txt", "pwned2.txt"} {
		if _, err := os.Lstat(filepath.Join(other, f)); err == nil {
			t.Errorf("%s was written in the other directory", f)
		}
	}
}
