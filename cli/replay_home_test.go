package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reinhq/rein/llm/llmtest"
)

// userHome is a HOME already holding a user's own rein and Claude Code
// configuration: settings, hooks, agents, skills, an action and MCP
// servers of rein's (~/.config/rein) and of Claude Code's (~/.claude,
// ~/.claude.json).
const userHome = "testdata/userhome"

// copyUserHome fills dir with [userHome].
func copyUserHome(t *testing.T, dir string) {
	t.Helper()
	if err := os.CopyFS(dir, os.DirFS(userHome)); err != nil {
		t.Fatal(err)
	}
}

// CLI-1: the README's first command runs for a user whose HOME holds their
// own agents, skills, MCP servers and Claude Code configuration: a cassette
// recorded without a user's configuration is replayed without this one's,
// which would add tools the recording never offered (issue 26 item 1).
func TestQuickstartCassetteWithUserConfig_CLI1(t *testing.T) {
	te := newTestEnv(t)
	copyUserHome(t, te.home)
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	te.customize = func(a *App) { a.Dir = root; a.Models = nil }

	// The fixture does apply to an ordinary run: its definitions are listed.
	out, _ := te.mustRun(ExitOK, "agents", "list")
	for _, name := range []string{"helper", "cc-reviewer"} {
		if !strings.Contains(out, name) {
			t.Fatalf("rein agents list does not list the user's agent %s:\n%s", name, out)
		}
	}

	_, errs := replayQuickstart(t, te)
	for _, server := range []string{"user-files", "cc-files"} {
		if strings.Contains(errs, server) {
			t.Errorf("the replay started the user's MCP server %s:\n%s", server, errs)
		}
	}
}

// CLI-1: a recording made with the user's configuration says so in its
// header, and its replay loads that configuration again; one made without
// says nothing and is replayed without it.
func TestRecordNotesUserConfig_CLI1(t *testing.T) {
	for _, withUser := range []bool{false, true} {
		t.Run(map[bool]string{false: "fresh home", true: "configured home"}[withUser], func(t *testing.T) {
			te := newTestEnv(t)
			if withUser {
				copyUserHome(t, te.home)
			}
			te.script("m", llmtest.Reply{Text: "hello"})
			cassette := filepath.Join(te.home, "run.cassette")
			te.mustRun(ExitOK, "run", "--model", "scripted/m", "--record", cassette, "say hello")
			data, err := os.ReadFile(cassette)
			if err != nil {
				t.Fatal(err)
			}
			header, _, _ := strings.Cut(string(data), "\n")
			if got := strings.Contains(header, `"user_config":true`); got != withUser {
				t.Errorf("header %s: user_config %v, want %v", header, got, withUser)
			}
			replayed, errs := te.mustRun(ExitOK, "run", "--model", "replay:"+cassette, "say hello")
			if !strings.Contains(replayed, "hello") {
				t.Errorf("replay: %q\n%s", replayed, errs)
			}
		})
	}
}

// SESS-3, CLI-1: resuming a session run on such a cassette, in a HOME
// with the user's own configuration, loads none of it either (none of
// the user's MCP servers is started), and replays the cassette.
func TestResumeQuickstartWithUserConfig_SESS3(t *testing.T) {
	te := newTestEnv(t)
	copyUserHome(t, te.home)
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	te.customize = func(a *App) { a.Dir = root; a.Models = nil }
	res, _ := replayQuickstart(t, te)
	_, errs := te.mustRun(ExitError, "run", "-r", res.SessionID, "and then?")
	if !strings.Contains(errs, "differs from the cassette") || strings.Contains(errs, "user-files") || strings.Contains(errs, "cc-files") {
		t.Errorf("resuming the quickstart's session loaded the user's configuration, or did not replay: %s", errs)
	}
}
