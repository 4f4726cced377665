package cli

import (
	"encoding/json"
	"strings"
	"testing"
)

// COMPAT-1: rein doctor lists what Claude Code's settings hold that rein
// does not apply — an unmappable rule, an unsupported key — each with its
// file, in text and JSON.
func TestDoctorClaudeUnmapped_COMPAT1(t *testing.T) {
	te := newTestEnv(t)
	te.write(".claude/settings.json", `{"permissions": {"deny": ["Read(./README.md)", "Bash(git * main)", "Agent(Explore)"],
		"additionalDirectories": ["../docs"]}, "statusLine": {"type": "command", "command": "x"}}`)
	_, out, _ := te.run("doctor")
	for _, want := range []string{
		"Claude Code project settings .claude/settings.json: deny rule Agent(Explore) not applied",
		"additionalDirectories (../docs) not applied",
		"keys rein does not use: statusLine",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("doctor lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "Read(./README.md) not applied") || strings.Contains(out, "Bash(git * main) not applied") {
		t.Errorf("doctor reports a rule that maps:\n%s", out)
	}
	_, out, _ = te.run("doctor", "--json")
	var r report
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	if !hasCheck(r, "claude code settings", statusWarning) {
		t.Errorf("doctor --json has no claude code settings warning: %s", out)
	}
}
