package tui

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reinhq/rein/agent"
	"github.com/reinhq/rein/checkpoint"
	"github.com/reinhq/rein/permission"
)

// cpBackend is a fakeBackend that records checkpoint calls.
type cpBackend struct {
	shellBackend
	cmu      sync.Mutex
	begun    []string
	observed []agent.EventType
	points   []checkpoint.Point
	rewound  []string
}

func (c *cpBackend) BeginPrompt(_ context.Context, text string) error {
	c.cmu.Lock()
	defer c.cmu.Unlock()
	c.begun = append(c.begun, text)
	return nil
}

func (c *cpBackend) Observe(ev agent.Event) {
	c.cmu.Lock()
	defer c.cmu.Unlock()
	c.observed = append(c.observed, ev.Type)
}

func (c *cpBackend) Checkpoints(context.Context) ([]checkpoint.Point, error) { return c.points, nil }

func (c *cpBackend) Rewind(_ context.Context, seq int, code, conv bool) (string, error) {
	c.cmu.Lock()
	defer c.cmu.Unlock()
	c.rewound = append(c.rewound, strings.TrimSpace(strings.Repeat("code ", b2i(code))+strings.Repeat("conversation", b2i(conv))))
	return "Rewound.", nil
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// CLI-6: every prompt begins a checkpoint named by what the user typed
// (not the shell output or excerpts added to it), the run's events are
// observed; /rewind lists the checkpoints with their files and shell
// commands, warns what cannot be undone, and Enter / c / v restore code and
// conversation, code, or conversation.
func TestRewind_CLI6(t *testing.T) {
	b := &cpBackend{points: []checkpoint.Point{
		{Seq: 1, Prompt: "hello", Time: time.Now()},
		{Seq: 2, Prompt: "make the change", Time: time.Now(), Files: []checkpoint.File{{Path: "/w/a.go"}}, Shell: []string{"make"}},
	}}
	b.outs = map[string]ShellResult{"ls": {Output: "a.go"}}
	b.script = func(_ context.Context, _ string, _ permission.Approver, emit func(agent.Event) bool) {
		emit(doneEvent(agent.ReasonCompleted))
	}
	h := newHarness(t, b)
	h.submit("!ls")
	h.idle()
	h.submit("hello there")
	h.idle()
	if len(b.begun) != 1 || b.begun[0] != "hello there" || len(b.observed) != 1 || b.observed[0] != agent.EventDone {
		t.Errorf("BeginPrompt got %q (want the typed text), Observe %q", b.begun, b.observed)
	}
	h.submit("/rewind")
	h.viewHas("Rewind to before a prompt", "1. hello", "› 2. make the change", "1 file(s) changed · 1 shell command(s)",
		"⚠ 1 shell command(s) ran from this prompt on: their effects are not undone")
	h.send(keyUp)
	h.viewHas("› 1. hello")
	h.typeText("c")
	h.viewHas("no code to restore")
	h.send(keyDown)
	h.send(keyEnter)
	h.idle()
	h.submit("/rewind")
	h.viewHas("› 2. make the change")
	h.typeText("v")
	h.idle()
	h.submit("/rewind")
	h.viewHas("› 2. make the change")
	h.typeText("c")
	h.idle()
	h.printedHas("/rewind 2 (code and conversation)", "Rewound.", "/rewind 2 (conversation)", "/rewind 2 (code)")
	if got := strings.Join(b.rewound, "|"); got != "code conversation|conversation|code" {
		t.Errorf("rewinds = %q", got)
	}
}

// CLI-6: Esc twice at an empty prompt opens the rewind list; Esc then
// closes it.
func TestEscEscRewind_CLI6(t *testing.T) {
	b := &cpBackend{points: []checkpoint.Point{{Seq: 1, Prompt: "hello", Time: time.Now()}}}
	h := newHarness(t, b)
	h.send(keyEsc)
	if h.m.rewind != nil {
		t.Fatal("one Esc opened the rewind list")
	}
	h.send(keyEsc)
	h.viewHas("Rewind to before a prompt", "› 1. hello")
	h.send(keyEsc)
	if h.m.rewind != nil {
		t.Error("Esc did not close the rewind list")
	}
}
