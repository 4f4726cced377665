package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reinhq/rein/exec"
	"github.com/reinhq/rein/llm/llmtest"
)

// withoutBwrap points PATH at a directory holding every program of the
// current PATH but bwrap, so the run sees a machine without bubblewrap.
func withoutBwrap(t *testing.T) {
	t.Helper()
	dir := t.TempDir()
	for _, d := range filepath.SplitList(os.Getenv("PATH")) {
		ents, _ := os.ReadDir(d)
		for _, e := range ents {
			if e.Name() == "bwrap" {
				continue
			}
			_ = os.Symlink(filepath.Join(d, e.Name()), filepath.Join(dir, e.Name())) // the first of a name wins, as in PATH
		}
	}
	t.Setenv("PATH", dir)
	if (&exec.Sandbox{}).Available() == nil {
		t.Fatal("bwrap is still found with PATH=" + dir)
	}
}

// sandboxNotes returns stderr's lines about the sandbox.
func sandboxNotes(stderr string) []string {
	var out []string
	for _, l := range strings.Split(stderr, "\n") {
		if strings.Contains(strings.ToLower(l), "sandbox") || strings.Contains(l, "bwrap") || strings.Contains(l, "bubblewrap") {
			out = append(out, l)
		}
	}
	return out
}

// TOOL-7, CLI-1: a run says one short line about the sandbox only when the
// one it gets is weaker than the one configured — never "sandbox
// required" in the default profile, nothing with sandbox off, and
// nothing when bubblewrap runs.
func TestSandboxNoteOnlyWhenWeaker_TOOL7(t *testing.T) {
	run := func(t *testing.T, env map[string]string) []string {
		te := newTestEnv(t)
		for k, v := range env {
			te.env[k] = v
		}
		te.script("m", llmtest.Reply{Text: "ok"})
		_, errs := te.mustRun(ExitOK, "run", "--model", "scripted/m", "hello")
		return sandboxNotes(errs)
	}
	t.Run("without bubblewrap", func(t *testing.T) {
		withoutBwrap(t)
		notes := run(t, nil)
		if exec.LandlockABI() == 0 {
			if len(notes) != 1 || !strings.Contains(notes[0], "unconfined") {
				t.Fatalf("no bubblewrap, no Landlock: notes %q, want one saying commands run unconfined", notes)
			}
		} else if len(notes) != 1 || !strings.Contains(notes[0], "Landlock only") {
			t.Fatalf("no bubblewrap: notes %q, want one saying Landlock only", notes)
		}
		if n := len(notes[0]); n > 170 || strings.Contains(notes[0], "required") || !strings.Contains(notes[0], "bwrap not found in PATH") {
			t.Errorf("the note (%d bytes) is not one short line with the reason: %q", n, notes[0])
		}
		if notes := run(t, map[string]string{"REIN_SANDBOX": "off"}); len(notes) != 0 {
			t.Errorf("sandbox off: notes %q", notes)
		}
	})
	t.Run("with bubblewrap", func(t *testing.T) {
		if err := (&exec.Sandbox{}).Available(); err != nil {
			t.Skipf("environment: bubblewrap cannot run here (%v)", err)
		}
		if notes := run(t, nil); len(notes) != 0 {
			t.Errorf("bubblewrap runs: notes %q", notes)
		}
	})
}
