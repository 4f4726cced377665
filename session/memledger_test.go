package session_test

import (
	"testing"

	"github.com/reinhq/rein/llm"
	"github.com/reinhq/rein/session"
	"github.com/reinhq/rein/session/sessiontest"
)

func TestMemLedger(t *testing.T) {
	sessiontest.RunLedger(t, func(*testing.T) session.Ledger { return session.NewMemLedger() })
}

// API-3: a queued run keeps its images until a final update without
// them; other updates keep them.
func TestUpdatedRunImages(t *testing.T) {
	img := []llm.Image{{MediaType: "image/png", Data: []byte("\x89PNG\r\n\x1a\n")}}
	stored := &session.Run{ID: "r", Status: session.RunQueued, Images: img}
	if c := session.UpdatedRun(stored, &session.Run{ID: "r", Status: session.RunRunning}); len(c.Images) != 1 {
		t.Error("starting the run dropped its images")
	}
	if c := session.UpdatedRun(stored, &session.Run{ID: "r", Status: session.RunFailed, Images: img}); len(c.Images) != 1 {
		t.Error("a final update that keeps the images dropped them")
	}
	if c := session.UpdatedRun(stored, &session.Run{ID: "r", Status: session.RunCompleted}); len(c.Images) != 0 {
		t.Error("a final update without images kept them")
	}
}
