package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reinhq/rein/llm/llmtest"
)

// SESS-1, SESS-3: rein run -r on a session whose log no line of which can
// be read is refused, naming the file, and the file is kept as it was —
// the run does not start empty and write over it.
func TestResumeUnreadableSessionRefused_SESS1(t *testing.T) {
	te := newTestEnv(t)
	te.script("m", llmtest.Reply{Text: "first"}, llmtest.Reply{Text: "second"})
	out, _ := te.mustRun(ExitOK, "run", "--model", "scripted/m", "-o", "json", "hello")
	var res result
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	log := filepath.Join(te.home, ".local", "share", "rein", "sessions", res.SessionID+".jsonl")
	damaged := []byte("garbage line one\ngarbage two\n")
	if err := os.WriteFile(log, damaged, 0o600); err != nil {
		t.Fatal(err)
	}
	_, errs := te.mustRun(ExitError, "run", "--model", "scripted/m", "-r", res.SessionID, "go on")
	if !strings.Contains(errs, log) || !strings.Contains(errs, "kept") {
		t.Errorf("stderr does not name the unreadable file %s: %s", log, errs)
	}
	if got, err := os.ReadFile(log); err != nil || string(got) != string(damaged) {
		t.Errorf("the unreadable session file was changed (%v):\n%s", err, got)
	}
}
