package cli

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

// CLI-1: the README's sentence on exit codes names every code rein run
// exits with, each with its reason, and the dry run's not-ready code.
func TestREADMEExitCodes_CLI1(t *testing.T) {
	b, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	readme := strings.Join(strings.Fields(string(b)), " ")
	start := strings.Index(readme, "the exit codes (")
	if start < 0 {
		t.Fatal(`the README has no "the exit codes (" sentence`)
	}
	sentence, _, _ := strings.Cut(readme[start:], ")."+" ")
	want := []string{fmt.Sprintf("%d not ready", ExitNotReady)}
	for _, e := range exitCodes {
		name := string(e.reason)
		if name == "" {
			name = "usage"
		}
		want = append(want, fmt.Sprintf("%d %s", e.code, name))
	}
	for _, w := range want {
		if !strings.Contains(sentence, w) {
			t.Errorf("the README's exit codes do not say %q: %s", w, sentence)
		}
	}
}
