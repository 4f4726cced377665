package cli

import (
	"strings"
	"testing"

	"github.com/reinhq/rein/llm/llmtest"
)

// PROV-1, CLI-1: a model name a few letters from a known one is refused
// with "did you mean", before anything is sent; one that differs only in
// its version digits (perhaps newer than rein's table) is sent with a
// warning naming the known one.
func TestModelNameDidYouMean_CLI1(t *testing.T) {
	tests := []struct {
		model   string
		code    int
		want    string
		notWant string
	}{
		{"anthropic/claude-sonet-4-5", ExitError, "did you mean anthropic/claude-sonnet-4-5?", ""},
		{"anthropic/claud-sonnet-4-5", ExitError, "did you mean anthropic/claude-sonnet-4-5?", ""},
		{"openai/gtp-4o", ExitError, "did you mean openai/gpt-4o?", ""},
		{"anthropic/claude-sonnet-4-9", ExitOK, "(did you mean anthropic/claude-sonnet-4", "rein knows no model"},
		{"anthropic/totally-new-model", ExitOK, "unknown model totally-new-model", "did you mean"},
	}
	for _, tt := range tests {
		t.Run(tt.model, func(t *testing.T) {
			te := newTestEnv(t)
			te.env["REIN_SANDBOX"] = "off"
			te.env["ANTHROPIC_API_KEY"], te.env["OPENAI_API_KEY"] = "k", "k"
			te.customize = func(a *App) { a.Models = nil }
			// --dry-run resolves the model as a run does, without sending.
			code, out, errs := te.run("run", "--dry-run", "--model", tt.model, "hello")
			errs += out
			if (tt.code == ExitOK) != (code == ExitOK) { // a dry run that is not ready exits with its own code
				t.Fatalf("exit %d, want %d; stderr %s", code, tt.code, errs)
			}
			if !strings.Contains(errs, tt.want) || (tt.notWant != "" && strings.Contains(errs, tt.notWant)) {
				t.Errorf("stderr %q: want %q, not %q", errs, tt.want, tt.notWant)
			}
		})
	}
}

// WS-3, CLI-1: every run warns about a settings key rein does not know,
// with the key it was perhaps meant to be, not only rein doctor.
func TestRunWarnsUnknownSettingsKey_CLI1(t *testing.T) {
	te := newTestEnv(t)
	te.write(".rein/settings.yaml", "modle: scripted/m\n")
	te.userFile("settings.yaml", "permisions:\n  allow: []\n")
	te.script("m", llmtest.Reply{Text: "ok"})
	_, errs := te.mustRun(ExitOK, "run", "--model", "scripted/m", "hello")
	for _, want := range []string{"unknown setting .rein/settings.yaml: modle (line 1) (did you mean model?) is ignored",
		"permisions (line 1) (did you mean permissions?)"} {
		if !strings.Contains(errs, want) {
			t.Errorf("stderr does not say %q:\n%s", want, errs)
		}
	}
}
