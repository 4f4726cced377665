package gateway

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/reinhq/rein/memory"
)

// GW-2: a progress message keeps the model's turns apart — the text after
// a tool call starts a new paragraph, not glued to the last sentence.
func TestProgressKeepsTurnsApart_GW2(t *testing.T) {
	var p progress
	p.addText("I'll read ")
	p.addText("a file.")
	p.addHint("🔧 read_file: a.txt")
	p.addText("")
	p.addText("Done: ")
	p.addText("it says hi.")
	got := p.render(1000)
	if !strings.Contains(got, "I'll read a file.\n\nDone: it says hi.") || strings.Contains(got, "file.Done") {
		t.Errorf("progress:\n%s", got)
	}
}

// GW-2: /cost counts replies in words that agree with the number.
func TestPlural_GW2(t *testing.T) {
	for n, want := range map[int]string{0: "0 replies", 1: "1 reply", 2: "2 replies"} {
		if got := plural(n, "reply", "replies"); got != want {
			t.Errorf("plural(%d) = %q, want %q", n, got, want)
		}
	}
}

// GW-1: the bootstrap greets once: its first message is the first
// question, which carries the greeting, and a note of what follows.
func TestBootstrapGreetsOnce_GW1(t *testing.T) {
	home := t.TempDir()
	g := &Gateway{cfg: Config{PersonaDir: home + "/persona", Memory: memory.New(memory.Config{UserDir: home + "/memory"}),
		Now: func() time.Time { return time.Unix(0, 0) }}}
	say, took := g.bootstrapStep(context.Background(), "tg:1", "hi")
	if !took || strings.Count(strings.ToLower(say), "hello") != 1 || strings.Count(say, "Before we start") != 1 {
		t.Errorf("first bootstrap message:\n%s", say)
	}
}
