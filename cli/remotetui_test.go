package cli

import (
	"context"
	"strings"
	"testing"

	"github.com/reinhq/rein/agent"
	"github.com/reinhq/rein/cli/tui"
	"github.com/reinhq/rein/llm/llmtest"
)

// CLI-2, CLI-3, API-1: rein --server URL on a terminal is the interactive
// session on the server — prompts run there, in one session, the second
// seeing the first — and rein sessions --server URL alone lists the
// server's sessions rather than printing help.
func TestInteractiveOnServer_CLI2(t *testing.T) {
	te := newTestEnv(t)
	te.tty = true
	s := te.script("m", llmtest.Reply{Text: "first answer"}, llmtest.Reply{Text: "second answer"})
	url := serveFor(t, te)
	var texts []string
	var info tui.Info
	var cost string
	te.customize = func(a *App) {
		a.Interactive = func(ctx context.Context, opts tui.Options) error {
			for _, prompt := range []string{"one", "two"} {
				for ev, err := range opts.Backend.Submit(ctx, tui.Prompt{Text: prompt}, nil) {
					if err != nil {
						return err
					}
					if ev.Type == agent.EventDone && ev.Done != nil {
						texts = append(texts, ev.Done.Text)
					}
				}
			}
			info = opts.Backend.Info()
			var err error
			cost, err = opts.Backend.Command(ctx, "cost", "")
			return err
		}
	}
	_, errs := te.mustRun(ExitOK, "--server", url, "--model", "scripted/m")
	if strings.Join(texts, "|") != "first answer|second answer" {
		t.Fatalf("answers %q; stderr %s", texts, errs)
	}
	if reqs := s.Requests(); len(reqs) != 2 || len(reqs[1].Messages) != 3 {
		t.Errorf("the second prompt was not in the first's session: %d requests", len(reqs))
	}
	if info.SessionID == "" || !strings.Contains(errs, "--resume "+info.SessionID) || !strings.Contains(cost, info.SessionID) {
		t.Errorf("info %+v, /cost %q, stderr %s", info, cost, errs)
	}

	te.customize = nil
	list, _ := te.mustRun(ExitOK, "sessions", "--server", url)
	if !strings.Contains(list, info.SessionID) || strings.Contains(list, "Available Commands") {
		t.Errorf("rein sessions --server:\n%s", list)
	}
}
