package builtin

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reinhq/rein/exec"
	"github.com/reinhq/rein/tool"
)

func TestRenderOutputPrefix(t *testing.T) {
	dir := t.TempDir()
	whole := strings.Repeat("line of output\n", 100)
	for _, prefix := range []string{"bash-", "action-"} {
		call := tool.Call{ID: "call_1", SessionDir: dir}
		text, path, err := RenderOutput(call, exec.Output{Combined: []byte(whole)}, 200, prefix)
		if err != nil {
			t.Fatalf("%s: %v", prefix, err)
		}
		if want := filepath.Join(dir, prefix+"call_1.log"); path != want {
			t.Errorf("path %q, want %q", path, want)
		}
		if !strings.Contains(text, path) || len(text) > 400 {
			t.Errorf("%s: text %q", prefix, text)
		}
		if data, err := os.ReadFile(path); err != nil || string(data) != whole {
			t.Errorf("%s: saved %d bytes, %v", prefix, len(data), err)
		}
	}
	if text, path, err := RenderOutput(tool.Call{}, exec.Output{Combined: []byte("ok\n")}, 0, "x-"); text != "ok" || path != "" || err != nil {
		t.Errorf("short output: %q %q %v", text, path, err)
	}
}
