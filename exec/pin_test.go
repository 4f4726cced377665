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
