package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reinhq/rein/llm/llmtest"
)

// SESS-3: a resumed session keeps the model it ran with, whatever the
// settings say now, unless the invocation names another (--model).
func TestResumeKeepsSessionModel_SESS3(t *testing.T) {
	te := newTestEnv(t)
	m := te.script("m", llmtest.Reply{Text: "one"}, llmtest.Reply{Text: "two"})
	other := te.script("other", llmtest.Reply{Text: "three"})
	out, _ := te.mustRun(ExitOK, "run", "--model", "scripted/m", "-o", "json", "first")
	var res result
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	te.userFile("settings.yaml", "model: scripted/other\n")
	te.mustRun(ExitOK, "run", "-r", res.SessionID, "second")
	if len(m.Requests()) != 2 || len(other.Requests()) != 0 {
		t.Fatalf("resumed without --model: %d calls to the session's model, %d to the settings' (want 2, 0)", len(m.Requests()), len(other.Requests()))
	}
	te.mustRun(ExitOK, "run", "-r", res.SessionID, "--model", "scripted/other", "third")
	if len(other.Requests()) != 1 {
		t.Errorf("resumed with --model scripted/other: %d calls to it", len(other.Requests()))
	}
}

// SESS-3, PROV-8: a session run on a cassette records the cassette as its
// model, so resuming it replays that cassette rather than asking for the
// key of a provider named after the recording.
func TestResumeReplaySession_SESS3(t *testing.T) {
	te := newTestEnv(t)
	te.script("m", llmtest.Reply{Text: "hello"})
	cassette := filepath.Join(te.home, "run.cassette")
	te.mustRun(ExitOK, "run", "--model", "scripted/m", "--record", cassette, "say hello")
	out, _ := te.mustRun(ExitOK, "run", "--model", "replay:"+cassette, "-o", "json", "say hello")
	var res result
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	meta, err := os.ReadFile(filepath.Join(te.home, ".local", "share", "rein", "sessions", res.SessionID+".meta.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(meta), `"model": "replay:`+cassette+`"`) {
		t.Errorf("the session does not record its cassette as its model:\n%s", meta)
	}
	// The cassette holds one exchange: going on is refused by the replay,
	// saying why — not by a provider lookup or an auth check.
	_, errs := te.mustRun(ExitError, "run", "-r", res.SessionID, "and then?")
	if !strings.Contains(errs, "differs from the cassette") || strings.Contains(errs, "unknown provider") || strings.Contains(errs, "API key") {
		t.Errorf("resuming a replayed session: %s", errs)
	}
}
