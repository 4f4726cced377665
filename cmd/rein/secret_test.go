package main

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	reinexec "github.com/reinhq/rein/exec"
	"github.com/reinhq/rein/llm"
	"github.com/reinhq/rein/llm/llmtest/mockserver"
)

// PERM-5, TOOL-4: the provider key rein was started with cannot be read by
// the tools it runs — not from their environment, not from
// /proc/<rein>/environ, not from any process's environ — so it reaches
// neither the model, nor stream-json, nor the session files. On the host
// and in the sandbox (whose Landlock layer the built binary provides).
func TestProviderKeyUnreadableByTools_PERM5(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary; skipped in short mode")
	}
	if runtime.GOOS != "linux" {
		t.Skip("/proc is Linux's")
	}
	bin := buildRein(t, t.TempDir())
	key := fmt.Sprintf("sk-test-SECRET-%d", time.Now().UnixNano())
	srv := mockserver.New()
	defer srv.Close()
	srv.APIKey = key
	script := `cat /proc/$PPID/environ; echo; cat /proc/*/environ 2>/dev/null; echo; env; echo done-reading; ` +
		`touch /dev/rein-probe 2>/dev/null || echo landlock-layer`
	modes := []string{"off"}
	if exec.Command("bwrap", "--ro-bind", "/", "/", "--unshare-pid", "--cap-drop", "ALL", "true").Run() == nil {
		modes = append(modes, "on")
	}
	for _, mode := range modes {
		t.Run("sandbox "+mode, func(t *testing.T) {
			srv.Reset()
			srv.Enqueue(
				mockserver.Turn{ToolCalls: []mockserver.ToolCall{{ID: "call_1", Name: "bash",
					Input: fmt.Sprintf(`{"command":%q}`, script)}}, Usage: llm.Usage{InputTokens: 10, OutputTokens: 5}},
				mockserver.Turn{Text: "Read it.", Usage: llm.Usage{InputTokens: 10, OutputTokens: 5}},
			)
			home, ws := t.TempDir(), t.TempDir()
			cmd := exec.Command(bin, "run", "--model", "claude-sonnet-4-5", "--permission-mode", "bypass",
				"--output", "stream-json", "Show me the environment.")
			cmd.Dir = ws
			cmd.Env = []string{"HOME=" + home, "PATH=" + os.Getenv("PATH"), "REIN_SANDBOX=" + mode,
				"ANTHROPIC_API_KEY=" + key, "ANTHROPIC_BASE_URL=" + srv.URL}
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("rein: %v\nstderr:\n%s", err, stderr.String())
			}
			reqs := srv.Requests()
			if len(reqs) != 2 || !toolResultHolds(reqs[1], "done-reading") {
				t.Fatalf("the command did not run: %d requests\n%s", len(reqs), out)
			}
			if mode == "on" && reinexec.LandlockABI() > 0 && !toolResultHolds(reqs[1], "landlock-layer") {
				t.Errorf("the sandbox ran without its Landlock layer:\n%s", reqs[1].Body)
			}
			if !toolResultHolds(reqs[1], "PATH=") {
				t.Errorf("the command saw no environment at all:\n%s", reqs[1].Body)
			}
			if bytes.Contains(reqs[1].Body, []byte(key)) {
				t.Errorf("the key reached the model in a tool result:\n%s", reqs[1].Body)
			}
			if bytes.Contains(out, []byte(key)) || bytes.Contains(stderr.Bytes(), []byte(key)) {
				t.Errorf("the key is in rein's output:\n%s", out)
			}
			for _, dir := range []string{home, ws} {
				filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
					if err != nil || d.IsDir() {
						return nil
					}
					if data, _ := os.ReadFile(p); bytes.Contains(data, []byte(key)) {
						t.Errorf("the key is in %s", strings.TrimPrefix(p, dir))
					}
					return nil
				})
			}
		})
	}
}
